/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ASSESS_H
#define ENTROPYD_ASSESS_H

#include <stdbool.h>
#include <stdint.h>

#include "estimate_compress.h"
#include "estimate_predict.h"
#include "estimate_tuple.h"

/*
 * SP 800-90B section 6.3's ten non-IID estimators over a file of samples,
 * as NIST's ea_non_iid runs them for an initial entropy estimate (3.1.3):
 * on the samples as they are ("literal", each distinct value translated to
 * 0..k-1 in order) and on their bit string (each sample's bits, most
 * significant first), then H_original, H_bitstring and
 * min(H_original, bits x H_bitstring). Samples of only two values are
 * taken as binary, with no bit string, as the tool takes them.
 */

enum assess_test {
	ASSESS_MCV,          /* 6.3.1 */
	ASSESS_COLLISION,    /* 6.3.2, binary strings only */
	ASSESS_MARKOV,       /* 6.3.3, binary strings only */
	ASSESS_COMPRESSION,  /* 6.3.4, binary strings only */
	ASSESS_TUPLE,        /* 6.3.5 */
	ASSESS_LRS,          /* 6.3.6 */
	ASSESS_MCW,          /* 6.3.7 */
	ASSESS_LAG,          /* 6.3.8 */
	ASSESS_MMC,          /* 6.3.9 */
	ASSESS_LZ78Y,        /* 6.3.10 */
	ASSESS_TESTS
};

/* The figures of one string, each negative when the estimator did not run. */
struct assess_string {
	bool run;                    /* this string was assessed */
	bool binary;                 /* two symbols: the binary forms */
	uint64_t length;             /* its symbols */
	double h[ASSESS_TESTS];      /* bits per symbol */
	uint64_t mode;               /* 6.3.1's most common value's count */
	struct estimate_compress compress;
	struct estimate_tuple tuple;
	const char *tuple_why;       /* why 6.3.5 and 6.3.6 did not run, or NULL */
	struct estimate_prediction mcw, lag, mmc, lz78y;
};

struct assess {
	unsigned sample_bits;        /* 1..8 */
	uint64_t samples;
	unsigned alphabet;           /* distinct values among them */
	struct assess_string literal;
	struct assess_string bits;   /* run only when alphabet > 2 */
	double h_original;           /* min(sample_bits, the literal figures) */
	double h_bitstring;          /* min(1, the bit string's figures) */
	double h_assessed;           /* min(H_original, sample_bits x H_bitstring) */
};

/*
 * Assess n samples of sample_bits bits (1..8, one a byte, each below
 * 2^sample_bits; n * sample_bits below 2^31). sorter sorts suffixes for
 * 6.3.5 and 6.3.6 when a string repeats itself at length (NULL: those two
 * do not run then, and tuple_why says why). -1 (nothing assessed) when
 * the samples hold a single value: no entropy, as the tool says.
 */
int assess_run(const uint8_t *samples, uint64_t n, unsigned sample_bits,
    estimate_tuple_sorter sorter, struct assess *);

/*
 * The literal half: the estimators of n samples as they are (translated to
 * 0..k-1; binary when k is 2), as ea_non_iid and ea_restart run them. The
 * number of distinct values k; below 2, nothing ran.
 */
unsigned assess_literal(const uint8_t *samples, uint64_t n, unsigned sample_bits,
    estimate_tuple_sorter sorter, struct assess_string *);
/* The smallest figure of a string that ran, at most cap. */
double assess_min(const struct assess_string *, double cap);

/* ea_non_iid's name of a test, as its figure lines print it ("T-Tuple Test Estimate"). */
const char *assess_test_name(enum assess_test);

#endif
