/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RESTART_H
#define ENTROPYD_RESTART_H

#include <stdbool.h>
#include <stdint.h>

#include "assess.h"

/* SP 800-90B section 3.1.4's restart tests, as NIST's ea_restart runs them. */

/* The restart data: this many restarts (rows) of this many samples (columns). */
#define RESTART_ROWS 1000
#define RESTART_COLS 1000
#define RESTART_SAMPLES (RESTART_ROWS * RESTART_COLS)

struct restart {
	double h_i;             /* the initial entropy estimate tested against */
	double alpha;           /* 1 - 0.99^(1 / (rows + cols)) */
	unsigned cutoff;        /* the sanity check's bound on a row's or column's mode */
	unsigned x_rows, x_cols, x_max; /* the largest mode count of a row, a column, both */
	bool sane;              /* 3.1.4.3: x_max <= cutoff (else nothing more ran) */
	unsigned alphabet;      /* distinct values */
	struct assess_string rows, cols; /* 3.1.4.2: the literal estimators of each dataset */
	double h_r, h_c;        /* their minima, at most the sample width */
	bool valid;             /* min(h_r, h_c) >= h_i / 2 */
	double h_min;           /* min(h_r, h_c, h_i) */
};

/*
 * The restart tests of RESTART_SAMPLES samples of `bits` bits (row i, the
 * samples of restart i, at i * RESTART_COLS) against h_i: the sanity
 * check, then (if it passed) the estimators on the row dataset (the
 * samples in order) and the column dataset (sample j of every restart,
 * then j + 1). sorter as for assess_run. -1 when the samples hold a
 * single value (no entropy).
 */
int restart_run(const uint8_t *samples, unsigned bits, double h_i, estimate_tuple_sorter sorter,
    struct restart *);

/*
 * The sanity check's cutoff: the smallest x such that, for n draws from
 * the "inverted near-uniform" distribution with largest probability
 * 2^-h_i (as many symbols of that probability as fit, and one with the
 * rest), the largest count exceeds x with probability at most alpha.
 * ea_restart estimates it by simulating 5,000,000 draws of n; this is the
 * exact quantile of the same distribution.
 */
unsigned restart_cutoff(double h_i, double alpha, unsigned n);

#endif
