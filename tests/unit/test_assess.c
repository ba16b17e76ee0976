/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B's estimators as entropytest -e runs them (src/health/assess.c
 * and estimate_*.c): against counts worked out by hand for strings whose
 * structure fixes them (periodic strings, a rare symbol in a constant
 * stream), and against plain, slow re-statements of NIST's loops on random
 * strings, which the fast versions (blocks of 64, dead contexts skipped,
 * dictionaries filled lazily) must match count for count; and the restart
 * tests' cutoff and checks (src/health/restart.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "assess.h"
#include "estimate.h"
#include "estimate_compress.h"
#include "estimate_predict.h"
#include "estimate_tuple.h"
#include "restart.h"

#define Z 2.5758293035489008

/* A reproducible pseudo-random stream (xorshift64*). */
static uint64_t
rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* n symbols of `width` bits (one a byte), packed most significant first, padded. */
static uint8_t *
pack(const uint8_t *sym, size_t n, unsigned width)
{
	uint8_t *p = calloc(n * width / 8 + ESTIMATE_TUPLE_PAD_BYTES + 1, 1);
	size_t i, at = 0;
	unsigned j;

	for (i = 0; i < n; i++)
		for (j = width; j-- > 0; at++)
			p[at >> 3] |= (uint8_t)((sym[i] >> j & 1) << (7 - (at & 7)));
	return p;
}

/* Random symbols: k values, runs of the last one now and then, copies of earlier stretches. */
static uint8_t *
random_symbols(size_t n, unsigned k, uint64_t seed)
{
	uint8_t *s = malloc(n);
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t x = rng(&seed);

		if (i > 40 && x % 17 == 0)
			s[i] = s[i - 1 - (x >> 8) % 40];
		else
			s[i] = (uint8_t)((x >> 16) % k);
	}
	return s;
}

/* -log2 of the 99 % bound on p from n samples, 1 at most. */
static double
bound(double p, double n)
{
	double pu = p + Z * sqrt(p * (1 - p) / (n - 1));

	return pu >= 1 ? 0 : -log2(pu);
}

/*
 * A period-4 string of n symbols (n a multiple of 4): the t-tuples that
 * start at positions of one residue r mod 4 are all equal, so there are
 * floor((n - t - r) / 4) + 1 of them, residue 0 has the most, and the
 * pairs of equal t-tuples are C(count, 2) summed over the residues. From
 * those counts, 6.3.5 and 6.3.6 as the standard writes them.
 */
static void
period4_expected(double n, double *t_tuple, double *lrs, unsigned *u_out, unsigned *v_out)
{
	double best = -1, p, pairs, c;
	unsigned t, u, v = (unsigned)n - 4, r;

	for (u = 1; floor((n - u) / 4) + 1 >= 35; u++)
		;
	for (t = 1; t < u; t++) {
		p = pow((floor((n - t) / 4) + 1) / (n - t + 1), 1.0 / t);
		if (p > best)
			best = p;
	}
	*t_tuple = bound(best, n);
	best = 0;
	for (t = u; t <= v; t++) {
		for (pairs = 0, r = 0; r < 4; r++) {
			c = floor((n - t - r) / 4) + 1;
			if (c >= 2)
				pairs += c * (c - 1) / 2;
		}
		p = pow(pairs / ((n - t) * (n - t + 1) / 2), 1.0 / t);
		if (p > best)
			best = p;
	}
	*lrs = bound(best, n);
	*u_out = u;
	*v_out = v;
}

Test(tuple, period_4_bits_as_worked_out)
{
	uint8_t sym[160];
	double tt, lrs;
	unsigned u, v, i;
	struct estimate_tuple r;
	const char *why;
	uint8_t *p;

	/* 0011 0011 ...: 160 bits. */
	for (i = 0; i < 160; i++)
		sym[i] = (i % 4) >= 2;
	period4_expected(160, &tt, &lrs, &u, &v);
	/* By hand: u = 25 (24-tuples start 35 times at residue 0, 25-tuples 34),
	 * v = 156, and p-hat = (35/137)^(1/24) = 0.94473: 0.0124 bits. */
	cr_assert_eq(u, 25);
	cr_assert_float_eq(tt, 0.012446, 1e-5);
	p = pack(sym, 160, 1);
	cr_assert_eq(estimate_tuple(p, 160, 1, NULL, &r, &why), 0);
	cr_assert_eq(r.t, u - 1);
	cr_assert_eq(r.v, v);
	cr_assert_float_eq(r.t_tuple, tt, 1e-9, "t-tuple %.9f, want %.9f", r.t_tuple, tt);
	cr_assert_float_eq(r.lrs, lrs, 1e-9, "LRS %.9f, want %.9f", r.lrs, lrs);
	free(p);
}

/* The naive suffix sorter: every suffix compared byte by byte. */
static const uint8_t *naive_text;
static int32_t naive_n;

static int
naive_cmp(const void *a, const void *b)
{
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;

	while (i < naive_n && j < naive_n && naive_text[i] == naive_text[j]) {
		i++;
		j++;
	}
	if (i == naive_n || j == naive_n)
		return i == naive_n ? -1 : 1;
	return naive_text[i] < naive_text[j] ? -1 : 1;
}

static int
naive_sorter(const uint8_t *text, int32_t *sa, int32_t n)
{
	int32_t i;

	naive_text = text;
	naive_n = n;
	for (i = 0; i < n; i++)
		sa[i] = i;
	qsort(sa, (size_t)n, sizeof *sa, naive_cmp);
	return 0;
}

Test(tuple, period_4_symbols_of_every_width)
{
	static const uint8_t letters[4] = { 3, 1, 2, 0 };
	uint8_t sym[400];
	double tt, lrs;
	unsigned u, v, i, w;
	struct estimate_tuple r;
	const char *why;
	uint8_t *p;

	for (i = 0; i < 400; i++)
		sym[i] = letters[i % 4];
	period4_expected(400, &tt, &lrs, &u, &v);
	/* Repeats of 396 symbols: sorted here for narrow symbols, by the
	 * sorter for wide ones (fewer symbols to a key); the same either way. */
	for (w = 2; w <= 8; w++) {
		p = pack(sym, 400, w);
		cr_assert_eq(estimate_tuple(p, 400, w, naive_sorter, &r, &why), 0, "width %u", w);
		cr_assert_eq(r.v, v, "width %u: v %llu", w, (unsigned long long)r.v);
		cr_assert_float_eq(r.t_tuple, tt, 1e-9, "width %u", w);
		cr_assert_float_eq(r.lrs, lrs, 1e-9, "width %u", w);
		free(p);
	}
}

