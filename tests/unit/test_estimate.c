/* SPDX-License-Identifier: MIT */
/*
 * The SP 800-90B 6.3 estimators against answers worked out here from the
 * standard's formulas (with libm), on inputs whose counts are known:
 * uniform bytes, a biased binary source, a first-order Markov chain,
 * constant input; the sliding window against a fresh count of its
 * contents; and the credit rules.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "estimate.h"

#define Z 2.5758293035489008

/* 6.3.1 written out: -log2(min(1, p + Z sqrt(p (1 - p) / (n - 1)))). */
static double
mcv_expected(double mode, double n)
{
	double p = mode / n, pu = p + Z * sqrt(p * (1 - p) / (n - 1));

	return -log2(pu < 1 ? pu : 1);
}

/*
 * 6.3.3 written out from a bit string's transition counts: the six
 * 128-bit sequences, the most likely one's -log2 over 128, at most 1.
 */
static double
markov_expected(const unsigned char *bits, size_t n)
{
	double c0 = 0, c1 = 0, c00 = 0, c10 = 0, zeros = 0, p0, p1, p00, p01, p10, p11;
	double h = 128, cand[6];
	size_t i;
	int k;

	for (i = 0; i + 1 < n; i++) {
		if (bits[i] == 0) {
			c0++;
			c00 += bits[i + 1] == 0;
		} else {
			c1++;
			c10 += bits[i + 1] == 0;
		}
	}
	for (i = 0; i < n; i++)
		zeros += bits[i] == 0;
	p00 = c0 > 0 ? c00 / c0 : 0;
	p01 = c0 > 0 ? 1 - p00 : 0;
	p10 = c1 > 0 ? c10 / c1 : 0;
	p11 = c1 > 0 ? 1 - p10 : 0;
	p0 = zeros / (double)n;
	p1 = 1 - p0;
	cand[0] = p00 > 0 ? -log2(p0) - 127 * log2(p00) : INFINITY;
	cand[1] = p01 > 0 && p10 > 0 ? -log2(p0) - 64 * log2(p01) - 63 * log2(p10) : INFINITY;
	cand[2] = p01 > 0 && p11 > 0 ? -log2(p0) - log2(p01) - 126 * log2(p11) : INFINITY;
	cand[3] = p10 > 0 && p00 > 0 ? -log2(p1) - log2(p10) - 126 * log2(p00) : INFINITY;
	cand[4] = p10 > 0 && p01 > 0 ? -log2(p1) - 64 * log2(p10) - 63 * log2(p01) : INFINITY;
	cand[5] = p11 > 0 ? -log2(p1) - 127 * log2(p11) : INFINITY;
	for (k = 0; k < 6; k++)
		if (cand[k] < h)
			h = cand[k];
	return h / 128 < 1 ? h / 128 : 1;
}

/* 6.3.2 written out: collision groups of 2 or 3 bits, mean less Z sigma, the quadratic. */
static double
collision_expected(const unsigned char *bits, size_t n)
{
	double v = 0, sum = 0, sq = 0, x, s, p;
	size_t i = 0;
	int t;

	while (i + 1 < n) {
		if (bits[i] == bits[i + 1])
			t = 2;
		else if (i + 2 < n)
			t = 3;
		else
			break;
		v++;
		sum += t;
		sq += t * t;
		i += (size_t)t;
	}
	x = sum / v;
	s = sqrt((sq - sum * x) / (v - 1));
	x -= Z * s / sqrt(v);
	if (x < 2)
		x = 2;
	if (x >= 2.5)
		return 1;
	p = 0.5 + sqrt(1.25 - 0.5 * x);
	return -log2(p);
}

/* 6.3.7 step 8 written out with libm's long doubles: ln P(no run of r) - ln 0.99. */
static long double
run_function(long double p, long double r, long double n)
{
	long double q = 1 - p, x = 1, last = 0;
	int i;

	for (i = 0; i <= 65 && x - last > LDBL_EPSILON * x; i++) {
		last = x;
		x = 1 + q * powl(p, r) * powl(x, r + 1);
	}
	return logl(1 - p * x) - logl((r + 1 - r * x) * q) - (n + 1) * logl(x) - logl(0.99L);
}

