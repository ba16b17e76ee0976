/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gcrypt.h>

#include "condition.h"
#include "fips.h"
#include "pipeline.h"
#include "repeat.h"

#define STREAM_MAX (1u << 20)
/* How far a hit's mark reaches back before it, and on past its window's start. */
#define REACH_BACK (REPEAT_BYTE_PERIOD - 1)
#define REACH_ON (REPEAT_BYTE_PERIOD + REPEAT_BYTE_WINDOW - 1)

/* What the repeat test handed on: the bytes, and per byte whether it was marked. */
static uint8_t *out;
static uint8_t *marked;
static size_t out_len;

static void
random_bytes(uint8_t *buf, size_t len)
{
	condition_global_init();
	gcry_create_nonce(buf, len);
}

static void
release(void *arg, const uint8_t *buf, size_t len, bool repeated)
{
	cr_assert_leq(out_len + len, STREAM_MAX);
	memcpy(out + out_len, buf, len);
	memset(marked + out_len, repeated, len);
	out_len += len;
}

static void
setup(void)
{
	out = malloc(STREAM_MAX);
	marked = malloc(STREAM_MAX);
	out_len = 0;
}

static void
teardown(void)
{
	free(out);
	free(marked);
}

/* Push a stream through in pieces of varying sizes (1 to 9000 bytes), then flush. */
static void
run(struct repeat *r, const uint8_t *in, size_t len)
{
	static const size_t sizes[] = { 1, 4096, 17, 2500, 9000, 63, 64, 700, 3, 32768 };
	size_t off = 0, i;

	for (i = 0; off < len; i++) {
		size_t n = sizes[i % 10];

		if (n > len - off)
			n = len - off;
		repeat_input(r, in + off, n, release, NULL);
		off += n;
	}
	repeat_flush(r, release, NULL);
	cr_assert_eq(out_len, len, "every byte is handed on once the input ends");
	cr_assert_arr_eq(out, in, len, "unchanged and in order");
}

/* Count the marked bytes in [from, until). */
static size_t
count_marked(size_t from, size_t until)
{
	size_t i, n = 0;

	for (i = from; i < until; i++)
		n += marked[i];
	return n;
}

TestSuite(repeat, .init = setup, .fini = teardown);

Test(repeat, random_data_is_never_marked)
{
	struct repeat r;
	uint8_t *in = malloc(STREAM_MAX);

	random_bytes(in, STREAM_MAX);
	repeat_init_bytes(&r);
	run(&r, in, STREAM_MAX);
	cr_expect_eq(count_marked(0, STREAM_MAX), 0, "1 MiB of random bytes holds no repeat");
	cr_expect_eq(r.hits, 0);
	repeat_free(&r);
	free(in);
}

/* A block of `period` random bytes, repeated to fill len: every repeat is marked. */
static void
check_period(size_t period, size_t len)
{
	struct repeat r;
	uint8_t *in = malloc(len);
	size_t i;

	random_bytes(in, period);
	for (i = period; i < len; i++)
		in[i] = in[i - period];
	repeat_init_bytes(&r);
	run(&r, in, len);
	cr_expect_eq(count_marked(period, len), len - period,
	    "every byte of every repeat of a %zu-byte block is marked", period);
	cr_expect_eq(count_marked(0, period - REACH_BACK), 0,
	    "the first copy is not (but for the %d bytes a hit can reach back)", REACH_BACK);
	repeat_free(&r);
	free(in);
}

Test(repeat, repeated_2500_byte_blocks_are_marked)
{
	check_period(2500, 20 * 2500);
}

Test(repeat, repeated_4096_byte_blocks_are_marked)
{
	check_period(4096, 20 * 4096);
}

Test(repeat, a_stale_32k_read_is_marked)
{
	check_period(32768, 4 * 32768);
}