Test(tuple, long_repeats_go_to_the_suffix_sorter)
{
	uint8_t sym[4000];
	double tt, lrs;
	unsigned u, v, i;
	struct estimate_tuple r;
	const char *why;
	uint8_t *p;

	/* 4000 bits of period 4: repeats of 3996 bits, far past what is sorted here. */
	for (i = 0; i < 4000; i++)
		sym[i] = (i % 4) >= 2;
	p = pack(sym, 4000, 1);
	cr_assert_eq(estimate_tuple(p, 4000, 1, NULL, &r, &why), -1);
	cr_assert(why != NULL && strstr(why, "libdivsufsort") != NULL, "why: %s", why);
	period4_expected(4000, &tt, &lrs, &u, &v);
	cr_assert_eq(estimate_tuple(p, 4000, 1, naive_sorter, &r, &why), 0);
	cr_assert(r.sorted_by_library);
	cr_assert_eq(r.v, v);
	cr_assert_float_eq(r.t_tuple, tt, 1e-9);
	cr_assert_float_eq(r.lrs, lrs, 1e-9);
	free(p);
}

/* The t-tuples of a string by brute force: for each t, sort them and count equal runs. */
static const uint8_t *brute_text;
static size_t brute_t;

static int
brute_cmp(const void *a, const void *b)
{
	return memcmp(brute_text + *(const size_t *)a, brute_text + *(const size_t *)b, brute_t);
}

/* 6.3.5 and 6.3.6 as the standard states them, counting every tuple. */
static void
brute_tuple(const uint8_t *s, size_t n, double *tt, double *lrs)
{
	size_t *pos = malloc(n * sizeof *pos), i, j, t, u = 0, q;
	double best = -1, best_lrs = 0, pairs, p;

	brute_text = s;
	for (t = 1; t < n; t++) {
		brute_t = t;
		for (i = 0; i + t <= n; i++)
			pos[i] = i;
		qsort(pos, n - t + 1, sizeof *pos, brute_cmp);
		for (q = 1, pairs = 0, i = 0; i < n - t + 1; i = j) {
			for (j = i + 1; j < n - t + 1 && brute_cmp(&pos[i], &pos[j]) == 0; j++)
				;
			if (j - i > q)
				q = j - i;
			pairs += (double)(j - i) * (double)(j - i - 1) / 2;
		}
		if (q == 1)
			break;	/* no t-tuple repeats: t - 1 is the LRS */
		if (u == 0 && q < 35)
			u = t;
		if (u == 0) {
			p = pow((double)q / (double)(n - t + 1), 1.0 / (double)t);
			if (p > best)
				best = p;
		} else {
			p = pow(pairs / ((double)(n - t) * (double)(n - t + 1) / 2), 1.0 / (double)t);
			if (p > best_lrs)
				best_lrs = p;
		}
	}
	*tt = best > 0 ? bound(best, (double)n) : -1;
	*lrs = u > 0 ? bound(best_lrs, (double)n) : -1;
	free(pos);
}

Test(tuple, random_strings_as_counted_by_brute_force)
{
	static const unsigned widths[] = { 1, 2, 5, 8 };
	struct estimate_tuple r;
	const char *why;
	double tt, lrs;
	uint64_t seed = 7;
	uint8_t *sym = malloc(3000), *p;
	size_t i, z;

	for (z = 0; z < sizeof widths / sizeof *widths; z++) {
		/* Noise with stretches copied from earlier: repeats of every length. */
		for (i = 0; i < 3000; i++)
			sym[i] = i > 300 && rng(&seed) % 40 == 0 ? sym[i - 1 - rng(&seed) % 300] :
			    (uint8_t)(rng(&seed) % (1u << widths[z]));
		brute_tuple(sym, 3000, &tt, &lrs);
		p = pack(sym, 3000, widths[z]);
		cr_assert_eq(estimate_tuple(p, 3000, widths[z], NULL, &r, &why), 0);
		cr_assert_float_eq(r.t_tuple, tt, 1e-9, "width %u: %f, want %f", widths[z],
		    r.t_tuple, tt);
		cr_assert_float_eq(r.lrs, lrs, 1e-9, "width %u: %f, want %f", widths[z], r.lrs, lrs);
		free(p);
	}
	free(sym);
}

/* estimate_tuple against the brute force on a string of n symbols of `width` bits. */
static void
check_tuple_brute(const uint8_t *sym, size_t n, unsigned width, const char *what)
{
	struct estimate_tuple r;
	const char *why;
	double tt, lrs;
	uint8_t *p = pack(sym, n, width);

	brute_tuple(sym, n, &tt, &lrs);
	cr_assert_eq(estimate_tuple(p, n, width, naive_sorter, &r, &why), 0, "%s", what);
	cr_assert_float_eq(r.t_tuple, tt, 1e-9, "%s: t-tuple %f, want %f", what, r.t_tuple, tt);
	cr_assert_float_eq(r.lrs, lrs, 1e-9, "%s: LRS %f, want %f", what, r.lrs, lrs);
	free(p);
}

Test(tuple, edge_cases_as_counted_by_brute_force)
{
	static const size_t shorts[] = { 2, 3, 5, 40, 64, 65, 130 };
	static const unsigned widths[] = { 1, 4, 8 };
	uint8_t *sym = malloc(3000);
	uint64_t seed = 21;
	size_t i, z, w;

	/* One value throughout; two alternating; short strings of each width. */
	for (w = 0; w < 3; w++) {
		memset(sym, 1, 300);
		check_tuple_brute(sym, 300, widths[w], "all equal");
		for (i = 0; i < 300; i++)
			sym[i] = (uint8_t)(i & 1);
		check_tuple_brute(sym, 300, widths[w], "period 2");
		for (z = 0; z < sizeof shorts / sizeof *shorts; z++) {
			for (i = 0; i < shorts[z]; i++)
				sym[i] = (uint8_t)(rng(&seed) % (1u << widths[w]) % 3);
			check_tuple_brute(sym, shorts[z], widths[w], "short");
		}
	}
	/* 1-bit and 4-bit noise with long copies, past a key's reach. */
	for (w = 0; w < 2; w++) {
		for (i = 0; i < 3000; i++)
			sym[i] = i > 500 && i % 700 < 150 ? sym[i - 400] :
			    (uint8_t)(rng(&seed) % (w == 0 ? 2 : 16));
		check_tuple_brute(sym, 3000, w == 0 ? 1 : 4, "copies");
	}
	free(sym);
}