/*
 * 6.3.8 written out: the lag predictor by brute force (each of D = 128
 * lags checked per sample, ties to the longer lag), then 6.3.7's bounds:
 * global with the 99 % bound, local from the longest run by bisection.
 */
static double
lag_expected(const uint32_t *s, size_t n, double k)
{
	static uint64_t score[128];
	uint64_t high = 0, hits = 0, run = 0, longest = 0;
	size_t i, d, winner = 0;
	long double pg, p, lo, hi;

	memset(score, 0, sizeof score);
	for (i = 1; i < n; i++) {
		if (s[i] == s[i - winner - 1]) {
			hits++;
			if (++run > longest)
				longest = run;
		} else
			run = 0;
		for (d = 0; d < 128 && d < i; d++)
			if (s[i - d - 1] == s[i] && ++score[d] >= high) {
				high = score[d];
				winner = d;
			}
	}
	pg = (long double)hits / (n - 1);
	pg = pg > 0 ? fminl(1, pg + Z * sqrtl(pg * (1 - pg) / (n - 2))) :
	    1 - powl(0.01L, 1.0L / (n - 1));
	p = fmaxl(pg, 1 / (long double)k);
	if (p < 1 && run_function(p, longest + 1, n - 1) > 0) {
		lo = p;
		hi = 1;
		while (hi - lo > 1e-15L) {
			p = (lo + hi) / 2;
			if (run_function(p, longest + 1, n - 1) > 0)
				lo = p;
			else
				hi = p;
		}
		p = hi;
	}
	return p >= 1 ? 0 : (double)-log2l(p);
}

/* The bit string of samples of b bits, most significant first (as ea_non_iid expands it). */
static unsigned char *
bit_string(const uint32_t *s, size_t n, unsigned b)
{
	unsigned char *bits = malloc(n * b);
	size_t i;
	unsigned j;

	cr_assert_not_null(bits);
	for (i = 0; i < n; i++)
		for (j = 0; j < b; j++)
			bits[i * b + j] = s[i] >> (b - 1 - j) & 1;
	return bits;
}

/* Feed samples to an estimator over everything (window 0) with every figure. */
static void
estimate_all(struct estimate *e, const uint32_t *s, size_t n, unsigned b, bool collision)
{
	size_t i;

	estimate_init(e, b, 0, true, collision);
	for (i = 0; i < n; i++)
		estimate_sample(e, s[i]);
}

/* A small PRNG so the inputs are the same on every run. */
static uint64_t
test_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

