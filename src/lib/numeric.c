/* SPDX-License-Identifier: MIT */
/*
 * The real functions the health-test cutoffs, the estimates and the audio
 * figures need (exponentials, logarithms, sqrt, sin, acos), without
 * mapping libm; checked against libm by the unit tests.
 */
#include <float.h>
#include <math.h> /* frexp and ldexp, which libc has */

#include "numeric.h"

#define NUMERIC_LN2 0.693147180559945309417232121458176568
#define NUMERIC_PI 3.14159265358979323846264338327950288

/* e to the power y for |y| < 1, by its Taylor series. */
static double
numeric_exp_small(double y)
{
	double term = 1.0, sum = 1.0;
	int i;

	for (i = 1; i < 30 && term != 0.0; i++) {
		term *= y / i;
		sum += term;
	}
	return sum;
}

double
numeric_exp2(double x)
{
	double n = (double)(long)x;

	if (n > x)
		n -= 1.0;
	/* 2^x = 2^n * e^((x - n) ln 2), the fraction in [0, 1). */
	return ldexp(numeric_exp_small((x - n) * NUMERIC_LN2), (int)n);
}

double
numeric_sqrt(double x)
{
	double y, prev;
	int e, i;

	if (x < 0.0)
		return 0.0 / 0.0;
	if (x == 0.0 || x > DBL_MAX)
		return x;
	/* Start within a factor of two, then Newton until it stops moving. */
	(void)frexp(x, &e);
	y = ldexp(1.0, e / 2);
	for (i = 0; i < 64; i++) {
		prev = y;
		y = 0.5 * (y + x / y);
		if (y == prev)
			break;
	}
	return y;
}

/* The sine of t in [0, pi/4], by its Taylor series. */
static double
numeric_sin(double t)
{
	double term = t, sum = t;
	int i;

	for (i = 1; i < 20; i++) {
		term *= -t * t / ((2 * i) * (2 * i + 1));
		sum += term;
	}
	return sum;
}

double
numeric_acos(double x)
{
	double s, lo = 0.0, hi = NUMERIC_PI / 4, mid;
	int i;

	if (x != x || x < -1.0 || x > 1.0)
		return 0.0 / 0.0;
	if (x < 0.0)
		return NUMERIC_PI - numeric_acos(-x);
	/* acos x = 2 asin(sqrt((1 - x) / 2)); bisect for sin t = s, t <= pi/4. */
	s = numeric_sqrt((1.0 - x) / 2.0);
	for (i = 0; i < 64; i++) {
		mid = 0.5 * (lo + hi);
		if (numeric_sin(mid) < s)
			lo = mid;
		else
			hi = mid;
	}
	return lo + hi;
}

double
numeric_log2(double x)
{
	double m, z, z2, term, sum;
	int e, i;

	if (x != x || x < 0.0)
		return 0.0 / 0.0;
	if (x == 0.0)
		return -1.0 / 0.0;
	if (x > DBL_MAX)
		return x;
	/* x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh((m - 1) / (m + 1)). */
	m = frexp(x, &e);
	if (m < 0.70710678118654752440) {
		m *= 2.0;
		e--;
	}
	z = (m - 1.0) / (m + 1.0);
	z2 = z * z;
	term = z;
	sum = z;
	/* Until a term no longer changes the sum (|z| <= 0.172: a dozen at most). */
	for (i = 3; i < 80 && (term < 0.0 ? -term : term) > DBL_EPSILON / 8 * (sum < 0.0 ?
	    -sum : sum); i += 2) {
		term *= z2;
		sum += term / i;
	}
	return (double)e + 2.0 * sum / NUMERIC_LN2;
}
