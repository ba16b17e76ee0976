/* SPDX-License-Identifier: MIT */
/*
 * tpm_proto: the commands byte for byte, and every way a response can be
 * wrong (short, wrong tag, wrong size, error codes, a length larger than
 * what arrived or was asked for, TPM 1.2 answers), each rejected with a
 * message saying why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tpm_proto.h"

static struct tpm_proto_response r;
static char err[256];

/* Parse a TPM 2.0 GetRandom response given as bytes. */
static enum tpm_proto_status
parse2(const uint8_t *resp, size_t len, size_t asked)
{
	*err = '\0';
	return tpm_proto_parse_get_random(TPM_PROTO_V2, resp, len, asked, &r, err, sizeof err);
}

/* The same for TPM 1.2. */
static enum tpm_proto_status
parse12(const uint8_t *resp, size_t len, size_t asked)
{
	*err = '\0';
	return tpm_proto_parse_get_random(TPM_PROTO_V12, resp, len, asked, &r, err, sizeof err);
}

Test(tpm_proto, get_random_2_command)
{
	static const uint8_t want[] = { 0x80, 0x01, 0, 0, 0, 0x0C, 0, 0, 0x01, 0x7B, 0, 0x40 };
	uint8_t cmd[TPM_PROTO_COMMAND_MAX];

	cr_assert_eq(tpm_proto_get_random(TPM_PROTO_V2, 64, cmd, sizeof cmd), sizeof want);
	cr_assert_arr_eq(cmd, want, sizeof want);
	cr_assert_eq(tpm_proto_get_random(TPM_PROTO_V2, 64, cmd, 11), 0);
}

Test(tpm_proto, get_random_12_command)
{
	static const uint8_t want[] = { 0, 0xC1, 0, 0, 0, 0x0E, 0, 0, 0, 0x46, 0, 0, 0x01, 0x02 };
	uint8_t cmd[TPM_PROTO_COMMAND_MAX];

	cr_assert_eq(tpm_proto_get_random(TPM_PROTO_V12, 0x102, cmd, sizeof cmd), sizeof want);
	cr_assert_arr_eq(cmd, want, sizeof want);
	cr_assert_eq(tpm_proto_get_random(TPM_PROTO_V12, 1, cmd, 13), 0);
}

Test(tpm_proto, startup_commands)
{
	static const uint8_t want2[] = { 0x80, 0x01, 0, 0, 0, 0x0C, 0, 0, 0x01, 0x44, 0, 0 };
	static const uint8_t want12[] = { 0, 0xC1, 0, 0, 0, 0x0C, 0, 0, 0, 0x99, 0, 0x01 };
	uint8_t cmd[TPM_PROTO_COMMAND_MAX];

	cr_assert_eq(tpm_proto_startup(TPM_PROTO_V2, cmd, sizeof cmd), sizeof want2);
	cr_assert_arr_eq(cmd, want2, sizeof want2);
	cr_assert_eq(tpm_proto_startup(TPM_PROTO_V12, cmd, sizeof cmd), sizeof want12);
	cr_assert_arr_eq(cmd, want12, sizeof want12);
}

Test(tpm_proto, good_2_response)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0F, 0, 0, 0, 0, 0, 0x03,
		0xDE, 0xAD, 0x42 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_OK, "%s", err);
	cr_assert_eq(r.len, 3);
	cr_assert_eq(r.data, resp + 12);
	cr_assert_eq(r.data[2], 0x42);
}

Test(tpm_proto, good_12_response)
{
	static const uint8_t resp[] = { 0, 0xC4, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x02,
		0x11, 0x22 };

	cr_assert_eq(parse12(resp, sizeof resp, 2), TPM_PROTO_OK, "%s", err);
	cr_assert_eq(r.len, 2);
	cr_assert_eq(r.data, resp + 14);
}

Test(tpm_proto, short_header)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0C, 0, 0, 0 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "short response: 9 bytes, a header needs 10");
	cr_assert_eq(parse2(resp, 0, 64), TPM_PROTO_MALFORMED);
	cr_assert_null(r.data);
}

Test(tpm_proto, success_without_length_field)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0B, 0, 0, 0, 0, 0 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "short response: 11 bytes, no room for the length field");
}