Test(estimate, uniform_bytes)
{
	static uint32_t s[4096];
	struct estimate_result r;
	struct estimate e;
	unsigned char *bits;
	size_t i;

	/* Every byte value 16 times: mode 16 of 4096, and exactly half the bits zero. */
	for (i = 0; i < 4096; i++)
		s[i] = (uint32_t)(i * 167 % 256);
	estimate_all(&e, s, 4096, 8, true);
	cr_assert(estimate_compute(&e, &r));
	cr_expect_eq(r.mode, 16);
	cr_expect_float_eq(r.mcv, mcv_expected(16, 4096), 1e-9, "%.12f", r.mcv);
	cr_expect_float_eq(r.mcv_bits, mcv_expected(16384, 32768), 1e-9);
	bits = bit_string(s, 4096, 8);
	cr_expect_float_eq(r.markov_bits, markov_expected(bits, 32768), 1e-9, "%.12f vs %.12f",
	    r.markov_bits, markov_expected(bits, 32768));
	cr_expect_float_eq(r.collision_bits, collision_expected(bits, 32768), 1e-9);
	cr_expect_float_eq(r.markov, 8 * r.markov_bits, 1e-12);
	/* 167 is odd: the values come round every 256 samples, which lag 256 would see. */
	cr_expect_float_eq(r.lag, lag_expected(s, 4096, 256), 1e-6, "%.9f vs %.9f", r.lag,
	    lag_expected(s, 4096, 256));
	cr_expect_float_eq(r.min, fmin(fmin(r.mcv, r.lag), 8 * fmin(r.mcv_bits,
	    fmin(r.markov_bits, r.collision_bits))), 1e-12);
	/* Every value equally often: the literal MCV is close to (below) 8 bits. */
	cr_expect(r.mcv > 6.5 && r.mcv < 8, "%g", r.mcv);
	free(bits);
	estimate_free(&e);

	/* Bytes from a generator: the MCV binds, and a larger window gets closer to 8. */
	{
		uint64_t x = 0x9e3779b97f4a7c15ULL;
		double small;

		estimate_init(&e, 8, 0, true, true);
		for (i = 0; i < 4096; i++)
			estimate_sample(&e, (uint32_t)(test_next(&x) >> 56));
		cr_assert(estimate_compute(&e, &r));
		small = r.min;
		cr_expect(r.min <= r.mcv, "%g", r.min);
		for (; i < 1000000; i++)
			estimate_sample(&e, (uint32_t)(test_next(&x) >> 56));
		cr_assert(estimate_compute(&e, &r));
		cr_expect_float_eq(r.mcv, mcv_expected((double)r.mode, 1e6), 1e-9);
		cr_expect(r.mcv > small && r.mcv > 7.8 && r.mcv < 8, "%g after %g", r.mcv, small);
		/*
		 * Random bits give collision groups of mean 2.5, and 6.3.2's lower
		 * bound on the mean falls just short of it: about 0.95 bits per bit.
		 */
		cr_expect(r.markov_bits > 0.99 && r.collision_bits > 0.9, "%g %g", r.markov_bits,
		    r.collision_bits);
		cr_expect(r.lag > 7.8, "nothing to predict: %g", r.lag);
		estimate_free(&e);
	}
}

Test(estimate, biased_binary_source)
{
	static uint32_t s[4096];
	struct estimate_result r;
	struct estimate e;
	double p0, p01 = 1, p10 = 1024.0 / 3072, p11 = 2048.0 / 3072, h;
	size_t i;

	/* 1110 repeated: 3072 ones of 4096; pairs 11: 2048, 10: 1024, 01: 1023, 00: none. */
	for (i = 0; i < 4096; i++)
		s[i] = i % 4 != 3;
	estimate_all(&e, s, 4096, 1, true);
	cr_assert(estimate_compute(&e, &r));
	cr_expect_eq(r.mode, 3072);
	cr_expect_float_eq(r.mcv, mcv_expected(3072, 4096), 1e-9);
	cr_expect_float_eq(r.mcv_bits, r.mcv, 1e-12, "one-bit samples: the same string");
	cr_expect_eq(e.pairs[0], 0);
	cr_expect_eq(e.pairs[1], 1023);
	cr_expect_eq(e.pairs[2], 1024);
	cr_expect_eq(e.pairs[3], 2048);
	/* The most likely sequences: 11...1, then 011...1 (00 never happens). */
	p0 = 1024.0 / 4096;
	h = fmin(-log2(1 - p0) - 127 * log2(p11), -log2(p0) - log2(p01) - 126 * log2(p11));
	h = fmin(h, -log2(p0) - 64 * log2(p01) - 63 * log2(p10));
	cr_expect_float_eq(r.markov_bits, h / 128, 1e-9, "%.12f vs %.12f", r.markov_bits, h / 128);
	/* Groups 11 (2), 101 (3), 110 (3), 011 (3)...: worked out bit by bit. */
	{
		unsigned char *bits = bit_string(s, 4096, 1);

		cr_expect_float_eq(r.collision_bits, collision_expected(bits, 4096), 1e-9);
		free(bits);
	}
	/* Period 4: lag 4 guesses every sample once it leads. */
	cr_expect_float_eq(r.lag, lag_expected(s, 4096, 2), 1e-6, "%.9f", r.lag);
	cr_expect(r.lag < 0.01, "%g", r.lag);
	cr_expect_float_eq(r.min, fmin(fmin(r.mcv, r.lag), fmin(r.markov_bits,
	    r.collision_bits)), 1e-12);
	estimate_free(&e);
}

