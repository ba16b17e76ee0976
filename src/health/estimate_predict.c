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
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "estimate_predict.h"
#include "packed.h"
#include "xmalloc.h"

#define PREDICT_WINDOWS 4
#define PREDICT_LAGS 128
/* MultiMMC: prefixes of 1..16 bits, and at most this many (prefix, next) entries a length. */
#define PREDICT_MMC_DEPTH 16
#define PREDICT_MMC_ENTRIES 100000
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
 * One window of 6.3.7 over symbols: each symbol's count and last
 * position, and the most common one (frequent, of count top) as the
 * tool keeps it.
 */
struct predict_window {
	uint16_t count[256] __attribute__((aligned(16)));
	uint64_t last[256];
	uint64_t width;
	uint32_t top;
	uint8_t frequent;
};

/*
 * Of the symbols of count c, the last seen, if seen at `from` or later:
 * into frequent; false if there is none.
 */
static bool
predict_window_last(struct predict_window *w, unsigned c, uint64_t from)
{
	uint64_t at_c;
	unsigned v, q;
	bool found = false;

	/* The symbols of that count, 64 at a time. */
	for (q = 0; q < 256; q += 64) {
#ifdef __SSE2__
		const __m128i *cv = (const __m128i *)(const void *)(w->count + q);
		__m128i t = _mm_set1_epi16((short)c);
		unsigned j;

		/* A byte per count (both halves of each 16-bit lane set when equal). */
		for (at_c = 0, j = 0; j < 8; j += 2)
			at_c |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_packs_epi16(
			    _mm_cmpeq_epi16(_mm_load_si128(cv + j), t),
			    _mm_cmpeq_epi16(_mm_load_si128(cv + j + 1), t))) << (8 * j);
#else
		for (at_c = 0, v = 0; v < 64; v++)
			at_c |= (uint64_t)(w->count[q + v] == c) << v;
#endif
		for (; at_c != 0; at_c &= at_c - 1) {
			v = q + (unsigned)__builtin_ctzll(at_c);
			if (w->last[v] >= from) {
				from = w->last[v];
				w->frequent = (uint8_t)v;
				found = true;
			}
		}
	}
	return found;
}

/*
 * The tool's search for the most common symbol when it leaves (the one
 * that came, in, counted; the leaving one at position at): from (top - 1,
 * at), the symbol of the largest count, and of those the last seen; none
 * found past that start, frequent stays. The count is top + 1 only if in
 * has it, else top if some symbol still has it, else top - 1.
 */
static void
predict_window_search(struct predict_window *w, unsigned in, uint64_t at)
{
	if (w->count[in] == w->top + 1) {
		w->frequent = (uint8_t)in;
		w->top++;
	} else if (!predict_window_last(w, w->top, 0)) {
		predict_window_last(w, w->top - 1, at);
		w->top--;
	}
}

/* Slide the window: out leaves, in (at position i) comes. */
static inline void
predict_window_slide(struct predict_window *w, unsigned out, unsigned in, uint64_t i)
{
	w->count[out]--;
	w->count[in]++;
	w->last[in] = i;
	if (out != w->frequent && w->count[in] >= w->top) {
		w->top = w->count[in];
		w->frequent = (uint8_t)in;
	} else if (out == w->frequent && in != out)
		predict_window_search(w, in, i - w->width);
}