Test(repeat, a_64_byte_chunk_repeated_at_any_offset_is_marked)
{
	static const size_t at[] = { 1000, 5003, 9999, 20001, 30030, 47000, 60007 };
	struct repeat r;
	uint8_t *in = malloc(65536), chunk[64];
	size_t i, k;

	for (k = 0; k < 64; k++) { /* every alignment against both grids */
		random_bytes(in, 65536);
		random_bytes(chunk, sizeof chunk);
		for (i = 0; i < sizeof at / sizeof at[0]; i++)
			memcpy(in + at[i] + (i > 0 ? k : 0), chunk, sizeof chunk);
		out_len = 0;
		repeat_init_bytes(&r);
		run(&r, in, 65536);
		for (i = 1; i < sizeof at / sizeof at[0]; i++) {
			size_t s = at[i] + k;

			cr_assert_eq(count_marked(s, s + 64), 64, "copy %zu at offset %zu: marked", i, s);
			/*
			 * Marks reach no further than a hit can (the last hit
			 * starts at most 8 bytes before the copy's end); 8 more
			 * for the chance (1 in 256 a byte) that the random bytes
			 * next to two copies are equal, making the repeat longer.
			 */
			cr_assert_eq(count_marked(s + 56 + REACH_ON + 8,
			    i + 1 < sizeof at / sizeof at[0] ? at[i + 1] + k - REACH_BACK - 8 : 65536),
			    0, "nothing after copy %zu", i);
		}
		cr_assert_eq(count_marked(0, at[1] + k - REACH_BACK - 8), 0,
		    "the first copy is not marked");
		repeat_free(&r);
	}
	free(in);
}

/*
 * A copy of len random bytes at `copy` of those at `orig` in 4 KiB of
 * random data, the bytes next to both made to differ (so the repeat is
 * exactly len bytes long): how many of its bytes were marked, and the hits.
 */
static size_t
copy_marked(size_t len, size_t orig, size_t copy, uint64_t *hits)
{
	static uint8_t in[4096];
	struct repeat r;

	random_bytes(in, sizeof in);
	memcpy(in + copy, in + orig, len);
	in[copy - 1] = (uint8_t)(in[orig - 1] + 1);
	in[copy + len] = (uint8_t)(in[orig + len] + 1);
	out_len = 0;
	repeat_init_bytes(&r);
	run(&r, in, sizeof in);
	*hits = r.hits;
	repeat_free(&r);
	return count_marked(copy, copy + len);
}

/*
 * The documented minimum, exactly: a repeat of repeat_min_caught() bytes
 * is caught at every alignment of the copy against the look-up grid and
 * of the original against the remembered one (7 x 8); one byte shorter,
 * it slips between the grids at exactly one of them.
 */
Test(repeat, the_minimum_is_exact)
{
	struct repeat r;
	size_t min, c, o, missed = 0;
	uint64_t hits;

	repeat_init_bytes(&r);
	min = repeat_min_caught(&r);
	repeat_free(&r);
	cr_assert_eq(min, 63, "8-byte windows, strides 8 and 7: 8 + 56 - 1");
	for (o = 0; o < REPEAT_BYTE_INSERT; o++)
		for (c = 0; c < REPEAT_BYTE_LOOKUP; c++) {
			cr_assert_eq(copy_marked(min, 1000 + o, 2002 + c, &hits), min,
			    "a %zu-byte repeat from %zu at %zu: every byte marked", min,
			    1000 + o, 2002 + c);
			if (copy_marked(min - 1, 1000 + o, 2002 + c, &hits) == 0 && hits == 0)
				missed++;
			else
				cr_assert_eq(count_marked(2002 + c, 2002 + c + min - 1), min - 1);
		}
	cr_expect_eq(missed, 1, "one byte shorter: missed at exactly one alignment of 56");
}

Test(repeat, the_history_reaches_32_kib_back)
{
	struct repeat r;
	uint8_t *in = malloc(200000);
	size_t d;

	random_bytes(in, 200000);
	repeat_init_bytes(&r);
	cr_assert_eq(repeat_reach(&r), 32768, "a stale 32 KiB read, exactly");
	repeat_free(&r);
	/* A 4 KiB block seen up to 32768 bytes earlier is caught; one byte further, not. */
	for (d = 32768 - 7; d <= 32769; d++) {
		random_bytes(in, 200000);
		memcpy(in + 1000 + d, in + 1000, 4096);
		out_len = 0;
		repeat_init_bytes(&r);
		run(&r, in, 200000);
		if (d <= repeat_reach(&r))
			cr_expect_eq(count_marked(1000 + d, 1000 + d + 4096), 4096,
			    "%zu bytes back, within reach: marked", d);
		else
			cr_expect_eq(r.hits, 0, "%zu bytes back, beyond the history: no hit", d);
		repeat_free(&r);
	}
	free(in);
}

