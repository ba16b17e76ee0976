/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "sp80090b.h"

/* The cutoff table of STANDARDS.md; 0 where the window does not apply. */
static const struct {
	double h;
	unsigned bits;		/* a sample width this H fits in */
	unsigned rct, apt1024, apt512;
} table[] = {
	{ 0.5, 1, 41, 793, 410 },
	{ 1, 1, 21, 589, 311 },
	{ 2, 2, 11, 0, 177 },
	{ 4, 4, 6, 0, 62 },
	{ 8, 8, 4, 0, 13 },
};
#define NTABLE (sizeof table / sizeof table[0])

Test(sp80090b, cutoff_table)
{
	for (unsigned i = 0; i < NTABLE; i++) {
		cr_expect_eq(sp80090b_rct_cutoff(table[i].h), table[i].rct,
		    "RCT, H=%g", table[i].h);
		cr_expect_eq(sp80090b_apt_cutoff(table[i].h, 512), table[i].apt512,
		    "APT W=512, H=%g", table[i].h);
		if (table[i].apt1024)
			cr_expect_eq(sp80090b_apt_cutoff(table[i].h, 1024),
			    table[i].apt1024, "APT W=1024, H=%g", table[i].h);
	}
}

/* CRITBINOM the textbook way, with libm's lgamma, for comparison. */
static unsigned
reference_apt_cutoff(double h, unsigned window)
{
	double p = exp2(-h), lp = log(p), lq = log1p(-p), ln = lgamma(window + 1.0);
	double tail = 0.0, pmf;
	unsigned k;

	for (k = window; k > 0; k--) {
		pmf = exp(ln - lgamma(k + 1.0) - lgamma(window - k + 1.0) + k * lp +
		    (window - k) * lq);
		if (tail + pmf > 0x1p-20)
			return 1 + k;
		tail += pmf;
	}
	return 1;
}

Test(sp80090b, cutoffs_agree_with_the_lgamma_reference)
{
	unsigned windows[] = { 512, 1024 }, w;
	double h;

	for (w = 0; w < 2; w++)
		for (h = 0.01; h <= 8.0; h += 0.01) {
			cr_expect_eq(sp80090b_apt_cutoff(h, windows[w]),
			    reference_apt_cutoff(h, windows[w]), "APT W=%u, H=%.2f", windows[w], h);
			cr_expect_eq(sp80090b_rct_cutoff(h), 1 + (unsigned)ceil(20 / h - 1e-9),
			    "RCT, H=%.2f", h);
		}
}

Test(sp80090b, windows)
{
	struct sp80090b t;

	cr_expect_eq(sp80090b_apt_window(1), 1024);
	cr_expect_eq(sp80090b_apt_window(2), 512);
	cr_expect_eq(sp80090b_apt_window(8), 512);
	sp80090b_init(&t, 1, 1);
	cr_expect_eq(t.apt_window, 1024);
	cr_expect_eq(t.apt_cutoff, 589);
	sp80090b_init(&t, 4, 8);
	cr_expect_eq(t.apt_window, 512);
	cr_expect_eq(t.apt_cutoff, 62);
	cr_expect_eq(t.rct_cutoff, 6);
}

/* C-1 identical samples pass, the C-th fails, and counting starts over. */
Test(sp80090b, rct_fails_on_cutoff_th_repeat)
{
	struct sp80090b t;
	unsigned i, c;

	for (unsigned r = 0; r < NTABLE; r++) {
		sp80090b_init(&t, table[r].h, table[r].bits);
		c = t.rct_cutoff;
		cr_assert_eq(c, table[r].rct);
		sp80090b_sample(&t, 0);		/* a different value first */
		for (i = 1; i < c; i++)
			cr_assert_eq(sp80090b_sample(&t, 1) & SP80090B_RCT_FAIL, 0,
			    "H=%g: sample %u of a run", table[r].h, i);
		cr_expect_eq(sp80090b_sample(&t, 1) & SP80090B_RCT_FAIL,
		    SP80090B_RCT_FAIL, "H=%g: sample %u of a run", table[r].h, c);
		cr_expect_eq(t.rct_failures, 1);
		for (i = 1; i < c; i++)
			cr_assert_eq(sp80090b_sample(&t, 1) & SP80090B_RCT_FAIL, 0);
		cr_expect_eq(sp80090b_sample(&t, 1) & SP80090B_RCT_FAIL,
		    SP80090B_RCT_FAIL);
		cr_expect_eq(t.rct_failures, 2);
	}
}

