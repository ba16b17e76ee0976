/* SPDX-License-Identifier: MIT */
/*
 * entropytest -e's assessment: the ten SP 800-90B 6.3 estimators on the
 * literal samples and on their bit string, in ea_non_iid's order and with
 * its choices (which estimators see which string, which alphabet size each
 * predictor is told), so that every figure is the tool's. The estimators
 * themselves are in the estimate_*.c files.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "estimate.h"
#include "estimate_compress.h"
#include "estimate_predict.h"
#include "estimate_tuple.h"
#include "packed.h"
#include "xmalloc.h"

static const char *const assess_names[ASSESS_TESTS] = {
	[ASSESS_MCV] = "Most Common Value Estimate",
	[ASSESS_COLLISION] = "Collision Test Estimate",
	[ASSESS_MARKOV] = "Markov Test Estimate",
	[ASSESS_COMPRESSION] = "Compression Test Estimate",
	[ASSESS_TUPLE] = "T-Tuple Test Estimate",
	[ASSESS_LRS] = "LRS Test Estimate",
	[ASSESS_MCW] = "Multi Most Common in Window (MultiMCW) Prediction Test Estimate",
	[ASSESS_LAG] = "Lag Prediction Test Estimate",
	[ASSESS_MMC] = "Multi Markov Model with Counting (MultiMMC) Prediction Test Estimate",
	[ASSESS_LZ78Y] = "LZ78Y Prediction Test Estimate",
};

const char *
assess_test_name(enum assess_test t)
{
	return t < ASSESS_TESTS ? assess_names[t] : "?";
}

/* The bit string of n samples of `bits` bits, one a byte, packed most
 * significant first (with the tuple pad). */
static uint8_t *
assess_pack(const uint8_t *samples, uint64_t n, unsigned bits)
{
	uint8_t *packed = xcalloc(n * bits / 8 + ESTIMATE_TUPLE_PAD_BYTES + 1, 1);
	uint64_t i, at;
	unsigned j;

	for (i = 0, at = 0; i < n; i++)
		for (j = bits; j-- > 0; at++)
			packed[at >> 3] |= (uint8_t)((samples[i] >> j & 1) << (7 - (at & 7)));
	return packed;
}

/*
 * 6.3.2's groups a byte of a bit string at a time: for each phase (the
 * bit of the byte the next group starts at: 0, 1 or 2) and the byte with
 * the two bits after it, the groups starting in the byte (2 bits when the
 * first two are equal, else 3), the sum of their squares, and the phase
 * the next byte starts at.
 */
struct assess_groups {
	uint8_t groups, sum_sq, phase;
};

/* Fill a table of assess_groups by phase and 10 bits. */
static void
assess_group_table(struct assess_groups table[3][1024])
{
	unsigned phase, w, p, t;
	struct assess_groups *g;

	memset(table, 0, 3 * sizeof *table);
	for (phase = 0; phase < 3; phase++)
		for (w = 0; w < 1024; w++) {
			g = &table[phase][w];
			for (p = phase; p < 8; p += t) {
				/* Bit p of the 10 is w's bit 9 - p. */
				t = (w >> (9 - p) & 1) == (w >> (8 - p) & 1) ? 2 : 3;
				g->groups++;
				g->sum_sq = (uint8_t)(g->sum_sq + t * t);
			}
			g->phase = (uint8_t)(p - 8);
		}
}

/* Bit i of a packed bit string. */
static inline unsigned
assess_bit(const uint8_t *packed, uint64_t i)
{
	return packed[i >> 3] >> (7 - (i & 7)) & 1;
}

/*
 * 6.3.2 and 6.3.3 of a binary string of n bits, packed (zeros past the
 * end), and 6.3.1's mode (the commoner bit's count) from the same ones:
 * the groups by the byte (a table made here, 9 KB) while every group of a
 * byte can be 3 bits long, then bit by bit; the ones and adjacent pairs 64
 * bits at a time.
 */
