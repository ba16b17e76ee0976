/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
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

/*
 * A hand-written ADD that says it has arg0 segments: raw()'s header, then
 * each segment's length and credit from the (length, credit) pairs and its
 * bytes (0xa5). The header's length is what was written.
 */
static size_t
raw_add(uint32_t arg0, size_t nseg, const uint32_t (*seg)[2])
{
	size_t i, off = FEEDPROTO_HEADER_BYTES, k;

	for (i = 0; i < nseg; i++) {
		for (k = 0; k < 8; k++)
			buf[off + k] = (uint8_t)(seg[i][k / 4] >> (8 * (k % 4)));
		memset(buf + off + 8, 0xa5, seg[i][0]);
		off += 8 + seg[i][0];
	}
	raw(FEEDPROTO_ADD, 0, (uint32_t)(off - FEEDPROTO_HEADER_BYTES), arg0, 0, 0);
	return off;
}
#define RAW_ADD(ARG0, ...)                                                          \
	raw_add(ARG0, sizeof(const uint32_t[][2]){ __VA_ARGS__ } / sizeof(uint32_t[2]),  \
	    (const uint32_t[][2]){ __VA_ARGS__ })

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
		{ FEEDPROTO_HELLO, 0, 0, 0 }, { FEEDPROTO_MIX, 0, 0, 260 },
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
	/* The largest frame passes: one segment of 4088 bytes at 8 bits each. */
	cr_expect_eq(decode(RAW_ADD(1, { 4088, 8 * 4088 })), FEEDPROTO_OK);
	cr_expect_eq(decode(RAW_ADD(1, { 4089, 0 })), FEEDPROTO_OVERSIZED);
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_MIX, 0, 0, payload, 4097), 0);
}

Test(feedproto, credit_above_eight_bits_a_byte_is_refused)
{
	uint32_t len;

	for (len = 1; len <= FEEDPROTO_MAX_SEGMENT_BYTES; len += len < 64 ? 1 : 509) {
		cr_expect_eq(decode(RAW_ADD(1, { len, 8 * len })), FEEDPROTO_OK,
		    "%u bytes at 8 bits", len);
		cr_expect_eq(decode(RAW_ADD(1, { len, 8 * len + 1 })), FEEDPROTO_CREDIT,
		    "%u bytes at 8 bits and one more", len);
	}
	/* No wrap-around: the largest counts are refused. */
	cr_expect_eq(decode(RAW_ADD(1, { 4088, 0xffffffffu })), FEEDPROTO_CREDIT);
	cr_expect_eq(decode(RAW_ADD(1, { 4088, 0x80000000u })), FEEDPROTO_CREDIT);
	/* Each segment by itself: a greedy one is not hidden by a modest one beside it. */
	cr_expect_eq(decode(RAW_ADD(2, { 64, 0 }, { 64, 8 * 64 + 1 })), FEEDPROTO_CREDIT);
	cr_expect_eq(decode(RAW_ADD(2, { 64, 16 * 64 }, { 64, 0 })), FEEDPROTO_CREDIT);
	cr_expect_eq(decode(RAW_ADD(3, { 1, 8 }, { 2000, 16000 }, { 7, 56 })), FEEDPROTO_OK);
	/* A mix is never credited: a credit on one is an attempt at it. */
	cr_expect_eq(decode(raw(FEEDPROTO_MIX, 0, 64, 1, 0, 64)), FEEDPROTO_CREDIT);
}

Test(feedproto, an_add_is_segments_that_fill_it_exactly)
{
	/* arg0 is the count: 1 to 64. */
	cr_expect_eq(decode(RAW_ADD(0, { 64, 512 })), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(RAW_ADD(65, { 64, 512 })), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(RAW_ADD(2, { 64, 512 })), FEEDPROTO_MALFORMED, "fewer than it says");
	cr_expect_eq(decode(RAW_ADD(1, { 64, 512 }, { 64, 512 })), FEEDPROTO_MALFORMED,
	    "more than it says");
	cr_expect_eq(decode(RAW_ADD(2, { 64, 512 }, { 0, 0 })), FEEDPROTO_MALFORMED,
	    "an empty segment");
	cr_expect_eq(decode(raw(FEEDPROTO_ADD, 0, 0, 1, 0, 0)), FEEDPROTO_MALFORMED, "no payload");
	/* A segment's length past the payload's end, small and huge. */
	RAW_ADD(1, { 64, 512 });
	buf[FEEDPROTO_HEADER_BYTES] = 65;
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 72), FEEDPROTO_MALFORMED);
	memset(buf + FEEDPROTO_HEADER_BYTES, 0xff, 4);
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 72), FEEDPROTO_MALFORMED);
	/* The second segment's header cut short; then bytes after the last segment. */
	RAW_ADD(2, { 64, 512 }, { 1, 0 });
	raw(FEEDPROTO_ADD, 0, 72 + 4, 2, 0, 0);
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 76), FEEDPROTO_MALFORMED);
	raw(FEEDPROTO_ADD, 0, 72 + 4, 1, 0, 0);
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 76), FEEDPROTO_MALFORMED);
	/* 64 segments are allowed. */
	{
		struct feedproto_batch b = { 0 };
		unsigned i;

		for (i = 0; i < FEEDPROTO_MAX_SEGMENTS; i++)
			cr_assert_eq(feedproto_batch_add(&b, "z", 1, 8), 0);
		cr_expect_gt(feedproto_encode(buf, sizeof buf, FEEDPROTO_ADD, b.segments, 0,
		    b.payload, b.len), 0);
	}
}

