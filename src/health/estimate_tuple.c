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
#include "keysort.h"
#include "numeric.h"
#include "packed.h"
#include "xmalloc.h"

/* Bits of the counting pass's buckets (the first symbols of each suffix), at most. */
#define TUPLE_BUCKET_BITS 12
/* Groups deeper than this, or more re-keying than this many times the
 * string, and the suffix sorter takes over. */
#define TUPLE_MAX_LEVEL 48
#define TUPLE_BUDGET_FACTOR 4
/* Symbols of a key: at most this many bits of them. */
#define TUPLE_KEY_BITS 56
/* Copies of the per-LCP counts, taken in turn. */
#define TUPLE_LANES 4
/* LCPs taken before they are counted into the intervals. */
#define TUPLE_BUF 4096
/* tuple_group's lcp_in when the first suffix must be compared with the last taken. */
#define TUPLE_LCP_COMPARE UINT64_MAX

struct tuple {
	const uint8_t *packed;
	uint64_t n;              /* symbols */
	unsigned width;          /* bits a symbol */
	uint8_t symbols[65];     /* whole symbols in b bits: b / width */
	uint64_t budget;         /* suffixes left to re-key below the buckets */
	uint64_t cap;            /* symbols to sort by at most */
	bool count;              /* count the LCP intervals (not for an order alone) */
	struct estimate_order *order; /* where the sorted order goes, or NULL */
	bool failed;             /* too deep: the suffix sorter must do it */
	uint64_t last;           /* the suffix taken last */
	/* The LCP intervals: the open ones (their LCPs and first suffixes in
	 * sorted order), and per LCP value l the largest interval (max_at[l])
	 * and the pairs of t-tuples for l (pair_diff, as differences: an
	 * interval adds its pairs for every t from its parent's LCP + 1 to
	 * its own). */
	uint64_t *open_lcp, *open_lb;
	size_t depth;
	uint64_t *max_at, *pair_diff;
	size_t lcp_len;
	uint64_t v;              /* the largest LCP */
	uint64_t emitted;        /* suffixes counted into the intervals */
	uint64_t taken;          /* suffixes taken in sorted order */
	/* What the suffixes taken since shared with the one before each. */
	uint64_t *buf;
	size_t nbuf;
};

/*
 * At least the first 57 bits from symbol `at` on, at the top: one load.
 * `at` is at most 16 bits' worth past the end, which the pad covers (and
 * past the end it reads zeros).
 */
static inline uint64_t
tuple_top(const struct tuple *t, uint64_t at)
{
	uint64_t bit = at * t->width, x;

	memcpy(&x, t->packed + (bit >> 3), sizeof x);
	return be64toh(x) << (bit & 7);
}

/* Leading zeros of x != 0, without a libgcc call. */
static inline unsigned
tuple_clz(uint64_t x)
{
	return (unsigned)__builtin_clzll(x);
}

/*
 * The symbols suffixes a and b share (at most t->cap), knowing they share
 * `from`, compared a word at a time; each word counts against the budget.
 */
static uint64_t
tuple_lcp_from(struct tuple *t, uint64_t a, uint64_t b, uint64_t from)
{
	uint64_t most = t->n - (a > b ? a : b), step = t->symbols[64], at, x;
	unsigned bits = (unsigned)step * t->width;

	if (most > t->cap)
		most = t->cap;
	for (at = from; at < most; at += step) {
		t->budget -= t->budget > 0;
		x = (packed_load(t->packed, (a + at) * t->width) ^
		    packed_load(t->packed, (b + at) * t->width)) >> (64 - bits);
		if (x != 0) {
			at += t->symbols[tuple_clz(x) - (64 - bits)];
			break;
		}
	}
	return at < most ? at : most;
}

/* The symbols suffixes a and b share. */
static uint64_t
tuple_lcp(struct tuple *t, uint64_t a, uint64_t b)
{
	return tuple_lcp_from(t, a, b, 0);
}