Test(repeat, a_reopen_keeps_the_history)
{
	struct repeat r;
	uint8_t block[4096];

	random_bytes(block, sizeof block);
	repeat_init_bytes(&r);
	repeat_input(&r, block, sizeof block, release, NULL);
	repeat_discard(&r); /* the writer reconnected */
	cr_expect_eq(repeat_lag(&r), repeat_min_caught(&r), "the next bytes wait for the lookahead");
	out_len = 0;
	repeat_input(&r, block, sizeof block, release, NULL);
	repeat_flush(&r, release, NULL);
	cr_assert_eq(out_len, sizeof block);
	cr_expect_eq(count_marked(0, sizeof block), sizeof block,
	    "the same block after a reconnect is still a repeat");
	repeat_free(&r);
}

Test(repeat, lag_holds_back_the_lookahead)
{
	struct repeat r;
	uint8_t buf[1000];

	random_bytes(buf, sizeof buf);
	repeat_init_bytes(&r);
	cr_expect_eq(repeat_min_caught(&r), 63, "8-byte windows, strides 8 and 7");
	cr_expect_eq(repeat_lag(&r), 63);
	repeat_input(&r, buf, 10, release, NULL);
	cr_expect_eq(out_len, 0);
	cr_expect_eq(repeat_lag(&r), 53);
	repeat_input(&r, buf + 10, 3, release, NULL);
	repeat_input(&r, buf + 13, 987, release, NULL);
	cr_expect_eq(out_len, 1000 - 63, "all but the last 63 bytes are handed on");
	cr_expect_arr_eq(out, buf, out_len);
	cr_expect_eq(repeat_lag(&r), 0);
	repeat_free(&r);
}

Test(repeat, raw_windows_carry_128_assessed_bits)
{
	struct repeat r;

	repeat_init_samples(&r, 1, 1.0 / 3); /* jitter */
	cr_expect_eq(r.window, 384);
	cr_expect_eq(r.lookup_stride, 5, "coprime with the window");
	repeat_init_samples(&r, 2, 0.5); /* audio */
	cr_expect_eq(r.window, 512);
	cr_expect_eq(r.lookup_stride, 3);
	repeat_init_samples(&r, 2, 2); /* raw ChaosKey */
	cr_expect_eq(r.window, 128);
	repeat_init_samples(&r, 1, 8);
	cr_expect_eq(r.window, 16);
	repeat_init_bytes(&r);
	cr_expect_eq(r.window, 8);
	repeat_init_samples(&r, 1, 0.001);
	cr_expect_eq(r.window, REPEAT_WINDOW_MAX, "capped");
	cr_expect_lt(r.lookahead, 8 * REPEAT_WINDOW_MAX);
	repeat_init_samples(&r, 1, 0); /* uncredited: as 1 bit per sample */
	cr_expect_eq(r.window, 128);
}

Test(repeat, a_stale_raw_buffer_is_marked)
{
	struct repeat r;
	uint8_t *in = malloc(5 * 4096);
	size_t i;

	random_bytes(in, 4096);
	for (i = 0; i < 4096; i++)
		in[i] &= 0x0f; /* 4-bit samples */
	for (i = 4096; i < 5 * 4096; i++)
		in[i] = in[i - 4096];
	repeat_init_samples(&r, 1, 1.0 / 3);
	run(&r, in, 5 * 4096);
	cr_expect_eq(count_marked(4096, 5 * 4096), 4 * 4096);
	repeat_free(&r);
	free(in);
}

/* Input: the bootstrap word and blocks; what passed is conditioned. */
static void
pipeline_feed(struct pipeline *p, const uint8_t *in, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 3000)
		pipeline_input(p, in + off, len - off < 3000 ? len - off : 3000);
}