Test(feedproto, a_batch_round_trips_segment_by_segment)
{
	struct feedproto_batch b = { 0 };
	struct feedproto_segment seg;
	struct feedproto_frame f;
	size_t n, off = 0;
	unsigned i;

	for (i = 0; i < 3; i++)
		memset(payload + 1000 * i, 'a' + (int)i, 1000);
	cr_assert_eq(feedproto_batch_add(&b, payload, 10, 80), 0);
	cr_assert_eq(feedproto_batch_add(&b, payload + 1000, 1000, 0), 0);
	cr_assert_eq(feedproto_batch_add(&b, payload + 2000, 3, 1), 0);
	cr_expect_eq(b.segments, 3);
	cr_expect_eq(b.len, 3 * FEEDPROTO_SEGMENT_HEADER_BYTES + 1013);
	cr_expect_eq(feedproto_batch_bytes(&b), 1013);
	n = feedproto_encode(buf, sizeof buf, FEEDPROTO_ADD, b.segments, 0, b.payload, b.len);
	cr_assert_eq(feedproto_decode(buf, n, false, &f), FEEDPROTO_OK);
	cr_assert(feedproto_next_segment(&f, &off, &seg));
	cr_expect(seg.len == 10 && seg.credit == 80 && memcmp(seg.bytes, payload, 10) == 0);
	cr_assert(feedproto_next_segment(&f, &off, &seg));
	cr_expect(seg.len == 1000 && seg.credit == 0 &&
	    memcmp(seg.bytes, payload + 1000, 1000) == 0);
	cr_assert(feedproto_next_segment(&f, &off, &seg));
	cr_expect(seg.len == 3 && seg.credit == 1 && memcmp(seg.bytes, payload + 2000, 3) == 0);
	cr_expect_not(feedproto_next_segment(&f, &off, &seg));
	/* Only an ADD has segments. */
	n = feedproto_encode(buf, sizeof buf, FEEDPROTO_MIX, 0, 0, b.payload, b.len);
	cr_assert_eq(feedproto_decode(buf, n, false, &f), FEEDPROTO_OK);
	off = 0;
	cr_expect_not(feedproto_next_segment(&f, &off, &seg));
	/* Cleared: empty, its bytes wiped. */
	feedproto_batch_clear(&b);
	cr_expect(b.segments == 0 && b.len == 0);
	for (n = 0; n < sizeof b.payload; n++)
		cr_assert_eq(b.payload[n], 0, "byte %zu", n);
}