/*
 * The bit string of n samples of w bits as its samples' order sorts it
 * (estimate_tuple_bits), against the bit string sorted as any string is.
 */
static void
check_tuple_bits(const uint8_t *samples, size_t n, unsigned w, const char *what)
{
	struct estimate_tuple want, got;
	struct estimate_order order;
	uint8_t *bits = malloc(n * w), *p = pack(samples, n, w), *pb;
	const char *why;
	size_t i;
	unsigned j;

	for (i = 0; i < n; i++)
		for (j = 0; j < w; j++)
			bits[i * w + j] = samples[i] >> (w - 1 - j) & 1;
	pb = pack(bits, n * w, 1);
	cr_assert_eq(estimate_tuple_order(p, n, w, naive_sorter, &want, &why, &order), 0, "%s",
	    what);
	cr_assert(order.complete);
	cr_assert_eq(estimate_tuple(pb, n * w, 1, naive_sorter, &want, &why), 0, "%s", what);
	cr_assert_eq(estimate_tuple_bits(pb, n, w, &order, naive_sorter, &got, &why), 0, "%s",
	    what);
	cr_assert_eq(got.t, want.t, "%s (w %u): t %llu, want %llu", what, w,
	    (unsigned long long)got.t, (unsigned long long)want.t);
	cr_assert_eq(got.v, want.v, "%s (w %u): v %llu, want %llu", what, w,
	    (unsigned long long)got.v, (unsigned long long)want.v);
	cr_assert_float_eq(got.t_tuple, want.t_tuple, 1e-12, "%s (w %u)", what, w);
	cr_assert_float_eq(got.lrs, want.lrs, 1e-12, "%s (w %u)", what, w);
	estimate_order_free(&order);
	free(pb);
	free(p);
	free(bits);
}

Test(tuple, bit_strings_sorted_from_their_samples)
{
	static const uint8_t few[] = { 0xce, 0xd4, 0x04, 0xfd, 0xa0, 0xf2 };
	uint8_t *s = malloc(6000);
	uint64_t seed = 5;
	size_t i, n;
	unsigned w;

	for (w = 2; w <= 8; w++) {
		/* Noise; a few values (the jitter source's kind: the bit string
		 * repeats itself far more than its samples); one value with a
		 * rare other; a short file. */
		for (i = 0; i < 6000; i++)
			s[i] = (uint8_t)(rng(&seed) % (1u << w));
		check_tuple_bits(s, 6000, w, "noise");
		for (i = 0; i < 6000; i++)
			s[i] = (uint8_t)(few[rng(&seed) % 17 % 6] >> (8 - w));
		check_tuple_bits(s, 6000, w, "a few values");
		for (i = 0; i < 6000; i++)
			s[i] = rng(&seed) % 50 == 0 ? 1 : 0;
		check_tuple_bits(s, 6000, w, "rare ones");
		for (n = 2; n < 40; n += 7) {
			for (i = 0; i < n; i++)
				s[i] = (uint8_t)(rng(&seed) % 3);
			check_tuple_bits(s, n, w, "short");
		}
		/* Period 3: repeats the whole length (too long to compare here:
		 * sorted the other way). */
		for (i = 0; i < 2000; i++)
			s[i] = (uint8_t)(few[i % 3] >> (8 - w));
		check_tuple_bits(s, 2000, w, "period 3");
	}
	free(s);
}

/* An order's suffixes sorted by their first ESTIMATE_ORDER_DEPTH symbols (all, if complete). */
static void
check_order(const uint8_t *s, size_t n, const struct estimate_order *o)
{
	size_t r, l, depth, i;
	uint8_t *seen = calloc(n, 1);

	for (r = 0; r < n; r++) {
		cr_assert_lt(o->sa[r], n);
		cr_assert_not(seen[o->sa[r]], "start %u twice", o->sa[r]);
		seen[o->sa[r]] = 1;
		if (r == 0) {
			cr_assert_eq(o->lcp[0], 0);
			continue;
		}
		depth = o->complete ? n : ESTIMATE_ORDER_DEPTH;
		for (l = 0, i = 0; i < depth && o->sa[r - 1] + i < n && o->sa[r] + i < n &&
		    s[o->sa[r - 1] + i] == s[o->sa[r] + i]; i++)
			l++;
		cr_assert_eq(o->lcp[r], l < ESTIMATE_ORDER_DEPTH ? l : ESTIMATE_ORDER_DEPTH,
		    "rank %zu: lcp %u, want %zu", r, o->lcp[r], l);
		/* In order: the one before ends first, or differs lower. */
		if (l < depth)
			cr_assert(o->sa[r - 1] + l == n ||
			    (o->sa[r] + l < n && s[o->sa[r - 1] + l] < s[o->sa[r] + l]),
			    "rank %zu out of order", r);
	}
	free(seen);
}

Test(tuple, orders_of_contexts)
{
	struct estimate_order o;
	struct estimate_tuple r;
	const char *why;
	uint8_t *s = random_symbols(20000, 5, 77), *p;
	size_t i;

	p = pack(s, 20000, 8);
	estimate_order(p, 20000, 8, &o);
	cr_assert_not(o.complete);
	check_order(s, 20000, &o);
	estimate_order_free(&o);
	cr_assert_eq(estimate_tuple_order(p, 20000, 8, NULL, &r, &why, &o), 0);
	check_order(s, 20000, &o);
	estimate_order_free(&o);
	free(p);
	/* Long repeats: the order of the first symbols still sorts here. */
	for (i = 0; i < 20000; i++)
		s[i] = (uint8_t)(i % 7 == 0);
	p = pack(s, 20000, 3);
	cr_assert_eq(estimate_tuple_order(p, 20000, 3, NULL, &r, &why, &o), -1);
	estimate_order(p, 20000, 3, &o);
	check_order(s, 20000, &o);
	estimate_order_free(&o);
	free(p);
	free(s);
}

Test(compress, a_constant_string_has_no_entropy)
{
	uint8_t *p = calloc(20000 / 8 + 32, 1);
	struct estimate_compress r;

	cr_assert(estimate_compress(p, 20000, &r));
	/* Every block repeats the one before: log2 of distance 1 is 0, p = 1. */
	cr_assert_float_eq(r.mean, 0.0, 1e-12);
	cr_assert_float_eq(r.h, 0.0, 1e-9);
	free(p);
}

