/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B's predictors that need no dictionary of strings: MultiMCW
 * (6.3.7) on symbols and on bit strings, Lag (6.3.8) on bit strings, and
 * MultiMMC (6.3.9) and LZ78Y (6.3.10) on bit strings, whose prefixes of up
 * to 16 bits index plain tables as in NIST's tool. Each follows
 * ea_non_iid's order of predicting, scoring and updating, ties included,
 * so its counts are the tool's; what is faster here is how: a bit
 * string's windows are running counts, and its 128 lags are compared 64
 * positions at a time.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "estimate_predict.h"
#include "xmalloc.h"

#define PREDICT_WINDOWS 4
#define PREDICT_LAGS 128
/* MultiMMC: prefixes of 1..16 bits, and at most this many (prefix, next) entries a length. */
#define PREDICT_MMC_DEPTH 16
#define PREDICT_MMC_ENTRIES 100000
/* MultiMMC on bits runs each depth over this many positions at a time. */
#define PREDICT_MMC_CHUNK 4096
/* LZ78Y: prefixes of 1..16 bits, and at most this many in the dictionary. */
#define PREDICT_LZ_DEPTH 16
#define PREDICT_LZ_ENTRIES 65536

static const uint64_t predict_window[PREDICT_WINDOWS] = { 63, 255, 1023, 4095 };

/* A guess: count it, and its run (without branches: right is a coin toss on noise). */
static inline void
predict_score(struct estimate_prediction *r, uint64_t *run, bool right)
{
	r->correct += right;
	*run = (*run + 1) & (UINT64_C(0) - (uint64_t)right);
	r->run = *run > r->run ? *run : r->run;
}

/* The estimate from the counts, for an alphabet of k. */
static bool
predict_finish(struct estimate_prediction *r, unsigned k)
{
	r->h = estimate_predictor_formula(r->correct, r->n, r->run, k);
	return true;
}

/* Start a result: not run until finished. */
static void
predict_start(struct estimate_prediction *r)
{
	memset(r, 0, sizeof *r);
	r->h = -1.0;
}

/*
 * One window of 6.3.7 over symbols. The tool's rules (the newest symbol
 * takes over on reaching the top count; when the most common one leaves,
 * the commonest is found again, the latest seen on ties) keep the symbol
 * with the largest (count, last position). Symbols are kept in lists by
 * count, so that one is found among the few at the top count.
 */
struct predict_window {
	uint64_t width;
	uint32_t count[256];
	uint64_t last[256];
	int16_t next[256], prev[256];   /* the list of symbols of one count; -1 ends */
	int16_t *head;                   /* by count, 0..width + 1 */
	uint32_t top;                    /* the most common's count */
	uint8_t frequent;
};

/* Take symbol v out of its count's list. */
static void
predict_window_unlink(struct predict_window *w, unsigned v)
{
	if (w->prev[v] >= 0)
		w->next[w->prev[v]] = w->next[v];
	else
		w->head[w->count[v]] = w->next[v];
	if (w->next[v] >= 0)
		w->prev[w->next[v]] = w->prev[v];
}

/* Put symbol v in its count's list. */
static void
predict_window_link(struct predict_window *w, unsigned v)
{
	w->prev[v] = -1;
	w->next[v] = w->head[w->count[v]];
	if (w->next[v] >= 0)
		w->prev[w->next[v]] = (int16_t)v;
	w->head[w->count[v]] = (int16_t)v;
}

/* Slide the window: out leaves, in (at position i) comes. */
static void
predict_window_slide(struct predict_window *w, unsigned out, unsigned in, uint64_t i)
{
	uint32_t c;
	int v;

	predict_window_unlink(w, out);
	w->count[out]--;
	predict_window_link(w, out);
	predict_window_unlink(w, in);
	w->count[in]++;
	predict_window_link(w, in);
	w->last[in] = i;
	if (out != w->frequent && w->count[in] >= w->top) {
		w->top = w->count[in];
		w->frequent = (uint8_t)in;
	} else if (out == w->frequent) {
		/* The top count is now top + 1 (in had it too), top or top - 1. */
		for (c = w->top + 1; w->head[c] < 0; c--)
			;
		w->top = c;
		w->frequent = (uint8_t)w->head[c];
		for (v = w->head[c]; v >= 0; v = w->next[v])
			if (w->last[v] > w->last[w->frequent])
				w->frequent = (uint8_t)v;
	}
}

