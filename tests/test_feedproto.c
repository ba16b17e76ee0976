/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "feedproto.h"

static uint8_t buf[FEEDPROTO_MAX_FRAME + 64];
static uint8_t payload[FEEDPROTO_MAX_PAYLOAD + 64];

/* A header written by hand, as a hostile sender would: type, zero, length, args. */
static size_t
raw(uint16_t type, uint16_t zero, uint32_t len, uint32_t arg0, uint32_t arg1, size_t body)
{
	uint32_t f[3] = { len, arg0, arg1 };
	size_t i;

	buf[0] = (uint8_t)type;
	buf[1] = (uint8_t)(type >> 8);
	buf[2] = (uint8_t)zero;
	buf[3] = (uint8_t)(zero >> 8);
	for (i = 0; i < 12; i++)
		buf[4 + i] = (uint8_t)(f[i / 4] >> (8 * (i % 4)));
	memset(buf + FEEDPROTO_HEADER_BYTES, 0xa5, body);
	return FEEDPROTO_HEADER_BYTES + body;
}

/* Decode what raw() built. */
static enum feedproto_refusal
decode(size_t len)
{
	struct feedproto_frame f;

	return feedproto_decode(buf, len, false, &f);
}

Test(feedproto, every_type_round_trips)
{
	static const struct { enum feedproto_type t; uint32_t a0, a1; size_t len; } cases[] = {
		{ FEEDPROTO_HELLO, 0, 0, 0 }, { FEEDPROTO_ADD, 512, 0, 64 },
		{ FEEDPROTO_ADD, 8 * 4096, 0, 4096 }, { FEEDPROTO_MIX, 0, 0, 260 },
		{ FEEDPROTO_RESEED, 0, 0, 0 }, { FEEDPROTO_QUERY, 0, 0, 0 },
		{ FEEDPROTO_STATUS, 0, 0, 12 }, { FEEDPROTO_ANSWER, 13, 0, 0 },
		{ FEEDPROTO_STARTED, 4242, 0, 0 }, { FEEDPROTO_EXITED, 4242, 0x0b, 0 },
		{ FEEDPROTO_SPAWN, 0, 0, 0 }, { FEEDPROTO_KILL, 4242, 0, 0 },
		{ FEEDPROTO_SIGNAL, 10, 0, 0 }, { FEEDPROTO_STOP, 0, 0, 0 },
	};
	struct feedproto_frame f;
	size_t i, n;

	memset(payload, 'x', sizeof payload);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		n = feedproto_encode(buf, sizeof buf, cases[i].t, cases[i].a0, cases[i].a1, payload,
		    cases[i].len);
		cr_assert_eq(n, FEEDPROTO_HEADER_BYTES + cases[i].len, "type %d", cases[i].t);
		cr_assert_eq(feedproto_decode(buf, n, false, &f), FEEDPROTO_OK, "type %d",
		    cases[i].t);
		cr_expect_eq(f.type, cases[i].t);
		cr_expect_eq(f.arg0, cases[i].a0);
		cr_expect_eq(f.arg1, cases[i].a1);
		cr_expect_eq(f.len, cases[i].len);
		cr_expect(f.len == 0 || memcmp(f.payload, payload, f.len) == 0);
	}
}

Test(feedproto, short_or_inconsistent_frames_are_malformed)
{
	size_t n;

	for (n = 0; n < FEEDPROTO_HEADER_BYTES; n++)
		cr_expect_eq(decode(n), FEEDPROTO_MALFORMED, "%zu bytes", n);
	/* The length field against the datagram's size, both ways. */
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 10, 0, 0, 12)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 12, 0, 0, 10)), FEEDPROTO_MALFORMED);
	/* Reserved fields and arguments a type does not have. */
	cr_expect_eq(decode(raw(FEEDPROTO_QUERY, 1, 0, 0, 0, 0)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_QUERY, 0x100, 0, 0, 0, 0)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_QUERY, 0, 0, 1, 0, 0)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_RESEED, 0, 4, 0, 0, 4)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 8, 8, 1, 8)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_KILL, 0, 0, 0, 0, 0)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_SIGNAL, 0, 0, 65, 0, 0)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_ANSWER, 0, 5, 0, 0, 5)), FEEDPROTO_MALFORMED);
}

Test(feedproto, unknown_types_are_refused)
{
	static const uint16_t types[] = { 0, 7, 15, 17, 31, 34, 47, 52, 0xffff };
	size_t i;

	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		cr_expect_eq(decode(raw(types[i], 0, 0, 0, 0, 0)), FEEDPROTO_UNKNOWN_TYPE,
		    "type %u", types[i]);
}

