/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B's MultiMMC (6.3.9) and LZ78Y (6.3.10) predictors on symbols of
 * up to 8 bits, as ea_non_iid runs them: both keep counts of which symbol
 * followed each prefix of 1 to 16 symbols, in dictionaries whose size the
 * standard bounds. NIST's tool keeps them in C++ maps of maps. Here
 * MultiMMC, which looks up every length at every position, names a prefix
 * by its run in the string's sorted suffixes and keeps its counts in
 * plain tables; LZ78Y, whose one dictionary of all lengths stays small,
 * keeps a prefix as its 16 bytes (the key, exact, no second compare) in an
 * open-addressing table, and each (prefix, next symbol) count in another.
 * Both keep the tool's order of predicting, counting and adding, ties
 * included.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "estimate_predict.h"
#include "estimate_tuple.h"
#include "xmalloc.h"

#define DICT_DEPTH 16
#define DICT_MMC_ENTRIES 100000
#define DICT_LZ_ENTRIES 65536
#define DICT_NONE UINT32_MAX
/* MultiMMC's entries are fetched this many positions ahead. */
#define DICT_AHEAD 16
/* The filter that answers most misses from cache: 2^17 bits (16 KiB) a length. */
#define DICT_FILTER_BITS 17

/* A prefix: its symbols (the last one in the top byte of hi), and its
 * best next symbol so far (the commonest, the larger on ties). */
struct dict_prefix {
	uint64_t lo, hi;
	uint32_t best_count;
	uint8_t best;
};

/* A hash slot of a prefix: its index and a few bits of its hash, so a miss
 * is decided without reading the prefix. */
struct dict_slot {
	uint32_t idx;           /* DICT_NONE: empty */
	uint32_t tag;
};

/* A (prefix, next symbol) count; key 0 is an empty slot. */
struct dict_pair {
	uint32_t key;           /* prefix index << 8 | symbol, plus 1 */
	uint32_t count;
};

/*
 * The prefixes of one length and their counts. Single symbols are dense:
 * the symbol is the index, and the counts a 256 x 256 table.
 */
struct dict {
	bool dense;
	struct dict_prefix *prefix;  /* by index */
	uint32_t nprefix, prefix_len;
	struct dict_slot *slot;
	uint64_t slot_mask;
	/* A bit per value of a hash's top DICT_FILTER_BITS: some prefix has it. */
	uint64_t *filter;
	struct dict_pair *pair;
	uint64_t npair, pair_mask;
	uint32_t *counts;            /* dense: [prefix][symbol] */
};

/* Mix a 64-bit value (the finaliser of MurmurHash3). */
static inline uint64_t
dict_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* The hash of a prefix. */
static inline uint64_t
dict_hash(uint64_t lo, uint64_t hi)
{
	return dict_mix(hi ^ dict_mix(lo));
}

/* An empty dictionary of prefixes of one length (single symbols: dense). */
static void
dict_init(struct dict *t, bool dense)
{
	memset(t, 0, sizeof *t);
	t->dense = dense;
	t->prefix_len = 256;
	t->prefix = xcalloc(t->prefix_len, sizeof *t->prefix);
	if (dense) {
		t->counts = xcalloc(256 * 256, sizeof *t->counts);
		return;
	}
	t->filter = xcalloc((UINT64_C(1) << DICT_FILTER_BITS) / 64, sizeof *t->filter);
	t->slot_mask = 511;
	t->slot = xreallocarray(NULL, t->slot_mask + 1, sizeof *t->slot);
	memset(t->slot, 0xff, (t->slot_mask + 1) * sizeof *t->slot);
	t->pair_mask = 1023;
	t->pair = xcalloc(t->pair_mask + 1, sizeof *t->pair);
}

/* Free what dict_init made. */
static void
dict_release(struct dict *t)
{
	free(t->prefix);
	free(t->slot);
	free(t->pair);
	free(t->counts);
	free(t->filter);
}

/* Empty dictionaries, one a prefix length. */
static struct dict *
dict_new(void)
{
	struct dict *d = xcalloc(DICT_DEPTH, sizeof *d);
	unsigned l;

	for (l = 0; l < DICT_DEPTH; l++)
		dict_init(&d[l], l == 0);
	return d;
}

