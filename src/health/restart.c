/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B section 3.1.4: the restart tests of 1000 restarts of 1000
 * samples each, as NIST's ea_restart runs them: the sanity check (no row
 * or column's most common value more often than the cutoff allows for the
 * claimed entropy), then the literal estimators on the row and the column
 * datasets, H_r and H_c, and the validation min(H_r, H_c) >= H_I / 2. The
 * cutoff is computed here exactly (ea_restart simulates it).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "numeric.h"
#include "restart.h"
#include "xmalloc.h"

#define RESTART_LOG2E 1.442695040888963407359924681001892137

/* c[0..n] = a * b, cut at degree n. */
static void
restart_convolve(const double *a, const double *b, double *c, unsigned n)
{
	unsigned i, j;

	memset(c, 0, (n + 1) * sizeof *c);
	for (i = 0; i <= n; i++)
		if (a[i] != 0.0)
			for (j = 0; i + j <= n; j++)
				c[i + j] += a[i] * b[j];
}

/* v[0..n] = the Poisson(lambda) probabilities of 0..x (0 above), from log2 c! in lf. */
static void
restart_poisson(double lambda, unsigned x, unsigned n, const double *lf, double *v)
{
	unsigned c;

	memset(v, 0, (n + 1) * sizeof *v);
	for (c = 0; c <= x && c <= n; c++)
		v[c] = lambda > 0.0 ? numeric_exp2((double)c * numeric_log2(lambda) -
		    lambda * RESTART_LOG2E - lf[c]) : c == 0;
}

/*
 * P(no count of n draws above x), the draws falling on `many` symbols of
 * probability p and one of probability q (q 0: none): n draws are as many
 * independent Poisson counts, one per symbol with mean n p_i, given that
 * they add up to n, so the probability is that of all of them at most x
 * and adding up to n (the coefficient of a product of truncated
 * distributions, the power by squaring), over that of adding up to n.
 */
static double
restart_cdf(double p, unsigned many, double q, unsigned x, unsigned n, const double *lf)
{
	double *one = xcalloc(n + 1, sizeof *one), *acc = xcalloc(n + 1, sizeof *acc);
	double *tmp = xcalloc(n + 1, sizeof *tmp), *swap, all, result;
	unsigned e = many;

	acc[0] = 1.0;
	restart_poisson((double)n * p, x, n, lf, one);
	while (e > 0) {
		if (e & 1) {
			restart_convolve(acc, one, tmp, n);
			swap = acc;
			acc = tmp;
			tmp = swap;
		}
		e >>= 1;
		if (e > 0) {
			restart_convolve(one, one, tmp, n);
			swap = one;
			one = tmp;
			tmp = swap;
		}
	}
	if (q > 0.0) {
		restart_poisson((double)n * q, x, n, lf, one);
		restart_convolve(acc, one, tmp, n);
		swap = acc;
		acc = tmp;
		tmp = swap;
	}
	/* P(Poisson(n) = n). */
	all = numeric_exp2((double)n * numeric_log2((double)n) - (double)n * RESTART_LOG2E - lf[n]);
	result = acc[n] / all;
	free(one);
	free(acc);
	free(tmp);
	return result;
}

unsigned
restart_cutoff(double h_i, double alpha, unsigned n)
{
	double p = numeric_exp2(-h_i), q, *lf = xcalloc(n + 1, sizeof *lf);
	unsigned many, k, lo, hi, mid, c;

	for (c = 1; c <= n; c++)
		lf[c] = lf[c - 1] + numeric_log2((double)c);
	/* As ea_restart: floor(1/p) symbols of probability p, and one with the rest. */
	many = (unsigned)(1.0 / p);
	k = (double)many < 1.0 / p ? many + 1 : many;
	q = k > many ? 1.0 - (double)many * p : 0.0;
	/* The smallest x with P(max <= x) >= 1 - alpha: between n / k and n. */
	lo = (n + k - 1) / k;
	hi = n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (restart_cdf(p, many, q, mid, n, lf) >= 1.0 - alpha)
			hi = mid;
		else
			lo = mid + 1;
	}
	free(lf);
	return lo;
}

/* The largest count of one value among `len` samples, `stride` apart from s. */
static unsigned
restart_mode(const uint8_t *s, size_t len, size_t stride)
{
	unsigned count[256] = { 0 }, best = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (++count[s[i * stride]] > best)
			best = count[s[i * stride]];
	return best;
}

int
restart_run(const uint8_t *samples, unsigned bits, double h_i, estimate_tuple_sorter sorter,
    struct restart *r)
{
	uint8_t *cols;
	size_t i, j;
	unsigned m;

	memset(r, 0, sizeof *r);
	for (m = 0; m < ASSESS_TESTS; m++)
		r->rows.h[m] = r->cols.h[m] = -1.0;
	r->h_i = h_i;
	/* alpha = 1 - 0.99^(1 / (r + c)). */
	r->alpha = 1.0 - numeric_exp2(numeric_log2(0.99) / (RESTART_ROWS + RESTART_COLS));
	r->cutoff = restart_cutoff(h_i, r->alpha, RESTART_COLS);
	for (i = 0; i < RESTART_ROWS; i++)
		if ((m = restart_mode(samples + i * RESTART_COLS, RESTART_COLS, 1)) > r->x_rows)
			r->x_rows = m;
	for (j = 0; j < RESTART_COLS; j++)
		if ((m = restart_mode(samples + j, RESTART_ROWS, RESTART_COLS)) > r->x_cols)
			r->x_cols = m;
	r->x_max = r->x_rows > r->x_cols ? r->x_rows : r->x_cols;
	r->sane = r->x_max <= r->cutoff;
	r->h_r = r->h_c = bits;
	if (!r->sane)
		return 0;
	r->alphabet = assess_literal(samples, RESTART_SAMPLES, bits, sorter, &r->rows);
	if (r->alphabet < 2)
		return -1;
	cols = xmalloc(RESTART_SAMPLES);
	for (j = 0; j < RESTART_COLS; j++)
		for (i = 0; i < RESTART_ROWS; i++)
			cols[j * RESTART_ROWS + i] = samples[i * RESTART_COLS + j];
	assess_literal(cols, RESTART_SAMPLES, bits, sorter, &r->cols);
	free(cols);
	r->h_r = assess_min(&r->rows, bits);
	r->h_c = assess_min(&r->cols, bits);
	r->valid = (r->h_r < r->h_c ? r->h_r : r->h_c) >= h_i / 2.0;
	r->h_min = r->h_r < r->h_c ? r->h_r : r->h_c;
	if (h_i < r->h_min)
		r->h_min = h_i;
	return 0;
}
