/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_KEYSORT_H
#define ENTROPYD_KEYSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Sort a[0..m) by bits `low` and up, stably (keys equal there keep their
 * order); tmp has room for m keys. first: a group's first sort (large
 * buckets then go on most significant digit first).
 */
void keysort_msd(uint64_t *a, uint64_t *tmp, size_t m, unsigned low, bool first);
/* Sort a[0..m), made of `runs` sorted runs of distinct keys (run k from
 * bound[k] to bound[k + 1]), by merging; tmp is as large, bound is reused. */
void keysort_merge_runs(uint64_t *a, uint64_t *tmp, size_t *bound, unsigned runs);

#endif