Test(feedproto, a_batch_holds_what_one_add_may_carry)
{
	struct feedproto_batch b = { 0 };
	unsigned i;

	memset(payload, 'x', sizeof payload);
	/* 56 steps of 64 bytes with their headers: 4032 bytes; a 57th does not fit. */
	for (i = 0; i < 56; i++)
		cr_assert_eq(feedproto_batch_add(&b, payload, 64, 512), 0, "step %u", i);
	cr_expect_not(feedproto_batch_fits(&b, 64));
	cr_expect_eq(feedproto_batch_add(&b, payload, 64, 512), -1);
	cr_expect(feedproto_batch_fits(&b, 56), "4032 + 8 + 56 = 4096 still fits");
	cr_expect_not(feedproto_batch_fits(&b, 57));
	cr_expect_eq(b.segments, 56, "a refused segment adds nothing");
	feedproto_batch_clear(&b);
	/* One segment of 4088 bytes fills an ADD; 4089 never fits; nor does an empty one. */
	cr_expect(feedproto_batch_fits(&b, FEEDPROTO_MAX_SEGMENT_BYTES));
	cr_expect_not(feedproto_batch_fits(&b, FEEDPROTO_MAX_SEGMENT_BYTES + 1));
	cr_expect_not(feedproto_batch_fits(&b, 0));
	/* Never more than 64 segments, however small. */
	for (i = 0; i < FEEDPROTO_MAX_SEGMENTS; i++)
		cr_assert_eq(feedproto_batch_add(&b, payload, 1, 0), 0);
	cr_expect_not(feedproto_batch_fits(&b, 1));
	feedproto_batch_clear(&b);
	/* Nothing the feeder would refuse goes in: above 8 bits a byte. */
	cr_expect_eq(feedproto_batch_add(&b, payload, 64, 513), -1);
	cr_expect_eq(b.segments, 0);
	/* Written in place and refused at commit: nothing added, the bytes wiped. */
	{
		uint8_t *at = feedproto_batch_space(&b, 64);
		size_t k;

		cr_assert_not_null(at);
		memset(at, 'w', 64);
		cr_expect_eq(feedproto_batch_commit(&b, 64, 513), -1);
		cr_expect(b.segments == 0 && b.len == 0);
		for (k = 0; k < sizeof b.payload; k++)
			cr_assert_eq(b.payload[k], 0, "byte %zu wiped", k);
		cr_expect_null(feedproto_batch_space(&b, FEEDPROTO_MAX_SEGMENT_BYTES + 1));
	}
	/* Nor is it ever encoded. */
	cr_expect_eq(feedproto_encode(buf, sizeof buf, FEEDPROTO_ADD, 1, 0, payload, 64), 0,
	    "64 bytes of 'x' are no segment");
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

Test(feedproto, hook_frames_round_trip)
{
	struct feedproto_hooks req = { .generation = 0x0102030405060708ull, .trigger = 3 }, got;
	struct feedproto_hook_ran ran = { .generation = 7, .result = FEEDPROTO_HOOK_FAILED,
	    .reason = FEEDPROTO_HOOK_SIGNAL, .exit_status = 9, .duration_ms = 1234 }, back;
	struct feedproto_frame f;
	size_t len;

	memset(req.id, 0xc4, sizeof req.id);
	len = feedproto_encode_hooks(buf, sizeof buf, &req);
	cr_assert_eq(len, FEEDPROTO_HEADER_BYTES + FEEDPROTO_HOOKS_BYTES);
	cr_assert_eq(feedproto_decode(buf, len, false, &f), FEEDPROTO_OK);
	feedproto_hooks_of(&f, &got);
	cr_expect_eq(got.generation, req.generation);
	cr_expect_eq(got.trigger, 3);
	cr_expect_arr_eq(got.id, req.id, sizeof req.id);
	snprintf(ran.name, sizeof ran.name, "10-random-seed");
	len = feedproto_encode_hook_ran(buf, sizeof buf, &ran);
	cr_assert_gt(len, 0);
	cr_assert_eq(feedproto_decode(buf, len, false, &f), FEEDPROTO_OK);
	feedproto_hook_ran_of(&f, &back);
	cr_expect_str_eq(back.name, "10-random-seed");
	cr_expect_eq(back.generation, 7);
	cr_expect_eq(back.result, FEEDPROTO_HOOK_FAILED);
	cr_expect_eq(back.reason, FEEDPROTO_HOOK_SIGNAL);
	cr_expect_eq(back.exit_status, 9);
	cr_expect_eq(back.duration_ms, 1234);
	len = feedproto_encode_hooks_done(buf, sizeof buf, 7, 3, 1);
	cr_assert_eq(feedproto_decode(buf, len, false, &f), FEEDPROTO_OK);
	cr_expect_eq(feedproto_hooks_done_generation(&f), 7);
	cr_expect_eq(f.arg0, 3);
	cr_expect_eq(f.arg1, 1);
	cr_expect_str_eq(feedproto_hook_result_name(FEEDPROTO_HOOK_TIMEOUT), "timeout");
}

Test(feedproto, hook_frames_are_checked_as_strictly_as_the_others)
{
	struct feedproto_hook_ran ran = { .generation = 1 };

	/* HOOKS: exactly 24 bytes, a trigger below 256, arg1 zero. */
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS, 0, 23, 0, 0, 23)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS, 0, 25, 0, 0, 25)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS, 0, 24, 256, 0, 24)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS, 0, 24, 0, 1, 24)), FEEDPROTO_MALFORMED);
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS, 0, 24, 4, 0, 24)), FEEDPROTO_OK);
	/* HOOK_RAN: a name of 1 to 64 printable bytes, no '/'. */
	cr_expect_eq(decode(raw(FEEDPROTO_HOOK_RAN, 0, 8, 0, 0, 8)), FEEDPROTO_MALFORMED);
	raw(FEEDPROTO_HOOK_RAN, 0, 8 + 65, 0, 0, 8 + 65);
	memset(buf + FEEDPROTO_HEADER_BYTES + 8, 'a', 65);
	cr_expect_eq(decode(FEEDPROTO_HEADER_BYTES + 8 + 65), FEEDPROTO_MALFORMED);
	snprintf(ran.name, sizeof ran.name, "../../etc/shadow");
	cr_expect_eq(feedproto_encode_hook_ran(buf, sizeof buf, &ran), 0, "no '/' in a name");
	snprintf(ran.name, sizeof ran.name, "bad\nname");
	cr_expect_eq(feedproto_encode_hook_ran(buf, sizeof buf, &ran), 0, "printable only");
	/* HOOKS_DONE: the generation, 8 bytes. */
	cr_expect_eq(decode(raw(FEEDPROTO_HOOKS_DONE, 0, 4, 0, 0, 4)), FEEDPROTO_MALFORMED);
	/* None of them is a worker's request to the feeder. */
	cr_expect_not(feedproto_from_worker(FEEDPROTO_HOOKS));
	cr_expect_not(feedproto_from_worker(FEEDPROTO_HOOK_RAN));
	cr_expect_not(feedproto_from_worker(FEEDPROTO_HOOKS_DONE));
}