/* Free what dict_new made. */
static void
dict_free(struct dict *d)
{
	unsigned l;

	for (l = 0; l < DICT_DEPTH; l++)
		dict_release(&d[l]);
	free(d);
}

/* The slot of a prefix, or the empty slot where it would go. */
static inline uint64_t
dict_slot(const struct dict *t, uint64_t lo, uint64_t hi)
{
	uint64_t hash = dict_hash(lo, hi), h = hash & t->slot_mask;
	uint32_t tag = (uint32_t)(hash >> 32);
	const struct dict_prefix *p;

	for (;; h = (h + 1) & t->slot_mask) {
		if (t->slot[h].idx == DICT_NONE)
			return h;
		if (t->slot[h].tag != tag)
			continue;
		p = &t->prefix[t->slot[h].idx];
		if (p->hi == hi && p->lo == lo)
			return h;
	}
}

/* A prefix's index, or DICT_NONE. */
static inline uint32_t
dict_find(const struct dict *t, uint64_t lo, uint64_t hi)
{
	uint64_t f;

	if (t->dense)
		return t->prefix[hi >> 56].hi != 0 ? (uint32_t)(hi >> 56) : DICT_NONE;
	f = dict_hash(lo, hi) >> (64 - DICT_FILTER_BITS);
	if (!(t->filter[f / 64] >> (f % 64) & 1))
		return DICT_NONE;
	return t->slot[dict_slot(t, lo, hi)].idx;
}

/* Add a prefix that is not there; its index. */
static uint32_t
dict_add(struct dict *t, uint64_t lo, uint64_t hi)
{
	struct dict_prefix *p;
	uint64_t i, h;

	if (t->dense) {
		/* hi marks it there: a 1 below the symbol's byte. */
		t->prefix[hi >> 56].hi = hi | 1;
		return (uint32_t)(hi >> 56);
	}
	if (4 * ((uint64_t)t->nprefix + 1) > 3 * (t->slot_mask + 1)) {
		t->slot_mask = 2 * t->slot_mask + 1;
		t->slot = xreallocarray(t->slot, t->slot_mask + 1, sizeof *t->slot);
		memset(t->slot, 0xff, (t->slot_mask + 1) * sizeof *t->slot);
		for (i = 0; i < t->nprefix; i++) {
			p = &t->prefix[i];
			h = dict_slot(t, p->lo, p->hi);
			t->slot[h].idx = (uint32_t)i;
			t->slot[h].tag = (uint32_t)(dict_hash(p->lo, p->hi) >> 32);
		}
	}
	if (t->nprefix == t->prefix_len) {
		t->prefix_len *= 2;
		t->prefix = xreallocarray(t->prefix, t->prefix_len, sizeof *t->prefix);
	}
	p = &t->prefix[t->nprefix];
	memset(p, 0, sizeof *p);
	p->lo = lo;
	p->hi = hi;
	h = dict_hash(lo, hi) >> (64 - DICT_FILTER_BITS);
	t->filter[h / 64] |= UINT64_C(1) << (h % 64);
	h = dict_slot(t, lo, hi);
	t->slot[h].idx = t->nprefix;
	t->slot[h].tag = (uint32_t)(dict_hash(lo, hi) >> 32);
	return t->nprefix++;
}

/* The pair slot of key, or the empty one where it would go. */
static inline uint64_t
dict_pair_slot(const struct dict *t, uint32_t key)
{
	uint64_t h = dict_mix(key) & t->pair_mask;

	while (t->pair[h].key != 0 && t->pair[h].key != key)
		h = (h + 1) & t->pair_mask;
	return h;
}