bool
estimate_predict_mcw(const uint8_t *s, uint64_t n, unsigned k, struct estimate_prediction *r)
{
	struct predict_window *win;
	uint64_t score[PREDICT_WINDOWS] = { 0 }, i, run = 0;
	unsigned j, v, winner = 0;

	predict_start(r);
	if (n <= predict_window[PREDICT_WINDOWS - 1])
		return false;
	win = xcalloc(PREDICT_WINDOWS, sizeof *win);
	r->n = n - predict_window[0];
	/* The windows' first contents; ties go to the symbol seen last. */
	for (j = 0; j < PREDICT_WINDOWS; j++) {
		win[j].width = predict_window[j];
		win[j].head = xreallocarray(NULL, predict_window[j] + 2, sizeof *win[j].head);
		memset(win[j].head, 0xff, (predict_window[j] + 2) * sizeof *win[j].head);
		for (i = 0; i < predict_window[j]; i++) {
			if (win[j].top <= ++win[j].count[s[i]]) {
				win[j].top = win[j].count[s[i]];
				win[j].frequent = s[i];
			}
			win[j].last[s[i]] = i;
		}
		for (v = 0; v < 256; v++)
			predict_window_link(&win[j], v);
	}
	for (i = predict_window[0]; i < n; i++) {
		predict_score(r, &run, win[winner].frequent == s[i]);
		for (j = 0; j < PREDICT_WINDOWS; j++)
			if (i >= predict_window[j] && win[j].frequent == s[i] &&
			    ++score[j] >= score[winner])
				winner = j;
		for (j = 0; j < PREDICT_WINDOWS; j++)
			if (i >= predict_window[j])
				predict_window_slide(&win[j], s[i - predict_window[j]], s[i], i);
	}
	for (j = 0; j < PREDICT_WINDOWS; j++)
		free(win[j].head);
	free(win);
	return predict_finish(r, k);
}

/* Ones in a word: the instruction in PREDICT_POPCNT functions on x86, else libgcc's. */
#define predict_ones(v) ((unsigned)__builtin_popcountll(v))
/* A function built twice on x86-64, with POPCNT and without, picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PREDICT_POPCNT __attribute__((target_clones("popcnt", "default")))
#else
#define PREDICT_POPCNT
#endif

/*
 * The tool's scoreboard over a block of up to 64 positions: bit t of
 * right[p] (bit 63 - t if msb_first) is set when predictor p guessed
 * position t right, of found[p] when it guessed at all (NULL: always).
 * The winner's guesses are scored into r; a predictor right at t then
 * takes the lead on reaching the top score, in predictor order. Only
 * predictors whose score plus their right guesses in the block could
 * reach the top are stepped through; the others just add their right
 * guesses.
 */
static inline void
predict_board(uint64_t *score, unsigned np, unsigned *winner, const uint64_t *right,
    const uint64_t *found, unsigned len, bool msb_first, struct estimate_prediction *r,
    uint64_t *run)
{
	unsigned cand[PREDICT_LAGS], ncand = 0, c, p, t, cur, at;
	uint64_t high = score[*winner];

	for (p = 0; p < np; p++)
		if (score[p] + predict_ones(right[p]) >= high)
			cand[ncand++] = p;
	for (t = 0; t < len; t++) {
		cur = *winner;
		at = msb_first ? 63 - t : t;
		if (found == NULL || (found[cur] >> at & 1))
			predict_score(r, run, right[cur] >> at & 1);
		for (c = 0; c < ncand; c++) {
			p = cand[c];
			if ((right[p] >> at & 1) && ++score[p] >= score[*winner])
				*winner = p;
		}
	}
	for (c = 0, p = 0; p < np; p++) {
		if (c < ncand && cand[c] == p) {
			c++;
			continue;
		}
		score[p] += predict_ones(right[p]);
	}
}

