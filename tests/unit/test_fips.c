/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fips.h"
#include "fips_ref.h"

#define BITS (FIPS_BLOCK_BYTES * 8)
#define M(t) (1u << (t))
#define MAXRUNS BITS

/* The bounds of STANDARDS.md, restated for the tests. */
static const unsigned runs_lo[6] = { 2315, 1114, 527, 240, 103, 103 };
static const unsigned runs_hi[6] = { 2685, 1386, 723, 384, 209, 209 };

/* What a block of random data would hold, per bit value: lengths 1..5, 6+. */
static const int runs_typical[6] = { 2500, 1250, 625, 312, 156, 156 };

/* A block described by its runs; the builder lays them out in random order. */
struct runs_spec {
	int count[2][6];
	unsigned ones;		/* wanted number of 1 bits, if it can be had */
	int special_bit;	/* one run of special_len bits of this value... */
	unsigned special_len;	/* ...0 for none */
	enum { ANYWHERE, FIRST, LAST } special_at;
};

/* xorshift64*: a fixed-seed generator, so every run builds the same blocks. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* A number below n. */
static unsigned
rnd_below(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) % n);
}

/* A block of generator output. */
static void
random_block(uint8_t *block, uint64_t *s)
{
	for (unsigned i = 0; i < FIPS_BLOCK_BYTES; i++)
		block[i] = (uint8_t)(rnd(s) >> 56);
}

/* Set bit n of a block, most significant bit of byte 0 first. */
static void
put_bit(uint8_t *block, unsigned n, unsigned bit)
{
	if (bit)
		block[n / 8] |= (uint8_t)(0x80 >> n % 8);
	else
		block[n / 8] &= (uint8_t)~(0x80 >> n % 8);
}

/* A little-endian word, as the continuous test reads one. */
static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Test a lone block with both engines (bootstrap unlike the first word). */
static unsigned
test_block(const uint8_t *block, struct fips_ref_stats *st)
{
	struct fips_ctx ctx;
	uint8_t boot[4];
	uint32_t ref_last;
	unsigned fast, ref;

	for (int i = 0; i < 4; i++)
		boot[i] = (uint8_t)~block[i];
	fips_init(&ctx, boot);
	ref_last = le32(boot);
	fast = fips_test_block(&ctx, block);
	ref = fips_ref_test_block(&ref_last, block, st);
	cr_assert_eq(fast, ref, "fast engine 0x%x, reference 0x%x", fast, ref);
	cr_assert_eq(ctx.last_word, ref_last);
	return fast;
}

/* Runs as random data has them on average, 10000 ones. */
static void
spec_typical(struct runs_spec *sp)
{
	memset(sp, 0, sizeof *sp);
	for (int b = 0; b < 2; b++)
		memcpy(sp->count[b], runs_typical, sizeof runs_typical);
	sp->ones = BITS / 2;
}

/*
 * Set one count and move the difference onto the two neighbouring lengths
 * of the same bit value (1 and 3 for 2, 2 and 3 for 1, 4 and 5 for 6+), so
 * the runs of 0s and of 1s stay as many (they alternate) and the number of
 * bits changes little.
 */
static void
spec_set(struct runs_spec *sp, int bit, int k, int value)
{
	int delta = value - sp->count[bit][k], a, b;

	a = k == 0 ? 1 : k == 5 ? 3 : k - 1;
	b = k == 0 ? 2 : k == 5 ? 4 : k + 1;
	sp->count[bit][k] = value;
	sp->count[bit][a] -= delta / 2;
	sp->count[bit][b] -= delta - delta / 2;
}