bool
estimate_predict_mcw(const uint8_t *s, uint64_t n, unsigned k, struct estimate_prediction *r)
{
	struct predict_window *win;
	uint64_t score[PREDICT_WINDOWS] = { 0 }, i, run = 0;
	unsigned j, winner = 0;

	predict_start(r);
	if (n <= predict_window[PREDICT_WINDOWS - 1])
		return false;
	win = xcalloc(PREDICT_WINDOWS, sizeof *win);
	r->n = n - predict_window[0];
	/* The windows' first contents; ties go to the symbol seen last. */
	for (j = 0; j < PREDICT_WINDOWS; j++) {
		win[j].width = predict_window[j];
		for (i = 0; i < predict_window[j]; i++) {
			if (win[j].top <= ++win[j].count[s[i]]) {
				win[j].top = win[j].count[s[i]];
				win[j].frequent = s[i];
			}
			win[j].last[s[i]] = i;
		}
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
	free(win);
	return predict_finish(r, k);
}

/*
 * The winner's guesses over a block of len positions scored at once, all
 * of them guesses: right has bit t (bit 63 - t if msb_first) set when
 * position t was guessed right. The run carried in grows by the first
 * right guesses, the longest run within counts, and the last ones carry on.
 */
static inline __attribute__((always_inline)) void
predict_score_word(struct estimate_prediction *r, uint64_t *run, uint64_t right, unsigned len,
    bool msb_first)
{
	uint64_t all = len == 64 ? UINT64_MAX : msb_first ? ~(UINT64_MAX >> len) :
	    (UINT64_C(1) << len) - 1, x = right & all, y;
	unsigned first, last, longest;

	r->correct += predict_ones(x);
	if (x == all) {
		*run += len;
		r->run = *run > r->run ? *run : r->run;
		return;
	}
	/* The wrong guesses bound the runs: the first one ends the run
	 * carried in, the last one starts the run carried out. */
	y = ~x & all;
	if (msb_first) {
		first = (unsigned)__builtin_clzll(y);
		last = (unsigned)__builtin_ctzll(y) - (64 - len);
	} else {
		first = (unsigned)__builtin_ctzll(y);
		last = (unsigned)__builtin_clzll(y) - (64 - len);
	}
	*run += first;
	r->run = *run > r->run ? *run : r->run;
	for (longest = 0, y = x; y != 0; longest++)
		y &= y << 1;
	r->run = longest > r->run ? longest : r->run;
	*run = last;
}

/*
 * The tool's scoreboard over a block of up to 64 positions: bit t of
 * right[p] (bit 63 - t if msb_first) is set when predictor p guessed
 * position t right, of found[p] when it guessed at all (NULL: always).
 * The winner's guesses are scored into r; a predictor right at t then
 * takes the lead on reaching the top score, in predictor order. The top
 * score is the winner's: a predictor can take the lead within the block
 * only if its score, its right guesses where the winner was wrong, and
 * one more reach the winner's score now. Only those (and the winner) are
 * stepped through position by position; the others just add their right
 * guesses, and with none the winner's guesses are scored as a word.
 */
static inline __attribute__((always_inline)) void
predict_board(uint64_t *score, unsigned np, unsigned *winner, const uint64_t *right,
    const uint64_t *found, unsigned len, bool msb_first, struct estimate_prediction *r,
    uint64_t *run)
{
	unsigned cand[PREDICT_LAGS], ones[PREDICT_LAGS], ncand = 0, c, p, t, cur, at;
	uint64_t high = score[*winner], lead = right[*winner], all;

	for (p = 0; p < np; p++) {
		ones[p] = predict_ones(right[p]);
		if (p == *winner || score[p] + predict_ones(right[p] & ~lead) + 1 >= high)
			cand[ncand++] = p;
	}
	all = len == 64 ? UINT64_MAX : msb_first ? ~(UINT64_MAX >> len) : (UINT64_C(1) << len) - 1;
	if (ncand == 1 && (found == NULL || (found[*winner] & all) == all)) {
		predict_score_word(r, run, lead, len, msb_first);
		for (p = 0; p < np; p++)
			score[p] += ones[p];
		return;
	}
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
		score[p] += ones[p];
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

/* The 64 bits from bit i on, i a multiple of 64. */
static inline uint64_t
predict_word(const uint8_t *packed, uint64_t i)
{
	uint64_t x;

	memcpy(&x, packed + i / 8, sizeof x);
	return be64toh(x);
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
	uint64_t prev, prev2;
	unsigned winner = 0, d, len;

	predict_start(r);
	if (n < 3)
		return false;
	r->n = n - 1;
	/* One at a time up to a whole word with two before it. */
	for (i = 1; i < n && i < 3 * 64; i++)
		predict_lag_one(p, i, score, &high, &winner, r, &run);
	for (; i < n; i += len) {
		len = n - i < 64 ? (unsigned)(n - i) : 64;
		mask = len == 64 ? UINT64_MAX : ~(UINT64_MAX >> len);
		/* Bit 63 - t of each lag's word: position i + t; the lagged
		 * words are the three words from i - 128 on, shifted. */
		cur = predict_word(p, i);
		prev = predict_word(p, i - 64);
		prev2 = predict_word(p, i - 128);
		for (d = 0; d < 63; d++)
			match[d] = ~(cur ^ (prev << (63 - d) | cur >> (d + 1))) & mask;
		match[63] = ~(cur ^ prev) & mask;
		for (d = 64; d < 127; d++)
			match[d] = ~(cur ^ (prev2 << (127 - d) | prev >> (d - 63))) & mask;
		match[127] = ~(cur ^ prev2) & mask;
		predict_board(score, PREDICT_LAGS, &winner, match, NULL, len, true, r, &run);
	}
	return predict_finish(r, 2);
}

/* 6.3.8's step for symbol i, one lag at a time (the first PREDICT_LAGS + 1 symbols). */
static void
predict_lag_symbol(const uint8_t *s, uint64_t i, uint64_t score[PREDICT_LAGS], unsigned *winner,
    struct estimate_prediction *r, uint64_t *run)
{
	unsigned d;

	predict_score(r, run, s[i - *winner - 1] == s[i]);
	for (d = 0; d < PREDICT_LAGS && d < i; d++)
		if (s[i - d - 1] == s[i] && ++score[d] >= score[*winner])
			*winner = d;
}

/*
 * 6.3.8 on symbols, as on bits: 64 positions at a time, each lag's
 * matches a word (16 symbols compared at once where SSE2 is).
 */
PREDICT_POPCNT bool
estimate_predict_lag(const uint8_t *s, uint64_t n, unsigned k, struct estimate_prediction *r)
{
	uint64_t score[PREDICT_LAGS] = { 0 }, match[PREDICT_LAGS], run = 0, i, m;
	unsigned winner = 0, d, len, t;

	predict_start(r);
	if (n < 3)
		return false;
	r->n = n - 1;
	for (i = 1; i < n && i < PREDICT_LAGS + 1; i++)
		predict_lag_symbol(s, i, score, &winner, r, &run);
	for (; i < n; i += len) {
		len = n - i < 64 ? (unsigned)(n - i) : 64;
		for (d = 0; d < PREDICT_LAGS; d++) {
#ifdef __SSE2__
			if (len == 64) {
				unsigned q;

				for (m = 0, q = 0; q < 4; q++)
					m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
					    _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16 * q)),
					    _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16 * q -
					    d - 1)))) << (16 * q);
				match[d] = m;
				continue;
			}