/* Grow the per-LCP arrays and the stack of open intervals to hold LCPs up to l. */
static void
tuple_grow(struct tuple *t, uint64_t l)
{
	size_t want = t->lcp_len;

	if (l + 2 <= t->lcp_len)
		return;
	while (want < l + 2)
		want = want < 64 ? 64 : want * 2;
	t->max_at = xreallocarray(t->max_at, want, TUPLE_LANES * sizeof *t->max_at);
	t->pair_diff = xreallocarray(t->pair_diff, want, TUPLE_LANES * sizeof *t->pair_diff);
	memset(t->max_at + TUPLE_LANES * t->lcp_len, 0,
	    (want - t->lcp_len) * TUPLE_LANES * sizeof *t->max_at);
	memset(t->pair_diff + TUPLE_LANES * t->lcp_len, 0,
	    (want - t->lcp_len) * TUPLE_LANES * sizeof *t->pair_diff);
	/* The open intervals' LCPs rise from 0: no more of them than LCP values. */
	t->open_lcp = xreallocarray(t->open_lcp, want, sizeof *t->open_lcp);
	t->open_lb = xreallocarray(t->open_lb, want, sizeof *t->open_lb);
	t->lcp_len = want;
}

/*
 * The suffixes taken since the last flush, each by what it shares with the
 * one before (the first of all shares nothing): close the intervals deeper
 * than that, and open one there. An interval of size suffixes and LCP l
 * counts for max_at[l], and its pairs for every t from its parent's LCP + 1
 * to l.
 */
static void
tuple_flush(struct tuple *t)
{
	uint64_t *open_lcp, *open_lb, *max_at, *pair_diff, i = t->emitted, high = 0;
	uint64_t lcp, top, l, lb, size, parent, pairs, v = t->v;
	size_t depth = t->depth, k;
	unsigned lane = 0;

	for (k = 0; k < t->nbuf; k++)
		if (t->buf[k] > high)
			high = t->buf[k];
	tuple_grow(t, high);
	open_lcp = t->open_lcp;
	open_lb = t->open_lb;
	max_at = t->max_at;
	pair_diff = t->pair_diff;
	k = 0;
	if (i == 0 && t->nbuf > 0) {
		k = 1;
		i = 1;
	}
	for (; k < t->nbuf; k++, i++) {
		lcp = t->buf[k];
		lb = i - 1;
		top = open_lcp[depth - 1];
		while (lcp < top) {
			l = top;
			lb = open_lb[--depth];
			top = open_lcp[depth - 1];
			size = i - lb;
			parent = lcp > top ? lcp : top;
			/* In turn to one of a few copies of the counts: the same
			 * few LCPs come up again and again, and each copy's
			 * updates need not wait for the last one's. */
			lane = (lane + 1) % TUPLE_LANES;
			if (size > max_at[TUPLE_LANES * l + lane])
				max_at[TUPLE_LANES * l + lane] = size;
			/* Modular sums: the differences add up right in uint64_t. */
			pairs = size * (size - 1) / 2;
			pair_diff[TUPLE_LANES * (parent + 1) + lane] += pairs;
			pair_diff[TUPLE_LANES * (l + 1) + lane] -= pairs;
			if (l > v)
				v = l;
		}
		if (lcp > top) {
			open_lcp[depth] = lcp;
			open_lb[depth++] = lb;
		}
	}
	t->emitted = i;
	t->depth = depth;
	t->v = v;
	t->nbuf = 0;
}

/* The next suffix in sorted order, sharing lcp symbols with the one before. */
static inline void
tuple_take(struct tuple *t, uint64_t lcp)
{
	t->buf[t->nbuf++] = lcp;
	if (t->nbuf == TUPLE_BUF)
		tuple_flush(t);
}

/* Start the intervals afresh (also after giving up on sorting here). */
static void
tuple_intervals_reset(struct tuple *t)
{
	t->depth = 1;
	t->open_lcp[0] = 0;
	t->open_lb[0] = 0;
	if (t->lcp_len > 0) {
		memset(t->max_at, 0, t->lcp_len * TUPLE_LANES * sizeof *t->max_at);
		memset(t->pair_diff, 0, t->lcp_len * TUPLE_LANES * sizeof *t->pair_diff);
	}
	t->v = 0;
	t->emitted = 0;
	t->nbuf = 0;
	t->taken = 0;
}