/* Fisher-Yates, from the fixed-seed generator. */
static void
shuffle(unsigned *v, int n, uint64_t *s)
{
	for (int i = n - 1; i > 0; i--) {
		unsigned j = rnd_below(s, (unsigned)i + 1), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * Lay out a block with exactly the runs of the spec.  Runs of 6 or more take
 * up the slack so the block is 20000 bits, with as close to sp->ones 1 bits
 * as those runs (6..25 bits each) allow.
 */
static void
build_runs_block(uint8_t *block, const struct runs_spec *sp, uint64_t seed)
{
	static unsigned len[2][MAXRUNS];
	int n[2] = { 0, 0 }, m[2], b, k, i, start;
	long fixed[2], lo[2], hi[2], want, total[2];
	unsigned pos = 0;
	uint64_t s = seed;

	for (b = 0; b < 2; b++) {
		fixed[b] = 0;
		for (k = 0; k < 5; k++)
			for (i = 0; i < sp->count[b][k]; i++) {
				len[b][n[b]++] = (unsigned)k + 1;
				fixed[b] += k + 1;
			}
		m[b] = sp->count[b][5];
		if (sp->special_len && sp->special_bit == b) {
			len[b][n[b]++] = sp->special_len;
			fixed[b] += sp->special_len;
			m[b]--;
		}
		lo[b] = fixed[b] + 6L * m[b];
		hi[b] = fixed[b] + 25L * m[b];
	}
	cr_assert_eq(n[0] + m[0], n[1] + m[1], "runs of 0s and 1s must alternate");
	want = sp->ones;
	if (want < lo[1]) want = lo[1];
	if (want > hi[1]) want = hi[1];
	if (BITS - want < lo[0]) want = BITS - lo[0];
	if (BITS - want > hi[0]) want = BITS - hi[0];
	total[1] = want;
	total[0] = BITS - want;
	cr_assert(total[1] >= lo[1] && total[1] <= hi[1], "no room for the runs");

	for (b = 0; b < 2; b++) {
		long extra = total[b] - lo[b];
		int first = n[b];

		for (i = 0; i < m[b]; i++)
			len[b][n[b]++] = 6;
		for (i = 0; extra > 0; i = (i + 1) % m[b], extra--)
			len[b][first + i]++;
		shuffle(len[b], n[b], &s);
	}
	start = (int)(rnd(&s) & 1);
	if (sp->special_len) {
		b = sp->special_bit;
		for (i = 0; len[b][i] != sp->special_len; i++)
			;
		if (sp->special_at == FIRST) {
			len[b][i] = len[b][0];
			len[b][0] = sp->special_len;
			start = b;
		} else if (sp->special_at == LAST) {
			len[b][i] = len[b][n[b] - 1];
			len[b][n[b] - 1] = sp->special_len;
			start = !b;
		}
	}
	for (i = 0; i < n[0] + n[1]; i++) {
		b = (start + i) & 1;
		for (unsigned j = 0; j < len[b][i / 2]; j++)
			put_bit(block, pos++, (unsigned)b);
	}
	cr_assert_eq(pos, BITS);
}

/*
 * Nibble counts with sum 5000 and sum of squares exactly `target`: move one
 * nibble at a time from value a to value b, which changes the sum of squares
 * by 2 (f[b] - f[a] + 1), choosing at random among moves that do not
 * overshoot.  Then shuffle the nibbles into a block.
 */
static bool
build_poker_block(uint8_t *block, uint64_t target, uint64_t seed)
{
	unsigned f[16], nib[FIPS_BLOCK_BYTES * 2], a, b, i, j, tries;
	int64_t sum = 0, need, step;
	uint64_t s = seed;

	for (i = 0; i < 16; i++) {
		f[i] = i < 8 ? 312 : 313;
		sum += (int64_t)f[i] * f[i];
	}
	for (tries = 0; sum != (int64_t)target; tries++) {
		if (tries > 1000000)
			return false;
		need = (int64_t)target - sum;
		a = rnd_below(&s, 16);
		b = rnd_below(&s, 16);
		if (a == b || f[a] == 0)
			continue;
		step = 2 * ((int64_t)f[b] - f[a] + 1);
		if (step == 0 || (step > 0) != (need > 0) ||
		    (step > 0 ? step > need : step < need))
			continue;
		f[a]--;
		f[b]++;
		sum += step;
	}
	for (i = 0, j = 0; i < 16; i++)
		for (a = 0; a < f[i]; a++)
			nib[j++] = i;
	shuffle(nib, FIPS_BLOCK_BYTES * 2, &s);
	for (i = 0; i < FIPS_BLOCK_BYTES; i++)
		block[i] = (uint8_t)(nib[2 * i] << 4 | nib[2 * i + 1]);
	return true;
}

/*
 * Lay out the runs of a spec, trying seeds until every test outside `allow`
 * passes (the runs fix the ones count and the runs test; the layout moves
 * the poker sum).
 */
static void
build_passing(uint8_t *block, const struct runs_spec *sp, unsigned allow)
{
	struct fips_ref_stats st;
	uint32_t last;

	for (uint64_t seed = 1; seed <= 500; seed++) {
		build_runs_block(block, sp, seed);
		last = ~le32(block);
		if ((fips_ref_test_block(&last, block, &st) & ~allow) == 0)
			return;
	}
	cr_assert_fail("no layout of these runs passes the other tests");
}

Test(fips, names)
{
	static const char *names[] = { "Monobit", "Poker", "Runs", "Long run",
	    "Continuous run" };
	static const char *keys[] = { "monobit", "poker", "runs", "long_run",
	    "continuous" };

	for (int t = 0; t < FIPS_NTESTS; t++) {
		cr_expect_str_eq(fips_test_name(t), names[t]);
		cr_expect_str_eq(fips_test_key(t), keys[t]);
	}
}

Test(fips, bootstrap_is_little_endian)
{
	static const uint8_t boot[4] = { 0x01, 0x02, 0x03, 0x04 };
	struct fips_ctx ctx;

	fips_init(&ctx, boot);
	cr_assert_eq(ctx.last_word, 0x04030201u);
}

Test(fips, typical_runs_block_passes)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES];

	spec_typical(&sp);
	build_runs_block(block, &sp, 1);
	cr_assert_eq(test_block(block, &st), 0);
	cr_assert_eq(st.ones, 10000);
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 6; k++)
			cr_assert_eq(st.runs[b][k], (unsigned)runs_typical[k]);
}