#endif
			for (m = 0, t = 0; t < len; t++)
				m |= (uint64_t)(s[i + t] == s[i + t - d - 1]) << t;
			match[d] = m;
		}
		predict_board(score, PREDICT_LAGS, &winner, match, NULL, len, false, r, &run);
	}
	return predict_finish(r, k);
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
 * MultiMMC on bits keeps, for each context of d + 1 bits (d < 16), the
 * difference of its counts as 2 x (ones - zeros) + 1, and 0 while unseen:
 * odd once seen, its sign is the guess (1 on ties), and a count adds +-2.
 * Depth d's table starts at 2^(d+1) - 2. The last depth's (prefix, next
 * bit) pairs are limited in number: made[] holds which are there.
 */
#define PREDICT_MMC_TABLE(d) ((UINT32_C(2) << (d)) - 2)

/* A block's entries as each depth found them, and each position's bit as 0 or all ones. */
struct predict_mmc_block {
	int32_t seen[PREDICT_MMC_DEPTH][64] __attribute__((aligned(16)));
	int32_t neg[64] __attribute__((aligned(16)));
	uint64_t unseen[PREDICT_MMC_DEPTH];
};

/*
 * One depth's step at position t of a block, the context's entry at e,
 * inc what counting the bit adds: note the entry, and an unseen context
 * (no guess), and count the bit if `count` (else the entry stays).
 */