Test(tpm_proto, wrong_tag)
{
	static const uint8_t resp[] = { 0x12, 0x34, 0, 0, 0, 0x0D, 0, 0, 0, 0, 0, 0x01, 0x55 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "wrong tag 0x1234 in a TPM 2.0 response");
	cr_assert_eq(parse12(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "wrong tag 0x1234 in a TPM 1.2 response");
}

Test(tpm_proto, sessions_tag_is_not_for_get_random)
{
	static const uint8_t resp[] = { 0x80, 0x02, 0, 0, 0, 0x0D, 0, 0, 0, 0, 0, 0x01, 0x55 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "wrong tag 0x8002: GetRandom was sent without sessions");
}

Test(tpm_proto, size_field_larger_than_received)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0x10, 0x00, 0, 0, 0, 0, 0, 0x01, 0x55 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "wrong size: the header says 4096 bytes, 13 arrived");
}

Test(tpm_proto, size_field_smaller_than_received)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0C, 0, 0, 0, 0, 0, 0x01, 0x55 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "wrong size: the header says 12 bytes, 13 arrived");
}

Test(tpm_proto, length_larger_than_the_response)
{
	/* Size agrees with what arrived, but the length field claims 0x1000 bytes. */
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0E, 0, 0, 0, 0, 0x10, 0x00, 1, 2 };

	cr_assert_eq(parse2(resp, sizeof resp, 0xFFFF), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "length 4096 does not match the 2 bytes after it");
	cr_assert_null(r.data);
}

Test(tpm_proto, length_larger_than_asked)
{
	uint8_t resp[12 + 65];

	memset(resp, 0xA5, sizeof resp);
	memcpy(resp, (const uint8_t[]){ 0x80, 0x01, 0, 0, 0, 12 + 65, 0, 0, 0, 0, 0, 65 }, 12);
	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "length 65 is more than the 64 bytes asked for");
	cr_assert_eq(parse2(resp, sizeof resp, 65), TPM_PROTO_OK, "%s", err);
}

Test(tpm_proto, length_smaller_than_the_response)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0F, 0, 0, 0, 0, 0, 0x01, 1, 2, 3 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "length 1 does not match the 3 bytes after it");
}

Test(tpm_proto, zero_bytes_is_refused)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0C, 0, 0, 0, 0, 0, 0 };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "no random bytes in a successful response");
}

Test(tpm_proto, length_12_larger_than_the_response)
{
	static const uint8_t resp[] = { 0, 0xC4, 0, 0, 0, 0x0F, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
		7 };

	cr_assert_eq(parse12(resp, sizeof resp, 0xFFFF), TPM_PROTO_MALFORMED);
	cr_assert_str_eq(err, "length 4294967295 is more than the 65535 bytes asked for");
}

Test(tpm_proto, error_codes)
{
	static const struct {
		uint32_t rc;
		enum tpm_proto_rc_kind kind;
		const char *name;
	} cases[] = {
		{ TPM2_RC_INITIALIZE, TPM_PROTO_RC_STARTUP, "TPM_RC_INITIALIZE" },
		{ TPM2_RC_RETRY, TPM_PROTO_RC_RETRY, "TPM_RC_RETRY" },
		{ TPM2_RC_TESTING, TPM_PROTO_RC_RETRY, "TPM_RC_TESTING" },
		{ TPM2_RC_YIELDED, TPM_PROTO_RC_RETRY, "TPM_RC_YIELDED" },
		{ 0x101, TPM_PROTO_RC_FATAL, "TPM_RC_FAILURE" },
		{ 0x9A2, TPM_PROTO_RC_FATAL, "rc 0x9a2" },
	};
	uint8_t resp[10] = { 0x80, 0x01, 0, 0, 0, 0x0A };
	char name[32];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		resp[6] = (uint8_t)(cases[i].rc >> 24);
		resp[7] = (uint8_t)(cases[i].rc >> 16);
		resp[8] = (uint8_t)(cases[i].rc >> 8);
		resp[9] = (uint8_t)cases[i].rc;
		cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_RC, "rc 0x%x", cases[i].rc);
		cr_assert_eq(r.rc, cases[i].rc);
		cr_assert_null(r.data);
		cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V2, r.rc), cases[i].kind);
		cr_assert_str_eq(tpm_proto_rc_name(TPM_PROTO_V2, r.rc, name, sizeof name),
		    cases[i].name);
	}
}