/* Monobit at 9725/9726 and 10274/10275 ones, every other test passing. */
Test(fips, monobit_bounds)
{
	static const struct {
		unsigned ones, mask;
	} cases[] = {
		{ 9725, M(FIPS_MONOBIT) }, { 9726, 0 },
		{ 10274, 0 }, { 10275, M(FIPS_MONOBIT) },
	};
	struct runs_spec sp;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES];

	for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		spec_typical(&sp);
		/* Trading long runs of the scarcer bit for short ones makes room. */
		int scarce = cases[c].ones < BITS / 2 ? 1 : 0;
		sp.count[scarce][5] -= 36;
		sp.count[scarce][0] += 36;
		sp.ones = cases[c].ones;
		build_passing(block, &sp, M(FIPS_MONOBIT));
		unsigned got = test_block(block, &st);
		cr_expect_eq(got, cases[c].mask, "%u ones: mask 0x%x, poker %llu",
		    cases[c].ones, got, (unsigned long long)st.poker_sum);
		cr_expect_eq(st.ones, cases[c].ones);
	}
}

/*
 * Poker at its bounds.  The sum of squares is always even (f^2 and f have the
 * same parity and the f sum to 5000), so the nearest sums outside the bounds
 * are 1563174 and 1576930.
 */
Test(fips, poker_bounds)
{
	static const struct {
		uint64_t sum;
		unsigned mask;
	} cases[] = {
		{ 1563174, M(FIPS_POKER) }, { 1563176, 0 },
		{ 1576928, 0 }, { 1576930, M(FIPS_POKER) },
	};
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES];

	for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		bool found = false;

		/* Search seeds for a layout where the other tests pass. */
		for (uint64_t seed = 1; seed < 200 && !found; seed++) {
			uint32_t last = 0;

			cr_assert(build_poker_block(block, cases[c].sum, seed));
			found = (fips_ref_test_block(&last, block, &st) &
			    ~M(FIPS_POKER)) == 0;
		}
		cr_assert(found, "no block with poker sum %llu",
		    (unsigned long long)cases[c].sum);
		cr_expect_eq(test_block(block, &st), cases[c].mask,
		    "poker sum %llu", (unsigned long long)cases[c].sum);
		cr_expect_eq(st.poker_sum, cases[c].sum);
	}
}

