/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B 4.4 continuous health tests on raw samples: the Repetition
 * Count Test and the Adaptive Proportion Test, with their cutoffs for
 * alpha = 2^-20 and the start-up requirement.
 */
#include <math.h> /* ldexp, which libc has */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "numeric.h"
#include "sp80090b.h"

#define SP80090B_ALPHA_LOG2 20	/* alpha = 2^-20 */
/* Terms past 2^BIG_LOG2 are rescaled by 2^-BIG_LOG2. */
#define SP80090B_BIG_LOG2 512
#define SP80090B_BIG 0x1p512

/* RCT cutoff C = 1 + ceil(20 / H); the slack keeps 20/0.1 from rounding up. */
unsigned
sp80090b_rct_cutoff(double h)
{
	double q = SP80090B_ALPHA_LOG2 / h - 1e-9;
	unsigned c = (unsigned)q;

	return 1 + (c < q ? c + 1 : c);
}

/*
 * APT cutoff C = 1 + CRITBINOM(W, 2^-H, 1 - alpha): the smallest k whose
 * upper tail P(X > k) is at most alpha. The binomial terms are built from
 * the top, u(W) = 1 and u(k-1) = u(k) * k / (W - k + 1) * q / p, in
 * doubles rescaled by powers of two (they span far more than a double's
 * range); the first pass sums them all, the second walks the tail down.
 */
unsigned
sp80090b_apt_cutoff(double h, unsigned window)
{
	double p = numeric_exp2(-h), ratio = (1.0 - p) / p, u, total = 0.0, tail = 0.0;
	int total_scale = 0, scale;
	unsigned k;

	u = 1.0;
	for (k = window; ; k--) {
		total += u;
		if (k == 0)
			break;
		u *= (double)k / (double)(window - k + 1) * ratio;
		if (u > SP80090B_BIG) {
			u *= 1.0 / SP80090B_BIG;
			total *= 1.0 / SP80090B_BIG;
			total_scale += SP80090B_BIG_LOG2;
		}
	}
	u = 1.0;
	scale = 0;
	for (k = window; k > 0; k--) {
		/* Does the tail through k pass alpha of the total (at the tail's scale)? */
		if (total_scale - scale < 2 * SP80090B_BIG_LOG2 &&
		    tail + u > ldexp(total, total_scale - scale - SP80090B_ALPHA_LOG2))
			return 1 + k;
		tail += u;
		u *= (double)k / (double)(window - k + 1) * ratio;
		if (u > SP80090B_BIG) {
			u *= 1.0 / SP80090B_BIG;
			tail *= 1.0 / SP80090B_BIG;
			scale += SP80090B_BIG_LOG2;
		}
	}
	return 1;
}

/* Binary sources use 1024-sample windows, wider ones 512. */
unsigned
sp80090b_apt_window(unsigned sample_bits)
{
	return sample_bits == 1 ? 1024 : 512;
}

/* Set up the tests for a source of H bits of min-entropy per sample. */
void
sp80090b_init(struct sp80090b *t, double h, unsigned sample_bits)
{
	memset(t, 0, sizeof *t);
	t->h = h;
	t->sample_bits = sample_bits;
	t->rct_cutoff = sp80090b_rct_cutoff(h);
	t->apt_window = sp80090b_apt_window(sample_bits);
	t->apt_cutoff = sp80090b_apt_cutoff(h, t->apt_window);
	sp80090b_reset(t);
}

/* Forget the runs and windows in progress; start-up begins again. */
void
sp80090b_reset(struct sp80090b *t)
{
	t->rct_last = 0;
	t->rct_count = 0;
	t->apt_first = 0;
	t->apt_count = 0;
	t->apt_index = 0;
	t->startup_remaining = SP80090B_STARTUP_SAMPLES;
}

/* Feed one sample to both tests; a failure restarts the start-up count. */
enum sp80090b_result
sp80090b_sample(struct sp80090b *t, uint32_t sample)
{
	unsigned result = SP80090B_PASS;

	if (t->sample_bits > 0 && t->sample_bits < 32)
		sample &= (UINT32_C(1) << t->sample_bits) - 1;

	if (t->rct_count > 0 && sample == t->rct_last)
		t->rct_count++;
	else {
		t->rct_last = sample;
		t->rct_count = 1;
	}
	if (t->rct_count >= t->rct_cutoff) {
		t->rct_failures++;
		t->rct_count = 0;
		result |= SP80090B_RCT_FAIL;
	}

	if (t->apt_index == 0) {
		t->apt_first = sample;
		t->apt_count = 1;
	} else if (sample == t->apt_first) {
		if (++t->apt_count == t->apt_cutoff) {
			t->apt_failures++;
			result |= SP80090B_APT_FAIL;
		}
	}
	if (++t->apt_index == t->apt_window)
		t->apt_index = 0;

	if (result != SP80090B_PASS)
		t->startup_remaining = SP80090B_STARTUP_SAMPLES;
	else if (t->startup_remaining > 0)
		t->startup_remaining--;
	return (enum sp80090b_result)result;
}

/* Output may be used once start-up has seen enough passing samples. */
bool
sp80090b_ready(const struct sp80090b *t)
{
	return t->startup_remaining == 0;
}