Test(tpm_proto, error_codes_12)
{
	char name[32];

	cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V12, TPM12_INVALID_POSTINIT),
	    TPM_PROTO_RC_STARTUP);
	cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V12, TPM12_RETRY), TPM_PROTO_RC_RETRY);
	cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V12, TPM12_DOING_SELFTEST), TPM_PROTO_RC_RETRY);
	cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V12, 0x1E), TPM_PROTO_RC_FATAL);
	/* The same number means different things in the two families. */
	cr_assert_eq(tpm_proto_rc_kind(TPM_PROTO_V12, TPM2_RC_INITIALIZE), TPM_PROTO_RC_FATAL);
	cr_assert_str_eq(tpm_proto_rc_name(TPM_PROTO_V12, 0x26, name, sizeof name),
	    "TPM_INVALID_POSTINIT");
}

Test(tpm_proto, a_12_answer_to_a_2_command)
{
	/* What a TPM 1.2 says to a TPM 2.0 command: TPM_BADTAG under its own tag. */
	static const uint8_t resp[] = { 0, 0xC4, 0, 0, 0, 0x0A, 0, 0, 0, 0x1E };

	cr_assert_eq(parse2(resp, sizeof resp, 64), TPM_PROTO_OTHER_VERSION);
	cr_assert_str_eq(err, "TPM 2.0 command answered with a TPM 1.2 tag 0x00c4 (rc 0x1e)");
	cr_assert_null(r.data);
}

Test(tpm_proto, a_2_answer_to_a_12_command)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0, 0x0A, 0, 0, 0x01, 0x43 };

	cr_assert_eq(parse12(resp, sizeof resp, 64), TPM_PROTO_OTHER_VERSION);
	cr_assert_str_eq(err, "TPM 1.2 command answered with a TPM 2.0 tag 0x8001 (rc 0x143)");
}

Test(tpm_proto, startup_header)
{
	static const uint8_t ok[] = { 0x80, 0x01, 0, 0, 0, 0x0A, 0, 0, 0, 0 };
	static const uint8_t init[] = { 0x80, 0x01, 0, 0, 0, 0x0A, 0, 0, 0x01, 0x00 };

	cr_assert_eq(tpm_proto_parse_header(TPM_PROTO_V2, ok, sizeof ok, &r, err, sizeof err),
	    TPM_PROTO_OK);
	cr_assert_eq(tpm_proto_parse_header(TPM_PROTO_V2, init, sizeof init, &r, err, sizeof err),
	    TPM_PROTO_RC);
	cr_assert_eq(r.rc, TPM2_RC_INITIALIZE);
}

Test(tpm_proto, announced_size)
{
	static const uint8_t resp[] = { 0x80, 0x01, 0, 0, 0x01, 0x02 };

	cr_assert_eq(tpm_proto_announced_size(resp, 5), 0);
	cr_assert_eq(tpm_proto_announced_size(resp, 6), 0x102);
}

/*
 * Random and mutated responses: the parser never reads outside the buffer
 * (run under valgrind or ASan to see that) and whatever it accepts is
 * consistent with what arrived and what was asked.
 */
Test(tpm_proto, random_responses_never_break_the_invariants)
{
	uint8_t *resp;
	size_t len, asked, i, accepted = 0;
	enum tpm_proto_status s;
	unsigned seed = 12345;

	for (i = 0; i < 200000; i++) {
		len = (size_t)rand_r(&seed) % 80;
		asked = 1 + (size_t)rand_r(&seed) % 70;
		/* An exact-size heap buffer, so an overread is a real error. */
		resp = malloc(len ? len : 1);
		for (size_t j = 0; j < len; j++)
			resp[j] = (uint8_t)rand_r(&seed);
		if (len >= 12 && rand_r(&seed) % 2) {
			/* Mostly well formed, to reach the deeper checks. */
			resp[0] = 0x80, resp[1] = 0x01;
			resp[2] = resp[3] = resp[4] = 0, resp[5] = (uint8_t)len;
			if (rand_r(&seed) % 4)
				resp[6] = resp[7] = resp[8] = resp[9] = 0;
			if (rand_r(&seed) % 2)
				resp[10] = 0, resp[11] = (uint8_t)(len - 12);
		}
		s = parse2(resp, len, asked);
		if (s == TPM_PROTO_OK) {
			accepted++;
			cr_assert(r.len >= 1 && r.len <= asked);
			cr_assert_eq(r.data, resp + 12);
			cr_assert_eq(12 + r.len, len);
		} else {
			cr_assert_null(r.data);
			if (s != TPM_PROTO_RC)
				cr_assert_neq(*err, '\0');
		}
		free(resp);
	}
	cr_assert_gt(accepted, 0, "the generator never produced a valid response");
}