/* Every runs interval, for 0s and 1s: one below, both edges, one above. */
static void
runs_edges(int bit)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES];

	for (int k = 0; k < 6; k++) {
		const int value[4] = { (int)runs_lo[k] - 1, (int)runs_lo[k],
		    (int)runs_hi[k], (int)runs_hi[k] + 1 };

		for (int v = 0; v < 4; v++) {
			unsigned want = v == 0 || v == 3 ? M(FIPS_RUNS) : 0;

			spec_typical(&sp);
			spec_set(&sp, bit, k, value[v]);
			build_passing(block, &sp, M(FIPS_RUNS));
			unsigned got = test_block(block, &st);
			cr_expect_eq(got, want, "%d runs of %ds of length %d%s: "
			    "mask 0x%x, %u ones, poker %llu", value[v], bit,
			    k + 1, k == 5 ? "+" : "", got, st.ones,
			    (unsigned long long)st.poker_sum);
			cr_expect_eq(st.runs[bit][k], (unsigned)value[v]);
		}
	}
}

Test(fips, runs_bounds_zeros)
{
	runs_edges(0);
}

Test(fips, runs_bounds_ones)
{
	runs_edges(1);
}

Test(fips, long_run_25_passes_26_fails)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES];

	for (int bit = 0; bit < 2; bit++) {
		spec_typical(&sp);
		sp.special_bit = bit;
		sp.special_len = 25;
		build_runs_block(block, &sp, 7);
		cr_expect_eq(test_block(block, &st), 0, "run of 25 %ds", bit);
		cr_expect_eq(st.longest_run, 25);

		sp.special_len = 26;
		build_runs_block(block, &sp, 7);
		cr_expect_eq(test_block(block, &st), M(FIPS_LONG_RUN),
		    "run of 26 %ds", bit);
		cr_expect_eq(st.longest_run, 26);
	}
}

/*
 * Runs restart at each block and the last run counts: 103 runs of 6+ ones
 * (the lower bound) where one of them is the last run of block 1 and another
 * the first of block 2, 20 ones each.  Joined, they would be a long run; not
 * counting the edge runs, 102 would fail the runs test.
 */
Test(fips, runs_split_at_block_boundary)
{
	struct runs_spec sp;
	struct fips_ctx ctx;
	uint8_t block[2][FIPS_BLOCK_BYTES], boot[4] = { 0 };

	spec_typical(&sp);
	spec_set(&sp, 1, 5, 103);
	sp.special_bit = 1;
	sp.special_len = 20;
	sp.special_at = LAST;
	build_runs_block(block[0], &sp, 11);
	sp.special_at = FIRST;
	build_runs_block(block[1], &sp, 12);

	/* Block 1 ends 0 then twenty 1s; block 2 starts twenty 1s then 0. */
	cr_assert_eq(block[0][FIPS_BLOCK_BYTES - 1], 0xff);
	cr_assert_eq(block[0][FIPS_BLOCK_BYTES - 2], 0xff);
	cr_assert_eq(block[0][FIPS_BLOCK_BYTES - 3] & 0x1f, 0x0f);
	cr_assert_eq(block[1][0], 0xff);
	cr_assert_eq(block[1][1], 0xff);
	cr_assert_eq(block[1][2] & 0xf8, 0xf0);

	fips_init(&ctx, boot);
	cr_expect_eq(fips_test_block(&ctx, block[0]), 0);
	cr_expect_eq(fips_test_block(&ctx, block[1]), 0);

	/* The same runs, minus one of 6+, fail: the bound is really at 103. */
	spec_set(&sp, 1, 5, 102);
	sp.special_at = LAST;
	build_runs_block(block[0], &sp, 11);
	fips_init(&ctx, boot);
	cr_expect_eq(fips_test_block(&ctx, block[0]), M(FIPS_RUNS));
}