/* The suffix at pos next in sorted order, sharing lcp symbols with the one
 * before (TUPLE_LCP_COMPARE: compare them). */
static inline void
tuple_emit(struct tuple *t, uint64_t pos, uint64_t lcp)
{
	if (lcp == TUPLE_LCP_COMPARE)
		lcp = t->taken > 0 ? tuple_lcp(t, t->last, pos) : 0;
	if (t->order != NULL) {
		t->order->sa[t->taken] = (uint32_t)pos;
		t->order->lcp[t->taken] = (uint8_t)(lcp < ESTIMATE_ORDER_DEPTH ? lcp :
		    ESTIMATE_ORDER_DEPTH);
	}
	if (t->count)
		tuple_take(t, lcp);
	t->last = pos;
	t->taken++;
}

static bool tuple_group(struct tuple *, uint32_t *, uint64_t *, uint64_t *, size_t, uint64_t,
    uint64_t, unsigned);

/* Take suffixes pos[0..m) that share o symbols a level deeper (or as they are, if o is as far as asked). */
static bool
tuple_deeper(struct tuple *t, uint32_t *pos, uint64_t *keys, uint64_t *tmp, size_t m, uint64_t o,
    uint64_t lcp_in, unsigned level)
{
	size_t r;

	if (m == 1 || o >= t->cap) {
		/* Sorted as far as asked: in any order. */
		for (r = 0; r < m; r++)
			tuple_emit(t, pos[r], r == 0 ? lcp_in : o);
		return true;
	}
	if (level + 1 >= TUPLE_MAX_LEVEL || t->budget < m) {
		t->failed = true;
		return false;
	}
	t->budget -= m;
	return tuple_group(t, pos, keys, tmp, m, o, lcp_in, level + 1);
}

/*
 * The group's suffixes in sorted order (keys sorted, pos in their order),
 * when some of them end within their key's symbols (avail: symbols past o,
 * negative for a suffix shorter than o): those come first among equal
 * symbols, and share with a neighbour no more than they have.
 */
static bool
tuple_group_ends(struct tuple *t, uint32_t *pos, uint64_t *keys, uint64_t *tmp, size_t m,
    uint64_t o, uint64_t lcp_in, unsigned level, unsigned data_bits)
{
	uint64_t same = UINT64_C(1) << (64 - data_bits), prev_key = 0, lcp = lcp_in;
	int64_t avail, prev_avail = 0, step = t->symbols[data_bits];
	size_t i, j, f;

	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && (keys[j] ^ keys[i]) < same; j++)
			;
		/* What the run's first shares with the one before, past o. */
		if (i > 0)
			lcp = t->symbols[tuple_clz(prev_key ^ keys[i])];
		prev_key = keys[i];
		for (f = i; f < j; f++) {
			avail = (int64_t)t->n - (int64_t)pos[f] - (int64_t)o;
			if (f > 0) {
				if (f > i)
					lcp = (uint64_t)step;
				if ((int64_t)lcp > prev_avail)
					lcp = (uint64_t)prev_avail;
				if ((int64_t)lcp > avail)
					lcp = (uint64_t)avail;
				lcp += o;
			}
			if (avail >= step)
				break;
			tuple_emit(t, pos[f], lcp);
			prev_avail = avail;
		}
		if (f < j) {
			if (!tuple_deeper(t, pos + f, keys + f, tmp + f, j - f, o + (uint64_t)step, lcp,
			    level))
				return false;
			prev_avail = step;
		}
	}
	return true;
}

/*
 * Sort m >= 2 suffixes that share their first o symbols (pos: their
 * starts, in descending order; among a bucket's some may be shorter than
 * o, zeros standing in past the end), and take them in order; lcp_in is
 * what the first shares with the suffix taken before it. Each key is a
 * suffix's next symbols with its index in pos below them, so keys are
 * distinct and equal symbols sort by index: a suffix that ends among them
 * (the later start) sorts first, as it must. Runs of equal symbols go a
 * level deeper, in keys', tmp's and pos's own places; false when that went
 * too deep (t->failed).
 */
