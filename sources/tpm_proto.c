/* SPDX-License-Identifier: MIT */
/*
 * tpm_proto: hand-marshalled TPM 2.0 and 1.2 GetRandom and Startup. Every
 * field of a response is checked against the bytes actually received before
 * any of it is used.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tpm_proto.h"

/* Write a big-endian u16. */
static void
tpm_proto_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Write a big-endian u32. */
static void
tpm_proto_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Read a big-endian u16. */
static uint16_t
tpm_proto_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

/* Read a big-endian u32. */
static uint32_t
tpm_proto_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Write a command header: tag, total size, command code (ordinal). */
static void
tpm_proto_put_header(uint8_t *cmd, uint16_t tag, uint32_t size, uint32_t code)
{
	tpm_proto_put16(cmd, tag);
	tpm_proto_put32(cmd + 2, size);
	tpm_proto_put32(cmd + 6, code);
}

size_t
tpm_proto_get_random(enum tpm_proto_version version, uint16_t nbytes, uint8_t *cmd,
    size_t cmdlen)
{
	if (version == TPM_PROTO_V12) {
		if (cmdlen < 14)
			return 0;
		tpm_proto_put_header(cmd, TPM12_TAG_RQU_COMMAND, 14, TPM12_ORD_GET_RANDOM);
		tpm_proto_put32(cmd + 10, nbytes);
		return 14;
	}
	if (cmdlen < 12)
		return 0;
	tpm_proto_put_header(cmd, TPM2_ST_NO_SESSIONS, 12, TPM2_CC_GET_RANDOM);
	tpm_proto_put16(cmd + 10, nbytes);
	return 12;
}

size_t
tpm_proto_startup(enum tpm_proto_version version, uint8_t *cmd, size_t cmdlen)
{
	if (cmdlen < 12)
		return 0;
	if (version == TPM_PROTO_V12) {
		tpm_proto_put_header(cmd, TPM12_TAG_RQU_COMMAND, 12, TPM12_ORD_STARTUP);
		tpm_proto_put16(cmd + 10, TPM12_ST_CLEAR);
	} else {
		tpm_proto_put_header(cmd, TPM2_ST_NO_SESSIONS, 12, TPM2_CC_STARTUP);
		tpm_proto_put16(cmd + 10, TPM2_SU_CLEAR);
	}
	return 12;
}

uint32_t
tpm_proto_announced_size(const uint8_t *resp, size_t resplen)
{
	return resplen < 6 ? 0 : tpm_proto_get32(resp + 2);
}

/* Is this tag a response tag of the given family? */
static int
tpm_proto_tag_is(enum tpm_proto_version version, uint16_t tag)
{
	if (version == TPM_PROTO_V12)
		return tag == TPM12_TAG_RSP_COMMAND;
	return tag == TPM2_ST_NO_SESSIONS || tag == TPM2_ST_SESSIONS;
}

enum tpm_proto_status
tpm_proto_parse_header(enum tpm_proto_version version, const uint8_t *resp, size_t resplen,
    struct tpm_proto_response *r, char *err, size_t errlen)
{
	enum tpm_proto_version other;

	memset(r, 0, sizeof *r);
	if (resplen < TPM_PROTO_HEADER_BYTES) {
		snprintf(err, errlen, "short response: %zu bytes, a header needs %d", resplen,
		    TPM_PROTO_HEADER_BYTES);
		return TPM_PROTO_MALFORMED;
	}
	r->tag = tpm_proto_get16(resp);
	r->size = tpm_proto_get32(resp + 2);
	r->rc = tpm_proto_get32(resp + 6);
	if (r->size != resplen) {
		snprintf(err, errlen, "wrong size: the header says %u bytes, %zu arrived",
		    r->size, resplen);
		return TPM_PROTO_MALFORMED;
	}
	if (tpm_proto_tag_is(version, r->tag))
		return r->rc == 0 ? TPM_PROTO_OK : TPM_PROTO_RC;
	other = version == TPM_PROTO_V12 ? TPM_PROTO_V2 : TPM_PROTO_V12;
	if (tpm_proto_tag_is(other, r->tag)) {
		snprintf(err, errlen, "%s command answered with a %s tag 0x%04x (rc 0x%x)",
		    tpm_proto_version_name(version), tpm_proto_version_name(other), r->tag, r->rc);
		return TPM_PROTO_OTHER_VERSION;
	}
	snprintf(err, errlen, "wrong tag 0x%04x in a %s response", r->tag,
	    tpm_proto_version_name(version));
	return TPM_PROTO_MALFORMED;
}