Test(fips, continuous_bootstrap_equal_to_first_word)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	struct fips_ctx ctx;
	uint8_t block[FIPS_BLOCK_BYTES];

	spec_typical(&sp);
	build_runs_block(block, &sp, 21);
	cr_assert_eq(test_block(block, &st), 0);
	fips_init(&ctx, block);
	cr_expect_eq(fips_test_block(&ctx, block), M(FIPS_CONTINUOUS));
	cr_expect_eq(ctx.last_word, le32(block + FIPS_BLOCK_BYTES - 4));
}

Test(fips, continuous_aligned_repeat_fails_misaligned_passes)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES], copy[FIPS_BLOCK_BYTES];

	spec_typical(&sp);
	build_runs_block(block, &sp, 22);
	cr_assert_eq(test_block(block, &st), 0);

	memcpy(copy, block, sizeof copy);
	memcpy(copy + 1204, copy + 1200, 4);
	cr_expect_eq(test_block(copy, &st), M(FIPS_CONTINUOUS));
	cr_expect_eq(st.repeats, 1);

	/* The same 4 bytes twice in a row, straddling aligned words. */
	memcpy(copy, block, sizeof copy);
	memcpy(copy + 1206, copy + 1202, 4);
	cr_assert_neq(le32(copy + 1200), le32(copy + 1204));
	cr_assert_neq(le32(copy + 1204), le32(copy + 1208));
	cr_expect_eq(test_block(copy, &st), 0);
}

Test(fips, continuous_repeat_across_blocks)
{
	struct runs_spec sp;
	struct fips_ref_stats st;
	struct fips_ctx ctx;
	uint8_t block[2][FIPS_BLOCK_BYTES], boot[4] = { 1, 2, 3, 4 };

	spec_typical(&sp);
	build_runs_block(block[0], &sp, 31);
	build_runs_block(block[1], &sp, 32);
	cr_assert_eq(test_block(block[0], &st), 0);
	cr_assert_eq(test_block(block[1], &st), 0);

	fips_init(&ctx, boot);
	cr_expect_eq(fips_test_block(&ctx, block[0]), 0);
	cr_expect_eq(fips_test_block(&ctx, block[1]), 0);

	memcpy(block[1], block[0] + FIPS_BLOCK_BYTES - 4, 4);
	fips_init(&ctx, boot);
	cr_expect_eq(fips_test_block(&ctx, block[0]), 0);
	cr_expect_eq(fips_test_block(&ctx, block[1]) & M(FIPS_CONTINUOUS),
	    M(FIPS_CONTINUOUS));
	/* The failing block still hands its last word on. */
	cr_expect_eq(ctx.last_word, le32(block[1] + FIPS_BLOCK_BYTES - 4));
}

/* Structured data of the kinds a failing source produces. */
static void
structured_block(uint8_t *block, unsigned kind, uint64_t *s)
{
	unsigned i, n, at, len;

	random_block(block, s);
	switch (kind) {
	case 0:		/* random */
		break;
	case 1:		/* stuck bytes */
		for (n = rnd_below(s, 40); n > 0; n--) {
			at = rnd_below(s, FIPS_BLOCK_BYTES);
			len = 1 + rnd_below(s, 8);
			memset(block + at, rnd_below(s, 4) ? 0 : 0xff,
			    at + len > FIPS_BLOCK_BYTES ?
			    FIPS_BLOCK_BYTES - at : len);
		}
		break;
	case 2:		/* long runs of bits, up to 40 */
		for (n = 1 + rnd_below(s, 6); n > 0; n--) {
			at = rnd_below(s, BITS);
			len = 15 + rnd_below(s, 26);
			unsigned bit = rnd(s) & 1;
			for (i = at; i < at + len && i < BITS; i++)
				put_bit(block, i, bit);
		}
		break;
	case 3: {	/* biased bits: 1 with probability 0.47..0.53 */
		uint64_t p = UINT64_MAX / 100 * (47 + rnd_below(s, 7));
		for (i = 0; i < BITS; i++)
			put_bit(block, i, rnd(s) < p);
		break;
	}
	case 4:		/* low weight: some bytes masked down */
		for (i = 0; i < FIPS_BLOCK_BYTES; i++)
			if (rnd_below(s, 100) < 4)
				block[i] &= (uint8_t)rnd(s);
		break;
	case 5:		/* repeated aligned words */
		for (n = rnd_below(s, 3); n > 0; n--) {
			at = 4 * rnd_below(s, FIPS_BLOCK_BYTES / 4 - 1);
			memcpy(block + at + 4, block + at, 4);
		}
		break;
	case 6:		/* a skewed nibble */
		for (i = 0; i < FIPS_BLOCK_BYTES; i++)
			if (rnd_below(s, 100) < 3)
				block[i] = (block[i] & 0xf0) | 0x5;
		break;
	case 7:		/* alternating bits here and there: too many short runs */
		for (i = 0; i < FIPS_BLOCK_BYTES; i++)
			if (rnd_below(s, 100) < 5)
				block[i] = 0x55;
		break;
	}
}

