/* SPDX-License-Identifier: MIT */
/* The daemon's own real functions against libm's, over the ranges used and beyond. */
#include <math.h>

#include <criterion/criterion.h>

#include "numeric.h"

/* Relative difference, 0 when both are 0. */
static double
reldiff(double a, double b)
{
	return a == b ? 0.0 : fabs(a - b) / fmax(fabs(a), fabs(b));
}

Test(numeric, exp2_matches_libm)
{
	double x;

	for (x = -60.0; x <= 60.0; x += 0.0137)
		cr_expect_lt(reldiff(numeric_exp2(x), exp2(x)), 1e-15, "exp2(%.4f): %.17g, libm %.17g",
		    x, numeric_exp2(x), exp2(x));
	cr_expect_eq(numeric_exp2(0.0), 1.0);
	cr_expect_eq(numeric_exp2(-3.0), 0.125);
	cr_expect_eq(numeric_exp2(10.0), 1024.0);
}

Test(numeric, sqrt_matches_libm)
{
	double x;

	for (x = 1e-30; x < 1e30; x *= 1.37)
		cr_expect_lt(reldiff(numeric_sqrt(x), sqrt(x)), 2.3e-16, "sqrt(%g)", x);
	cr_expect_eq(numeric_sqrt(0.0), 0.0);
	cr_expect_eq(numeric_sqrt(0.25), 0.5);
	cr_expect_eq(numeric_sqrt(1e6), 1e3);
	cr_expect(isnan(numeric_sqrt(-1.0)));
}

Test(numeric, acos_matches_libm)
{
	double x;

	for (x = -1.0; x <= 1.0; x += 0.001)
		cr_expect_lt(fabs(numeric_acos(x) - acos(x)), 1e-12, "acos(%.3f): %.17g, libm %.17g",
		    x, numeric_acos(x), acos(x));
	cr_expect_lt(fabs(numeric_acos(-1.0) - M_PI), 1e-12);
	cr_expect_lt(fabs(numeric_acos(1.0)), 1e-12);
	cr_expect(isnan(numeric_acos(1.5)));
}

Test(numeric, log2_matches_libm)
{
	double x;

	for (x = 1e-300; x < 1e300; x *= 1.7)
		cr_expect_lt(fabs(numeric_log2(x) - log2(x)), 1e-13 * fmax(1.0, fabs(log2(x))),
		    "log2(%g): %.17g, libm %.17g", x, numeric_log2(x), log2(x));
	for (x = 0.001; x < 1.0; x += 0.001)
		cr_expect_lt(fabs(numeric_log2(x) - log2(x)), 1e-14, "log2(%g)", x);
	cr_expect_eq(numeric_log2(1.0), 0.0);
	cr_expect_eq(numeric_log2(0.5), -1.0);
	cr_expect_eq(numeric_log2(1024.0), 10.0);
	cr_expect(isinf(numeric_log2(0.0)) && numeric_log2(0.0) < 0);
	cr_expect(isnan(numeric_log2(-1.0)));
}