static bool
tuple_group(struct tuple *t, uint32_t *pos, uint64_t *keys, uint64_t *tmp, size_t m, uint64_t o,
    uint64_t lcp_in, unsigned level)
{
	uint32_t *sorted = (uint32_t *)(void *)tmp;
	unsigned idx_bits = 64 - tuple_clz(m - 1), data_bits;
	uint64_t mask, same, step, prev_key, lcp;
	size_t i, j, r;

	data_bits = 64 - idx_bits < TUPLE_KEY_BITS ? 64 - idx_bits : TUPLE_KEY_BITS;
	step = t->symbols[data_bits];
	data_bits = (unsigned)step * t->width;
	mask = ~(UINT64_MAX >> data_bits);
	same = UINT64_C(1) << (64 - data_bits);
	for (r = 0; r < m; r++)
		keys[r] = (tuple_top(t, pos[r] + o) & mask) | r;
	keysort_msd(keys, tmp, m, 64 - data_bits, true);
	for (r = 0; r < m; r++)
		sorted[r] = pos[keys[r] & ((UINT64_C(1) << idx_bits) - 1)];
	/* The latest start (pos[0], before sorting) ends within these symbols? */
	if (pos[0] + o + step > t->n) {
		memcpy(pos, sorted, m * sizeof *pos);
		return tuple_group_ends(t, pos, keys, tmp, m, o, lcp_in, level, data_bits);
	}
	memcpy(pos, sorted, m * sizeof *pos);
	for (i = 0, prev_key = 0; i < m; i = j) {
		for (j = i + 1; j < m && (keys[j] ^ keys[i]) < same; j++)
			;
		lcp = i == 0 ? lcp_in : o + t->symbols[tuple_clz(prev_key ^ keys[i])];
		prev_key = keys[i];
		if (j - i == 1)
			tuple_emit(t, pos[i], lcp);
		else if (!tuple_deeper(t, pos + i, keys + i, tmp + i, j - i, o + step, lcp, level))
			return false;
	}
	return true;
}

/*
 * Every suffix in sorted order, sorted here: a counting pass over the
 * first few symbols of each, then each bucket on its own. False when some
 * repeat is too long for this (t->failed).
 */
static bool
tuple_sort_here(struct tuple *t)
{
	unsigned bucket_symbols, bits, shift;
	uint64_t n = t->n, p, b, first, *keys, *tmp;
	uint32_t *start, *pos;
	size_t buckets, largest = 1;
	bool ok = true;

	/* Buckets of a few thousand suffixes (the scatter stays in cache), of whole symbols. */
	for (bits = 1; bits < TUPLE_BUCKET_BITS && (UINT64_C(2048) << bits) <= n; bits++)
		;
	bucket_symbols = t->symbols[bits] > 0 ? t->symbols[bits] : 1;
	bits = bucket_symbols * t->width;
	shift = 64 - bits;
	buckets = (size_t)1 << bits;
	start = xcalloc(buckets + 1, sizeof *start);
	pos = xreallocarray(NULL, n, sizeof *pos);
	for (p = 0; p < n; p++)
		start[(tuple_top(t, p) >> shift) + 1]++;
	for (b = 1; b <= buckets; b++) {
		if (start[b] > largest)
			largest = start[b];
		start[b] += start[b - 1];
	}
	/* Each bucket's starts in descending order. */
	for (p = n; p-- > 0; )
		pos[start[tuple_top(t, p) >> shift]++] = (uint32_t)p;
	keys = xreallocarray(NULL, largest, sizeof *keys);
	tmp = xreallocarray(NULL, largest, sizeof *tmp);
	/* start[b] is now the end of bucket b. */
	for (b = 0, first = 0; b < buckets && ok; first = start[b++]) {
		if (start[b] - first == 1)
			tuple_emit(t, pos[first], TUPLE_LCP_COMPARE);
		else if (start[b] > first)
			ok = tuple_group(t, pos + first, keys, tmp, start[b] - first, bucket_symbols,
			    TUPLE_LCP_COMPARE, 0);
	}
	free(tmp);
	free(keys);
	free(pos);
	free(start);
	return ok;
}

