/* SPDX-License-Identifier: MIT */
/*
 * Sorting 64-bit keys, for the suffix sorts of the tuple estimates: a
 * most-significant-digit radix sort that starts where the keys differ
 * (least significant digit first for large clustered buckets, insertion
 * for a few), and a branch-free merge of sorted runs. Pure, no state.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "keysort.h"

/* Up to this many keys are sorted by insertion. */
#define KEYSORT_SMALL 32
/* The widest digit of the radix sort, in bits. */
#define KEYSORT_DIGIT_BITS 11

/* Leading zeros of x != 0, without a libgcc call. */
static inline unsigned
keysort_clz(uint64_t x)
{
	return (unsigned)__builtin_clzll(x);
}

/* Sort a few keys by insertion. */
static void
keysort_insertion(uint64_t *a, size_t m)
{
	uint64_t k;
	size_t i, j;

	for (i = 1; i < m; i++) {
		k = a[i];
		for (j = i; j > 0 && a[j - 1] > k; j--)
			a[j] = a[j - 1];
		a[j] = k;
	}
}

/*
 * Sort keys by their bits from bit `low` up, stably, least significant
 * digit first over the digits where they differ at all (a pass each,
 * however the keys cluster); tmp is as large as a.
 */
static void
keysort_lsd(uint64_t *a, uint64_t *tmp, size_t m, unsigned low)
{
	uint32_t count[64 / KEYSORT_DIGIT_BITS + 1][(1u << KEYSORT_DIGIT_BITS) + 1];
	uint64_t ones = 0, zeros = ~UINT64_C(0), *from = a, *to = tmp, *swap;
	unsigned shift[64 / KEYSORT_DIGIT_BITS + 1], ndigits = 0, d, at;
	size_t i, c, buckets = (size_t)1 << KEYSORT_DIGIT_BITS;

	for (i = 0; i < m; i++) {
		ones |= a[i];
		zeros &= a[i];
	}
	/* The digits holding a bit some keys differ in. */
	for (at = low; at < 64; at += KEYSORT_DIGIT_BITS)
		if ((ones ^ zeros) >> at & ((UINT64_C(1) << KEYSORT_DIGIT_BITS) - 1))
			shift[ndigits++] = at;
	memset(count, 0, sizeof count);
	for (i = 0; i < m; i++)
		for (d = 0; d < ndigits; d++)
			count[d][(a[i] >> shift[d] & (buckets - 1)) + 1]++;
	for (d = 0; d < ndigits; d++) {
		for (c = 1; c <= buckets; c++)
			count[d][c] += count[d][c - 1];
		for (i = 0; i < m; i++)
			to[count[d][from[i] >> shift[d] & (buckets - 1)]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != a)
		memcpy(a, from, m * sizeof *a);
}

/*
 * Sort keys by their bits from bit `low` up, stably (keys equal there stay
 * in their order), most significant digit first: the digit starts at the
 * highest bit where the keys differ and is about log2(m) bits wide; tmp is
 * as large as a. Keys in order of their low bits come out in order. A
 * bucket still large after a pass holds keys that cluster (repeats of the
 * string), which would take a pass a digit going on like this: those are
 * sorted least significant digit first.
 */
void
keysort_msd(uint64_t *a, uint64_t *tmp, size_t m, unsigned low, bool first)
{
	uint32_t count[(1u << KEYSORT_DIGIT_BITS) + 1];
	uint64_t diff = 0;
	size_t i, at, c, buckets;
	unsigned bits, shift, high;

	if (m <= KEYSORT_SMALL) {
		keysort_insertion(a, m);
		return;
	}
	if (!first && m >= 16384) {
		keysort_lsd(a, tmp, m, low);
		return;
	}
	for (i = 1; i < m; i++)
		diff |= a[i] ^ a[0];
	if (diff >> low == 0)
		return;
	high = 64 - keysort_clz(diff);
	for (bits = 4; bits < KEYSORT_DIGIT_BITS && (size_t)2 << bits <= m; bits++)
		;
	if (bits > high - low)
		bits = high - low;
	shift = high - bits;
	buckets = (size_t)1 << bits;
	memset(count, 0, (buckets + 1) * sizeof *count);
	for (i = 0; i < m; i++)
		count[(a[i] >> shift & (buckets - 1)) + 1]++;
	for (c = 1; c <= buckets; c++)
		count[c] += count[c - 1];
	for (i = 0; i < m; i++)
		tmp[count[a[i] >> shift & (buckets - 1)]++] = a[i];
	memcpy(a, tmp, m * sizeof *a);
	/* count[c] is now the end of bucket c. */
	for (c = 0, at = 0; c < buckets; at = count[c++]) {
		if (count[c] - at > KEYSORT_SMALL)
			keysort_msd(a + at, tmp + at, count[c] - at, low, false);
		else if (count[c] - at > 1)
			keysort_insertion(a + at, count[c] - at);
	}
}

/*
 * Merge two sorted runs of distinct keys into out, without a branch on the
 * keys: from the front and from the back at once (two chains of loads and
 * compares the processor runs side by side), meeting in the middle.
 */
static void
keysort_merge2(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny, uint64_t *out)
{
	size_t i = 0, j = 0, k, ie = nx, je = ny, ke = nx + ny, half = (nx + ny) / 2;
	uint64_t a, b;
	bool take;

	/* Front: the smaller of x[i], y[j]; back: the larger of x[ie-1], y[je-1]. */
	for (k = 0; k < half && i < nx && j < ny && ie > 0 && je > 0; k++) {
		a = x[i];
		b = y[j];
		take = b < a;
		out[k] = take ? b : a;
		i += !take;
		j += take;
		a = x[ie - 1];
		b = y[je - 1];
		take = b > a;
		out[--ke] = take ? b : a;
		ie -= !take;
		je -= take;
	}
	/* What is left between the two ends, from the front (one run may be used up). */
	for (; k < ke; k++) {
		if (j >= je || (i < ie && x[i] < y[j]))
			out[k] = x[i++];
		else
			out[k] = y[j++];
	}
}

/*
 * Sort a[0..m), made of `runs` sorted runs of distinct keys (run k from
 * bound[k] to bound[k + 1]), by merging them in pairs; tmp is as large.
 */
void
keysort_merge_runs(uint64_t *a, uint64_t *tmp, size_t *bound, unsigned runs)
{
	uint64_t *from = a, *to = tmp, *swap;
	unsigned k, next;

	while (runs > 1) {
		for (k = 0, next = 0; k < runs; k += 2, next++) {
			if (k + 1 < runs)
				keysort_merge2(from + bound[k], bound[k + 1] - bound[k], from + bound[k + 1],
				    bound[k + 2] - bound[k + 1], to + bound[k]);
			else
				memcpy(to + bound[k], from + bound[k],
				    (bound[k + 1] - bound[k]) * sizeof *from);
			bound[next] = bound[k];
		}
		bound[next] = bound[runs];
		runs = next;
		swap = from;
		from = to;
		to = swap;
	}
	if (from != a)
		memcpy(a, from, bound[1] * sizeof *a);
}
