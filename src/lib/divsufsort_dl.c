/* SPDX-License-Identifier: MIT */
/*
 * libdivsufsort's divsufsort(), loaded from libdivsufsort.so.3 on first
 * use, for the t-tuple and LRS estimates of strings that repeat themselves
 * at length (src/health/estimate_tuple.c sorts the others itself): a
 * machine without the library still assesses everything else. Built
 * without its header (configure --without-libdivsufsort), there is none.
 */
#include <stdint.h>

#include "divsufsort_dl.h"

#ifdef HAVE_LIBDIVSUFSORT
#include <divsufsort.h>

#include "lazylib.h"

static struct lazylib divsufsort_dl = LAZYLIB_INIT("libdivsufsort.so.3");

int
divsufsort_dl_sort(const uint8_t *text, int32_t *sa, int32_t n)
{
	LAZYLIB_GET(&divsufsort_dl, saint_t, divsufsort,
	    (const sauchar_t *, saidx_t *, saidx_t), return -1)
	return f(text, sa, n) == 0 ? 0 : -1;
}

const char *
divsufsort_dl_error(void)
{
	return lazylib_error(&divsufsort_dl);
}
#else
int
divsufsort_dl_sort(const uint8_t *text, int32_t *sa, int32_t n)
{
	(void)text;
	(void)sa;
	(void)n;
	return -1;
}

const char *
divsufsort_dl_error(void)
{
	return "built without libdivsufsort";
}
#endif
