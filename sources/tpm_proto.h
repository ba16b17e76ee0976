/* SPDX-License-Identifier: MIT */
/*
 * tpm_proto: TPM 2.0 and TPM 1.2 GetRandom and Startup, marshalled and
 * parsed by hand. Pure functions on byte buffers: no I/O, so the parser is
 * unit- and fuzz-testable. All integers on the wire are big-endian.
 */
#ifndef ENTROPYD_TPM_PROTO_H
#define ENTROPYD_TPM_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* A response is read with one read() into a buffer this large. */
#define TPM_PROTO_RESPONSE_MAX 4096
/* The largest command this file builds. */
#define TPM_PROTO_COMMAND_MAX 14
/* tag u16, size u32, rc u32 */
#define TPM_PROTO_HEADER_BYTES 10

/* TPM 2.0 (TCG TPM 2.0 Library, Part 2). */
#define TPM2_ST_NO_SESSIONS 0x8001u
#define TPM2_ST_SESSIONS 0x8002u
#define TPM2_CC_STARTUP 0x00000144u
#define TPM2_CC_GET_RANDOM 0x0000017Bu
#define TPM2_SU_CLEAR 0x0000u
#define TPM2_RC_SUCCESS 0x000u
#define TPM2_RC_INITIALIZE 0x100u
#define TPM2_RC_YIELDED 0x908u
#define TPM2_RC_TESTING 0x90Au
#define TPM2_RC_RETRY 0x922u

/* TPM 1.2 (TPM Main Part 2, Structures). */
#define TPM12_TAG_RQU_COMMAND 0x00C1u
#define TPM12_TAG_RSP_COMMAND 0x00C4u
#define TPM12_ORD_GET_RANDOM 0x00000046u
#define TPM12_ORD_STARTUP 0x00000099u
#define TPM12_ST_CLEAR 0x0001u
#define TPM12_INVALID_POSTINIT 0x026u
#define TPM12_RETRY 0x800u
#define TPM12_NEEDS_SELFTEST 0x801u
#define TPM12_DOING_SELFTEST 0x802u

enum tpm_proto_version {
	TPM_PROTO_V2,  /* TPM 2.0 */
	TPM_PROTO_V12, /* TPM 1.2 */
};

/* What a response turned out to be. */
enum tpm_proto_status {
	TPM_PROTO_OK,        /* success: the random bytes are in data/len */
	TPM_PROTO_RC,        /* a well-formed response with a non-zero rc */
	TPM_PROTO_OTHER_VERSION, /* well-formed, but the other TPM family's tag */
	TPM_PROTO_MALFORMED, /* short, wrong tag, wrong size, bad length: see err */
};

/* What to do about a non-zero rc. */
enum tpm_proto_rc_kind {
	TPM_PROTO_RC_FATAL,   /* give up on this exchange */
	TPM_PROTO_RC_RETRY,   /* busy or self-testing: ask again after a pause */
	TPM_PROTO_RC_STARTUP, /* not started: send Startup(CLEAR), ask again */
};

struct tpm_proto_response {
	uint16_t tag;
	uint32_t size;
	uint32_t rc;
	const uint8_t *data; /* the random bytes, inside the response buffer */
	size_t len;
};

/* Build GetRandom for nbytes into cmd; returns the command's length, 0 if cmdlen is short. */
size_t tpm_proto_get_random(enum tpm_proto_version, uint16_t nbytes, uint8_t *cmd,
    size_t cmdlen);
/* Build Startup(CLEAR) into cmd; returns the command's length, 0 if cmdlen is short. */
size_t tpm_proto_startup(enum tpm_proto_version, uint8_t *cmd, size_t cmdlen);
/*
 * Check a response header: at least 10 bytes, this family's response tag
 * and a size field equal to resplen. Fills tag, size and rc.
 */
enum tpm_proto_status tpm_proto_parse_header(enum tpm_proto_version, const uint8_t *resp,
    size_t resplen, struct tpm_proto_response *, char *err, size_t errlen);
/*
 * Parse a GetRandom response to a request for asked bytes. On TPM_PROTO_OK,
 * data and len point at 1..asked random bytes; nothing is used before tag,
 * size, rc and length have been checked against each other and resplen.
 */
enum tpm_proto_status tpm_proto_parse_get_random(enum tpm_proto_version, const uint8_t *resp,
    size_t resplen, size_t asked, struct tpm_proto_response *, char *err, size_t errlen);
/* The size a response header announces, or 0 when fewer than 6 bytes are there. */
uint32_t tpm_proto_announced_size(const uint8_t *resp, size_t resplen);
/* How to treat a non-zero rc. */
enum tpm_proto_rc_kind tpm_proto_rc_kind(enum tpm_proto_version, uint32_t rc);
/* The rc's name ("TPM_RC_RETRY"), or "rc 0x..." written into buf. */
const char *tpm_proto_rc_name(enum tpm_proto_version, uint32_t rc, char *buf, size_t buflen);
/* "TPM 2.0" or "TPM 1.2". */
const char *tpm_proto_version_name(enum tpm_proto_version);

#endif