Test(estimate, first_order_markov_chain)
{
	static uint32_t s[200000];
	struct estimate_result r;
	struct estimate e;
	unsigned char *bits;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	size_t i;

	/* A binary chain that keeps its last bit with probability 0.9. */
	s[0] = 0;
	for (i = 1; i < 200000; i++)
		s[i] = test_next(&x) % 10 == 0 ? !s[i - 1] : s[i - 1];
	estimate_all(&e, s, 200000, 1, true);
	cr_assert(estimate_compute(&e, &r));
	bits = bit_string(s, 200000, 1);
	cr_expect_float_eq(r.markov_bits, markov_expected(bits, 200000), 1e-9);
	cr_expect_float_eq(r.collision_bits, collision_expected(bits, 200000), 1e-9);
	cr_expect_float_eq(r.lag, lag_expected(s, 200000, 2), 1e-6, "%.9f", r.lag);
	/* Balanced bits fool the MCV; Markov sees the dependence: about -log2(0.9). */
	cr_expect(r.mcv > 0.95, "MCV %g", r.mcv);
	cr_expect(fabs(r.markov_bits + log2(0.9)) < 0.01, "Markov %g", r.markov_bits);
	cr_expect(r.min <= r.markov_bits && r.min < 0.2, "the dependence decides: %g", r.min);
	free(bits);
	estimate_free(&e);

	/* The same chain packed 8 bits to a sample: Markov on the bit string, per sample x 8. */
	for (i = 0; i < 25000; i++) {
		uint32_t v = 0;
		int j;

		for (j = 0; j < 8; j++)
			v = v << 1 | s[i * 8 + (size_t)j];
		s[i] = v;
	}
	estimate_all(&e, s, 25000, 8, false);
	cr_assert(estimate_compute(&e, &r));
	bits = bit_string(s, 25000, 8);
	cr_expect_float_eq(r.markov_bits, markov_expected(bits, 200000), 1e-9);
	cr_expect_float_eq(r.markov, 8 * r.markov_bits, 1e-12);
	cr_expect(r.min <= r.markov + 1e-12 && r.min < 2, "%g", r.min);
	free(bits);
	estimate_free(&e);
}

Test(estimate, constant_input_has_no_entropy)
{
	struct estimate_result r;
	struct estimate e;
	unsigned b;
	size_t i;

	for (b = 1; b <= 16; b += 5) {
		estimate_init(&e, b, 0, true, true);
		for (i = 0; i < 5000; i++)
			estimate_sample(&e, 0x5a5a & ((1u << b) - 1));
		cr_assert(estimate_compute(&e, &r));
		cr_expect_eq(r.mode, 5000);
		cr_expect_float_eq(r.mcv, 0.0, 1e-12, "b=%u", b);
		cr_expect_float_eq(r.min, 0.0, 1e-12, "b=%u", b);
		estimate_free(&e);
	}
	/* All ones and all zeros: Markov finds the one sequence certain. */
	estimate_init(&e, 1, 0, true, true);
	for (i = 0; i < 2048; i++)
		estimate_sample(&e, 1);
	cr_assert(estimate_compute(&e, &r));
	cr_expect_float_eq(r.markov_bits, 0.0, 1e-12);
	cr_expect_float_eq(r.collision_bits, 0.0, 1e-12, "every group 11: mean 2, p = 1");
	estimate_free(&e);
}

Test(estimate, collision_extremes)
{
	struct estimate_result r;
	struct estimate e;
	size_t i;

	/* 0101...: every group is 3 bits, the mean bound is above 2.5: 1 bit per bit. */
	estimate_init(&e, 1, 0, true, true);
	for (i = 0; i < 4096; i++)
		estimate_sample(&e, i & 1);
	cr_assert(estimate_compute(&e, &r));
	cr_expect_float_eq(r.collision_bits, 1.0, 1e-12);
	estimate_free(&e);
}

Test(estimate, nothing_below_the_minimum)
{
	struct estimate_result r;
	struct estimate e;
	size_t i;

	estimate_init(&e, 8, 0, true, false);
	for (i = 0; i < ESTIMATE_MIN_SAMPLES - 1; i++)
		estimate_sample(&e, (uint32_t)i);
	cr_expect_not(estimate_compute(&e, &r));
	cr_expect_not(estimate_refresh(&e));
	estimate_sample(&e, 7);
	cr_expect(estimate_compute(&e, &r));
	estimate_free(&e);
}