static inline void
predict_mmc_step(struct predict_mmc_block *k, unsigned d, int32_t *e, int32_t inc, unsigned t,
    bool count)
{
	int32_t v = *e;

	k->seen[d][t] = v;
	if (__builtin_expect(v == 0, 0)) {
		k->unseen[d] |= UINT64_C(1) << t;
		v = count;
	}
	*e = v + (inc & -(int32_t)count);
}

/* The last depth's step: the bit counted only if its pair is there or can still be made. */
static inline void
predict_mmc_last(struct predict_mmc_block *k, int32_t *e, uint8_t *made, unsigned b, int32_t inc,
    unsigned t, uint64_t *entries)
{
	unsigned there = *made >> b & 1, can = there | (*entries < PREDICT_MMC_ENTRIES);

	*entries += can & !there;
	*made |= (uint8_t)(can << b);
	predict_mmc_step(k, PREDICT_MMC_DEPTH - 1, e, inc, t, can);
}

/*
 * Each depth's right guesses over a block of len positions, a bit each:
 * the sign of its entry, flipped for a 1 (an entry of 1 or more guesses 1,
 * of -1 or less 0), where the context was seen.
 */
static void
predict_mmc_right(const struct predict_mmc_block *k, unsigned len, uint64_t *right)
{
	uint64_t mask = len == 64 ? UINT64_MAX : (UINT64_C(1) << len) - 1;
	unsigned d, t;

	for (d = 0; d < PREDICT_MMC_DEPTH; d++) {
		uint64_t w = 0;
#ifdef __SSE2__
		const __m128i *v = (const __m128i *)(const void *)k->seen[d];
		const __m128i *g = (const __m128i *)(const void *)k->neg;

		/* Signs of 16 entries at a time, narrowed to bytes and gathered. */
		for (t = 0; t < 16; t += 4)
			w |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_packs_epi16(
			    _mm_packs_epi32(_mm_xor_si128(_mm_load_si128(v + t), _mm_load_si128(g + t)),
			    _mm_xor_si128(_mm_load_si128(v + t + 1), _mm_load_si128(g + t + 1))),
			    _mm_packs_epi32(_mm_xor_si128(_mm_load_si128(v + t + 2), _mm_load_si128(g + t + 2)),
			    _mm_xor_si128(_mm_load_si128(v + t + 3), _mm_load_si128(g + t + 3))))) << (4 * t);
#else
		for (t = 0; t < 64; t++)
			w |= (uint64_t)((uint32_t)(k->seen[d][t] ^ k->neg[t]) >> 31) << t;
#endif
		right[d] = w & ~k->unseen[d] & mask;
	}
}

/*
 * 6.3.9 on bits. Each depth's guess is the more common bit after its
 * context (1 on ties), if the context was seen: in the tool the guesses of
 * depth d stop at the first depth whose context is unseen, but a context
 * is only ever counted along with all its shorter ones, so "found" is
 * just "seen" and each depth runs on its own table. A position steps all
 * 16 depths (independent work the processor overlaps), noting the entries
 * it found; per 64 positions their signs become a word of right guesses
 * per depth, and the scoreboard runs over those, stepping only through
 * the depths that could reach the top score.
 */