PREDICT_POPCNT void
estimate_predict_board(uint64_t *score, unsigned np, unsigned *winner, const uint64_t *right,
    const uint64_t *found, unsigned len, struct estimate_prediction *r, uint64_t *run)
{
	predict_board(score, np, winner, right, found, len, false, r, run);
}

/*
 * 6.3.7 on bits: each window is full and odd once it predicts, so its most
 * common bit (as the tool's counts keep it) is its majority, and a block
 * of 64 guesses is a running count (predict_board scores them).
 */
PREDICT_POPCNT bool
estimate_predict_mcw_bits(const uint8_t *b, uint64_t n, struct estimate_prediction *r)
{
	uint64_t score[PREDICT_WINDOWS] = { 0 }, ones[PREDICT_WINDOWS] = { 0 }, right[PREDICT_WINDOWS];
	uint64_t i, run = 0, o, w, g, bits;
	unsigned j, winner = 0, t, len, guess[PREDICT_WINDOWS], hit;

	predict_start(r);
	if (n <= predict_window[PREDICT_WINDOWS - 1])
		return false;
	r->n = n - predict_window[0];
	for (j = 0; j < PREDICT_WINDOWS; j++)
		for (i = 0; i < predict_window[j]; i++)
			ones[j] += b[i];
	/* Until every window is full, one position at a time. */
	for (i = predict_window[0]; i < predict_window[PREDICT_WINDOWS - 1]; i++) {
		for (j = 0; j < PREDICT_WINDOWS; j++)
			guess[j] = 2 * ones[j] > predict_window[j];
		predict_score(r, &run, guess[winner] == b[i]);
		for (j = 0; j < PREDICT_WINDOWS; j++) {
			if (i < predict_window[j])
				continue;
			hit = guess[j] == b[i];
			if (hit && ++score[j] >= score[winner])
				winner = j;
			ones[j] += (uint64_t)b[i] - b[i - predict_window[j]];
		}
	}
	for (; i < n; i += len) {
		len = n - i < 64 ? (unsigned)(n - i) : 64;
		for (bits = 0, t = 0; t < len; t++)
			bits |= (uint64_t)b[i + t] << t;
		for (j = 0; j < PREDICT_WINDOWS; j++) {
			w = predict_window[j];
			for (o = ones[j], g = 0, t = 0; t < len; t++) {
				g |= (uint64_t)(2 * o > w) << t;
				o += (uint64_t)b[i + t] - b[i + t - w];
			}
			ones[j] = o;
			right[j] = ~(g ^ bits) & (len == 64 ? UINT64_MAX : (UINT64_C(1) << len) - 1);
		}
		predict_board(score, PREDICT_WINDOWS, &winner, right, NULL, len, false, r, &run);
	}
	return predict_finish(r, 2);
}


/* The 64 bits from bit `bit` on, the first at the top (bit >= 0). */
static inline uint64_t
predict_load(const uint8_t *packed, uint64_t bit)
{
	uint64_t x;
	unsigned shift = (unsigned)(bit & 7);

	memcpy(&x, packed + (bit >> 3), sizeof x);
	x = be64toh(x);
	if (shift != 0)
		x = x << shift | packed[(bit >> 3) + 8] >> (8 - shift);
	return x;
}

/* Bit i of a packed string. */
static inline unsigned
predict_bit(const uint8_t *packed, uint64_t i)
{
	return packed[i >> 3] >> (7 - (i & 7)) & 1;
}

/* 6.3.8's step for bit i, one lag at a time (the first PREDICT_LAGS bits). */
static void
predict_lag_one(const uint8_t *p, uint64_t i, uint64_t score[PREDICT_LAGS], uint64_t *high,
    unsigned *winner, struct estimate_prediction *r, uint64_t *run)
{
	unsigned bit = predict_bit(p, i), d;

	predict_score(r, run, predict_bit(p, i - *winner - 1) == bit);
	for (d = 0; d < PREDICT_LAGS && d < i; d++)
		if (predict_bit(p, i - d - 1) == bit && ++score[d] >= *high) {
			*high = score[d];
			*winner = d;
		}
}