/* Order positions from the latest start (the order tuple_group takes them in). */
static int
tuple_later_first(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * One bucket of the bit suffixes (first `o` bits equal), laid out class
 * by class, each class in its order (run r from bound[r]): merged by
 * their next bits, with the class above the index in each key, and taken
 * in order. Suffixes of one class equal that far stay in their class's
 * order, and what they share past it is compared; a run of equal bits
 * from several classes is sorted further (tuple_group).
 */
static bool
tuple_classes_bucket(struct tuple *t, uint32_t *pos, uint64_t *keys, uint64_t *tmp, size_t m,
    uint64_t o, size_t *bound, unsigned classes)
{
	uint32_t *sorted = (uint32_t *)(void *)tmp;
	unsigned idx_bits = m > 1 ? 64 - tuple_clz(m - 1) : 0, class_bits = classes > 1 ?
	    64 - tuple_clz(classes - 1) : 0, data_bits, c;
	uint64_t mask, same, lcp, prev_key = 0, n = t->n, p, q;
	size_t i, j, r, k;

	data_bits = 64 - idx_bits - class_bits < TUPLE_KEY_BITS ? 64 - idx_bits - class_bits :
	    TUPLE_KEY_BITS;
	mask = ~(UINT64_MAX >> data_bits);
	same = UINT64_C(1) << (64 - data_bits);
	for (c = 0; c < classes; c++)
		for (r = bound[c]; r < bound[c + 1]; r++)
			keys[r] = (tuple_top(t, pos[r] + o) & mask) | (uint64_t)c << idx_bits | r;
	keysort_merge_runs(keys, tmp, bound, classes);
	for (r = 0; r < m; r++)
		sorted[r] = pos[keys[r] & ((UINT64_C(1) << idx_bits) - 1)];
	memcpy(pos, sorted, m * sizeof *pos);
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && (keys[j] ^ keys[i]) < same; j++)
			;
		p = pos[i];
		if (i == 0)
			lcp = TUPLE_LCP_COMPARE;
		else {
			/* Past the end of either, nothing is shared. */
			q = pos[i - 1];
			lcp = o + tuple_clz(prev_key ^ keys[i]);
			if (lcp > n - p)
				lcp = n - p;
			if (lcp > n - q)
				lcp = n - q;
		}
		prev_key = keys[i];
		if (j - i == 1) {
			tuple_emit(t, p, lcp);
			continue;
		}
		if ((keys[i] ^ keys[j - 1]) >> idx_bits == 0) {
			/* One class: in order already. */
			tuple_emit(t, p, lcp);
			for (k = i + 1; k < j; k++)
				tuple_emit(t, pos[k], tuple_lcp_from(t, pos[k - 1], pos[k], o));
			if (t->budget == 0) {
				t->failed = true;
				return false;
			}
			continue;
		}
		qsort(pos + i, j - i, sizeof *pos, tuple_later_first);
		if (!tuple_deeper(t, pos + i, keys + i, tmp + i, j - i, o, lcp, 0))
			return false;
	}
	return true;
}

/*
 * Every bit suffix of n_samples samples of w bits in sorted order, from
 * the samples' complete order: the suffixes starting r bits into a
 * sample (class r) sort by the sample's last w - r bits, then by the
 * samples after it. A bucket of the first few bits holds each class's
 * suffixes in that order, from one pass over the samples' order, and a
 * merge puts the classes together; suffixes of one class equal as far as
 * a key reaches need no sorting deeper, only comparing for what they
 * share. False when comparing took too long (long repeats: t->failed).
 */