/* A stream of one block repeated: nothing passes, everything counts as "repeat". */
static void
pipeline_period(size_t period)
{
	struct pipeline p;
	size_t len = 4 + 40 * FIPS_BLOCK_BYTES, i;
	uint8_t *in = malloc(len);

	random_bytes(in, period);
	for (i = period; i < len; i++)
		in[i] = in[i - period];
	pipeline_init(&p, false, 0, 8);
	pipeline_feed(&p, in, len);
	pipeline_end_input(&p);
	cr_expect_eq(p.count.blocks_tested, 40);
	/* Blocks ending before the first repeat (less the bytes a mark reaches back) pass. */
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_REPEAT],
	    period <= FIPS_BLOCK_BYTES ? 40 : 40 - (period - REACH_BACK - 4) / FIPS_BLOCK_BYTES,
	    "every block holding a repeated byte fails");
	cr_expect_eq(p.count.bytes_conditioned, p.count.blocks_passed * FIPS_BLOCK_BYTES / 40 * 32,
	    "only blocks before the first repeat are conditioned");
	cr_expect_eq(strcmp(pipeline_test_key(PIPELINE_TEST_REPEAT), "repeat"), 0);
	pipeline_free(&p);
	free(in);
}

Test(repeat, pipeline_fails_blocks_repeating_2500_bytes)
{
	pipeline_period(2500);
}

Test(repeat, pipeline_fails_blocks_repeating_4096_bytes)
{
	pipeline_period(4096);
}

Test(repeat, pipeline_fails_blocks_repeating_8000_bytes)
{
	pipeline_period(8000);
}

Test(repeat, a_repeated_chunk_fails_only_its_block)
{
	struct pipeline p;
	size_t len = 4 + 20 * FIPS_BLOCK_BYTES;
	uint8_t *in = malloc(len), chunk[64];

	random_bytes(in, len);
	random_bytes(chunk, sizeof chunk);
	/* The first copy in block 2; repeats inside blocks 5 and 11, far from their edges. */
	memcpy(in + 4 + 2 * FIPS_BLOCK_BYTES + 1000, chunk, 64);
	memcpy(in + 4 + 5 * FIPS_BLOCK_BYTES + 777, chunk, 64);
	memcpy(in + 4 + 11 * FIPS_BLOCK_BYTES + 1501, chunk, 64);
	pipeline_init(&p, false, 0, 8);
	pipeline_feed(&p, in, len);
	pipeline_end_input(&p);
	cr_expect_eq(p.count.blocks_tested, 20);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_REPEAT], 2,
	    "the two blocks with a copy fail, no other");
	cr_expect_geq(p.count.blocks_passed, 17, "random data fails FIPS about 1 block in 1,300");
	pipeline_free(&p);
	free(in);
}

/*
 * A random period of 4096 bytes repeated to len bytes, whose FIPS 140-2
 * blocks (after the 4-byte bootstrap word) all pass: a bad stretch of the
 * period, which random data has about once in a thousand, would fail each
 * block it is repeated in.
 */
static void
repeated_passing(uint8_t *in, size_t len)
{
	struct fips_ctx fips;
	unsigned failed = 1;
	size_t i;
	int tries;

	for (tries = 0; tries < 100 && failed != 0; tries++) {
		random_bytes(in, 4096);
		for (i = 4096; i < len; i++)
			in[i] = in[i - 4096];
		fips_init(&fips, in);
		failed = 0;
		for (i = FIPS_BOOTSTRAP_BYTES; i + FIPS_BLOCK_BYTES <= len; i += FIPS_BLOCK_BYTES)
			failed |= fips_test_block(&fips, in + i);
	}
	cr_assert_eq(failed, 0, "no period of random bytes passed FIPS 140-2 in 100 tries");
}

Test(repeat, skipping_the_test_lets_repeats_through)
{
	struct pipeline p;
	size_t len = 4 + 10 * FIPS_BLOCK_BYTES;
	uint8_t *in = malloc(len);

	repeated_passing(in, len);
	pipeline_init(&p, false, 0, 8);
	pipeline_skip_repeats(&p);
	pipeline_feed(&p, in, len);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_REPEAT], 0);
	cr_expect_eq(p.count.blocks_passed, 10, "FIPS 140-2 alone passes a repeated block");
	pipeline_free(&p);
	free(in);
}

