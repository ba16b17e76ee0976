/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_DIVSUFSORT_DL_H
#define ENTROPYD_DIVSUFSORT_DL_H

#include <stdint.h>

/*
 * libdivsufsort's suffix sorter, loaded on first use (lazylib.h): only an
 * assessment of a string with long repeats needs it, and a build without
 * its header has none. Sorts text[0..n)'s suffixes into sa; 0 on success.
 */
int divsufsort_dl_sort(const uint8_t *text, int32_t *sa, int32_t n);
/* Why the sorter could not be had ("" if it could). */
const char *divsufsort_dl_error(void);

#endif