/* Check a sliding window against a fresh estimator fed only the window's contents. */
static void
check_window(unsigned b, size_t window, const uint32_t *s, size_t n, bool bits)
{
	struct estimate_result ra, rb;
	struct estimate a, fresh;
	size_t i;

	estimate_init(&a, b, window, bits, false);
	estimate_init(&fresh, b, 0, bits, false);
	for (i = 0; i < n; i++)
		estimate_sample(&a, s[i]);
	for (i = n - window; i < n; i++)
		estimate_sample(&fresh, s[i]);
	cr_assert_eq(a.n, window);
	cr_assert(estimate_compute(&a, &ra));
	cr_assert(estimate_compute(&fresh, &rb));
	cr_expect_eq(ra.mode, rb.mode, "b=%u", b);
	cr_expect_eq(a.zeros, fresh.zeros, "b=%u", b);
	for (i = 0; i < 4; i++)
		cr_expect_eq(a.pairs[i], fresh.pairs[i], "b=%u pair %zu", b, i);
	cr_expect_float_eq(ra.mcv, rb.mcv, 1e-12);
	if (bits)
		cr_expect_float_eq(ra.markov, rb.markov, 1e-12);
	estimate_free(&a);
	estimate_free(&fresh);
}

Test(estimate, the_window_slides)
{
	static uint32_t s[3 * 8192];
	uint64_t x = 88172645463325252ULL;
	unsigned b;
	size_t i;

	/* Constant first, then a biased mix: the window keeps only the last part. */
	for (b = 1; b <= 16; b++) {
		for (i = 0; i < 8192; i++)
			s[i] = 0;
		for (; i < 3 * 8192; i++)
			s[i] = (uint32_t)(test_next(&x) & test_next(&x)) & ((1u << b) - 1);
		check_window(b, 8192, s, 3 * 8192, true);
		check_window(b, 4099, s, 3 * 8192 - 5, b == 8);
	}
}