static bool
tuple_sort_classes(struct tuple *t, const struct estimate_order *order, uint64_t n_samples,
    unsigned w)
{
	unsigned bits, shift, r;
	uint64_t n = t->n, p, b, k, j, x, first, *keys, *tmp;
	uint32_t *start, *pos;
	size_t buckets, largest = 1, bound[9], m;
	bool ok = true;

	/* At least a sample's bits: a bucket's suffixes of one class then
	 * share their sample's last bits. */
	for (bits = w; bits < TUPLE_BUCKET_BITS && (UINT64_C(2048) << bits) <= n; bits++)
		;
	shift = 64 - bits;
	buckets = (size_t)1 << bits;
	start = xcalloc(buckets * w + 1, sizeof *start);
	for (p = 0, r = 0; p < n; p++) {
		start[(tuple_top(t, p) >> shift) * w + r + 1]++;
		r = r + 1 == w ? 0 : r + 1;
	}
	for (b = 1; b <= buckets * w; b++)
		start[b] += start[b - 1];
	for (b = 0; b < buckets; b++)
		if (start[(b + 1) * w] - start[b * w] > largest)
			largest = start[(b + 1) * w] - start[b * w];
	/* Within a bucket, a class's suffixes share the sample's last bits:
	 * they go in the order of the samples after them, the empty one
	 * first. */
	pos = xreallocarray(NULL, n, sizeof *pos);
	for (k = 0; k <= n_samples; k++) {
		if (k == 0)
			j = n_samples - 1;
		else if (order->sa[k - 1] > 0)
			j = order->sa[k - 1] - 1;
		else
			continue;
		/* The sample a few places on in the order, on its way into cache. */
		if (k + 16 < n_samples)
			__builtin_prefetch(t->packed + (order->sa[k + 16] * w >> 3));
		x = packed_load(t->packed, j * w);
		for (r = 0; r < w; r++)
			pos[start[(x << r >> shift) * w + r]++] = (uint32_t)(j * w + r);
	}
	keys = xreallocarray(NULL, largest, sizeof *keys);
	tmp = xreallocarray(NULL, largest, sizeof *tmp);
	/* start[b * w + r] is now the end of bucket b's class r. */
	for (b = 0, first = 0; b < buckets && ok; first = start[b++ * w + w - 1]) {
		m = start[b * w + w - 1] - first;
		if (m == 0)
			continue;
		bound[0] = 0;
		for (r = 0; r < w; r++)
			bound[r + 1] = start[b * w + r] - first;
		ok = tuple_classes_bucket(t, pos + first, keys, tmp, m, bits, bound, w);
	}
	free(tmp);
	free(keys);
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
		text[i] = (uint8_t)(packed_load(t->packed, i * t->width) >> (64 - t->width));
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
		for (i = 0; i < n; i++) {
			h = i == 0 ? 0 : phi[sa[i]];
			tuple_take(t, h);
			if (t->order != NULL) {
				t->order->sa[i] = (uint32_t)sa[i];
				t->order->lcp[i] = (uint8_t)(h < ESTIMATE_ORDER_DEPTH ? h :
				    ESTIMATE_ORDER_DEPTH);
			}
		}
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
	unsigned lane;
	double p, best;

	tuple_take(t, 0);	/* closes every interval, the last suffix past the end */
	tuple_flush(t);
	v = t->v;
	tuple_grow(t, v);
	/* The copies of the counts into one (their first). */
	for (i = 0; i <= v + 1; i++)
		for (lane = 1; lane < TUPLE_LANES; lane++) {
			if (t->max_at[TUPLE_LANES * i + lane] > t->max_at[TUPLE_LANES * i])
				t->max_at[TUPLE_LANES * i] = t->max_at[TUPLE_LANES * i + lane];
			t->pair_diff[TUPLE_LANES * i] += t->pair_diff[TUPLE_LANES * i + lane];
		}
	for (i = 0; i <= v + 1; i++) {
		t->max_at[i] = t->max_at[TUPLE_LANES * i];
		t->pair_diff[i] = t->pair_diff[TUPLE_LANES * i];
	}
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

/* A sorter of the string's suffixes, counting the intervals if count. */
static void
tuple_start(struct tuple *t, const uint8_t *packed, uint64_t n, unsigned width, bool count,
    struct estimate_order *order)
{
	unsigned i;

	memset(t, 0, sizeof *t);
	t->packed = packed;
	t->n = n;
	t->width = width;
	t->count = count;
	t->order = order;
	t->cap = UINT64_MAX;
	t->budget = TUPLE_BUDGET_FACTOR * n;
	for (i = 0; i <= 64; i++)
		t->symbols[i] = (uint8_t)(i / width);
	tuple_grow(t, 64);
	t->buf = xreallocarray(NULL, TUPLE_BUF, sizeof *t->buf);
	tuple_intervals_reset(t);
}

/* Free what tuple_start made. */
static void
tuple_end(struct tuple *t)
{
	free(t->buf);
	free(t->open_lcp);
	free(t->open_lb);
	free(t->max_at);
	free(t->pair_diff);
}

/* Room for the order of n suffixes. */
static void
tuple_order_alloc(struct estimate_order *order, uint64_t n)
{
	order->sa = xreallocarray(NULL, n, sizeof *order->sa);
	order->lcp = xmalloc(n);
}

int
estimate_tuple_order(const uint8_t *packed, uint64_t n, unsigned width,
    estimate_tuple_sorter sorter, struct estimate_tuple *r, const char **why,
    struct estimate_order *order)
{
	struct tuple t;
	int rc = 0;

	memset(r, 0, sizeof *r);
	r->t_tuple = r->lrs = r->p_tuple = r->p_lrs = -1.0;
	*why = NULL;
	if (order != NULL)
		memset(order, 0, sizeof *order);
	if (width < 1 || width > 8 || n < 2 || n * width >= UINT64_C(1) << 31) {
		*why = "the string must have 2 symbols to 2^31 bits";
		return -1;
	}
	if (order != NULL)
		tuple_order_alloc(order, n);
	tuple_start(&t, packed, n, width, true, order);
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
	else if (order != NULL)
		estimate_order_free(order);
	if (rc == 0 && order != NULL)
		order->complete = true;
	tuple_end(&t);
	return rc;
}

int
estimate_tuple_bits(const uint8_t *packed, uint64_t n, unsigned width,
    const struct estimate_order *samples, estimate_tuple_sorter sorter, struct estimate_tuple *r,
    const char **why)
{
	struct tuple t;

	if (samples == NULL || !samples->complete || width < 2 || width > 8 ||
	    n * width >= UINT64_C(1) << 31)
		return estimate_tuple(packed, n * width, 1, sorter, r, why);
	memset(r, 0, sizeof *r);
	r->t_tuple = r->lrs = r->p_tuple = r->p_lrs = -1.0;
	*why = NULL;
	tuple_start(&t, packed, n * width, 1, true, NULL);
	if (!tuple_sort_classes(&t, samples, n, width)) {
		/* Long repeats: sorted the other way (which hands them on). */
		tuple_end(&t);
		return estimate_tuple(packed, n * width, 1, sorter, r, why);
	}
	tuple_finish(&t, r);
	tuple_end(&t);
	return 0;
}

int
estimate_tuple(const uint8_t *packed, uint64_t n, unsigned width, estimate_tuple_sorter sorter,
    struct estimate_tuple *r, const char **why)
{
	return estimate_tuple_order(packed, n, width, sorter, r, why, NULL);
}

void
estimate_order(const uint8_t *packed, uint64_t n, unsigned width, struct estimate_order *order)
{
	struct tuple t;

	memset(order, 0, sizeof *order);
	if (n == 0)
		return;
	tuple_order_alloc(order, n);
	tuple_start(&t, packed, n, width, false, order);
	/* As deep as the order goes: a few levels, no limit needed. */
	t.cap = ESTIMATE_ORDER_DEPTH;
	t.budget = UINT64_MAX;
	tuple_sort_here(&t);
	tuple_end(&t);
}

void
estimate_order_free(struct estimate_order *order)
{
	free(order->sa);
	free(order->lcp);
	memset(order, 0, sizeof *order);
}