Test(compress, too_short_does_not_run)
{
	uint8_t p[800] = { 0 };
	struct estimate_compress r;

	/* 1000 blocks of dictionary and none to test: not run, as the tool. */
	cr_assert_not(estimate_compress(p, 6000, &r));
	cr_assert_lt(r.h, 0.0);
}

Test(compress, random_bits_measure_near_one)
{
	uint64_t seed = 3;
	uint8_t *p = calloc(200000 / 8 + 32, 1);
	struct estimate_compress r;
	size_t i;

	for (i = 0; i < 200000 / 8; i++)
		p[i] = (uint8_t)rng(&seed);
	cr_assert(estimate_compress(p, 200000, &r));
	/* Uniform 6-bit blocks: the mean log2 distance is about 5.2 (ea_non_iid
	 * measures 5.2176 on a million random bytes); with 32333 blocks tested
	 * the bound takes a good part of it off. */
	cr_assert_float_eq(r.mean, 5.2, 0.05);
	cr_assert(r.h > 0.7 && r.h <= 1.0, "h %f", r.h);
	free(p);
}

/* Check a prediction's counts (C, N, longest run) and its figure. */
static void
check_counts(const struct estimate_prediction *r, uint64_t c, uint64_t n, uint64_t run,
    unsigned k, const char *what)
{
	cr_assert_eq(r->correct, c, "%s: C %llu, want %llu", what, (unsigned long long)r->correct,
	    (unsigned long long)c);
	cr_assert_eq(r->n, n, "%s: N %llu, want %llu", what, (unsigned long long)r->n,
	    (unsigned long long)n);
	cr_assert_eq(r->run, run, "%s: run %llu, want %llu", what, (unsigned long long)r->run,
	    (unsigned long long)run);
	cr_assert_float_eq(r->h, estimate_predictor_formula(c, n, run, k), 1e-12, "%s", what);
}

Test(predict, mcw_a_rare_symbol_in_a_constant_stream)
{
	uint8_t s[5000];
	struct estimate_prediction r;
	size_t i;

	/* 0 everywhere but every 100th sample: every window's most common is
	 * 0, so the guesses from 63 on are right but at 100, 200, ... 4900 (49
	 * of 4937); the longest run is the 99 zeros between two ones. */
	for (i = 0; i < 5000; i++)
		s[i] = i % 100 == 0 && i > 0;
	cr_assert(estimate_predict_mcw(s, 5000, 2, &r));
	check_counts(&r, 4937 - 49, 4937, 99, 2, "MultiMCW");
	cr_assert(estimate_predict_mcw_bits(s, 5000, &r));
	check_counts(&r, 4937 - 49, 4937, 99, 2, "MultiMCW on bits");
}

Test(predict, mcw_needs_4096)
{
	uint8_t s[4095] = { 0 };
	struct estimate_prediction r;

	cr_assert_not(estimate_predict_mcw(s, 4095, 2, &r));
	cr_assert_not(estimate_predict_mcw_bits(s, 4095, &r));
}

Test(predict, alternating_bits)
{
	uint8_t s[1000], *p;
	struct estimate_prediction r;
	size_t i;

	for (i = 0; i < 1000; i++)
		s[i] = i & 1;
	p = pack(s, 1000, 1);
	/* Lag: every odd lag is right, every even one wrong; lag 2 (d = 1)
	 * scores first at bit 2 and leads from bit 3 on: 997 right in a row. */
	cr_assert(estimate_predict_lag_bits(p, 1000, &r));
	check_counts(&r, 997, 999, 997, 2, "Lag");
	/* MultiMMC: depth 1's context (the last bit) is unseen at bit 2 (no
	 * guess), seen from bit 3 on, always followed by its opposite. */
	cr_assert(estimate_predict_mmc_bits(s, 1000, &r));
	check_counts(&r, 997, 998, 997, 2, "MultiMMC");
	/* LZ78Y: the contexts ending at bits 16 and 17 are new (no guess);
	 * from bit 18 on each is one of those first ones, right. */
	cr_assert(estimate_predict_lz78y_bits(s, 1000, &r));
	check_counts(&r, 1000 - 18, 1000 - 17, 1000 - 18, 2, "LZ78Y");
	free(p);
}

Test(predict, period_3_symbols)
{
	uint8_t s[3000];
	struct estimate_prediction r;
	size_t i;

	for (i = 0; i < 3000; i++)
		s[i] = (uint8_t)(i % 3);
	/* MultiMMC: depth 1 sees contexts 1 and 2 first at samples 2 and 3
	 * (no guess), then is right from sample 4 on and stays ahead (each
	 * deeper depth starts scoring a sample later). */
	cr_assert(estimate_dict_mmc(s, 3000, 3, &r));
	check_counts(&r, 3000 - 4, 3000 - 2, 3000 - 4, 3, "MultiMMC");
	/* LZ78Y: contexts ending at 16 and 17 are new; from 19 on each is the
	 * one first seen ending at 15 or later, right. */
	cr_assert(estimate_dict_lz78y(s, 3000, 3, &r));
	check_counts(&r, 3000 - 19, 3000 - 17, 3000 - 19, 3, "LZ78Y");
}

/*
 * The references: NIST's loops written out as plainly as can be, each
 * dictionary a list searched from the start. Slow, and the semantics to
 * match.
 */
struct ref_entry {
	unsigned length;
	uint8_t prefix[16];
	uint64_t best_count;
	uint8_t best;
	unsigned npost;          /* the symbols seen after it, and how often */
	uint8_t *post;
	uint64_t *count;
};

struct ref_dict {
	struct ref_entry *e;
	size_t n, cap;
	/* A hash of each entry's (length, prefix) to the first index with it: buckets. */
	size_t *head, *next;
	size_t nbuckets;
};

static size_t
ref_hash(unsigned length, const uint8_t *x, size_t nbuckets)
{
	uint64_t h = 1469598103934665603u ^ length;
	unsigned i;

	for (i = 0; i < length; i++)
		h = (h ^ x[i]) * 1099511628211u;
	return (size_t)(h % nbuckets);
}

static struct ref_entry *
ref_find(struct ref_dict *d, unsigned length, const uint8_t *x)
{
	size_t i;

	for (i = d->head[ref_hash(length, x, d->nbuckets)]; i != SIZE_MAX; i = d->next[i])
		if (d->e[i].length == length && memcmp(d->e[i].prefix, x, length) == 0)
			return &d->e[i];
	return NULL;
}

