/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B 6.3.4, the compression estimate of a bit string, with
 * ea_non_iid's figure: the string cut into 6-bit blocks, the first 1000 a
 * dictionary, the mean log2 distance of each later block to its last
 * occurrence, and the p whose expected mean matches that (less its 99 %
 * bound), found by bisection. The expectation (the G function) is summed
 * the way NIST's tool sums it, with the same early stop once the terms
 * underflow; log2 of each distance comes from a table built once.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "estimate_compress.h"
#include "numeric.h"
#include "xmalloc.h"

#define COMPRESS_BLOCK_BITS 6
#define COMPRESS_DICT 1000
#define COMPRESS_ALPHABET (1u << COMPRESS_BLOCK_BITS)
/* Bisection steps at most (NIST's ITERMAX). */
#define COMPRESS_STEPS 1076
/* The log2 table grows to this many entries, then stops. */
#define COMPRESS_TABLE (UINT64_C(1) << 16)

/* log2 of 1..len - 1, as far as asked so far. */
struct compress_logs {
	double *log2;
	uint64_t len;
};

/*
 * log2(i), from the table (grown to cover i). Distances past
 * COMPRESS_TABLE are rare (at most 64 n / COMPRESS_TABLE of n blocks) and
 * computed each time: a rare block of skewed data must not make the table
 * as long as the string.
 */
static double
compress_log2(struct compress_logs *l, uint64_t i)
{
	uint64_t want;

	if (i >= COMPRESS_TABLE && i >= l->len)
		return numeric_log2((double)i);
	if (i >= l->len) {
		want = l->len < 1024 ? 1024 : l->len;
		while (want <= i)
			want *= 2;
		l->log2 = xreallocarray(l->log2, want, sizeof *l->log2);
		for (; l->len < want; l->len++)
			l->log2[l->len] = l->len == 0 ? 0.0 : numeric_log2((double)l->len);
	}
	return l->log2[i];
}

/* Add in to a sum with Kahan's compensation, as NIST's tool does. */
static inline void
compress_add(double *sum, double *comp, double in)
{
	double y = in - *comp, t = *sum + y;

	*comp = (t - *sum) - y;
	*sum = t;
}

/*
 * 90B's G(z) over blocks 1001..num_blocks, summed in NIST's order (the
 * terms a_i = log2(i) (1 - z)^(i - 1) and their running sums), stopping
 * where a term underflows as its does.
 */
static double
compress_g(struct compress_logs *l, double z, uint64_t d, uint64_t num_blocks)
{
	double ai_sum = 0, ai_comp = 0, first = 0, first_comp = 0, ad1, term = 1.0 - z, bi, ai;
	uint64_t v = num_blocks - d, i;
	bool truncated = false;

	/* Every term has a factor z (and would otherwise run to the end). */
	if (z == 0.0)
		return 0.0;
	bi = term;
	for (i = 2; i <= d; i++) {
		compress_add(&ai_sum, &ai_comp, compress_log2(l, i) * bi);
		bi *= term;
	}
	ad1 = ai_sum;
	for (i = d + 1; i <= num_blocks - 1; i++) {
		ai = compress_log2(l, i) * bi;
		compress_add(&ai_sum, &ai_comp, ai);
		/* The tool's terms (long double) vanish where a double's would
		 * turn subnormal: stop there, where they no longer count (a
		 * double's would stick at the smallest subnormal, never 0). */
		if (bi >= DBL_MIN)
			compress_add(&first, &first_comp, (double)(num_blocks - i) * ai);
		else {
			truncated = true;
			break;
		}
		bi *= term;
	}
	compress_add(&first, &first_comp, (double)(num_blocks - d) * ad1);
	if (!truncated)
		compress_add(&ai_sum, &ai_comp, compress_log2(l, num_blocks) * bi);
	return 1.0 / (double)v * z * (z * first + (ai_sum - ad1));
}

