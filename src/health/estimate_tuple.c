/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B 6.3.5 (t-tuple) and 6.3.6 (LRS) of a string of symbols, with
 * ea_non_iid's figures. Both need, for each length t, the count of the
 * commonest t-tuple and the pairs of positions that start equal t-tuples:
 * the LCP intervals of the sorted suffixes. The suffixes are sorted here by
 * their first 56 bits (a bucket pass, then a radix sort per bucket), and
 * groups still equal by the next 56, a few times over: on noisy data every
 * repeat is far shorter than that, and a million bytes' 8 million bit
 * suffixes sort in a tenth of the time a general suffix sorter takes. A
 * string that repeats itself for longer is handed to a real suffix sorter
 * (libdivsufsort, as NIST's tool uses), and the LCPs come from Kasai's
 * algorithm.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "estimate_tuple.h"
#include "numeric.h"
#include "xmalloc.h"

/* Data bits of a sort key; its low byte holds the symbols it covers. */
#define TUPLE_KEY_BITS 56
/* Keys deeper than this (56 bits each), or more re-keying than this many
 * times the string, and the suffix sorter takes over. */
#define TUPLE_MAX_LEVEL 48
#define TUPLE_BUDGET_FACTOR 4
/* Buckets of up to this many suffixes are sorted by insertion. */
#define TUPLE_SMALL 24
/* tuple_group's lcp_in for a bucket's first suffix. */
#define TUPLE_LCP_BUCKET UINT64_MAX

/* A suffix being sorted: its key at the current level, and where it starts. */
struct tuple_suffix {
	uint64_t key;
	uint32_t pos;
};

/* An open LCP interval: its LCP and its first suffix (in sorted order). */
struct tuple_open {
	uint64_t lcp, lb;
};

struct tuple {
	const uint8_t *packed;
	uint64_t n;              /* symbols */
	unsigned width;          /* bits a symbol */
	unsigned key_symbols;    /* symbols a key covers */
	unsigned key_bits;       /* key_symbols x width */
	uint64_t budget;         /* suffixes left to re-key below level 0 */
	bool failed;             /* too deep: the suffix sorter must do it */
	struct tuple_suffix *tmp; /* the radix sort's other buffer */
	size_t tmp_len;
	/* The LCP intervals: the open ones, and per LCP value l the largest
	 * interval (max_at[l]) and the pairs of t-tuples for l (pair_diff,
	 * as differences: an interval adds its pairs for every t from its
	 * parent's LCP + 1 to its own). */
	struct tuple_open *stack;
	size_t depth, stack_len;
	uint64_t *max_at, *pair_diff;
	size_t lcp_len;
	uint64_t v;              /* the largest LCP */
	uint64_t emitted;        /* suffixes taken in sorted order */
	uint64_t last_key;       /* the level-0 key of the last bucket's last */
};

/* The 64 bits of the string from bit offset `bit` on, the first at the top. */
static inline uint64_t
tuple_load(const uint8_t *packed, uint64_t bit)
{
	uint64_t x;
	unsigned shift = (unsigned)(bit & 7);

	memcpy(&x, packed + (bit >> 3), sizeof x);
	x = be64toh(x);
	if (shift != 0)
		x = x << shift | packed[(bit >> 3) + 8] >> (8 - shift);
	return x;
}

/*
 * The sort key of the suffix at symbol pos, `level` keys in: the next
 * key_symbols symbols at the top (zeros past the end), and in the low byte
 * how many of them the string has, so a shorter suffix sorts first.
 */
static inline uint64_t
tuple_key(const struct tuple *t, uint64_t pos, unsigned level)
{
	uint64_t at = pos + (uint64_t)level * t->key_symbols, left, x;

	if (at >= t->n)
		return 0;
	left = t->n - at;
	x = tuple_load(t->packed, at * t->width) >> (64 - t->key_bits) << (64 - t->key_bits);
	return x | (left < t->key_symbols ? left : t->key_symbols);
}

/* Leading zeros of x != 0, without a libgcc call. */
static inline unsigned
tuple_clz(uint64_t x)
{
	return (unsigned)__builtin_clzll(x);
}

/* The symbols two different keys of one level share. */
static inline uint64_t
tuple_key_lcp(const struct tuple *t, uint64_t a, uint64_t b)
{
	uint64_t x = a ^ b, la = a & 0xff, lb = b & 0xff, common;
	unsigned bits = x >> 8 == 0 ? t->key_bits : tuple_clz(x);

	if (bits > t->key_bits)
		bits = t->key_bits;
	common = bits / t->width;
	if (common > la)
		common = la;
	if (common > lb)
		common = lb;
	return common;
}

/* Grow the per-LCP arrays to hold index l + 1. */
static void
tuple_grow(struct tuple *t, uint64_t l)
{
	size_t want = t->lcp_len;

	if (l + 2 <= t->lcp_len)
		return;
	while (want < l + 2)
		want = want < 64 ? 64 : want * 2;
	t->max_at = xreallocarray(t->max_at, want, sizeof *t->max_at);
	t->pair_diff = xreallocarray(t->pair_diff, want, sizeof *t->pair_diff);
	memset(t->max_at + t->lcp_len, 0, (want - t->lcp_len) * sizeof *t->max_at);
	memset(t->pair_diff + t->lcp_len, 0, (want - t->lcp_len) * sizeof *t->pair_diff);
	t->lcp_len = want;
}

/* A closed LCP interval: lcp l, `size` suffixes, its parent's LCP below it. */
static void
tuple_interval(struct tuple *t, uint64_t l, uint64_t size, uint64_t parent)
{
	uint64_t pairs = size * (size - 1) / 2;

	if (l + 2 > t->lcp_len)
		tuple_grow(t, l);
	if (size > t->max_at[l])
		t->max_at[l] = size;
	/* Modular sums: the differences add up right in uint64_t. */
	t->pair_diff[parent + 1] += pairs;
	t->pair_diff[l + 1] -= pairs;
	if (l > t->v)
		t->v = l;
}

/* The next suffix in sorted order, sharing lcp symbols with the one before. */
static void
tuple_take(struct tuple *t, uint64_t lcp)
{
	uint64_t i = t->emitted++, lb;
	struct tuple_open *top;

	if (i == 0)
		return;
	lb = i - 1;
	while (lcp < t->stack[t->depth - 1].lcp) {
		top = &t->stack[--t->depth];
		lb = top->lb;
		tuple_interval(t, top->lcp, i - lb, lcp > t->stack[t->depth - 1].lcp ? lcp :
		    t->stack[t->depth - 1].lcp);
	}
	if (lcp > t->stack[t->depth - 1].lcp) {
		if (t->depth == t->stack_len) {
			t->stack_len *= 2;
			t->stack = xreallocarray(t->stack, t->stack_len, sizeof *t->stack);
		}
		t->stack[t->depth].lcp = lcp;
		t->stack[t->depth++].lb = lb;
	}
}

/* Start the intervals afresh (also after giving up on sorting here). */
static void
tuple_intervals_reset(struct tuple *t)
{
	t->depth = 1;
	t->stack[0].lcp = 0;
	t->stack[0].lb = 0;
	if (t->lcp_len > 0) {
		memset(t->max_at, 0, t->lcp_len * sizeof *t->max_at);
		memset(t->pair_diff, 0, t->lcp_len * sizeof *t->pair_diff);
	}
	t->v = 0;
	t->emitted = 0;
}

/* Sort a few suffixes by key, by insertion. */
static void
tuple_insertion(struct tuple_suffix *a, size_t m)
{
	struct tuple_suffix s;
	size_t i, j;

	for (i = 1; i < m; i++) {
		s = a[i];
		for (j = i; j > 0 && a[j - 1].key > s.key; j--)
			a[j] = a[j - 1];
		a[j] = s;
	}
}

/*
 * Sort suffixes by key, most significant byte first (byte `byte` and
 * below). The keys are in data; other is as large, and the sorted keys
 * must end up in whichever of the two is home (data when data_home): each
 * pass scatters into the other, and only what is done is copied home. A
 * byte every key shares is skipped, and a few keys are sorted by insertion.
 */
static void
tuple_radix(struct tuple_suffix *data, struct tuple_suffix *other, size_t m, int byte,
    bool data_home)
{
	size_t count[256], start[257], i, c;
	unsigned shift;

	for (; byte >= 0 && m > TUPLE_SMALL; byte--) {
		shift = 8 * (unsigned)byte;
		memset(count, 0, sizeof count);
		for (i = 0; i < m; i++)
			count[data[i].key >> shift & 0xff]++;
		if (count[data[0].key >> shift & 0xff] == m)
			continue;
		for (start[0] = 0, c = 0; c < 256; c++)
			start[c + 1] = start[c] + count[c];
		for (i = 0; i < m; i++)
			other[start[data[i].key >> shift & 0xff]++] = data[i];
		for (i = 0, c = 0; c < 256; c++) {
			if (count[c] > 0)
				tuple_radix(other + i, data + i, count[c], byte - 1, !data_home);
			i += count[c];
		}
		return;
	}
	tuple_insertion(data, m);
	if (!data_home)
		memcpy(other, data, m * sizeof *data);
}

/* Sort suffixes by key. */
static void
tuple_sort(struct tuple *t, struct tuple_suffix *a, size_t m)
{
	if (m <= TUPLE_SMALL) {
		tuple_insertion(a, m);
		return;
	}
	if (t->tmp_len < m) {
		free(t->tmp);
		t->tmp_len = m;
		t->tmp = xreallocarray(NULL, m, sizeof *t->tmp);
	}
	tuple_radix(a, t->tmp, m, 7, true);
}

/*
 * Sort suffixes that share `level` keys, and take them in order; lcp_in is
 * what the first shares with the suffix taken before it (TUPLE_LCP_BUCKET:
 * a bucket's first, which shares with the last bucket's last what their
 * level-0 keys share). Runs of equal keys go a level deeper; false when
 * that went too deep (t->failed).
 */
static bool
tuple_group(struct tuple *t, struct tuple_suffix *a, size_t m, unsigned level, uint64_t lcp_in)
{
	uint64_t prev_key = 0, lcp, run_key;
	size_t i = 0, j, r;

	tuple_sort(t, a, m);
	while (i < m) {
		run_key = a[i].key;
		for (j = i + 1; j < m && a[j].key == run_key; j++)
			;
		if (i > 0)
			lcp = (uint64_t)level * t->key_symbols + tuple_key_lcp(t, prev_key, run_key);
		else if (lcp_in == TUPLE_LCP_BUCKET)
			lcp = tuple_key_lcp(t, t->last_key, run_key);
		else
			lcp = lcp_in;
		if (j - i == 1)
			tuple_take(t, lcp);
		else {
			/* Equal keys cover key_symbols each (two suffixes never
			 * share their length): compare the next ones. */
			if (level + 1 >= TUPLE_MAX_LEVEL || t->budget < j - i) {
				t->failed = true;
				return false;
			}
			t->budget -= j - i;
			for (r = i; r < j; r++)
				a[r].key = tuple_key(t, a[r].pos, level + 1);
			if (!tuple_group(t, a + i, j - i, level + 1, lcp))
				return false;
		}
		prev_key = run_key;
		i = j;
	}
	return true;
}

/*
 * Every suffix in sorted order, sorted here: a counting pass over the
 * first `bucket_bits` bits of each, then each bucket on its own. False
 * when some repeat is too long for this (t->failed).
 */
static bool
tuple_sort_here(struct tuple *t)
{
	unsigned bucket_bits = 4, shift;
	uint64_t n = t->n, p, b, first;
	uint32_t *start, *pos;
	struct tuple_suffix *group = NULL;
	size_t group_len = 0, m, i, buckets;
	bool ok = true;

	/* Buckets of a few thousand, at most 4096 of them (the scatter stays in cache). */
	while (bucket_bits < 12 && (UINT64_C(1) << (bucket_bits + 11)) < n)
		bucket_bits++;
	if (bucket_bits > t->key_bits)
		bucket_bits = t->key_bits;
	shift = 64 - bucket_bits;
	buckets = (size_t)1 << bucket_bits;
	start = xcalloc(buckets + 1, sizeof *start);
	pos = xreallocarray(NULL, n, sizeof *pos);
	for (p = 0; p < n; p++)
		start[(tuple_key(t, p, 0) >> shift) + 1]++;
	for (b = 1; b <= buckets; b++)
		start[b] += start[b - 1];
	for (p = 0; p < n; p++)
		pos[start[tuple_key(t, p, 0) >> shift]++] = (uint32_t)p;
	/* start[b] is now the end of bucket b. */
	for (b = 0, first = 0; b < buckets && ok; first = start[b++]) {
		m = start[b] - first;
		if (m == 0)
			continue;
		if (group_len < m) {
			free(group);
			group_len = m;
			group = xreallocarray(NULL, group_len, sizeof *group);
		}
		for (i = 0; i < m; i++) {
			group[i].pos = pos[first + i];
			group[i].key = tuple_key(t, group[i].pos, 0);
		}
		ok = tuple_group(t, group, m, 0, TUPLE_LCP_BUCKET);
		t->last_key = tuple_key(t, group[m - 1].pos, 0);
	}
	free(group);
	free(pos);
	free(start);
	return ok;
}

/*
 * Every suffix in sorted order through the suffix sorter, the LCPs by
 * Kasai's algorithm (as the permuted LCP array, phi's storage reused).
 */
static int
tuple_sort_library(struct tuple *t, estimate_tuple_sorter sorter)
{
	uint64_t n = t->n, i, h = 0, j;
	uint8_t *text = xmalloc(n);
	int32_t *sa = xreallocarray(NULL, n, sizeof *sa);
	uint32_t *phi = xreallocarray(NULL, n, sizeof *phi);
	int rc;

	for (i = 0; i < n; i++)
		text[i] = (uint8_t)(tuple_load(t->packed, i * t->width) >> (64 - t->width));
	rc = sorter(text, sa, (int32_t)n);
	if (rc == 0) {
		/* phi[suffix] = the suffix before it in sorted order (n: none). */
		phi[sa[0]] = (uint32_t)n;
		for (i = 1; i < n; i++)
			phi[sa[i]] = (uint32_t)sa[i - 1];
		for (i = 0; i < n; i++) {
			j = phi[i];
			if (j == n)
				h = 0;
			else
				while (i + h < n && j + h < n && text[i + h] == text[j + h])
					h++;
			phi[i] = (uint32_t)h;
			if (h > 0)
				h--;
		}
		tuple_intervals_reset(t);
		for (i = 0; i < n; i++)
			tuple_take(t, i == 0 ? 0 : phi[sa[i]]);
	}
	free(phi);
	free(sa);
	free(text);
	return rc == 0 ? 0 : -1;
}

/* x to the power 1/i, for 0 <= x <= 1. */
static double
tuple_root(double x, uint64_t i)
{
	return x > 0.0 ? numeric_exp2(numeric_log2(x) / (double)i) : 0.0;
}

/* -log2 of the 99 % upper bound on p from n samples (step 4 of both). */
static double
tuple_bound(double p, uint64_t n)
{
	double pu = p + ESTIMATE_ZALPHA * numeric_sqrt(p * (1.0 - p) / ((double)n - 1.0));

	return pu >= 1.0 ? 0.0 : -numeric_log2(pu);
}

/* The two estimates from the closed intervals (t->emitted == n). */
static void
tuple_finish(struct tuple *t, struct estimate_tuple *r)
{
	uint64_t n = t->n, v, u, i, q, pairs;
	double p, best;

	tuple_take(t, 0);	/* closes every interval, the last suffix past the end */
	v = t->v;
	tuple_grow(t, v);
	/* Q[i]: the most occurrences of an i-tuple: the largest interval with LCP >= i. */
	for (q = 1, i = v; i >= 1; i--) {
		if (t->max_at[i] > q)
			q = t->max_at[i];
		t->max_at[i] = q;
	}
	for (u = 1; u <= v && t->max_at[u] >= ESTIMATE_TUPLE_CUTOFF; u++)
		;
	r->v = v;
	r->t = u - 1;
	best = -1.0;
	for (i = 1; i < u; i++) {
		p = tuple_root((double)t->max_at[i] / (double)(n - i + 1), i);
		if (p > best)
			best = p;
	}
	r->p_tuple = best;
	r->t_tuple = best > 0.0 ? tuple_bound(best, n) : -1.0;
	r->p_lrs = -1.0;
	r->lrs = -1.0;
	if (v < u)
		return;
	best = 0.0;
	for (pairs = 0, i = 1; i <= v; i++) {
		pairs += t->pair_diff[i];
		if (i < u)
			continue;
		p = tuple_root((double)pairs / ((double)(n - i) * (double)(n - i + 1) / 2.0), i);
		if (p > best)
			best = p;
	}
	r->p_lrs = best;
	r->lrs = tuple_bound(best, n);
}

int
estimate_tuple(const uint8_t *packed, uint64_t n, unsigned width, estimate_tuple_sorter sorter,
    struct estimate_tuple *r, const char **why)
{
	struct tuple t;
	int rc = 0;

	memset(r, 0, sizeof *r);
	r->t_tuple = r->lrs = r->p_tuple = r->p_lrs = -1.0;
	*why = NULL;
	if (width < 1 || width > 8 || n < 2 || n * width >= UINT64_C(1) << 31) {
		*why = "the string must have 2 symbols to 2^31 bits";
		return -1;
	}
	memset(&t, 0, sizeof t);
	t.packed = packed;
	t.n = n;
	t.width = width;
	t.key_symbols = TUPLE_KEY_BITS / width;
	t.key_bits = t.key_symbols * width;
	t.budget = TUPLE_BUDGET_FACTOR * n;
	t.stack_len = 64;
	t.stack = xreallocarray(NULL, t.stack_len, sizeof *t.stack);
	tuple_intervals_reset(&t);
	if (!tuple_sort_here(&t)) {
		if (sorter == NULL) {
			*why = "its repeats are too long to sort without libdivsufsort";
			rc = -1;
		} else if (tuple_sort_library(&t, sorter) != 0) {
			*why = "libdivsufsort could not sort its suffixes";
			rc = -1;
		} else
			r->sorted_by_library = true;
	}
	if (rc == 0)
		tuple_finish(&t, r);
	free(t.tmp);
	free(t.stack);
	free(t.max_at);
	free(t.pair_diff);
	return rc;
}