static struct ref_entry *
ref_add(struct ref_dict *d, unsigned length, const uint8_t *x)
{
	size_t h = ref_hash(length, x, d->nbuckets);

	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->e = realloc(d->e, d->cap * sizeof *d->e);
		d->next = realloc(d->next, d->cap * sizeof *d->next);
	}
	memset(&d->e[d->n], 0, sizeof d->e[d->n]);
	d->e[d->n].length = length;
	memcpy(d->e[d->n].prefix, x, length);
	d->next[d->n] = d->head[h];
	d->head[h] = d->n;
	return &d->e[d->n++];
}

static void
ref_init(struct ref_dict *d)
{
	size_t i;

	memset(d, 0, sizeof *d);
	d->nbuckets = 1 << 16;
	d->head = malloc(d->nbuckets * sizeof *d->head);
	for (i = 0; i < d->nbuckets; i++)
		d->head[i] = SIZE_MAX;
}

static void
ref_free(struct ref_dict *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->e[i].post);
		free(d->e[i].count);
	}
	free(d->e);
	free(d->next);
	free(d->head);
}

/* NIST's incrementPostfix. */
static bool
ref_count(struct ref_entry *e, uint8_t y, bool make_new)
{
	bool made = false;
	unsigned k;

	for (k = 0; k < e->npost && e->post[k] != y; k++)
		;
	if (k < e->npost)
		e->count[k]++;
	else if (make_new) {
		e->post = realloc(e->post, (k + 1) * sizeof *e->post);
		e->count = realloc(e->count, (k + 1) * sizeof *e->count);
		e->post[k] = y;
		e->count[k] = 1;
		e->npost++;
		made = true;
	} else
		return false;
	if (e->count[k] > e->best_count || (e->count[k] == e->best_count && y > e->best)) {
		e->best = y;
		e->best_count = e->count[k];
	}
	return made;
}

static void
ref_score(struct estimate_prediction *r, uint64_t *run, bool right)
{
	if (right) {
		r->correct++;
		if (++*run > r->run)
			r->run = *run;
	} else
		*run = 0;
}

/* multi_mmc_test of NIST's tool (its map form). */
static void
ref_mmc(const uint8_t *s, size_t n, struct estimate_prediction *r)
{
	struct ref_dict d[16];
	uint64_t score[16] = { 0 }, entries[16] = { 0 }, run = 0;
	unsigned dd, winner = 0, cur;
	struct ref_entry *e = NULL;
	bool found;
	size_t i;

	memset(r, 0, sizeof *r);
	r->n = n - 2;
	for (dd = 0; dd < 16; dd++)
		ref_init(&d[dd]);
	for (dd = 0; dd < 16 && dd < n - 2; dd++) {
		ref_count(ref_add(&d[dd], dd + 1, s), s[dd + 1], true);
		entries[dd] = 1;
	}
	for (i = 2; i < n; i++) {
		found = false;
		cur = winner;
		for (dd = 0; dd < 16 && i - 2 >= dd; dd++) {
			if (dd == 0 || found) {
				e = ref_find(&d[dd], dd + 1, s + i - dd - 1);
				found = e != NULL;
			}
			if (found) {
				if (e->best == s[i]) {
					if (++score[dd] >= score[winner])
						winner = dd;
					if (dd == cur)
						ref_score(r, &run, true);
				} else if (dd == cur)
					ref_score(r, &run, false);
				if (ref_count(e, s[i], entries[dd] < 100000))
					entries[dd]++;
			} else if (entries[dd] < 100000) {
				struct ref_entry *x = ref_find(&d[dd], dd + 1, s + i - dd - 1);

				if (x == NULL)
					x = ref_add(&d[dd], dd + 1, s + i - dd - 1);
				ref_count(x, s[i], true);
				entries[dd]++;
			}
		}
	}
	for (dd = 0; dd < 16; dd++)
		ref_free(&d[dd]);
}

/* LZ78Y_test of NIST's tool (its map form). */
static void
ref_lz78y(const uint8_t *s, size_t n, struct estimate_prediction *r)
{
	struct ref_dict d;
	uint64_t size = 0, run = 0, max_count;
	unsigned j, prediction = 0;
	struct ref_entry *e;
	bool have;
	size_t i;

	memset(r, 0, sizeof *r);
	r->n = n - 17;
	ref_init(&d);
	for (j = 1; j <= 16; j++) {
		ref_count(ref_add(&d, j, s + 16 - j), s[16], true);
		size++;
	}
	for (i = 17; i < n; i++) {
		have = false;
		max_count = 0;
		for (j = 16; j > 0; j--) {
			e = ref_find(&d, j, s + i - j);
			if (e != NULL) {
				if (e->best_count > max_count) {
					max_count = e->best_count;
					prediction = e->best;
					have = true;
				}
				ref_count(e, s[i], true);
			} else if (size < 65536) {
				ref_count(ref_add(&d, j, s + i - j), s[i], true);
				size++;
			}
		}
		ref_score(r, &run, have && prediction == s[i]);
	}
	ref_free(&d);
}

/* lag_test of NIST's tool, each lag checked in turn. */
static void
ref_lag(const uint8_t *s, size_t n, struct estimate_prediction *r)
{
	uint64_t score[128] = { 0 }, high = 0, run = 0;
	unsigned d, winner = 0;
	size_t i;

	memset(r, 0, sizeof *r);
	r->n = n - 1;
	for (i = 1; i < n; i++) {
		ref_score(r, &run, s[i] == s[i - winner - 1]);
		for (d = 0; d < 128 && d < i; d++)
			if (s[i - d - 1] == s[i] && ++score[d] >= high) {
				high = score[d];
				winner = d;
			}
	}
}