Test(feedproto, oversized_frames_are_refused)
{
	struct feedproto_frame f;

	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 4097, 0, 0, 4097)), FEEDPROTO_OVERSIZED);
	cr_expect_eq(decode(raw(FEEDPROTO_MIX, 0, 0xffffffffu, 0, 0, 8)), FEEDPROTO_OVERSIZED);
	/* The socket said it cut the message: whatever arrived is refused. */
	raw(FEEDPROTO_ADD, 0, 64, 512, 0, 64);
	cr_expect_eq(feedproto_decode(buf, 80, true, &f), FEEDPROTO_OVERSIZED);
	cr_expect_eq(decode(raw(FEEDPROTO_STATUS, 0, 257, 0, 0, 257)), FEEDPROTO_OVERSIZED);
	/* The largest frame passes. */
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 4096, 8 * 4096, 0, 4096)), FEEDPROTO_OK);
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_ADD, 0, 0, payload, 4097), 0);
}

Test(feedproto, credit_above_eight_bits_a_byte_is_refused)
{
	size_t len;

	for (len = 0; len <= 4096; len += len < 64 ? 1 : 509) {
		cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, (uint32_t)len, (uint32_t)(8 * len), 0,
		    len)), FEEDPROTO_OK, "%zu bytes at 8 bits", len);
		cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, (uint32_t)len, (uint32_t)(8 * len + 1), 0,
		    len)), FEEDPROTO_CREDIT, "%zu bytes at 8 bits and one more", len);
	}
	/* No wrap-around: the largest counts are refused. */
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 4096, 0xffffffffu, 0, 4096)), FEEDPROTO_CREDIT);
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 4096, 0x80000000u, 0, 4096)), FEEDPROTO_CREDIT);
	/* A mix is never credited: a credit on one is an attempt at it. */
	cr_expect_eq(decode(raw(FEEDPROTO_MIX, 0, 64, 1, 0, 64)), FEEDPROTO_CREDIT);
	/* And nothing that would be refused is ever encoded. */
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_ADD, 513, 0, payload, 64), 0);
}

Test(feedproto, status_text_is_printable_ascii)
{
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_STATUS, 0, 0, "1 running", 9),
	    FEEDPROTO_HEADER_BYTES + 9);
	/* A newline would start another systemd field. */
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_STATUS, 0, 0, "x\nREADY=1", 9),
	    0);
	raw(FEEDPROTO_STATUS, 0, 3, 0, 0, 3);
	memcpy(buf + FEEDPROTO_HEADER_BYTES, "a\0b", 3);
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 3), FEEDPROTO_MALFORMED);
}

Test(feedproto, answers_carry_the_state)
{
	struct feedproto_state in = {
		.crng_ready = true, .entropy_avail = 256, .worker_restarts = 3,
		.bits_credited = 0x123456789aull, .adds = 77, .last_exit = 0x8b,
		.worker_exits = 3,
	}, out;
	struct feedproto_frame f;
	size_t n;
	int r;

	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		in.refused[r] = (uint32_t)(100 + r);
	n = feedproto_encode_answer(buf, sizeof buf, 0, &in);
	cr_assert_eq(feedproto_decode(buf, n, false, &f), FEEDPROTO_OK);
	feedproto_answer_state(&f, &out);
	cr_expect(memcmp(&in, &out, sizeof in) == 0);
	/* An answer without state carries the errno and zeros. */
	n = feedproto_encode_answer(buf, sizeof buf, 1, NULL);
	cr_assert_eq(feedproto_decode(buf, n, false, &f), FEEDPROTO_OK);
	cr_expect_eq(f.arg0, 1);
	feedproto_answer_state(&f, &out);
	cr_expect_eq(out.bits_credited, 0);
	cr_expect_not(out.crng_ready);
}

Test(feedproto, only_requests_come_from_a_worker)
{
	cr_expect(feedproto_from_worker(FEEDPROTO_ADD));
	cr_expect(feedproto_from_worker(FEEDPROTO_STATUS));
	cr_expect_not(feedproto_from_worker(FEEDPROTO_ANSWER));
	cr_expect_not(feedproto_from_worker(FEEDPROTO_STARTED));
	cr_expect_not(feedproto_from_worker(FEEDPROTO_KILL));
	cr_expect_str_eq(feedproto_refusal_name(FEEDPROTO_CREDIT), "credit");
	cr_expect_str_eq(feedproto_refusal_name(FEEDPROTO_FLOOD), "flood");
	cr_expect_str_eq(feedproto_refusal_name(FEEDPROTO_NREFUSALS), "ok");
}