/* The fast engine agrees with the reference on random and structured data. */
Test(fips, fast_equals_reference)
{
	struct fips_ctx ctx;
	struct fips_ref_stats st;
	uint8_t block[FIPS_BLOCK_BYTES], boot[4], prev[4] = { 0 };
	uint32_t ref_last;
	unsigned fast, ref, seen = 0, passed = 0, i;
	uint64_t s = 0x9e3779b97f4a7c15u;

	for (i = 0; i < 4; i++)
		boot[i] = (uint8_t)rnd(&s);
	fips_init(&ctx, boot);
	ref_last = le32(boot);
	for (i = 0; i < 4000; i++) {
		structured_block(block, i % 8, &s);
		/* Now and then, repeat the last word of the block before. */
		if (i % 97 == 0 && i > 0)
			memcpy(block, prev, 4);
		memcpy(prev, block + FIPS_BLOCK_BYTES - 4, 4);
		fast = fips_test_block(&ctx, block);
		ref = fips_ref_test_block(&ref_last, block, &st);
		cr_assert_eq(fast, ref, "block %u (kind %u): fast 0x%x, "
		    "reference 0x%x", i, i % 8, fast, ref);
		cr_assert_eq(ctx.last_word, ref_last, "block %u", i);
		seen |= fast;
		passed += fast == 0;
	}
	cr_expect_eq(seen, M(FIPS_NTESTS) - 1, "mask bits seen: 0x%x", seen);
	cr_expect_gt(passed, 400, "only %u blocks passed", passed);
}

/* The CPU variant under test, for failure messages. */
static const char *engine_now = "default";

/* Compare every counter of the fast engine with the reference on one block. */
static void
expect_same_stats(struct fips_ctx *ctx, uint32_t *ref_last,
    const uint8_t *block, const char *block_kind, unsigned n)
{
	struct fips_stats fast;
	struct fips_ref_stats ref;
	unsigned fmask, rmask;
	char what[96];

	snprintf(what, sizeof what, "%s engine, %s", engine_now, block_kind);
	fmask = fips_block_stats(ctx, block, &fast);
	rmask = fips_ref_test_block(ref_last, block, &ref);
	cr_assert_eq(fmask, rmask, "%s %u: mask 0x%x, reference 0x%x", what, n,
	    fmask, rmask);
	cr_assert_eq(fast.ones, ref.ones, "%s %u: ones", what, n);
	cr_assert_eq(fast.poker_sum, ref.poker_sum, "%s %u: poker", what, n);
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < 6; k++)
			cr_assert_eq(fast.runs[b][k], ref.runs[b][k],
			    "%s %u: runs of %ds, bucket %d: %u, reference %u",
			    what, n, b, k + 1, fast.runs[b][k], ref.runs[b][k]);
	cr_assert_eq(fast.longest_run, ref.longest_run,
	    "%s %u: longest run %u, reference %u", what, n, fast.longest_run,
	    ref.longest_run);
	cr_assert_eq(fast.repeats, ref.repeats, "%s %u: repeats", what, n);
	cr_assert_eq(ctx->last_word, *ref_last, "%s %u: last word", what, n);
	cr_assert_eq(fips_stats_mask(&fast), fmask);
}