/*
 * 6.3.8 on bits, 64 positions at a time: each lag's matches are one word,
 * and only lags that could reach the high score within the block (their
 * score plus their matches) are stepped through position by position;
 * the others just add their matches.
 */
PREDICT_POPCNT bool
estimate_predict_lag_bits(const uint8_t *p, uint64_t n, struct estimate_prediction *r)
{
	uint64_t score[PREDICT_LAGS] = { 0 }, match[PREDICT_LAGS], high = 0, run = 0, i, cur, mask;
	unsigned winner = 0, d, len;

	predict_start(r);
	if (n < 3)
		return false;
	r->n = n - 1;
	for (i = 1; i < n && i < PREDICT_LAGS + 1; i++)
		predict_lag_one(p, i, score, &high, &winner, r, &run);
	for (; i < n; i += len) {
		len = n - i < 64 ? (unsigned)(n - i) : 64;
		mask = len == 64 ? UINT64_MAX : ~(UINT64_MAX >> len);
		/* Bit 63 - t of each lag's word: position i + t. */
		cur = predict_load(p, i);
		for (d = 0; d < PREDICT_LAGS; d++)
			match[d] = ~(cur ^ predict_load(p, i - d - 1)) & mask;
		predict_board(score, PREDICT_LAGS, &winner, match, NULL, len, true, r, &run);
	}
	return predict_finish(r, 2);
}

/* The 2 counts (next bit 0, 1) for the prefix of depth d + 1 bits ending in pattern. */
#define PREDICT_ENTRY(tables, d, pattern) \
	((tables)[d] + (((pattern) & ((UINT32_C(2) << (d)) - 1)) << 1))

/* One table of counts per prefix length: 2^(d+2) for d + 1 bits. */
static uint32_t **
predict_tables(unsigned depth)
{
	uint32_t **t = xcalloc(depth, sizeof *t);
	unsigned d;

	for (d = 0; d < depth; d++)
		t[d] = xcalloc((size_t)1 << (d + 2), sizeof **t);
	return t;
}

/* Free what predict_tables made. */
static void
predict_tables_free(uint32_t **t, unsigned depth)
{
	unsigned d;

	for (d = 0; d < depth; d++)
		free(t[d]);
	free(t);
}

/*
 * One MultiMMC depth over the chunk's positions from + start .. from + len - 1
 * (depth d guesses from position d + 2 on): its guesses' outcomes as bits
 * (right: found and right; found), and its counts. Below the last depth
 * no table can fill (2^(d+2) entries < the limit), so a count only ever
 * grows by one.
 */
static void
predict_mmc_depth(uint32_t *table, unsigned d, const uint8_t *s, const uint32_t *pattern,
    uint64_t from, unsigned start, unsigned len, uint64_t *entries, uint64_t right[],
    uint64_t found[])
{
	uint32_t mask = (UINT32_C(2) << d) - 1, *e, e0, e1, c;
	uint64_t r = 0, f = 0;
	unsigned t, b, guess, seen;

	memset(right, 0, PREDICT_MMC_CHUNK / 8);
	memset(found, 0, PREDICT_MMC_CHUNK / 8);
	for (t = start; t < len; t++) {
		e = table + ((pattern[t] & mask) << 1);
		e0 = e[0];
		e1 = e[1];
		b = s[from + t];
		guess = !(e0 > e1);
		seen = (e0 | e1) != 0;
		r |= (uint64_t)(seen & (guess == b)) << (t & 63);
		f |= (uint64_t)seen << (t & 63);
		if (d + 1 < PREDICT_MMC_DEPTH)
			e[b]++;
		else {
			c = e[b];
			if (c != 0)
				e[b] = c + 1;
			else if (*entries < PREDICT_MMC_ENTRIES) {
				e[b] = 1;
				++*entries;
			}
		}
		if ((t & 63) == 63 || t + 1 == len) {
			right[t / 64] = r;
			found[t / 64] = f;
			r = f = 0;
		}
	}
}

