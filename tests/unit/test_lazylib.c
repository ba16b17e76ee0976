/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <criterion/criterion.h>

#include "lazylib.h"

static struct lazylib libm_lazy = LAZYLIB_INIT("libm.so.6");
static struct lazylib missing_lazy =
    LAZYLIB_INIT("libentropyd-no-such-library.so.0");

double cbrt(double);
int entropyd_test_missing(int);

/* cbrt() through a libm loaded on first use. */
LAZYLIB_FN(&libm_lazy, double, cbrt, (double x), (x), -1.0)
/* A function of a library that is not there. */
LAZYLIB_FN(&missing_lazy, int, entropyd_test_missing, (int x), (x), -77)

/* A library loaded on first use answers as if linked. */
Test(lazylib, loads_on_first_call)
{
	cr_assert_float_eq(cbrt(27.0), 3.0, 1e-12);
	cr_assert_float_eq(cbrt(-8.0), -2.0, 1e-12);
	cr_assert_str_empty(lazylib_error(&libm_lazy));
}

/* A missing library: the failure value, and an error naming it. */
Test(lazylib, missing_library_fails_with_a_reason)
{
	cr_assert_eq(entropyd_test_missing(5), -77);
	cr_assert_eq(entropyd_test_missing(6), -77);
	cr_assert_not_null(strstr(lazylib_error(&missing_lazy),
	    "cannot load libentropyd-no-such-library.so.0"), "error: %s",
	    lazylib_error(&missing_lazy));
}

/* A function the library lacks: NULL, and an error naming it. */
Test(lazylib, missing_function_fails_with_a_reason)
{
	cr_assert_null(lazylib_sym(&libm_lazy, "entropyd_no_such_function"));
	cr_assert_not_null(strstr(lazylib_error(&libm_lazy),
	    "no entropyd_no_such_function"), "error: %s",
	    lazylib_error(&libm_lazy));
}