Test(repeat, raw_repeats_are_discarded_before_the_conditioner)
{
	struct pipeline p;
	uint8_t *in = malloc(6 * 4096);
	size_t i;
	uint64_t outputs;

	random_bytes(in, 4096);
	for (i = 4096; i < 6 * 4096; i++)
		in[i] = in[i - 4096];
	/* 8-bit samples at 1 bit each: 128-sample windows. */
	pipeline_init(&p, true, 8, 1);
	pipeline_input(&p, in, 4096);
	outputs = p.cond.outputs;
	pipeline_input(&p, in + 4096, 5 * 4096);
	pipeline_end_input(&p);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_REPEAT], 1, "one repeated stretch");
	cr_expect_leq(p.cond.outputs, outputs + 1,
	    "the repeats made no output (the first copy's tail may finish one)");
	cr_expect_geq(p.count.samples_discarded, 5 * 4096 - 200);
	pipeline_free(&p);
	free(in);
}

/*
 * Samples of little entropy, as a coarse clock's jitter gives them: 25
 * ticks, and one sample in 200 one tick more or less. About 15 % of the
 * 384-sample windows that hold 128 bits at jitter's claimed 1/3 bit per
 * sample hold no deviation at all, and are equal by chance.
 */
static void
coarse_samples(uint8_t *s, size_t n)
{
	uint8_t r[2];
	size_t i;

	for (i = 0; i < n; i++) {
		random_bytes(r, sizeof r);
		s[i] = (uint16_t)(r[0] | r[1] << 8) % 200 == 0 ? (uint8_t)(24 + 2 * (r[0] & 1)) : 25;
	}
}

Test(repeat, raw_windows_follow_a_lowered_credit)
{
	struct pipeline p;

	pipeline_init(&p, true, 8, 1.0 / 3);
	cr_expect_eq(p.repeat.window, 384, "128 bits at the claim");
	pipeline_recredit(&p, 0.05);
	cr_expect_eq(p.repeat.window, 2560, "128 bits at the credit now");
	pipeline_recredit(&p, 0.01);
	cr_expect_eq(p.repeat.window, REPEAT_WINDOW_MAX, "capped");
	pipeline_free(&p);
}

Test(repeat, honest_samples_of_little_entropy_are_not_repeats)
{
	struct pipeline p;
	size_t n = 400000;
	uint8_t *s = malloc(n);

	coarse_samples(s, n);
	/* The online estimate lowers the credit; the windows follow it, so
	 * they hold 128 bits again and these samples do not repeat by chance. */
	pipeline_init(&p, true, 8, 1.0 / 3);
	pipeline_input(&p, s, n);
	cr_expect_gt(p.count.credit_lowered, 0, "the online estimate lowered the credit");
	cr_expect_lt(p.unit_bits, 0.05);
	/* 384-sample windows would match thousands of times (one long "repeat"
	 * discarding nearly every sample; with 25 such stretches a source is
	 * suspended, as jitter was on a 24 MHz counter). */
	cr_expect_eq(p.repeat.hits, 0, "%llu windows matched by chance",
	    (unsigned long long)p.repeat.hits);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_REPEAT], 0);
	cr_expect_not(pipeline_failing(&p), "not suspended");
	pipeline_free(&p);
	free(s);
}

Test(repeat, a_stale_buffer_of_little_entropy_is_still_caught)
{
	struct pipeline p;
	size_t n = 200000, i, failures;
	uint8_t *s = malloc(n + 40 * 4096);

	coarse_samples(s, n);
	pipeline_init(&p, true, 8, 1.0 / 3);
	pipeline_input(&p, s, n);
	cr_assert_lt(p.unit_bits, 0.05, "lowered first");
	failures = p.count.test_failures[PIPELINE_TEST_REPEAT];
	/* Then one 4096-sample read handed back forty times. */
	for (i = 0; i < 40; i++)
		memcpy(s + n + i * 4096, s + n - 4096, 4096);
	pipeline_input(&p, s + n, 40 * 4096);
	cr_expect_gt(p.count.test_failures[PIPELINE_TEST_REPEAT], failures, "caught");
	cr_expect_geq(p.count.samples_discarded, 38 * 4096, "and its copies discarded");
	pipeline_free(&p);
	free(s);
}