/* A lone block through both engines, bootstrap unlike its first word. */
static void
expect_same_lone(const uint8_t *block, const char *what, unsigned n)
{
	struct fips_ctx ctx;
	uint8_t boot[4];
	uint32_t ref_last;

	for (int i = 0; i < 4; i++)
		boot[i] = (uint8_t)~block[i];
	fips_init(&ctx, boot);
	ref_last = le32(boot);
	expect_same_stats(&ctx, &ref_last, block, what, n);
}

/* Put a run of len bits of value bit at bit start, bounded by the opposite bit. */
static void
put_run(uint8_t *block, unsigned start, unsigned len, unsigned bit)
{
	for (unsigned i = start; i < start + len && i < BITS; i++)
		put_bit(block, i, bit);
	if (start > 0)
		put_bit(block, start - 1, !bit);
	if (start + len < BITS)
		put_bit(block, start + len, !bit);
}

/* Thousands of random and structured blocks, one stream: every counter agrees. */
static void
random_blocks_agree(void)
{
	struct fips_ctx ctx;
	uint8_t block[FIPS_BLOCK_BYTES], boot[4] = { 9, 8, 7, 6 };
	uint32_t ref_last;
	uint64_t s = 0x0123456789abcdefu;

	fips_init(&ctx, boot);
	ref_last = le32(boot);
	for (unsigned i = 0; i < 5000; i++) {
		structured_block(block, i % 8, &s);
		expect_same_stats(&ctx, &ref_last, block, "block", i);
	}
}

/*
 * Run a check with every CPU variant of the engine this machine can run;
 * a variant whose CPU features are missing is skipped, saying so.
 */
static void
each_engine(void (*check)(void))
{
	static const char *const engines[] = { "generic", "popcnt", "avx512" };
	unsigned ran = 0;

	for (unsigned e = 0; e < 3; e++) {
		if (fips_use(engines[e]) != 0) {
			cr_log_info("skipping the %s engine: this CPU lacks a "
			    "feature it needs", engines[e]);
			continue;
		}
		engine_now = engines[e];
		check();
		ran++;
	}
	cr_assert_geq(ran, 1);
}

/* Every CPU variant this machine can run. */
Test(fips, stats_equal_reference_on_random_blocks)
{
	each_engine(random_blocks_agree);
}

/*
 * Runs of every interesting length placed across every 64-bit word boundary
 * (and the half word at the end), starting 1, len/2 and len-1 bits before it.
 */
static void
runs_across_words(void)
{
	static const unsigned lens[] = { 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13,
	    25, 26, 27, 63, 64, 65, 70, 130 };
	uint8_t block[FIPS_BLOCK_BYTES];
	uint64_t s = 42;
	unsigned n = 0;

	for (unsigned w = 64; w < BITS; w += 64)
		for (unsigned l = 0; l < sizeof lens / sizeof lens[0]; l++) {
			unsigned len = lens[l];
			unsigned back[3] = { 1, len / 2, len - 1 };

			for (unsigned d = 0; d < 3; d++) {
				if (back[d] == 0 || back[d] > w)
					continue;
				random_block(block, &s);
				put_run(block, w - back[d], len, n & 1);
				expect_same_lone(block, "word-boundary run", n++);
			}
		}
	cr_assert_gt(n, 10000);
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_on_runs_across_words)
{
	each_engine(runs_across_words);
}

/* Runs at the very start and end of a block, of both bits and many lengths. */
static void
block_edges(void)
{
	uint8_t block[FIPS_BLOCK_BYTES];
	uint64_t s = 7;
	unsigned n = 0;

	for (unsigned len = 1; len <= 100; len++)
		for (unsigned bit = 0; bit < 2; bit++) {
			random_block(block, &s);
			put_run(block, 0, len, bit);
			expect_same_lone(block, "first run", n++);
			random_block(block, &s);
			put_run(block, BITS - len, len, bit);
			expect_same_lone(block, "last run", n++);
			/* And both, the last one bordering the half word. */
			put_run(block, 0, len, !bit);
			put_run(block, BITS - 32 - len, len, bit);
			expect_same_lone(block, "edge runs", n++);
		}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_on_block_edges)
{
	each_engine(block_edges);
}

/*
 * A run that ends one block and goes on into the next counts as two runs;
 * the fast engine restarts at the block boundary as the reference does.
 */