enum tpm_proto_status
tpm_proto_parse_get_random(enum tpm_proto_version version, const uint8_t *resp,
    size_t resplen, size_t asked, struct tpm_proto_response *r, char *err, size_t errlen)
{
	enum tpm_proto_status status;
	size_t lenbytes = version == TPM_PROTO_V12 ? 4 : 2;
	size_t len;

	status = tpm_proto_parse_header(version, resp, resplen, r, err, errlen);
	if (status != TPM_PROTO_OK)
		return status;
	if (r->tag == TPM2_ST_SESSIONS) {
		snprintf(err, errlen, "wrong tag 0x%04x: GetRandom was sent without sessions",
		    r->tag);
		return TPM_PROTO_MALFORMED;
	}
	if (resplen < TPM_PROTO_HEADER_BYTES + lenbytes) {
		snprintf(err, errlen, "short response: %zu bytes, no room for the length field",
		    resplen);
		return TPM_PROTO_MALFORMED;
	}
	len = lenbytes == 4 ? tpm_proto_get32(resp + TPM_PROTO_HEADER_BYTES) :
	    tpm_proto_get16(resp + TPM_PROTO_HEADER_BYTES);
	if (len > asked) {
		snprintf(err, errlen, "length %zu is more than the %zu bytes asked for", len,
		    asked);
		return TPM_PROTO_MALFORMED;
	}
	if (len != resplen - TPM_PROTO_HEADER_BYTES - lenbytes) {
		snprintf(err, errlen, "length %zu does not match the %zu bytes after it", len,
		    resplen - TPM_PROTO_HEADER_BYTES - lenbytes);
		return TPM_PROTO_MALFORMED;
	}
	if (len == 0) {
		snprintf(err, errlen, "no random bytes in a successful response");
		return TPM_PROTO_MALFORMED;
	}
	r->data = resp + TPM_PROTO_HEADER_BYTES + lenbytes;
	r->len = len;
	return TPM_PROTO_OK;
}

enum tpm_proto_rc_kind
tpm_proto_rc_kind(enum tpm_proto_version version, uint32_t rc)
{
	if (version == TPM_PROTO_V12) {
		if (rc == TPM12_INVALID_POSTINIT)
			return TPM_PROTO_RC_STARTUP;
		if (rc == TPM12_RETRY || rc == TPM12_NEEDS_SELFTEST || rc == TPM12_DOING_SELFTEST)
			return TPM_PROTO_RC_RETRY;
		return TPM_PROTO_RC_FATAL;
	}
	if (rc == TPM2_RC_INITIALIZE)
		return TPM_PROTO_RC_STARTUP;
	if (rc == TPM2_RC_RETRY || rc == TPM2_RC_TESTING || rc == TPM2_RC_YIELDED)
		return TPM_PROTO_RC_RETRY;
	return TPM_PROTO_RC_FATAL;
}

const char *
tpm_proto_rc_name(enum tpm_proto_version version, uint32_t rc, char *buf, size_t buflen)
{
	static const struct {
		enum tpm_proto_version version;
		uint32_t rc;
		const char *name;
	} names[] = {
		{ TPM_PROTO_V2, TPM2_RC_INITIALIZE, "TPM_RC_INITIALIZE" },
		{ TPM_PROTO_V2, TPM2_RC_RETRY, "TPM_RC_RETRY" },
		{ TPM_PROTO_V2, TPM2_RC_TESTING, "TPM_RC_TESTING" },
		{ TPM_PROTO_V2, TPM2_RC_YIELDED, "TPM_RC_YIELDED" },
		{ TPM_PROTO_V2, 0x101, "TPM_RC_FAILURE" },
		{ TPM_PROTO_V2, 0x143, "TPM_RC_COMMAND_CODE" },
		{ TPM_PROTO_V2, 0x1C4, "TPM_RC_VALUE" },
		{ TPM_PROTO_V2, 0x1D5, "TPM_RC_SIZE" },
		{ TPM_PROTO_V12, TPM12_INVALID_POSTINIT, "TPM_INVALID_POSTINIT" },
		{ TPM_PROTO_V12, TPM12_RETRY, "TPM_RETRY" },
		{ TPM_PROTO_V12, TPM12_NEEDS_SELFTEST, "TPM_NEEDS_SELFTEST" },
		{ TPM_PROTO_V12, TPM12_DOING_SELFTEST, "TPM_DOING_SELFTEST" },
		{ TPM_PROTO_V12, 0x01E, "TPM_BADTAG" },
		{ TPM_PROTO_V12, 0x009, "TPM_FAIL" },
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].version == version && names[i].rc == rc)
			return names[i].name;
	snprintf(buf, buflen, "rc 0x%x", rc);
	return buf;
}

const char *
tpm_proto_version_name(enum tpm_proto_version version)
{
	return version == TPM_PROTO_V12 ? "TPM 1.2" : "TPM 2.0";
}
