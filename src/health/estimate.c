/* SPDX-License-Identifier: MIT */
/*
 * SP 800-90B 6.3 min-entropy estimates kept online over a window of raw
 * samples (MCV, Markov, lag, and collision offline), computed as NIST's
 * ea_non_iid computes them on a file.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "estimate.h"
#include "numeric.h"
#include "xmalloc.h"

static void estimate_drop_oldest(struct estimate *);
static void estimate_collision_bit(struct estimate *, unsigned);
static void estimate_lag_sample(struct estimate *, uint32_t, size_t);

#define ESTIMATE_LN2 0.693147180559945309417232121458176568

void
estimate_init(struct estimate *e, unsigned sample_bits, size_t window, bool bits, bool collision)
{
	memset(e, 0, sizeof *e);
	if (sample_bits < 1)
		sample_bits = 1;
	if (sample_bits > 16)
		sample_bits = 16;
	e->sample_bits = sample_bits;
	e->mask = (UINT32_C(1) << sample_bits) - 1;
	e->window = window;
	e->first_at = ESTIMATE_MIN_SAMPLES;
	e->bits = bits || collision;
	e->lag = e->bits;
	e->collision = collision && window == 0;
}

void
estimate_init_blocks(struct estimate *e, unsigned sample_bits, size_t block)
{
	estimate_init(e, sample_bits, block, false, false);
	e->blocks = true;
}

/* Over blocks: a block is complete; take its figures and start the next. */
static void
estimate_end_block(struct estimate *e)
{
	struct estimate_result r;

	/* Of the blocks that ended since the last refresh, keep the poorest. */
	if (estimate_compute(e, &r) && !(e->fresh && e->last.min <= r.min)) {
		e->last = r;
		e->have_last = true;
		e->fresh = true;
		e->last_at = e->total;
	}
	memset(e->counts, 0, ((size_t)e->mask + 1) * sizeof *e->counts);
	e->n = 0;
}

void
estimate_free(struct estimate *e)
{
	if (e->ring != NULL)
		explicit_bzero(e->ring, e->window * (e->sample_bits > 8 ? 2 : 1));
	free(e->ring);
	free(e->counts);
	free(e->lag_hit);
	free(e->bit_table);
	e->ring = NULL;
	e->counts = NULL;
	e->lag_hit = NULL;
	e->bit_table = NULL;
	estimate_reset(e);
}

void
estimate_reset(struct estimate *e)
{
	if (e->counts != NULL)
		memset(e->counts, 0, ((size_t)e->mask + 1) * sizeof *e->counts);
	e->head = 0;
	e->n = 0;
	e->total = 0;
	e->zeros = 0;
	memset(e->pairs, 0, sizeof e->pairs);
	e->newest = 0;
	e->col_held = 0;
	e->col_groups = e->col_sum = e->col_sum_sq = 0;
	memset(e->lag_hist, 0, sizeof e->lag_hist);
	memset(e->lag_hist8, 0, sizeof e->lag_hist8);
	e->lag_pos = 0;
	memset(e->lag_score, 0, sizeof e->lag_score);
	e->lag_winner = 0;
	e->lag_high = 0;
	if (e->lag_hit != NULL)
		memset(e->lag_hit, 0, (e->window + 63) / 64 * sizeof *e->lag_hit);
	e->lag_hits = e->lag_run = e->lag_max_run = 0;
	e->have_last = false;
	e->fresh = false;
	e->last_at = 0;
}