/* Where the count of symbol y after prefix idx is, made if make_new; NULL if not. */
static uint32_t *
dict_pair(struct dict *t, uint32_t idx, uint8_t y, bool make_new, bool *made)
{
	uint32_t key = (idx << 8 | y) + 1;
	struct dict_pair *old;
	uint64_t h, i;

	*made = false;
	if (t->dense) {
		uint32_t *c = &t->counts[idx << 8 | y];

		*made = *c == 0;
		return *c != 0 || make_new ? c : NULL;
	}
	h = dict_pair_slot(t, key);
	if (t->pair[h].key == key)
		return &t->pair[h].count;
	if (!make_new)
		return NULL;
	if (4 * (t->npair + 1) > 3 * (t->pair_mask + 1)) {
		old = t->pair;
		t->pair_mask = 2 * t->pair_mask + 1;
		t->pair = xcalloc(t->pair_mask + 1, sizeof *t->pair);
		for (i = 0; i <= t->pair_mask / 2; i++)
			if (old[i].key != 0)
				t->pair[dict_pair_slot(t, old[i].key)] = old[i];
		free(old);
		h = dict_pair_slot(t, key);
	}
	t->pair[h].key = key;
	t->npair++;
	*made = true;
	return &t->pair[h].count;
}

/*
 * Count symbol y after prefix idx (NIST's incrementPostfix): an existing
 * count always grows; a new one is made only if make_new. True when one
 * was made.
 */
static bool
dict_count(struct dict *t, uint32_t idx, uint8_t y, bool make_new)
{
	struct dict_prefix *p = &t->prefix[idx];
	uint32_t *c, count;
	bool made;

	c = dict_pair(t, idx, y, make_new, &made);
	if (c == NULL)
		return false;
	count = ++*c;
	if (count > p->best_count || (count == p->best_count && y > p->best)) {
		p->best = y;
		p->best_count = count;
	}
	return made;
}

/*
 * The prefix of `length` symbols ending just before i, as a key: the 16
 * symbols before i (from pad, which has 16 zero bytes before the string)
 * with all but the last `length` cleared.
 */
static inline void
dict_key(const uint8_t *pad, uint64_t i, unsigned length, uint64_t *lo, uint64_t *hi)
{
	uint64_t l, h;

	memcpy(&l, pad + i, 8);
	memcpy(&h, pad + i + 8, 8);
	if (length <= 8) {
		*hi = length == 8 ? h : h & ~(UINT64_MAX >> (8 * length));
		*lo = 0;
	} else {
		*hi = h;
		*lo = length == 16 ? l : l & ~(UINT64_MAX >> (8 * (length - 8)));
	}
}

/* The string with 16 zero bytes before it, so every key is two loads. */
static uint8_t *
dict_pad(const uint8_t *s, uint64_t n)
{
	uint8_t *pad = xcalloc(n + 16, 1);

	memcpy(pad + 16, s, n);
	return pad;
}

/* A guess: count it, and its run. */
static inline void
dict_score(struct estimate_prediction *r, uint64_t *run, bool right)
{
	if (right) {
		r->correct++;
		if (++*run > r->run)
			r->run = *run;
	} else
		*run = 0;
}

/*
 * 6.3.9's dictionary of one depth d, over the string's sorted suffixes: a
 * context of d + 1 symbols starting at j is the run of suffixes sharing
 * that many symbols with j's, numbered in sorted order; a (context, next
 * symbol) pair likewise by its run at d + 2. A context's entry is its best
 * count and symbol, as count << 8 | symbol (a larger count wins, then a
 * larger symbol, as in the tool), 0 while not there; a pair's entry is its
 * count, 0 while not there.
 */
struct dict_mmc {
	uint64_t *best;          /* by context */
	uint32_t *count;         /* by pair */
	uint32_t *made;          /* the entries made (to clear them after) */
	size_t nmade, made_len;
};

/*
 * The runs of suffixes sharing some length, 64 ranks a word: a bit set
 * where a run starts (the rank's LCP is shorter), and the starts before
 * the word. A suffix's run is the starts up to its rank, less one: looked
 * up in cache, where numbering every suffix's run would scatter a million
 * numbers a depth, most of them never read past the first few depths.
 */
struct dict_runs {
	uint64_t starts;
	uint64_t before;
};