/*
 * 6.3.9 on bits. Each depth's guess is the more common bit after its
 * context (1 on ties), if the context was seen: in the tool the guesses of
 * depth d stop at the first depth whose context is unseen, but a context
 * is only ever counted along with all its shorter ones, so "found" is
 * just "seen" and each depth can run on its own, a chunk at a time. The
 * scoreboard then runs 64 positions at a time, stepping only through the
 * depths that could reach the top score.
 */
PREDICT_POPCNT bool
estimate_predict_mmc_bits(const uint8_t *s, uint64_t n, struct estimate_prediction *r)
{
	uint32_t **dict, pattern = 0, *patterns;
	uint64_t score[PREDICT_MMC_DEPTH] = { 0 }, entries[PREDICT_MMC_DEPTH] = { 0 }, run = 0;
	uint64_t (*right)[PREDICT_MMC_CHUNK / 64], (*found)[PREDICT_MMC_CHUNK / 64];
	uint64_t from;
	unsigned d, winner = 0, len, t, w, start;

	predict_start(r);
	if (n < 4)
		return false;
	dict = predict_tables(PREDICT_MMC_DEPTH);
	patterns = xcalloc(PREDICT_MMC_CHUNK, sizeof *patterns);
	right = xcalloc(PREDICT_MMC_DEPTH, sizeof *right);
	found = xcalloc(PREDICT_MMC_DEPTH, sizeof *found);
	r->n = n - 2;
	/* Each prefix of the first 17 bits, with the bit after it. */
	for (d = 0; d < PREDICT_MMC_DEPTH && d + 1 < n; d++) {
		pattern = pattern << 1 | s[d];
		PREDICT_ENTRY(dict, d, pattern)[s[d + 1]] = 1;
		entries[d] = 1;
	}
	/* pattern: the bits before i, the last in bit 0. */
	pattern = (uint32_t)s[0] << 1 | s[1];
	for (from = 2; from < n; from += len) {
		len = n - from < PREDICT_MMC_CHUNK ? (unsigned)(n - from) : PREDICT_MMC_CHUNK;
		for (t = 0; t < len; t++) {
			patterns[t] = pattern;
			pattern = pattern << 1 | s[from + t];
		}
		for (d = 0; d < PREDICT_MMC_DEPTH; d++) {
			start = from >= d + 2 ? 0 : (unsigned)(d + 2 - from);
			predict_mmc_depth(dict[d], d, s, patterns, from, start < len ? start : len,
			    len, &entries[d], right[d], found[d]);
		}
		/* The scoreboard, 64 positions at a time. */
		for (w = 0; w * 64 < len; w++) {
			uint64_t rw[PREDICT_MMC_DEPTH], fw[PREDICT_MMC_DEPTH];

			for (d = 0; d < PREDICT_MMC_DEPTH; d++) {
				rw[d] = right[d][w];
				fw[d] = found[d][w];
			}
			predict_board(score, PREDICT_MMC_DEPTH, &winner, rw, fw,
			    len - w * 64 < 64 ? len - w * 64 : 64, false, r, &run);
		}
	}
	free(patterns);
	free(right);
	free(found);
	predict_tables_free(dict, PREDICT_MMC_DEPTH);
	return predict_finish(r, 2);
}

/* One LZ78Y context met on a walk: its length, its best count and guess. */
struct predict_lz_seen {
	unsigned length, guess;
	uint32_t best;
};

/*
 * Walk the contexts of lengths from..16 ending before bit i (pattern) while
 * they exist and live: count bit b after each, and note them in seen. A
 * context is dead once both its counts are below its parent's (the one a
 * bit shorter): each is counted whenever it is, so the gaps only grow, its
 * best count stays below its parent's, and neither it nor any longer one
 * can hold LZ78Y's largest count again; their counts no longer matter.
 */
static unsigned
predict_lz_walk(uint32_t **dict, uint32_t pattern, unsigned b, unsigned from,
    struct predict_lz_seen *seen, unsigned nseen)
{
	uint32_t *e, parent0 = 0, parent1 = 0;
	unsigned j;

