/* SPDX-License-Identifier: MIT */
/*
 * The few real functions the daemon needs (cutoffs of the health tests, an
 * audio signal's figures), computed here so the daemon does not map libm
 * for them: that is a few hundred kilobytes of resident memory for six
 * calls made at start-up. Accurate to a few units in the last place over
 * the ranges used; the unit tests compare them with libm. The entropy
 * estimates (src/health/estimate.c) take their logarithms from here too.
 */
#ifndef ENTROPYD_NUMERIC_H
#define ENTROPYD_NUMERIC_H

/* 2 to the power x. */
double numeric_exp2(double x);
/* The square root of x >= 0 (NaN below 0). */
double numeric_sqrt(double x);
/* The arc cosine of x in [-1, 1], in radians from 0 to pi. */
double numeric_acos(double x);
/* The base-2 logarithm of x > 0 (-inf at 0, NaN below). */
double numeric_log2(double x);

#endif