/* The runs of the suffixes sharing `length` (< 128) symbols, from their LCPs. */
static void
dict_runs_make(struct dict_runs *v, const uint8_t *lcp, uint64_t n, unsigned length)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), high = ones << 7;
	uint64_t before = 0, w, x, lt, bits;
	unsigned b;
	uint8_t tail[8];

	for (w = 0; 64 * w < n; w++) {
		for (bits = 0, b = 0; b < 64 && 64 * w + b < n; b += 8) {
			if (64 * w + b + 8 <= n)
				memcpy(&x, lcp + 64 * w + b, 8);
			else {
				/* Past the end: LCPs of 127, no starts. */
				memset(tail, 127, sizeof tail);
				memcpy(tail, lcp + 64 * w + b, n - 64 * w - b);
				memcpy(&x, tail, 8);
			}
			x = le64toh(x);
			/* The top bit of each byte below `length`, gathered into 8 bits. */
			lt = ~((x | high) - length * ones) & high;
			bits |= ((lt >> 7) * UINT64_C(0x0102040810204080)) >> 56 << b;
		}
		v[w].starts = bits;
		v[w].before = before;
		before += predict_ones(bits);
	}
}

/* The run of the suffix at rank r. */
static inline uint32_t
dict_run(const struct dict_runs *v, uint32_t r)
{
	const struct dict_runs *w = v + (r >> 6);

	return (uint32_t)(w->before +
	    predict_ones(w->starts & (UINT64_MAX >> (63 - (r & 63)))) - 1);
}

/* Note an entry made, to clear it when the depth is done. */
static void
dict_mmc_made(struct dict_mmc *m, uint32_t at)
{
	if (m->nmade == m->made_len) {
		m->made_len = m->made_len == 0 ? 4096 : 2 * m->made_len;
		m->made = xreallocarray(m->made, m->made_len, sizeof *m->made);
	}
	m->made[m->nmade++] = at;
}

/*
 * Count symbol y after a context (its run) in a pair (its run), NIST's
 * incrementPostfix: a pair there always counts; one not there is made
 * only if make_new. True when one was made.
 */
static inline bool
dict_mmc_count(struct dict_mmc *m, uint32_t context, uint32_t pair, uint8_t y, bool make_new)
{
	uint32_t c = m->count[pair];
	uint64_t best;
	bool made = c == 0;

	if (made) {
		if (!make_new)
			return false;
		dict_mmc_made(m, pair);
	}
	m->count[pair] = ++c;
	best = (uint64_t)c << 8 | y;
	if (m->best[context] == 0)
		dict_mmc_made(m, context | UINT32_C(1) << 31);
	if (best > m->best[context])
		m->best[context] = best;
	return made;
}

/* Position i's context and pair at depth d, looked up DICT_AHEAD positions ahead. */
struct dict_ahead {
	uint64_t at;
	uint32_t context, pair;
};

/*
 * 6.3.9. Depth d's guesses and counts depend only on its own dictionary
 * and on whether depth d - 1 found its prefix at the same position (the
 * tool goes deeper only while prefixes are found), so each depth runs over
 * the whole string in turn, one dictionary at a time, leaving which
 * positions it found and guessed right as bits; the scoreboard then runs
 * over those, 64 positions at a time. The dictionaries are tables by the
 * suffixes' runs (struct dict_mmc, struct dict_runs), so a lookup is a
 * rank in cache and two loads.
 */
PREDICT_POPCNT bool
estimate_dict_mmc_order(const uint8_t *s, uint64_t n, unsigned k, const struct estimate_order *o,
    struct estimate_prediction *r)
{
	uint64_t score[DICT_DEPTH] = { 0 }, entries, run = 0, i, words, w, rr;
	uint64_t *right, *found, *prev, rw[DICT_DEPTH], fw[DICT_DEPTH];
	struct dict_ahead ahead[DICT_AHEAD], *a;
	struct dict_runs *contexts, *pairs, *swap;
	uint32_t context, pair, at, *rank;
	unsigned d, winner = 0;
	struct dict_mmc m;
	size_t z;
	bool look;