/* multi_mcw_test of NIST's tool, each window's commonest found again by a scan. */
static void
ref_mcw(const uint8_t *s, size_t n, struct estimate_prediction *r)
{
	static const size_t w[4] = { 63, 255, 1023, 4095 };
	uint64_t score[4] = { 0 }, run = 0, cnt[4][256] = { { 0 } }, pos[4][256] = { { 0 } };
	uint64_t top[4] = { 0 }, best_pos;
	unsigned j, winner = 0, k;
	uint8_t frequent[4] = { 0 };
	size_t i;

	memset(r, 0, sizeof *r);
	r->n = n - w[0];
	for (i = 0; i < w[3]; i++)
		for (j = 0; j < 4; j++)
			if (i < w[j]) {
				if (top[j] <= ++cnt[j][s[i]]) {
					top[j] = cnt[j][s[i]];
					frequent[j] = s[i];
				}
				pos[j][s[i]] = i;
			}
	for (i = w[0]; i < n; i++) {
		ref_score(r, &run, frequent[winner] == s[i]);
		for (j = 0; j < 4; j++)
			if (i >= w[j] && frequent[j] == s[i] && ++score[j] >= score[winner])
				winner = j;
		for (j = 0; j < 4; j++) {
			if (i < w[j])
				continue;
			cnt[j][s[i - w[j]]]--;
			cnt[j][s[i]]++;
			pos[j][s[i]] = i;
			if (s[i - w[j]] != frequent[j] && top[j] <= cnt[j][s[i]]) {
				top[j] = cnt[j][s[i]];
				frequent[j] = s[i];
			} else if (s[i - w[j]] == frequent[j]) {
				top[j]--;
				best_pos = i - w[j];
				for (k = 0; k < 256; k++)
					if (top[j] < cnt[j][k] ||
					    (top[j] == cnt[j][k] && best_pos <= pos[j][k])) {
						top[j] = cnt[j][k];
						frequent[j] = (uint8_t)k;
						best_pos = pos[j][k];
					}
			}
		}
	}
}

Test(predict, binary_forms_match_the_plain_loops)
{
	static const size_t sizes[] = { 3000, 70000, 300000 };
	struct estimate_prediction got, want;
	size_t z;
	uint8_t *s, *p;

	for (z = 0; z < sizeof sizes / sizeof *sizes; z++) {
		s = random_symbols(sizes[z], 2, 11 + z);
		p = pack(s, sizes[z], 1);
		ref_lag(s, sizes[z], &want);
		cr_assert(estimate_predict_lag_bits(p, sizes[z], &got));
		check_counts(&got, want.correct, want.n, want.run, 2, "Lag on bits");
		/* 300000 bits fill the LZ78Y dictionary and the last MultiMMC table. */
		ref_mmc(s, sizes[z], &want);
		cr_assert(estimate_predict_mmc_bits(s, sizes[z], &got));
		check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC on bits");
		ref_lz78y(s, sizes[z], &want);
		cr_assert(estimate_predict_lz78y_bits(s, sizes[z], &got));
		check_counts(&got, want.correct, want.n, want.run, 2, "LZ78Y on bits");
		free(p);
		free(s);
	}
}

Test(predict, symbol_forms_match_the_plain_loops)
{
	static const unsigned alphabets[] = { 3, 16, 200 };
	struct estimate_prediction got, want;
	size_t z, n = 110000;
	uint8_t *s;

	for (z = 0; z < sizeof alphabets / sizeof *alphabets; z++) {
		s = random_symbols(n, alphabets[z], 5 + z);
		ref_mmc(s, n, &want);
		cr_assert(estimate_dict_mmc(s, n, alphabets[z], &got));
		check_counts(&got, want.correct, want.n, want.run, alphabets[z], "MultiMMC");
		ref_lz78y(s, n, &want);
		cr_assert(estimate_dict_lz78y(s, n, alphabets[z], &got));
		check_counts(&got, want.correct, want.n, want.run, alphabets[z], "LZ78Y");
		free(s);
	}
}

/* Bits never 1 ten times running, then noise: contexts first seen once the last table is full. */
static uint8_t *
late_contexts(size_t n, size_t first, uint64_t seed)
{
	uint8_t *s = malloc(n);
	size_t i;

	for (i = 0; i < n; i++)
		s[i] = (uint8_t)(rng(&seed) & 1 && (i >= first || i % 10 != 0));
	return s;
}

