/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ESTIMATE_TUPLE_H
#define ENTROPYD_ESTIMATE_TUPLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * SP 800-90B 6.3.5 (t-tuple) and 6.3.6 (longest repeated substring) of a
 * string of n symbols of `width` bits (1..8), packed most significant bit
 * first, as ea_non_iid computes them: both come from the suffixes of the
 * string in sorted order and the lengths of the prefixes neighbours share.
 */

/* Tuples seen fewer times than this do not count for 6.3.5 (its cutoff). */
#define ESTIMATE_TUPLE_CUTOFF 35
/* Bytes the caller leaves readable (and zero) after the packed string. */
#define ESTIMATE_TUPLE_PAD_BYTES 16

struct estimate_tuple {
	double t_tuple;   /* 6.3.5, bits per symbol; negative: no tuple seen 35 times */
	double lrs;       /* 6.3.6, bits per symbol; negative: v < u, not run */
	uint64_t t;       /* the longest tuple seen 35 times (u - 1) */
	uint64_t v;       /* the longest repeated substring */
	double p_tuple;   /* p-hat_max of each */
	double p_lrs;
	bool sorted_by_library; /* the suffixes needed libdivsufsort (long repeats) */
};

/*
 * A suffix sorter with libdivsufsort's contract: sa[0..n) gets the start
 * of each suffix of text[0..n) in lexicographic order; 0 on success.
 */
typedef int (*estimate_tuple_sorter)(const uint8_t *text, int32_t *sa, int32_t n);

/*
 * Both estimates of packed (n symbols of width bits, followed by
 * ESTIMATE_TUPLE_PAD_BYTES zero bytes; below 2^31 bits in all). The
 * suffixes are sorted here by their first few dozen bits, and by sorter
 * (may be NULL) when the string repeats itself for longer. 0 on success;
 * -1 when that was needed and sorter is NULL or failed (*why says so).
 */
int estimate_tuple(const uint8_t *packed, uint64_t n, unsigned width, estimate_tuple_sorter sorter,
    struct estimate_tuple *, const char **why);

/* The symbols of the longest context a predictor looks at, and the next one. */
#define ESTIMATE_ORDER_DEPTH 17

/*
 * The suffixes of a string sorted by their first ESTIMATE_ORDER_DEPTH
 * symbols (suffixes equal that far in any order): the predictors of 6.3.9
 * and 6.3.10 find equal contexts as runs of it.
 */
struct estimate_order {
	uint32_t *sa;   /* the starts of the suffixes, in order */
	uint8_t *lcp;   /* what sa[r] shares with sa[r - 1], at most the depth (lcp[0] is 0) */
	bool complete;  /* sorted to their ends (as estimate_tuple_order sorts them) */
};

/* estimate_tuple, and the order of its suffixes (when it returns 0; order may be NULL). */
int estimate_tuple_order(const uint8_t *packed, uint64_t n, unsigned width,
    estimate_tuple_sorter sorter, struct estimate_tuple *, const char **why,
    struct estimate_order *order);
/*
 * estimate_tuple of the bit string of n samples of `width` bits (2 to 8;
 * packed as estimate_tuple takes n * width symbols of 1 bit), faster with
 * the samples' complete order (samples may be NULL).
 */
int estimate_tuple_bits(const uint8_t *packed, uint64_t n, unsigned width,
    const struct estimate_order *samples, estimate_tuple_sorter sorter, struct estimate_tuple *,
    const char **why);
/* The order alone (as packed is for estimate_tuple); it needs no sorter. */
void estimate_order(const uint8_t *packed, uint64_t n, unsigned width, struct estimate_order *);
void estimate_order_free(struct estimate_order *);

#endif