	memset(r, 0, sizeof *r);
	r->h = -1.0;
	if (n < 3)
		return false;
	r->n = n - 2;
	words = (n + 63) / 64;
	right = xcalloc(DICT_DEPTH * words, sizeof *right);
	found = xcalloc(DICT_DEPTH * words, sizeof *found);
	memset(&m, 0, sizeof m);
	m.best = xcalloc(n, sizeof *m.best);
	m.count = xcalloc(n, sizeof *m.count);
	rank = xreallocarray(NULL, n, sizeof *rank);
	for (rr = 0; rr < n; rr++)
		rank[o->sa[rr]] = (uint32_t)rr;
	contexts = xreallocarray(NULL, words, sizeof *contexts);
	pairs = xreallocarray(NULL, words, sizeof *pairs);
	/* The runs of 1 symbol: the first depth's contexts. */
	dict_runs_make(pairs, o->lcp, n, 1);
	for (d = 0; d < DICT_DEPTH && d < r->n; d++) {
		/* Runs of d + 2 symbols (those of d + 1 are the last depth's). */
		swap = contexts;
		contexts = pairs;
		pairs = swap;
		dict_runs_make(pairs, o->lcp, n, d + 2);
		prev = d > 0 ? found + (d - 1) * words : NULL;
		/* The prefix of the string's start, with the symbol after it. */
		dict_mmc_count(&m, dict_run(contexts, rank[0]), dict_run(pairs, rank[0]), s[d + 1],
		    true);
		entries = 1;
		for (z = 0; z < DICT_AHEAD; z++)
			ahead[z].at = UINT64_MAX;
		for (i = d + 2; i < n; i++) {
			/* Nothing to find and nothing to add for 64 positions: skip them. */
			if (prev != NULL && prev[i / 64] >> (i % 64) == 0 &&
			    entries >= DICT_MMC_ENTRIES) {
				i |= 63;
				continue;
			}
			look = prev == NULL || (prev[i / 64] >> (i % 64) & 1);
			if (!look && entries >= DICT_MMC_ENTRIES)
				continue;
			a = &ahead[i % DICT_AHEAD];
			if (a->at == i) {
				context = a->context;
				pair = a->pair;
			} else {
				context = dict_run(contexts, rank[i - d - 1]);
				pair = dict_run(pairs, rank[i - d - 1]);
			}
			/* The entries a later position will want, on their way into cache. */
			if (i + DICT_AHEAD < n) {
				a->at = i + DICT_AHEAD;
				a->context = dict_run(contexts, rank[a->at - d - 1]);
				a->pair = dict_run(pairs, rank[a->at - d - 1]);
				__builtin_prefetch(&m.best[a->context]);
				__builtin_prefetch(&m.count[a->pair]);
			}
			if (look && m.best[context] != 0) {
				found[d * words + i / 64] |= UINT64_C(1) << (i % 64);
				if ((uint8_t)m.best[context] == s[i])
					right[d * words + i / 64] |= UINT64_C(1) << (i % 64);
				if (dict_mmc_count(&m, context, pair, s[i], entries < DICT_MMC_ENTRIES))
					entries++;
			} else if (entries < DICT_MMC_ENTRIES) {
				/* Not found (or not looked for, as the tool does not
				 * past an unfound depth): find or make the prefix, count,
				 * and call it a new entry either way. */
				dict_mmc_count(&m, context, pair, s[i], true);
				entries++;
			}
		}
		for (z = 0; z < m.nmade; z++) {
			at = m.made[z];
			if (at >> 31)
				m.best[at & ~(UINT32_C(1) << 31)] = 0;
			else
				m.count[at] = 0;
		}
		m.nmade = 0;
	}
	for (w = 0; w < words; w++) {
		for (d = 0; d < DICT_DEPTH; d++) {
			rw[d] = right[d * words + w];
			fw[d] = found[d * words + w];
		}
		estimate_predict_board(score, DICT_DEPTH, &winner, rw, fw,
		    n - 64 * w < 64 ? (unsigned)(n - 64 * w) : 64, r, &run);
	}
	free(contexts);
	free(pairs);
	free(rank);
	free(m.made);
	free(m.count);
	free(m.best);
	free(right);
	free(found);
	r->h = estimate_predictor_formula(r->correct, r->n, r->run, k);
	return true;
}