static void
across_block_boundaries(void)
{
	struct fips_ctx ctx;
	uint8_t block[2][FIPS_BLOCK_BYTES], boot[4] = { 1, 1, 2, 3 };
	uint32_t ref_last;
	uint64_t s = 99;
	unsigned n = 0;

	fips_init(&ctx, boot);
	ref_last = le32(boot);
	for (unsigned len = 1; len <= 40; len++)
		for (unsigned bit = 0; bit < 2; bit++) {
			random_block(block[0], &s);
			random_block(block[1], &s);
			put_run(block[0], BITS - len, len, bit);
			put_run(block[1], 0, len + 3, bit);
			expect_same_stats(&ctx, &ref_last, block[0], "tail block", n);
			expect_same_stats(&ctx, &ref_last, block[1], "head block", n++);
		}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_across_block_boundaries)
{
	each_engine(across_block_boundaries);
}

/*
 * Blocks without any run of 11 or more (the fast engine then walks every
 * run), and blocks whose only long runs sit in the last, half-full word.
 */
static void
without_long_runs(void)
{
	uint8_t block[FIPS_BLOCK_BYTES];
	uint64_t s = 5;
	unsigned n = 0;

	for (unsigned i = 0; i < 300; i++) {
		memset(block, 0xaa, sizeof block);
		for (unsigned r = rnd_below(&s, 200); r > 0; r--)
			put_run(block, rnd_below(&s, BITS), 1 + rnd_below(&s,
			    4 + i % 8), rnd(&s) & 1);
		expect_same_lone(block, "short runs only", n++);
		put_run(block, BITS - 32 + rnd_below(&s, 10), 11 + rnd_below(&s,
		    10), rnd(&s) & 1);
		expect_same_lone(block, "long run in the last word", n++);
	}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_without_long_runs)
{
	each_engine(without_long_runs);
}

/*
 * Long runs packed close together, so most words (every lane of a vector
 * chunk at once) have windows of 11 to look at, and then one in every word.
 */
static void
dense_long_runs(void)
{
	uint8_t block[FIPS_BLOCK_BYTES];
	uint64_t s = 11;
	unsigned n = 0, g;

	for (unsigned i = 0; i < 60; i++) {
		random_block(block, &s);
		for (g = rnd_below(&s, 30); g + 40 < BITS;
		    g += 20 + rnd_below(&s, 50))
			put_run(block, g, 11 + rnd_below(&s, 20), rnd(&s) & 1);
		expect_same_lone(block, "dense long runs", n++);
	}
	for (unsigned off = 0; off < 64; off += 7) {
		random_block(block, &s);
		for (g = off; g + 12 < BITS; g += 64)
			put_run(block, g, 11 + g / 64 % 16, g / 64 & 1);
		expect_same_lone(block, "a long run in every word", n++);
	}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_with_dense_long_runs)
{
	each_engine(dense_long_runs);
}

/* A repeated aligned word at every place in a block, and at two at once. */
static void
repeats_everywhere(void)
{
	uint8_t block[FIPS_BLOCK_BYTES];
	uint64_t s = 13;

	for (unsigned w = 1; w < FIPS_BLOCK_BYTES / 4; w++) {
		random_block(block, &s);
		memcpy(block + 4 * w, block + 4 * w - 4, 4);
		if (w % 3 == 0)
			memcpy(block + 4 * (w / 3 + 1), block + 4 * (w / 3), 4);
		expect_same_lone(block, "repeated word", w);
	}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_with_repeats_everywhere)
{
	each_engine(repeats_everywhere);
}

/* Constant blocks (every nibble counter as full as it gets) and 0x00..0xff. */
static void
constant_blocks(void)
{
	uint8_t block[FIPS_BLOCK_BYTES];

	for (unsigned v = 0; v < 256; v++) {
		memset(block, (int)v, sizeof block);
		expect_same_lone(block, "constant block", v);
	}
}

/* The check above, with every CPU variant this machine can run. */
Test(fips, stats_equal_reference_on_constant_blocks)
{
	each_engine(constant_blocks);
}