/* The expected mean for a block probability p (the rest spread evenly). */
static double
compress_expected(struct compress_logs *l, double p, uint64_t d, uint64_t num_blocks)
{
	double q = (1.0 - p) / (double)(COMPRESS_ALPHABET - 1);

	return compress_g(l, p, d, num_blocks) +
	    (double)(COMPRESS_ALPHABET - 1) * compress_g(l, q, d, num_blocks);
}

/*
 * The p in [1/64, 1] whose expected mean is x, or -1 if even 1/64 expects
 * no more than x (the tool's bisection finds the same root: the expected
 * mean falls as p grows). Regula falsi, Illinois variant: a dozen
 * evaluations of G instead of fifty.
 */
static double
compress_solve(struct compress_logs *l, double x, uint64_t d, uint64_t num_blocks)
{
	double lo = 1.0 / COMPRESS_ALPHABET, hi = 1.0, f_lo, f_hi, p, f;
	int i, side = 0;

	f_lo = compress_expected(l, lo, d, num_blocks) - x;
	if (!(f_lo > 0.0))
		return -1.0;
	f_hi = compress_expected(l, hi, d, num_blocks) - x;
	if (!(f_hi < 0.0))
		return hi;
	for (i = 0; i < COMPRESS_STEPS && hi - lo > 4 * DBL_EPSILON * hi; i++) {
		p = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
		if (!(p > lo && p < hi))
			p = (lo + hi) / 2.0;
		f = compress_expected(l, p, d, num_blocks) - x;
		if (f == 0.0)
			return p;
		if (f > 0.0) {
			lo = p;
			f_lo = f;
			if (side == 1)
				f_hi /= 2.0;
			side = 1;
		} else {
			hi = p;
			f_hi = f;
			if (side == -1)
				f_lo /= 2.0;
			side = -1;
		}
	}
	return (lo + hi) / 2.0;
}

/* The 6-bit block number i of the bit string. */
static inline unsigned
compress_block(const uint8_t *packed, uint64_t i)
{
	uint64_t bit = i * COMPRESS_BLOCK_BITS;
	unsigned two = (unsigned)packed[bit >> 3] << 8 | packed[(bit >> 3) + 1];

	return two >> (16 - COMPRESS_BLOCK_BITS - (bit & 7)) & (COMPRESS_ALPHABET - 1);
}

bool
estimate_compress(const uint8_t *packed, uint64_t n_bits, struct estimate_compress *r)
{
	uint64_t num_blocks = n_bits / COMPRESS_BLOCK_BITS, dict[COMPRESS_ALPHABET], i, v, dist;
	double x = 0, x_comp = 0, sq = 0, sq_comp = 0, lg, p;
	struct compress_logs l = { NULL, 0 };
	unsigned b;

	memset(r, 0, sizeof *r);
	r->h = -1.0;
	if (num_blocks <= COMPRESS_DICT)
		return false;
	memset(dict, 0, sizeof dict);
	for (i = 0; i < COMPRESS_DICT; i++)
		dict[compress_block(packed, i)] = i + 1;
	v = num_blocks - COMPRESS_DICT;
	for (i = COMPRESS_DICT; i < num_blocks; i++) {
		b = compress_block(packed, i);
		dist = i + 1 - dict[b];
		lg = compress_log2(&l, dist);
		compress_add(&x, &x_comp, lg);
		compress_add(&sq, &sq_comp, lg * lg);
		dict[b] = i + 1;
	}
	x /= (double)v;
	r->mean = x;
	r->sigma = 0.5907 * numeric_sqrt(sq / ((double)v - 1.0) - x * x);
	x -= ESTIMATE_ZALPHA * r->sigma / numeric_sqrt((double)v);
	p = compress_solve(&l, x, COMPRESS_DICT, num_blocks);
	if (p > 1.0 / COMPRESS_ALPHABET) {
		r->p = p;
		r->h = -numeric_log2(p) / COMPRESS_BLOCK_BITS;
	} else {
		r->p = 1.0 / COMPRESS_ALPHABET;
		r->h = 1.0;
	}
	free(l.log2);
	return true;
}