bool
estimate_dict_mmc(const uint8_t *s, uint64_t n, unsigned k, struct estimate_prediction *r)
{
	struct estimate_order o;
	uint8_t *padded = xcalloc(n + ESTIMATE_TUPLE_PAD_BYTES, 1);
	bool ok;

	/* The sorter reads a few bytes past the end. */
	memcpy(padded, s, n);
	estimate_order(padded, n, 8, &o);
	free(padded);
	ok = estimate_dict_mmc_order(s, n, k, &o, r);
	estimate_order_free(&o);
	return ok;
}

/*
 * 6.3.10. A prefix is added with every shorter one not yet there (longest
 * first), so those of a position that exist are the 1..m shortest, save
 * one added without its parent in the step that filled the dictionary
 * (walked on its own after): each position looks up lengths from 1 until
 * one is missing, instead of all 16 as the tool does.
 */
bool
estimate_dict_lz78y(const uint8_t *s, uint64_t n, unsigned k, struct estimate_prediction *r)
{
	uint64_t size = 0, run = 0, i, lo, hi, max_count, orphan_lo = 0, orphan_hi = 0;
	unsigned j, m, prediction = 0, orphan = 0, nfound;
	uint32_t idx, found[2 * DICT_DEPTH], made, unmade;
	unsigned found_len[2 * DICT_DEPTH];
	struct dict *t;
	uint8_t *pad;
	bool have;

	memset(r, 0, sizeof *r);
	r->h = -1.0;
	if (n < DICT_DEPTH + 2)
		return false;
	pad = dict_pad(s, n);
	t = dict_new();
	r->n = n - DICT_DEPTH - 1;
	/* The prefixes of 1..16 symbols ending at symbol 15, with symbol 16 after. */
	for (j = 1; j <= DICT_DEPTH; j++) {
		dict_key(pad, DICT_DEPTH, j, &lo, &hi);
		dict_count(&t[j - 1], dict_add(&t[j - 1], lo, hi), s[DICT_DEPTH], true);
		size++;
	}
	for (i = DICT_DEPTH + 1; i < n; i++) {
		nfound = 0;
		for (m = 0; m < DICT_DEPTH; m++) {
			dict_key(pad, i, m + 1, &lo, &hi);
			idx = dict_find(&t[m], lo, hi);
			if (idx == DICT_NONE)
				break;
			found_len[nfound] = m + 1;
			found[nfound++] = idx;
		}
		if (orphan != 0) {
			dict_key(pad, i, orphan, &lo, &hi);
			if (lo == orphan_lo && hi == orphan_hi)
				for (j = orphan; j <= DICT_DEPTH; j++) {
					dict_key(pad, i, j, &lo, &hi);
					idx = dict_find(&t[j - 1], lo, hi);
					if (idx == DICT_NONE)
						break;
					found_len[nfound] = j;
					found[nfound++] = idx;
				}
		}
		have = false;
		max_count = 0;
		/* Longest first (found is by length), a larger count to win. */
		for (j = nfound; j-- > 0; ) {
			const struct dict_prefix *p = &t[found_len[j] - 1].prefix[found[j]];

			if (p->best_count > max_count) {
				max_count = p->best_count;
				prediction = p->best;
				have = true;
			}
		}
		for (j = 0; j < nfound; j++)
			dict_count(&t[found_len[j] - 1], found[j], s[i], true);
		/* The lengths m+1..16 are not there: add them, longest first, while there is room. */
		if (m < DICT_DEPTH && size < DICT_LZ_ENTRIES) {
			made = unmade = 0;
			for (j = DICT_DEPTH; j > m; j--) {
				if (size < DICT_LZ_ENTRIES) {
					dict_key(pad, i, j, &lo, &hi);
					dict_count(&t[j - 1], dict_add(&t[j - 1], lo, hi), s[i], true);
					size++;
					made |= 1u << j;
				} else
					unmade |= 1u << j;
			}
			/* Filled in this step: the shortest one added lacks its parent. */
			if (made != 0 && unmade != 0) {
				orphan = (unsigned)__builtin_ctz(made);
				dict_key(pad, i, orphan, &orphan_lo, &orphan_hi);
			}
		}
		dict_score(r, &run, have && prediction == s[i]);
	}
	dict_free(t);
	free(pad);
	r->h = estimate_predictor_formula(r->correct, r->n, r->run, k);
	return true;
}