Test(predict, binary_edge_cases_match_the_plain_loops)
{
	struct estimate_prediction got, want;
	uint8_t *s, *p;
	size_t n, i;

	/* Short strings: depths and lags that have not started yet. */
	for (n = 4; n < 300; n += n < 40 ? 1 : 37) {
		s = random_symbols(n, 2, 100 + n);
		p = pack(s, n, 1);
		ref_mmc(s, n, &want);
		cr_assert(estimate_predict_mmc_bits(s, n, &got));
		check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC, short");
		ref_lag(s, n, &want);
		cr_assert(estimate_predict_lag_bits(p, n, &got));
		check_counts(&got, want.correct, want.n, want.run, 2, "Lag, short");
		free(p);
		free(s);
	}
	/* One value throughout. */
	s = calloc(3000, 1);
	ref_mmc(s, 3000, &want);
	cr_assert(estimate_predict_mmc_bits(s, 3000, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC, all zeros");
	free(s);
	/* The last table fills before some of its contexts are seen. */
	s = late_contexts(420000, 400000, 17);
	ref_mmc(s, 420000, &want);
	cr_assert(estimate_predict_mmc_bits(s, 420000, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC, late contexts");
	free(s);
	/* Period 2 with a slip now and then: the leader changes. */
	s = malloc(20000);
	for (i = 0; i < 20000; i++)
		s[i] = (uint8_t)((i + i / 997) & 1);
	p = pack(s, 20000, 1);
	ref_lag(s, 20000, &want);
	cr_assert(estimate_predict_lag_bits(p, 20000, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "Lag, period 2");
	ref_mmc(s, 20000, &want);
	cr_assert(estimate_predict_mmc_bits(s, 20000, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC, period 2");
	free(p);
	free(s);
}

Test(predict, symbol_edge_cases_match_the_plain_loops)
{
	static const unsigned alphabets[] = { 2, 3, 16, 256 };
	struct estimate_prediction got, want;
	struct estimate_order o;
	struct estimate_tuple t;
	const char *why;
	uint8_t *s, *p;
	size_t n, i, z;

	for (z = 0; z < sizeof alphabets / sizeof *alphabets; z++) {
		/* Short strings, and longer ones past the lags' first stretch. */
		for (n = 3; n < 400; n += n < 30 ? 1 : 53) {
			s = random_symbols(n, alphabets[z], 200 + n);
			ref_mmc(s, n, &want);
			cr_assert(estimate_dict_mmc(s, n, alphabets[z], &got));
			check_counts(&got, want.correct, want.n, want.run, alphabets[z],
			    "MultiMMC, short");
			ref_lag(s, n, &want);
			cr_assert(estimate_predict_lag(s, n, alphabets[z], &got));
			check_counts(&got, want.correct, want.n, want.run, alphabets[z], "Lag, short");
			free(s);
		}
		/* The order estimate_tuple leaves (complete) serves MultiMMC too. */
		s = random_symbols(50000, alphabets[z], 300 + z);
		p = pack(s, 50000, 8);
		cr_assert_eq(estimate_tuple_order(p, 50000, 8, NULL, &t, &why, &o), 0);
		ref_mmc(s, 50000, &want);
		cr_assert(estimate_dict_mmc_order(s, 50000, alphabets[z], &o, &got));
		check_counts(&got, want.correct, want.n, want.run, alphabets[z], "MultiMMC, order");
		ref_lag(s, 50000, &want);
		cr_assert(estimate_predict_lag(s, 50000, alphabets[z], &got));
		check_counts(&got, want.correct, want.n, want.run, alphabets[z], "Lag");
		ref_mcw(s, 50000, &want);
		cr_assert(estimate_predict_mcw(s, 50000, alphabets[z], &got));
		check_counts(&got, want.correct, want.n, want.run, alphabets[z], "MultiMCW");
		estimate_order_free(&o);
		free(p);
		free(s);
	}
	/* One value; period 2; a few values at skewed odds, the commonest
	 * leaving the windows often (the jitter source's kind). */
	s = malloc(30000);
	memset(s, 0, 30000);
	ref_mmc(s, 30000, &want);
	cr_assert(estimate_dict_mmc(s, 30000, 1, &got));
	check_counts(&got, want.correct, want.n, want.run, 1, "MultiMMC, one value");
	for (i = 0; i < 30000; i++)
		s[i] = (uint8_t)(i & 1);
	ref_mmc(s, 30000, &want);
	cr_assert(estimate_dict_mmc(s, 30000, 2, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "MultiMMC, period 2");
	ref_mcw(s, 30000, &want);
	cr_assert(estimate_predict_mcw(s, 30000, 2, &got));
	check_counts(&got, want.correct, want.n, want.run, 2, "MultiMCW, period 2");
	for (i = 0; i < 30000; i++) {
		uint64_t x = i * UINT64_C(0x9e3779b97f4a7c15) >> 40;

		s[i] = (uint8_t)(x % 7 < 3 ? 0 : x % 7 < 5 ? 1 : x % 11);
	}
	ref_mcw(s, 30000, &want);
	cr_assert(estimate_predict_mcw(s, 30000, 11, &got));
	check_counts(&got, want.correct, want.n, want.run, 11, "MultiMCW, skewed");
	ref_mmc(s, 30000, &want);
	cr_assert(estimate_dict_mmc(s, 30000, 11, &got));
	check_counts(&got, want.correct, want.n, want.run, 11, "MultiMMC, skewed");
	free(s);
}

Test(predict, mcw_on_bits_is_mcw_of_two_symbols)
{
	struct estimate_prediction a, b;
	uint8_t *s = random_symbols(50000, 2, 99);

	cr_assert(estimate_predict_mcw(s, 50000, 2, &a));
	cr_assert(estimate_predict_mcw_bits(s, 50000, &b));
	check_counts(&b, a.correct, a.n, a.run, 2, "MultiMCW on bits");
	free(s);
}

Test(assess, two_values_are_binary_data)
{
	uint8_t s[20000];
	struct assess a;
	uint64_t seed = 1;
	size_t i;

	for (i = 0; i < sizeof s; i++)
		s[i] = rng(&seed) % 4 == 0 ? 0x80 : 0x17;
	cr_assert_eq(assess_run(s, sizeof s, 8, NULL, &a), 0);
	cr_assert_eq(a.alphabet, 2);
	cr_assert(a.literal.binary);
	cr_assert_not(a.bits.run);
	/* Every estimator ran on the two values, numbered 0 and 1. */
	cr_assert_geq(a.literal.h[ASSESS_COLLISION], 0.0);
	cr_assert_geq(a.literal.h[ASSESS_COMPRESSION], 0.0);
	cr_assert_geq(a.literal.h[ASSESS_LZ78Y], 0.0);
	/* 3/4 of one value: the MCV is about -log2(0.75 + bound). */
	cr_assert_float_eq(a.literal.h[ASSESS_MCV], estimate_mcv_formula(a.literal.mode, 20000),
	    1e-12);
	cr_assert_leq(a.h_original, a.literal.h[ASSESS_MCV]);
	cr_assert_float_eq(a.h_assessed, a.h_original, 1e-12);
}

/* 6.3.2 and 6.3.3 of bits (one a byte) by the plain loops: collision in h[0], Markov in h[1]. */
static void
ref_collision_markov(const uint8_t *b, size_t n, double h[2])
{
	uint64_t i = 0, groups = 0, sum_sq = 0, pairs[4] = { 0 }, zeros = 0, t;

	while (i + 1 < n) {
		if (b[i] == b[i + 1])
			t = 2;
		else if (i + 2 < n)
			t = 3;
		else
			break;
		groups++;
		sum_sq += t * t;
		i += t;
	}
	h[0] = estimate_collision_formula(groups, i, sum_sq);
	for (i = 0; i + 1 < n; i++)
		pairs[b[i] << 1 | b[i + 1]]++;
	for (i = 0; i < n; i++)
		zeros += b[i] == 0;
	h[1] = estimate_markov_formula(pairs, zeros, n);
}

Test(assess, collision_and_markov_as_the_plain_loops)
{
	static const size_t longer[] = { 4099, 100003 };
	uint8_t *b, *s;
	struct assess_string str;
	struct assess a;
	uint64_t seed = 7;
	double want[2];
	size_t n, i, z;
	unsigned j;

	/* Two values as they are: every length up to 300 (each end of a
	 * byte and of a word), runs and biased stretches. */
	for (n = 2; n < 300 + 2; n++) {
		b = malloc(n);
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)(i % 37 < 9 ? (i / 37) & 1 : rng(&seed) % 3 == 0);
		b[0] = 0;
		b[n - 1] = 1;
		ref_collision_markov(b, n, want);
		cr_assert_eq(assess_literal(b, n, 1, NULL, &str), 2);
		cr_assert_float_eq(str.h[ASSESS_COLLISION], want[0], 1e-12, "collision, %zu", n);
		cr_assert_float_eq(str.h[ASSESS_MARKOV], want[1], 1e-12, "Markov, %zu", n);
		free(b);
	}
	/* The bit string of 5-bit samples, not a whole number of bytes. */
	for (z = 0; z < sizeof longer / sizeof *longer; z++) {
		n = longer[z];
		s = random_symbols(n, 3, 40 + z);
		b = malloc(5 * n);
		for (i = 0; i < n; i++) {
			s[i] = (uint8_t)(s[i] * 11 + 1);
			for (j = 0; j < 5; j++)
				b[5 * i + j] = s[i] >> (4 - j) & 1;
		}
		ref_collision_markov(b, 5 * n, want);
		cr_assert_eq(assess_run(s, n, 5, NULL, &a), 0);
		cr_assert(a.bits.run);
		cr_assert_float_eq(a.bits.h[ASSESS_COLLISION], want[0], 1e-12, "collision, %zu", n);
		cr_assert_float_eq(a.bits.h[ASSESS_MARKOV], want[1], 1e-12, "Markov, %zu", n);
		free(b);
		free(s);
	}
}

Test(assess, the_results_are_the_minima)
{
	uint8_t *s = random_symbols(30000, 16, 4);
	struct assess a;
	double lo = 4, lob = 1;
	int t;

	cr_assert_eq(assess_run(s, 30000, 4, NULL, &a), 0);
	cr_assert(a.bits.run && !a.literal.binary);
	for (t = 0; t < ASSESS_TESTS; t++) {
		if (a.literal.h[t] >= 0 && a.literal.h[t] < lo)
			lo = a.literal.h[t];
		if (a.bits.h[t] >= 0 && a.bits.h[t] < lob)
			lob = a.bits.h[t];
	}
	/* Collision, Markov and Compression are for binary strings only. */
	cr_assert_lt(a.literal.h[ASSESS_COLLISION], 0.0);
	cr_assert_lt(a.literal.h[ASSESS_COMPRESSION], 0.0);
	cr_assert_geq(a.bits.h[ASSESS_COMPRESSION], 0.0);
	cr_assert_float_eq(a.h_original, lo, 1e-12);
	cr_assert_float_eq(a.h_bitstring, lob, 1e-12);
	cr_assert_float_eq(a.h_assessed, fmin(lo, 4 * lob), 1e-12);
	free(s);
}

Test(assess, one_value_is_no_entropy)
{
	uint8_t s[5000];
	struct assess a;

	memset(s, 9, sizeof s);
	cr_assert_eq(assess_run(s, sizeof s, 8, NULL, &a), -1);
}

/* log of n choose k. */
static double
log_choose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

Test(restart, cutoff_of_two_symbols_as_the_binomial_gives_it)
{
	double alpha = 1 - exp(log(0.99) / 2000), inside;
	unsigned x, k;

	/* H_I = 1: two symbols of 1/2; the larger count of 1000 draws is at
	 * most x when the first's count is in [1000 - x, x]. */
	for (x = 500; x <= 1000; x++) {
		for (inside = 0, k = 1000 - x; k <= x; k++)
			inside += exp(log_choose(1000, k) - 1000 * log(2.0));
		if (inside >= 1 - alpha)
			break;
	}
	cr_assert_eq(x, 572);	/* ea_restart's simulation gives 572 too */
	cr_assert_eq(restart_cutoff(1.0, alpha, 1000), x);
	/* One symbol: every draw the same. */
	cr_assert_eq(restart_cutoff(0.0, alpha, 1000), 1000);
	/* 256 symbols (H_I = 8): ea_restart's simulation says 19; 4 bits: 104. */
	cr_assert_eq(restart_cutoff(8.0, alpha, 1000), 19);
	cr_assert_eq(restart_cutoff(4.0, alpha, 1000), 104);
}

/* Restart data: 1000 restarts of 1000 samples, each restart from seed_of(i). */
static uint8_t *
restart_data(bool identical)
{
	uint8_t *s = malloc(RESTART_SAMPLES);
	uint64_t seed;
	size_t i, j;

	for (i = 0; i < RESTART_ROWS; i++) {
		/* Seeds far apart (xorshift's first outputs of near seeds are alike). */
		seed = (identical ? 42 : 42 + i) * UINT64_C(0x9e3779b97f4a7c15);
		for (j = 0; j < RESTART_COLS; j++)
			s[i * RESTART_COLS + j] = (uint8_t)(rng(&seed) % 16);
	}
	return s;
}

Test(restart, identical_restarts_fail_the_sanity_check)
{
	static struct restart r;
	uint8_t *s = restart_data(true);

	cr_assert_eq(restart_run(s, 4, 3.5, NULL, &r), 0);
	/* Every column holds one value 1000 times. */
	cr_assert_eq(r.x_cols, 1000);
	cr_assert_eq(r.x_max, 1000);
	cr_assert_not(r.sane);
	cr_assert_lt(r.rows.h[ASSESS_MCV], 0.0, "nothing is estimated after the sanity check fails");
	free(s);
}

Test(restart, differing_restarts_pass)
{
	static struct restart r;
	uint8_t *s = restart_data(false);

	cr_assert_eq(restart_run(s, 4, 3.5, NULL, &r), 0);
	cr_assert(r.sane, "X_max %u, cutoff %u", r.x_max, r.cutoff);
	cr_assert_eq(r.alphabet, 16);
	cr_assert(r.valid, "H_r %f, H_c %f", r.h_r, r.h_c);
	/* Uniform 4-bit samples: both datasets near 4 bits, the MCV of each below. */
	cr_assert(r.h_r > 3.5 && r.h_r <= r.rows.h[ASSESS_MCV], "H_r %f", r.h_r);
	cr_assert(r.h_c > 3.5 && r.h_c <= r.cols.h[ASSESS_MCV], "H_c %f", r.h_c);
	cr_assert_float_eq(r.h_min, 3.5, 1e-12);
	free(s);
}

Test(restart, a_low_h_i_fails_validation_if_columns_are_poor)
{
	static struct restart r;
	uint8_t *s = malloc(RESTART_SAMPLES);
	uint64_t seed = 5;
	size_t i, j;

	/* Restarts that differ only in their first samples, then follow one
	 * script: the columns from the 30th on are constant over restarts... */
	for (i = 0; i < RESTART_ROWS; i++)
		for (j = 0; j < RESTART_COLS; j++)
			s[i * RESTART_COLS + j] = j < 30 ? (uint8_t)(rng(&seed) % 16) :
			    (uint8_t)((j * 7) % 16);
	/* ...which the sanity check already sees. */
	cr_assert_eq(restart_run(s, 4, 3.0, NULL, &r), 0);
	cr_assert_not(r.sane);
	free(s);
}