static void
assess_collision_markov(const uint8_t *packed, uint64_t n, struct assess_string *s)
{
	uint64_t i = 0, groups = 0, sum_sq = 0, pairs[4], ones = 0, both = 0, t, w, next, k;
	struct assess_groups table[3][1024];
	const struct assess_groups *g;
	unsigned phase = 0;

	assess_group_table(table);
	for (k = 0; 8 * k + 10 <= n; k++) {
		g = &table[phase][(unsigned)packed[k] << 2 | packed[k + 1] >> 6];
		groups += g->groups;
		sum_sq += g->sum_sq;
		phase = g->phase;
	}
	for (i = 8 * k + phase; i + 1 < n; i += t) {
		if (assess_bit(packed, i) == assess_bit(packed, i + 1))
			t = 2;
		else if (i + 2 < n)
			t = 3;
		else
			break;
		groups++;
		sum_sq += t * t;
	}
	s->h[ASSESS_COLLISION] = estimate_collision_formula(groups, i, sum_sq);
	/* Each bit with the next one beside it; past the end, zeros. */
	for (k = 0; 64 * k < n; k++) {
		w = packed_load(packed, 64 * k);
		next = packed_load(packed, 64 * k + 64);
		ones += predict_ones(w);
		both += predict_ones(w & (w << 1 | next >> 63));
	}
	/* Pairs (i, i + 1) for i < n - 1: 11, then 10 and 01 by the ones
	 * each side, and the rest 00. */
	pairs[3] = both;
	pairs[2] = ones - assess_bit(packed, n - 1) - both;
	pairs[1] = ones - assess_bit(packed, 0) - both;
	pairs[0] = n - 1 - pairs[1] - pairs[2] - pairs[3];
	s->h[ASSESS_MARKOV] = estimate_markov_formula(pairs, n - ones, n);
	s->mode = ones > n - ones ? ones : n - ones;
}

/* 6.3.5 and 6.3.6 of a binary string, packed: from the samples' order
 * when the string is their bits (width bits each), else sorted alone
 * (samples NULL). */
static void
assess_binary_tuples(const uint8_t *packed, uint64_t n, const struct estimate_order *samples,
    unsigned width, estimate_tuple_sorter sorter, struct assess_string *s)
{
	if ((samples != NULL ? estimate_tuple_bits(packed, n / width, width, samples, sorter,
	    &s->tuple, &s->tuple_why) : estimate_tuple(packed, n, 1, sorter, &s->tuple,
	    &s->tuple_why)) == 0) {
		s->h[ASSESS_TUPLE] = s->tuple.t_tuple;
		s->h[ASSESS_LRS] = s->tuple.lrs;
	}
}

/*
 * The other estimators of a binary string (the bit string, or samples of
 * two values), one symbol a byte in b and packed: each in its binary form.
 */
static void
assess_binary(const uint8_t *b, const uint8_t *packed, uint64_t n, struct assess_string *s)
{
	s->run = true;
	s->binary = true;
	s->length = n;
	assess_collision_markov(packed, n, s);
	s->h[ASSESS_MCV] = estimate_mcv_formula(s->mode, n);
	if (estimate_compress(packed, n, &s->compress))
		s->h[ASSESS_COMPRESSION] = s->compress.h;
	if (estimate_predict_mcw_bits(b, n, &s->mcw))
		s->h[ASSESS_MCW] = s->mcw.h;
	if (estimate_predict_lag_bits(packed, n, &s->lag))
		s->h[ASSESS_LAG] = s->lag.h;
	if (estimate_predict_mmc_bits(b, n, &s->mmc))
		s->h[ASSESS_MMC] = s->mmc.h;
	if (estimate_predict_lz78y_bits(b, n, &s->lz78y))
		s->h[ASSESS_LZ78Y] = s->lz78y.h;
}

/*
 * The literal estimators of samples of more than two values: MCV, the
 * tuples, and the predictors over the alphabet of k translated symbols.
 * The samples' order goes to order_out (if not NULL) for the bit string.
 */
static void
assess_symbols(const uint8_t *packed, const uint8_t *symbols, uint64_t n, unsigned bits,
    unsigned k, estimate_tuple_sorter sorter, struct assess_string *s,
    struct estimate_order *order_out)
{
	uint64_t count[256] = { 0 }, i;
	struct estimate_order order;