/* Ones in a 32-bit word (SWAR: no libgcc call on CPUs built without POPCNT). */
static inline unsigned
estimate_ones(uint32_t v)
{
	v = v - (v >> 1 & 0x55555555u);
	v = (v & 0x33333333u) + (v >> 2 & 0x33333333u);
	return (unsigned)(((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u >> 24);
}

/*
 * The bits of a sample of b bits, most significant first: its zeros and
 * its inner adjacent pairs 00, 01, 10, 11 into t (from the table built for
 * widths up to 8, else counted).
 */
static inline void
estimate_sample_bits(const struct estimate *e, uint32_t v, uint8_t t[5])
{
	unsigned b = e->sample_bits;
	uint32_t m, hi, lo;

	if (e->bit_table != NULL) {
		memcpy(t, e->bit_table[v], 5);
		return;
	}
	m = (UINT32_C(1) << (b - 1)) - 1;
	hi = v >> 1;
	lo = v;
	t[0] = (uint8_t)(b - estimate_ones(v));
	t[4] = (uint8_t)estimate_ones(hi & lo & m);
	t[3] = (uint8_t)estimate_ones(hi & ~lo & m);
	t[2] = (uint8_t)estimate_ones(~hi & lo & m);
	t[1] = (uint8_t)(b - 1 - t[2] - t[3] - t[4]);
}

/* The table of estimate_sample_bits for widths up to 8. */
static void
estimate_build_bit_table(struct estimate *e)
{
	uint32_t v;

	if (e->sample_bits > 8)
		return;
	e->bit_table = xcalloc((size_t)e->mask + 1, sizeof *e->bit_table);
	for (v = 0; v <= e->mask; v++) {
		uint8_t t[5];
		uint8_t (*table)[5] = e->bit_table;

		e->bit_table = NULL;
		estimate_sample_bits(e, v, t);
		e->bit_table = table;
		memcpy(e->bit_table[v], t, 5);
	}
}

/* The pair index of two bits, the earlier one first. */
static inline unsigned
estimate_pair(unsigned earlier, unsigned later)
{
	return earlier << 1 | later;
}

/* The window is full: take its oldest sample out of every count. */
static void
estimate_drop_oldest(struct estimate *e)
{
	unsigned b = e->sample_bits;
	uint8_t t[5];
	uint32_t u;

	if (b > 8)
		u = ((uint16_t *)e->ring)[e->head];
	else
		u = ((uint8_t *)e->ring)[e->head];
	if (e->lag_hit != NULL && (e->lag_hit[e->head / 64] >> (e->head % 64) & 1)) {
		e->lag_hit[e->head / 64] &= ~(UINT64_C(1) << (e->head % 64));
		e->lag_hits--;
	}
	if (++e->head == e->window)
		e->head = 0;
	e->n--;
	e->counts[u]--;
	if (!e->bits)
		return;
	estimate_sample_bits(e, u, t);
	e->zeros -= t[0];
	e->pairs[0] -= t[1];
	e->pairs[1] -= t[2];
	e->pairs[2] -= t[3];
	e->pairs[3] -= t[4];
	if (e->n > 0) {
		uint32_t next = b > 8 ? ((uint16_t *)e->ring)[e->head] :
		    ((uint8_t *)e->ring)[e->head];

		e->pairs[estimate_pair(u & 1, next >> (b - 1) & 1)]--;
	}
}

/* One bit into the collision groups (2 bits when they are equal, else 3). */
static void
estimate_collision_bit(struct estimate *e, unsigned bit)
{
	unsigned t;

	if (e->col_held == 0) {
		e->col_first = bit;
		e->col_held = 1;
		return;
	}
	if (e->col_held == 1 && bit != e->col_first) {
		e->col_held = 2;
		return;
	}
	t = e->col_held + 1;
	e->col_held = 0;
	e->col_groups++;
	e->col_sum += t;
	e->col_sum_sq += t * t;
}

/*
 * Which of the last ESTIMATE_LAG_DEPTH samples equal s, as bits (bit d: the
 * sample d + 1 back), and whether the winning lag's was one. The history is
 * kept newest first and twice over, so the last ESTIMATE_LAG_DEPTH are in a
 * row: 16 byte compares with SSE2 for samples of up to 8 bits.
 */
static bool
estimate_lag_matches(const struct estimate *e, uint32_t s, uint64_t m[ESTIMATE_LAG_DEPTH / 64])
{
	unsigned d;

	if (e->sample_bits > 8) {
		const uint16_t *h = &e->lag_hist[e->lag_pos];

		memset(m, 0, ESTIMATE_LAG_DEPTH / 8);
		for (d = 0; d < ESTIMATE_LAG_DEPTH; d++)
			m[d / 64] |= (uint64_t)(h[d] == (uint16_t)s) << (d % 64);
		return h[e->lag_winner] == (uint16_t)s;
	} else {
		const uint8_t *h = &e->lag_hist8[e->lag_pos];
#ifdef __SSE2__
		__m128i want = _mm_set1_epi8((char)s);
		unsigned w;

		for (w = 0; w < ESTIMATE_LAG_DEPTH / 64; w++) {
			uint64_t bits = 0;

			for (d = 0; d < 64; d += 16) {
				__m128i got = _mm_loadu_si128((const __m128i *)(const void *)
				    (h + 64 * w + d));

				bits |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(got,
				    want)) << d;
			}
			m[w] = bits;
		}
#else
		memset(m, 0, ESTIMATE_LAG_DEPTH / 8);
		for (d = 0; d < ESTIMATE_LAG_DEPTH; d++)
			m[d / 64] |= (uint64_t)(h[d] == (uint8_t)s) << (d % 64);
#endif
		return h[e->lag_winner] == (uint8_t)s;
	}
}

/*
 * 6.3.8 for one sample, before it joins the history: was it the winning
 * lag's guess (a hit, recorded at ring position at), then score every lag
 * that would have guessed it, ties going to the longer lag, as ea_non_iid
 * scores them.
 */
static void
estimate_lag_sample(struct estimate *e, uint32_t s, size_t at)
{
	const unsigned depth = ESTIMATE_LAG_DEPTH;
	uint64_t m[ESTIMATE_LAG_DEPTH / 64];
	unsigned seen, d, w;
	bool hit;

	if (e->total > 0) {
		hit = estimate_lag_matches(e, s, m);
		seen = e->total < depth ? (unsigned)e->total : depth;
		for (w = 0; w < depth / 64; w++) {
			/* Each lag that would have guessed it, shortest first (ties go to the longer). */
			while (m[w] != 0) {
				d = 64 * w + (unsigned)__builtin_ctzll(m[w]);
				m[w] &= m[w] - 1;
				if (d >= seen)
					break;
				if (++e->lag_score[d] >= e->lag_high) {
					e->lag_high = e->lag_score[d];
					e->lag_winner = d;
				}
			}
		}
		if (hit) {
			e->lag_hits++;
			if (e->lag_hit != NULL)
				e->lag_hit[at / 64] |= UINT64_C(1) << (at % 64);
			if (++e->lag_run > e->lag_max_run)
				e->lag_max_run = e->lag_run;
		} else
			e->lag_run = 0;
	}
	e->lag_pos = (e->lag_pos + depth - 1) % depth;
	if (e->sample_bits > 8)
		e->lag_hist[e->lag_pos] = e->lag_hist[e->lag_pos + depth] = (uint16_t)s;
	else
		e->lag_hist8[e->lag_pos] = e->lag_hist8[e->lag_pos + depth] = (uint8_t)s;
}

/*
 * The longest run of hits among the window's samples, oldest first: the hit
 * bits a word at a time (ring order is bit order), counting the ones that
 * end and start each word.
 */
static uint64_t
estimate_lag_window_run(const struct estimate *e)
{
	uint64_t run = 0, longest = 0, left = e->n, word;
	size_t at = e->head;
	unsigned take, ones;

	while (left > 0) {
		/* The bits from at to the end of its word, the ring's end, or the window's. */
		take = 64 - (unsigned)(at % 64);
		if (take > e->window - at)
			take = (unsigned)(e->window - at);
		if (take > left)
			take = (unsigned)left;
		word = e->lag_hit[at / 64] >> (at % 64);
		if (take < 64)
			word &= (UINT64_C(1) << take) - 1;
		if (take == 64 && word == UINT64_MAX)
			run += 64;
		else {
			/* The run going on continues through the word's first ones. */
			ones = (unsigned)__builtin_ctzll(~word);
			run += ones;
			if (run > longest)
				longest = run;
			/* Runs wholly inside the word. */
			word >>= ones;
			while (word != 0) {
				word >>= __builtin_ctzll(word);
				ones = word == UINT64_MAX ? 64 : (unsigned)__builtin_ctzll(~word);
				if (ones > longest)
					longest = ones;
				run = ones;
				word = ones == 64 ? 0 : word >> ones;
			}
			/* A run still going at the word's end goes on in the next. */
			if (!(e->lag_hit[at / 64] >> (at % 64 + take - 1) & 1))
				run = 0;
		}
		if (run > longest)
			longest = run;
		at += take;
		if (at == e->window)
			at = 0;
		left -= take;
	}
	return longest;
}

void
estimate_sample(struct estimate *e, uint32_t s)
{
	unsigned b = e->sample_bits;
	size_t at;

	s &= e->mask;
	if (e->blocks) {
		if (e->counts == NULL)
			e->counts = xcalloc((size_t)e->mask + 1, sizeof *e->counts);
		e->counts[s]++;
		e->total++;
		if (++e->n == e->window)
			estimate_end_block(e);
		return;
	}
	if (e->counts == NULL) {
		e->counts = xcalloc((size_t)e->mask + 1, sizeof *e->counts);
		if (e->window > 0)
			e->ring = xcalloc(e->window, b > 8 ? 2 : 1);
		if (e->window > 0 && e->lag)
			e->lag_hit = xcalloc((e->window + 63) / 64, sizeof *e->lag_hit);
		if (e->bits)
			estimate_build_bit_table(e);
	}
	if (e->window > 0 && e->n == e->window)
		estimate_drop_oldest(e);
	at = e->head + (size_t)e->n;
	if (e->window > 0 && at >= e->window)
		at -= e->window;
	if (e->lag)
		estimate_lag_sample(e, s, at);
	if (e->bits) {
		uint8_t t[5];

		if (e->n > 0)
			e->pairs[estimate_pair(e->newest & 1, s >> (b - 1) & 1)]++;
		estimate_sample_bits(e, s, t);
		e->zeros += t[0];
		e->pairs[0] += t[1];
		e->pairs[1] += t[2];
		e->pairs[2] += t[3];
		e->pairs[3] += t[4];
	}
	if (e->collision) {
		int i;

		for (i = (int)b - 1; i >= 0; i--)
			estimate_collision_bit(e, s >> i & 1);
	}
	if (e->window > 0) {
		if (b > 8)
			((uint16_t *)e->ring)[at] = (uint16_t)s;
		else
			((uint8_t *)e->ring)[at] = (uint8_t)s;
	}
	e->counts[s]++;
	e->n++;
	e->total++;
	e->newest = s;
}

void
estimate_bytes(struct estimate *e, const uint8_t *buf, size_t len)
{
	size_t i, n;

	if (!e->blocks || e->sample_bits != 8) {
		for (i = 0; i < len; i++)
			estimate_sample(e, buf[i]);
		return;
	}
	/* Blocks of bytes: a count per byte, the figures at each block's end. */
	if (e->counts == NULL)
		e->counts = xcalloc(256, sizeof *e->counts);
	while (len > 0) {
		n = e->window - (size_t)e->n;
		if (n > len)
			n = len;
		for (i = 0; i < n; i++)
			e->counts[buf[i]]++;
		e->n += n;
		e->total += n;
		buf += n;
		len -= n;
		if (e->n == e->window)
			estimate_end_block(e);
	}
}

double
estimate_mcv_formula(uint64_t mode, uint64_t n)
{
	double p, pu;

	if (n < 2)
		return 0.0;
	p = (double)mode / (double)n;
	pu = p + ESTIMATE_ZALPHA * numeric_sqrt(p * (1.0 - p) / ((double)n - 1.0));
	/* p_u = 1 is no entropy: 0, not -0. */
	return pu >= 1.0 ? 0.0 : -numeric_log2(pu);
}

/* One of 6.3.3's 128-bit sequences: -log2 of its probability, if all its steps can happen. */
static void
estimate_markov_sequence(double *h_min, double p_first, double p_a, double n_a, double p_b,
    double n_b)
{
	double h;

	if (!(p_a > 0.0) || (n_b > 0 && !(p_b > 0.0)))
		return;
	h = -numeric_log2(p_first) - n_a * numeric_log2(p_a);
	if (n_b > 0)
		h -= n_b * numeric_log2(p_b);
	if (h < *h_min)
		*h_min = h;
}

double
estimate_markov_formula(const uint64_t pairs[4], uint64_t zeros, uint64_t n)
{
	uint64_t c0 = pairs[0] + pairs[1], c1 = pairs[2] + pairs[3];
	double p00 = 0, p01 = 0, p10 = 0, p11 = 0, p0, p1, h_min = 128.0;

	if (n < 2)
		return 0.0;
	if (c0 > 0) {
		p00 = (double)pairs[0] / (double)c0;
		p01 = 1.0 - p00;
	}
	if (c1 > 0) {
		p10 = (double)pairs[2] / (double)c1;
		p11 = 1.0 - p10;
	}
	p0 = (double)zeros / (double)n;
	p1 = 1.0 - p0;
	/* The six most likely 128-bit sequences, as ea_non_iid walks them. */
	estimate_markov_sequence(&h_min, p0, p00, 127, 0, 0);   /* 00...0 */
	estimate_markov_sequence(&h_min, p0, p01, 64, p10, 63); /* 0101...01 */
	estimate_markov_sequence(&h_min, p0, p01, 1, p11, 126); /* 011...1 */
	estimate_markov_sequence(&h_min, p1, p10, 1, p00, 126); /* 100...0 */
	estimate_markov_sequence(&h_min, p1, p10, 64, p01, 63); /* 1010...10 */
	estimate_markov_sequence(&h_min, p1, p11, 127, 0, 0);   /* 11...1 */
	return h_min <= 0.0 ? 0.0 : h_min / 128.0 < 1.0 ? h_min / 128.0 : 1.0;
}

double
estimate_collision_formula(uint64_t groups, uint64_t sum, uint64_t sum_sq)
{
	double x, s, p;

	if (groups < 2)
		return 0.0;
	x = (double)sum / (double)groups;
	s = numeric_sqrt(((double)sum_sq - (double)sum * x) / (double)(groups - 1));
	x -= ESTIMATE_ZALPHA * s / numeric_sqrt((double)groups);
	if (x < 2.0)
		x = 2.0;
	/* 90B's step 7 reduces to x = -2p^2 + 2p + 2; the root above 1/2, if real. */
	if (x >= 2.5)
		return 1.0;
	p = 0.5 + numeric_sqrt(1.25 - 0.5 * x);
	return -numeric_log2(p);
}

/*
 * 6.3.7 step 8's function of p for a longest run r - 1 in n predictions:
 * ln of the probability that no run of r hits occurs, less ln 0.99.
 */
static double
estimate_run_function(double p, double r, double n)
{
	double q = 1.0 - p, x = 1.0, last = 0.0, lp = numeric_log2(p);
	int i;

	/* x = 1 + q p^r x^(r+1), iterated up from 1 (it stays below 1/p). */
	for (i = 0; i <= 65 && x - last > 1e-15 * x; i++) {
		last = x;
		x = 1.0 + q * numeric_exp2(r * lp + (r + 1.0) * numeric_log2(x));
	}
	return (numeric_log2(1.0 - p * x) - numeric_log2((r + 1.0 - r * x) * q) -
	    (n + 1.0) * numeric_log2(x)) * ESTIMATE_LN2 - numeric_log2(0.99) * ESTIMATE_LN2;
}

double
estimate_predictor_formula(uint64_t hits, uint64_t n, uint64_t run, uint64_t k)
{
	double p_max, pg, lo, hi, mid, r = (double)run + 1.0;
	int i;

	if (n < 2 || k < 1)
		return 0.0;
	p_max = 1.0 / (double)k;
	pg = (double)hits / (double)n;
	if (pg > 0.0) {
		pg += ESTIMATE_ZALPHA * numeric_sqrt(pg * (1.0 - pg) / ((double)n - 1.0));
		if (pg > 1.0)
			pg = 1.0;
	} else
		pg = 1.0 - numeric_exp2(numeric_log2(0.01) / (double)n);
	if (pg > p_max)
		p_max = pg;
	/* P_local: the p for which a run that long has a 1 % chance, when above. */
	if (p_max < 1.0 && estimate_run_function(p_max, r, (double)n) > 0.0) {
		lo = p_max;
		hi = 1.0;
		for (i = 0; i < 100 && hi - lo > 1e-12 * hi; i++) {
			mid = 0.5 * (lo + hi);
			if (mid >= 1.0 || estimate_run_function(mid, r, (double)n) <= 0.0)
				hi = mid;
			else
				lo = mid;
		}
		p_max = hi;
	}
	return p_max >= 1.0 ? 0.0 : -numeric_log2(p_max);
}

bool
estimate_compute(const struct estimate *e, struct estimate_result *r)
{
	uint64_t mode = 0, nbits, distinct = 0;
	double per_bit;
	size_t v;

	if (e->n < ESTIMATE_MIN_SAMPLES || e->counts == NULL)
		return false;
	for (v = 0; v <= e->mask; v++) {
		if (e->counts[v] > mode)
			mode = e->counts[v];
		distinct += e->counts[v] > 0;
	}
	memset(r, 0, sizeof *r);
	r->samples = e->n;
	r->sample_bits = e->sample_bits;
	r->mode = mode;
	r->mcv = estimate_mcv_formula(mode, e->n);
	r->min = r->mcv;
	r->mcv_bits = r->markov_bits = r->collision_bits = r->markov = r->lag = -1.0;
	if (e->lag) {
		/* The very first sample was guessed by nothing. */
		uint64_t guesses = e->total > e->n ? e->n : e->n - 1;

		r->lag_hits = e->lag_hits;
		r->lag_run = e->lag_hit != NULL ? estimate_lag_window_run(e) : e->lag_max_run;
		r->lag = estimate_predictor_formula(e->lag_hits, guesses, r->lag_run, distinct);
		if (r->lag < r->min)
			r->min = r->lag;
	}
	if (!e->bits)
		return true;
	nbits = e->n * e->sample_bits;
	r->mcv_bits = estimate_mcv_formula(e->zeros > nbits - e->zeros ? e->zeros :
	    nbits - e->zeros, nbits);
	r->markov_bits = estimate_markov_formula(e->pairs, e->zeros, nbits);
	r->markov = r->markov_bits * e->sample_bits;
	per_bit = r->mcv_bits < r->markov_bits ? r->mcv_bits : r->markov_bits;
	if (e->collision) {
		r->collision_bits = estimate_collision_formula(e->col_groups, e->col_sum,
		    e->col_sum_sq);
		if (r->collision_bits < per_bit)
			per_bit = r->collision_bits;
	}
	if (per_bit * e->sample_bits < r->min)
		r->min = per_bit * e->sample_bits;
	return true;
}

bool
estimate_refresh(struct estimate *e)
{
	uint64_t step = e->window > 0 ? e->window / ESTIMATE_REFRESH_DIVISOR : 0;

	if (e->blocks) {
		bool fresh = e->fresh;

		e->fresh = false;
		return fresh;
	}
	if (step < ESTIMATE_MIN_SAMPLES)
		step = ESTIMATE_MIN_SAMPLES;
	if (e->n < ESTIMATE_MIN_SAMPLES || (!e->have_last && e->n < e->first_at) ||
	    (e->have_last && e->total - e->last_at < step))
		return false;
	if (!estimate_compute(e, &e->last))
		return false;
	e->have_last = true;
	e->last_at = e->total;
	return true;
}

double
estimate_credit_target(double claim, double estimate, bool raw)
{
	if (!(estimate >= 0.0))
		estimate = 0.0;
	if (raw)
		return estimate >= ESTIMATE_RAW_MARGIN * claim ? claim :
		    estimate / ESTIMATE_RAW_MARGIN;
	return estimate >= ESTIMATE_BYTE_KEEP * claim ? claim : estimate < claim ? estimate : claim;
}

double
estimate_next_credit(double credit, double target)
{
	return target < credit ? target * ESTIMATE_HEADROOM : credit;
}
