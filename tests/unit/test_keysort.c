/* SPDX-License-Identifier: MIT */
/*
 * The key sorts under the tuple estimates: against qsort on keys drawn to
 * reach every branch (few keys, clustered buckets, keys equal in their
 * high bits), stability on the bits below `low`, and the run merge.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "keysort.h"

/* A small xorshift generator: the same keys every run. */
static uint64_t
next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keys of `m` whose top bits take only `kinds` values (clusters), with
 * their index in the low 20 bits (distinct, and the original order). */
static uint64_t *
keys(size_t m, uint64_t kinds, uint64_t seed)
{
	uint64_t *a = malloc(m * sizeof *a), x = seed;
	size_t i;

	for (i = 0; i < m; i++)
		a[i] = ((next(&x) % kinds) * UINT64_C(0x9e3779b97f4a7c15) & ~(UINT64_C(0xfffff))) | i;
	return a;
}

Test(keysort, msd_sorts_as_qsort_does_at_every_size)
{
	static const size_t sizes[] = { 0, 1, 2, 31, 32, 33, 1000, 20000, 70000 };
	static const uint64_t kinds[] = { 1, 3, 1000, UINT64_MAX };
	size_t z, k, i;

	for (z = 0; z < sizeof sizes / sizeof *sizes; z++)
		for (k = 0; k < sizeof kinds / sizeof *kinds; k++) {
			size_t m = sizes[z];
			uint64_t *a = keys(m, kinds[k], 88172645463325252ULL + z);
			uint64_t *want = malloc((m + 1) * sizeof *want);
			uint64_t *tmp = malloc((m + 1) * sizeof *tmp);

			memcpy(want, a, m * sizeof *a);
			qsort(want, m, sizeof *want, cmp_u64);
			keysort_msd(a, tmp, m, 0, true);
			for (i = 0; i < m; i++)
				cr_assert_eq(a[i], want[i], "size %zu, %llu kinds: key %zu differs",
				    m, (unsigned long long)kinds[k], i);
			free(a);
			free(want);
			free(tmp);
		}
}

Test(keysort, keys_equal_above_low_keep_their_order)
{
	size_t m = 50000, i;
	uint64_t *a = keys(m, 7, 12345), *tmp = malloc(m * sizeof *tmp);

	/* Sorted by bit 20 and up only: the index below must stay ascending
	 * within each cluster (a stable sort), and the clusters in order. */
	keysort_msd(a, tmp, m, 20, true);
	for (i = 1; i < m; i++) {
		cr_assert_leq(a[i - 1] >> 20, a[i] >> 20, "out of order at %zu", i);
		if (a[i - 1] >> 20 == a[i] >> 20)
			cr_assert_lt(a[i - 1] & 0xfffff, a[i] & 0xfffff, "not stable at %zu", i);
	}
	free(a);
	free(tmp);
}

Test(keysort, merge_runs_merges_any_number_of_runs)
{
	size_t bound[10], m, i, r, runs;
	uint64_t x = 99, *a, *want, *tmp;

	for (runs = 1; runs <= 9; runs++) {
		m = 0;
		bound[0] = 0;
		a = malloc(9 * 3000 * sizeof *a);
		/* Runs of uneven length (one empty), each sorted, keys distinct. */
		for (r = 0; r < runs; r++) {
			size_t len = r == 1 ? 0 : 100 + next(&x) % 2900;

			for (i = 0; i < len; i++)
				a[m + i] = (next(&x) & ~UINT64_C(0xffff)) | (m + i);
			qsort(a + m, len, sizeof *a, cmp_u64);
			m += len;
			bound[r + 1] = m;
		}
		want = malloc(m * sizeof *want);
		tmp = malloc(m * sizeof *tmp);
		memcpy(want, a, m * sizeof *a);
		qsort(want, m, sizeof *want, cmp_u64);
		keysort_merge_runs(a, tmp, bound, (unsigned)runs);
		for (i = 0; i < m; i++)
			cr_assert_eq(a[i], want[i], "%zu runs: key %zu differs", runs, i);
		free(a);
		free(want);
		free(tmp);
	}
}