Test(estimate, the_lag_predictor_counts_hits_in_the_window)
{
	static uint32_t s[50000];
	static uint64_t score[128];
	static bool hit[50000];
	struct estimate_result r;
	struct estimate e;
	uint64_t x = 0x1234567, high = 0, hits = 0, run = 0, longest = 0;
	size_t i, d, winner = 0, w = 8192;

	/* Periodic stretches in noise, so the predictor has runs to find. */
	for (i = 0; i < 50000; i++)
		s[i] = (i / 3000) % 2 ? (uint32_t)(i % 7) : (uint32_t)(test_next(&x) % 16);
	estimate_init(&e, 4, w, true, false);
	for (i = 0; i < 50000; i++)
		estimate_sample(&e, s[i]);
	cr_assert(estimate_compute(&e, &r));
	/* The predictor learns from everything; hits count in the window only. */
	for (i = 1; i < 50000; i++) {
		hit[i] = s[i] == s[i - winner - 1];
		for (d = 0; d < 128 && d < i; d++)
			if (s[i - d - 1] == s[i] && ++score[d] >= high) {
				high = score[d];
				winner = d;
			}
	}
	for (i = 50000 - w; i < 50000; i++) {
		hits += hit[i];
		run = hit[i] ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	cr_expect_eq(r.lag_hits, hits);
	cr_expect_eq(r.lag_run, longest);
	cr_expect_float_eq(r.lag, estimate_predictor_formula(hits, w, longest, 16), 1e-12);
	cr_expect(r.lag < 1, "the window holds a periodic stretch: %g", r.lag);
	estimate_free(&e);
}

Test(estimate, byte_blocks)
{
	static uint8_t buf[3 * 16384];
	struct estimate_result r;
	struct estimate e, ref;
	uint64_t x = 42;
	size_t i;

	for (i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(test_next(&x) >> 40);
	/* One byte in ten zero in the second block only. */
	for (i = 16384; i < 2 * 16384; i += 10)
		buf[i] = 0;
	estimate_init_blocks(&e, 8, 16384);
	estimate_bytes(&e, buf, 16383);
	cr_expect_not(estimate_refresh(&e), "no figure before the block ends");
	estimate_bytes(&e, buf + 16383, 1);
	cr_assert(estimate_refresh(&e));
	cr_expect_not(estimate_refresh(&e), "a figure is new once");
	/* Each block's figures are those of its bytes alone. */
	estimate_init(&ref, 8, 0, false, false);
	estimate_bytes(&ref, buf, 16384);
	cr_assert(estimate_compute(&ref, &r));
	cr_expect_eq(e.last.mode, r.mode);
	cr_expect_float_eq(e.last.mcv, r.mcv, 1e-12);
	estimate_free(&ref);
	cr_expect(e.last.mcv > 6.5, "random bytes: %g", e.last.mcv);
	/* Two blocks in one go: the poorer one's figures are kept. */
	estimate_bytes(&e, buf + 16384, 2 * 16384);
	cr_assert(estimate_refresh(&e));
	cr_expect(e.last.mcv < 4, "the block with zeros: %g", e.last.mcv);
	cr_expect_eq(e.last.samples, 16384);
	cr_expect_lt(e.last.markov, 0, "bytes: the MCV only");
	estimate_free(&e);
}

Test(estimate, refresh_cadence)
{
	struct estimate e;
	size_t i, refreshes = 0;

	estimate_init(&e, 8, 16384, true, false);
	for (i = 0; i < 16384 * 2; i++) {
		estimate_sample(&e, (uint32_t)(i * 31));
		refreshes += estimate_refresh(&e);
	}
	/* First at ESTIMATE_MIN_SAMPLES, then every 16384 / 16 = 1024 samples. */
	cr_expect_eq(refreshes, 32, "%zu", refreshes);
	estimate_free(&e);
	estimate_init(&e, 8, 16384, false, false);
	e.first_at = 16384;
	for (i = 0; i < 16383; i++) {
		estimate_sample(&e, (uint32_t)i);
		cr_assert_not(estimate_refresh(&e));
	}
	estimate_sample(&e, 1);
	cr_expect(estimate_refresh(&e), "the first figure once the window is full");
	estimate_free(&e);
}

Test(estimate, credit_rules)
{
	/* Raw: at most half the estimate, never above the claim. */
	cr_expect_float_eq(estimate_credit_target(1.0 / 3, 5.0, true), 1.0 / 3, 1e-12);
	cr_expect_float_eq(estimate_credit_target(1.0 / 3, 0.2, true), 0.1, 1e-12);
	cr_expect_float_eq(estimate_credit_target(2, 4, true), 2, 1e-12);
	cr_expect_float_eq(estimate_credit_target(2, 0, true), 0, 1e-12);
	cr_expect_float_eq(estimate_credit_target(2, NAN, true), 0, 1e-12, "no figure: nothing");
	/* Bytes: the claim stands down to 3/4 of it, then the estimate itself. */
	cr_expect_float_eq(estimate_credit_target(8, 7.2, false), 8, 1e-12);
	cr_expect_float_eq(estimate_credit_target(8, 6.0, false), 8, 1e-12);
	cr_expect_float_eq(estimate_credit_target(8, 5.5, false), 5.5, 1e-12);
	cr_expect_float_eq(estimate_credit_target(1.0 / 64, 7.2, false), 1.0 / 64, 1e-12);

	/* Lowered at once, with headroom. */
	cr_expect_float_eq(estimate_next_credit(1.0 / 3, 0.1), 0.09, 1e-12);
	/* Not lowered again by a wobble that stays above the lowered figure. */
	cr_expect_float_eq(estimate_next_credit(0.09, 0.095), 0.09, 1e-12);
	cr_expect_float_eq(estimate_next_credit(0.09, 0.085), 0.0765, 1e-12);
	/* Never raised again, whatever the target says. */
	cr_expect_float_eq(estimate_next_credit(0.09, 0.2), 0.09, 1e-12);
	cr_expect_float_eq(estimate_next_credit(1.0 / 3, 3.0), 1.0 / 3, 1e-12);
	cr_expect_float_eq(estimate_next_credit(0, 3.0), 0, 1e-12);
}