	for (j = from; j <= PREDICT_LZ_DEPTH; j++) {
		e = PREDICT_ENTRY(dict, j - 1, pattern);
		/* Its counts against its parent's, both before this bit. */
		if ((e[0] | e[1]) == 0 || (j > from && e[0] < parent0 && e[1] < parent1))
			break;
		seen[nseen].length = j;
		seen[nseen].guess = !(e[0] > e[1]);
		seen[nseen].best = e[seen[nseen].guess];
		nseen++;
		parent0 = e[0];
		parent1 = e[1];
		e[b]++;
	}
	return nseen;
}

/*
 * 6.3.10 on bits. A context is added with every shorter one that is not
 * there yet (longest first: the step that fills the dictionary may add
 * one without its parent, walked on its own after), so a bit's contexts
 * that exist are those of lengths 1..m, and the 16-bit one tells at once
 * whether any must be added. Each bit walks up from the 1-bit context
 * while contexts exist and live (predict_lz_walk); the guess is the one of
 * the largest best count, the longer context on ties, as the tool picks.
 */
bool
estimate_predict_lz78y_bits(const uint8_t *s, uint64_t n, struct estimate_prediction *r)
{
	struct predict_lz_seen seen[2 * PREDICT_LZ_DEPTH];
	uint32_t **dict, *e, pattern = 0, max_count, orphan_pattern = 0;
	uint64_t entries = 0, run = 0, i;
	unsigned j, m, prediction = 0, nseen, orphan = 0, made, unmade, k;
	bool have;

	predict_start(r);
	if (n <= PREDICT_LZ_DEPTH + 2)
		return false;
	dict = predict_tables(PREDICT_LZ_DEPTH);
	r->n = n - PREDICT_LZ_DEPTH - 1;
	/* The prefixes of 1..16 bits ending at bit 15, with bit 16 after them. */
	for (j = 0; j < PREDICT_LZ_DEPTH; j++)
		pattern = pattern << 1 | s[j];
	for (j = 0; j < PREDICT_LZ_DEPTH; j++) {
		PREDICT_ENTRY(dict, j, pattern)[s[PREDICT_LZ_DEPTH]] = 1;
		entries++;
	}
	pattern = pattern << 1 | s[PREDICT_LZ_DEPTH];
	for (i = PREDICT_LZ_DEPTH + 1; i < n; i++) {
		nseen = predict_lz_walk(dict, pattern, s[i], 1, seen, 0);
		if (orphan != 0 && (pattern & ((UINT32_C(2) << (orphan - 1)) - 1)) == orphan_pattern)
			nseen = predict_lz_walk(dict, pattern, s[i], orphan, seen, nseen);
		e = PREDICT_ENTRY(dict, PREDICT_LZ_DEPTH - 1, pattern);
		if (entries < PREDICT_LZ_ENTRIES && (e[0] | e[1]) == 0) {
			/* Add the contexts not there, longest first, while there is room. */
			for (m = PREDICT_LZ_DEPTH - 1; m > 0; m--) {
				e = PREDICT_ENTRY(dict, m - 1, pattern);
				if ((e[0] | e[1]) != 0)
					break;
			}
			made = unmade = 0;
			for (j = PREDICT_LZ_DEPTH; j > m; j--) {
				if (entries < PREDICT_LZ_ENTRIES) {
					PREDICT_ENTRY(dict, j - 1, pattern)[s[i]] = 1;
					entries++;
					made |= 1u << j;
				} else
					unmade |= 1u << j;
			}
			/* The shortest one added then lacks its parent. */
			if (unmade != 0 && made != 0) {
				orphan = (unsigned)__builtin_ctz(made);
				orphan_pattern = pattern & ((UINT32_C(2) << (orphan - 1)) - 1);
			}
		}
		have = false;
		max_count = 0;
		/* Longest first (seen is by length), a larger count to win. */
		for (k = nseen; k-- > 0; )
			if (seen[k].best > max_count) {
				max_count = seen[k].best;
				prediction = seen[k].guess;
				have = true;
			}
		predict_score(r, &run, have && prediction == s[i]);
		pattern = pattern << 1 | s[i];
	}
	predict_tables_free(dict, PREDICT_LZ_DEPTH);
	return predict_finish(r, 2);
}