	s->run = true;
	s->length = n;
	for (i = 0; i < n; i++)
		count[symbols[i]]++;
	for (i = 0; i < k; i++)
		if (count[i] > s->mode)
			s->mode = count[i];
	s->h[ASSESS_MCV] = estimate_mcv_formula(s->mode, n);
	/* The tuples compare samples for equality only: the raw ones serve.
	 * Their order serves MultiMMC too (else it is sorted just for that). */
	if (estimate_tuple_order(packed, n, bits, sorter, &s->tuple, &s->tuple_why, &order) == 0) {
		s->h[ASSESS_TUPLE] = s->tuple.t_tuple;
		s->h[ASSESS_LRS] = s->tuple.lrs;
	} else
		estimate_order(packed, n, bits, &order);
	if (estimate_predict_mcw(symbols, n, k, &s->mcw))
		s->h[ASSESS_MCW] = s->mcw.h;
	if (estimate_predict_lag(symbols, n, k, &s->lag))
		s->h[ASSESS_LAG] = s->lag.h;
	if (estimate_dict_mmc_order(symbols, n, k, &order, &s->mmc))
		s->h[ASSESS_MMC] = s->mmc.h;
	if (order_out != NULL)
		*order_out = order;
	else
		estimate_order_free(&order);
	if (estimate_dict_lz78y(symbols, n, k, &s->lz78y))
		s->h[ASSESS_LZ78Y] = s->lz78y.h;
}

double
assess_min(const struct assess_string *s, double cap)
{
	double m = cap;
	int t;

	for (t = 0; t < ASSESS_TESTS; t++)
		if (s->h[t] >= 0.0 && s->h[t] < m)
			m = s->h[t];
	return m;
}

/* Start a string's figures: none run. */
static void
assess_string_init(struct assess_string *s)
{
	int t;

	memset(s, 0, sizeof *s);
	for (t = 0; t < ASSESS_TESTS; t++)
		s->h[t] = -1.0;
}

/*
 * assess_literal, and (if order is not NULL, and the samples are not
 * binary) their order and their bit string packed, for the caller to free.
 */
static unsigned
assess_literal_order(const uint8_t *samples, uint64_t n, unsigned bits,
    estimate_tuple_sorter sorter, struct assess_string *s, struct estimate_order *order,
    uint8_t **packed_out)
{
	unsigned map[256], v, k = 0;
	bool seen[256] = { false };
	uint8_t *symbols, *packed;
	uint64_t i;

	assess_string_init(s);
	for (i = 0; i < n; i++)
		seen[samples[i]] = true;
	/* Translate the values present to 0..k-1 in order, as the tool does. */
	for (v = 0; v < 256; v++)
		if (seen[v])
			map[v] = k++;
	if (k < 2)
		return k;
	symbols = xmalloc(n);
	for (i = 0; i < n; i++)
		symbols[i] = (uint8_t)map[samples[i]];
	if (k == 2) {
		packed = assess_pack(symbols, n, 1);
		assess_binary_tuples(packed, n, NULL, 1, sorter, s);
		assess_binary(symbols, packed, n, s);
	} else {
		packed = assess_pack(samples, n, bits);
		assess_symbols(packed, symbols, n, bits, k, sorter, s, order);
	}
	free(symbols);
	if (k > 2 && order != NULL)
		*packed_out = packed;
	else
		free(packed);
	return k;
}

unsigned
assess_literal(const uint8_t *samples, uint64_t n, unsigned bits, estimate_tuple_sorter sorter,
    struct assess_string *s)
{
	return assess_literal_order(samples, n, bits, sorter, s, NULL, NULL);
}

int
assess_run(const uint8_t *samples, uint64_t n, unsigned bits, estimate_tuple_sorter sorter,
    struct assess *a)
{
	struct estimate_order order;
	uint8_t *bitstring, *packed = NULL;
	uint64_t i;
	unsigned j;

	memset(a, 0, sizeof *a);
	assess_string_init(&a->bits);
	a->sample_bits = bits;
	a->samples = n;
	memset(&order, 0, sizeof order);
	a->alphabet = assess_literal_order(samples, n, bits, sorter, &a->literal, &order, &packed);
	if (a->alphabet > 2) {
		/* The tuples first, and the byte a bit only once the order is
		 * gone: the most memory this takes at once is the sort's. */
		assess_binary_tuples(packed, n * bits, &order, bits, sorter, &a->bits);
		estimate_order_free(&order);
		bitstring = xmalloc(n * bits);
		for (i = 0; i < n; i++)
			for (j = 0; j < bits; j++)
				bitstring[i * bits + j] = samples[i] >> (bits - 1 - j) & 1;
		assess_binary(bitstring, packed, n * bits, &a->bits);
		free(bitstring);
		free(packed);
	}
	if (a->alphabet < 2)
		return -1;
	a->h_original = assess_min(&a->literal, bits);
	a->h_bitstring = assess_min(&a->bits, 1.0);
	a->h_assessed = a->h_original;
	if (a->bits.run && bits * a->h_bitstring < a->h_assessed)
		a->h_assessed = bits * a->h_bitstring;
	return 0;
}