/*
 * Fill one APT window with `hits` samples equal to its first (the first
 * counting as one), spreading the others so no value repeats long enough
 * to trip the RCT.  Returns the OR of the results.
 */
static unsigned
apt_window(struct sp80090b *t, unsigned hits)
{
	unsigned i, result = 0, other = 0, mask = (1u << t->sample_bits) - 1;
	unsigned first = 0, left = hits - 1, slots;

	result |= sp80090b_sample(t, first);
	for (i = 1; i < t->apt_window; i++) {
		slots = t->apt_window - i;
		/* Place a hit at the start of each stretch it is due in. */
		if (left > 0 && (uint64_t)left * (t->apt_window - 1) >=
		    (uint64_t)slots * (hits - 1)) {
			result |= sp80090b_sample(t, first);
			left--;
		} else {
			other = other % mask + 1;	/* 1..mask, never first */
			result |= sp80090b_sample(t, other);
		}
	}
	cr_assert_eq(left, 0);
	return result;
}

Test(sp80090b, apt_fails_at_cutoff)
{
	struct sp80090b t;

	for (unsigned r = 0; r < NTABLE; r++) {
		for (unsigned bits = table[r].bits; bits <= 8; bits += 7) {
			if (bits == 1 && table[r].h > 1)
				continue;
			sp80090b_init(&t, table[r].h, bits);
			unsigned c = t.apt_cutoff;
			cr_assert_eq(c, bits == 1 ? table[r].apt1024 :
			    table[r].apt512);
			cr_expect_eq(apt_window(&t, c - 1), SP80090B_PASS,
			    "H=%g, %u-bit: %u hits", table[r].h, bits, c - 1);
			cr_expect_eq(apt_window(&t, c), SP80090B_APT_FAIL,
			    "H=%g, %u-bit: %u hits", table[r].h, bits, c);
			cr_expect_eq(t.apt_failures, 1);
			cr_expect_eq(t.rct_failures, 0);
		}
	}
}

Test(sp80090b, startup_needs_1024_passing_samples)
{
	struct sp80090b t;
	unsigned i;

	sp80090b_init(&t, 8, 8);
	for (i = 0; i < SP80090B_STARTUP_SAMPLES - 1; i++) {
		cr_assert_eq(sp80090b_sample(&t, i & 0xff), SP80090B_PASS);
		cr_assert_not(sp80090b_ready(&t), "ready after %u samples", i + 1);
	}
	cr_assert_eq(sp80090b_sample(&t, 7), SP80090B_PASS);
	cr_assert(sp80090b_ready(&t), "not ready after 1024 samples");
	/* A failure takes readiness away until 1024 more have passed. */
	for (i = 0; i < t.rct_cutoff - 2; i++)
		cr_assert_eq(sp80090b_sample(&t, 7), SP80090B_PASS);
	cr_assert(sp80090b_ready(&t));
	cr_assert_eq(sp80090b_sample(&t, 7), SP80090B_RCT_FAIL);
	cr_assert_not(sp80090b_ready(&t));
	cr_assert_eq(t.startup_remaining, SP80090B_STARTUP_SAMPLES);
	for (i = 0; i < SP80090B_STARTUP_SAMPLES - 1; i++) {
		cr_assert_eq(sp80090b_sample(&t, (i + 100) & 0xff), SP80090B_PASS);
		cr_assert_not(sp80090b_ready(&t));
	}
	cr_assert_eq(sp80090b_sample(&t, 3), SP80090B_PASS);
	cr_expect(sp80090b_ready(&t));
	sp80090b_reset(&t);
	cr_expect_not(sp80090b_ready(&t));
}

Test(sp80090b, samples_are_masked_to_their_width)
{
	struct sp80090b t;

	sp80090b_init(&t, 1, 1);
	/* 0x10 and 0x20 are both 0 as 1-bit samples: a run of 21 zeros. */
	for (unsigned i = 0; i < t.rct_cutoff - 1; i++)
		cr_assert_eq(sp80090b_sample(&t, i & 1 ? 0x10 : 0x20), SP80090B_PASS);
	cr_expect_eq(sp80090b_sample(&t, 0x30) & SP80090B_RCT_FAIL,
	    SP80090B_RCT_FAIL);
}