PREDICT_POPCNT bool
estimate_predict_mmc_bits(const uint8_t *s, uint64_t n, struct estimate_prediction *r)
{
	uint64_t score[PREDICT_MMC_DEPTH] = { 0 }, right[PREDICT_MMC_DEPTH];
	uint64_t found[PREDICT_MMC_DEPTH], entries = 0, run = 0, i;
	struct predict_mmc_block *k;
	uint32_t pattern = 0;
	unsigned d, winner = 0, len, t, b;
	int32_t *diff, inc;
	uint8_t *made;

	predict_start(r);
	if (n < 4)
		return false;
	diff = xcalloc(PREDICT_MMC_TABLE(PREDICT_MMC_DEPTH), sizeof *diff);
	made = xcalloc((size_t)1 << PREDICT_MMC_DEPTH, 1);
	k = xcalloc(1, sizeof *k);
	r->n = n - 2;
	/* Each prefix of the first 17 bits, with the bit after it. */
	for (d = 0; d < PREDICT_MMC_DEPTH && d + 1 < n; d++) {
		pattern = pattern << 1 | s[d];
		diff[PREDICT_MMC_TABLE(d) + (pattern & ((UINT32_C(2) << d) - 1))] =
		    s[d + 1] ? 3 : -1;
	}
	if (d == PREDICT_MMC_DEPTH) {
		made[pattern & 0xffff] = (uint8_t)(1u << s[PREDICT_MMC_DEPTH]);
		entries = 1;
	}
	/* pattern: the bits before i, the last in bit 0. */
	pattern = (uint32_t)s[0] << 1 | s[1];
	for (i = 2; i < n; i += len) {
		len = n - i < 64 ? (unsigned)(n - i) : 64;
		memset(k->unseen, 0, sizeof k->unseen);
		for (t = 0; t < len; t++) {
			b = s[i + t];
			k->neg[t] = -(int32_t)b;
			inc = 4 * (int32_t)b - 2;
			if (i + t >= PREDICT_MMC_DEPTH + 1) {
#define PREDICT_MMC_STEP(d) predict_mmc_step(k, (d), diff + PREDICT_MMC_TABLE(d) + \
	(pattern & ((UINT32_C(2) << (d)) - 1)), inc, t, true)
				PREDICT_MMC_STEP(0);
				PREDICT_MMC_STEP(1);
				PREDICT_MMC_STEP(2);
				PREDICT_MMC_STEP(3);
				PREDICT_MMC_STEP(4);
				PREDICT_MMC_STEP(5);
				PREDICT_MMC_STEP(6);
				PREDICT_MMC_STEP(7);
				PREDICT_MMC_STEP(8);
				PREDICT_MMC_STEP(9);
				PREDICT_MMC_STEP(10);
				PREDICT_MMC_STEP(11);
				PREDICT_MMC_STEP(12);
				PREDICT_MMC_STEP(13);
				PREDICT_MMC_STEP(14);
#undef PREDICT_MMC_STEP
				predict_mmc_last(k, diff + PREDICT_MMC_TABLE(15) + (pattern & 0xffff),
				    made + (pattern & 0xffff), b, inc, t, &entries);
			} else {
				/* The first positions: depth d guesses from position d + 2 on. */
				for (d = 0; d < PREDICT_MMC_DEPTH; d++) {
					if (d + 1 >= i + t) {
						k->seen[d][t] = 0;
						k->unseen[d] |= UINT64_C(1) << t;
					} else if (d + 1 < PREDICT_MMC_DEPTH)
						predict_mmc_step(k, d, diff + PREDICT_MMC_TABLE(d) +
						    (pattern & ((UINT32_C(2) << d) - 1)), inc, t, true);
					else
						predict_mmc_last(k, diff + PREDICT_MMC_TABLE(d) +
						    (pattern & 0xffff), made + (pattern & 0xffff), b, inc, t,
						    &entries);
				}
			}
			pattern = pattern << 1 | b;
		}
		predict_mmc_right(k, len, right);
		for (d = 0; d < PREDICT_MMC_DEPTH; d++)
			found[d] = ~k->unseen[d];
		predict_board(score, PREDICT_MMC_DEPTH, &winner, right, found, len, false, r, &run);
	}
	free(k);
	free(made);
	free(diff);
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
