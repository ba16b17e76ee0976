/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: entropytest's input paths. The block loop: a bootstrap, then
 * FIPS 140-2 blocks through fips_test_block() and fips_block_stats(), and
 * every byte through the SP 800-90B continuous tests. And -e: the input as
 * samples of 1 to 8 bits (the first byte says how many) through the ten
 * SP 800-90B 6.3 estimators, with and without a suffix sorter.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "fips.h"
#include "sp80090b.h"

/* -e's inputs are kept this small: every estimator runs on each. */
#define FUZZ_ASSESS_MAX 16384

static struct assess fuzz_assessment;

/* A suffix sorter that sorts nothing and fails: the fallback's error path. */
static int
fuzz_no_sorter(const uint8_t *text, int32_t *sa, int32_t n)
{
	(void)text;
	(void)sa;
	(void)n;
	return -1;
}

/* -e: the input's bytes past the first as samples of 1 + data[0] % 8 bits. */
static void
fuzz_assess(const uint8_t *data, size_t size)
{
	static uint8_t samples[FUZZ_ASSESS_MAX];
	unsigned bits, t;
	size_t n, i;

	if (size < 2)
		return;
	bits = 1 + data[0] % 8;
	n = size - 1 < FUZZ_ASSESS_MAX ? size - 1 : FUZZ_ASSESS_MAX;
	for (i = 0; i < n; i++)
		samples[i] = (uint8_t)(data[1 + i] & ((1u << bits) - 1));
	if (assess_run(samples, n, bits, data[0] & 0x80 ? fuzz_no_sorter : NULL,
	    &fuzz_assessment) != 0)
		return;
	/* Every figure that ran is a min-entropy: 0 to the width of its string. */
	for (t = 0; t < ASSESS_TESTS; t++)
		if (fuzz_assessment.literal.h[t] > bits + 1e-9 ||
		    fuzz_assessment.bits.h[t] > 1 + 1e-9 ||
		    fuzz_assessment.literal.h[t] != fuzz_assessment.literal.h[t])
			abort();
	if (fuzz_assessment.h_assessed > fuzz_assessment.h_original + 1e-9)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t block[FIPS_BLOCK_BYTES];
	struct fips_ctx ctx, ctx_stats;
	struct fips_stats st;
	struct sp80090b health;
	size_t used, n;
	unsigned mask;

	fuzz_assess(data, size);
	if (size < FIPS_BOOTSTRAP_BYTES || size > 1 << 20)
		return 0;
	fips_init(&ctx, data);
	fips_init(&ctx_stats, data);
	sp80090b_init(&health, 1.0 + data[0] % 8, 8);
	data += FIPS_BOOTSTRAP_BYTES;
	size -= FIPS_BOOTSTRAP_BYTES;
	/* Short inputs repeat to fill blocks, as a slow stream would. */
	for (used = 0; used < size || used == 0; used += FIPS_BLOCK_BYTES) {
		for (n = 0; n < FIPS_BLOCK_BYTES; n++)
			block[n] = size > 0 ? data[(used + n) % size] : 0;
		mask = fips_test_block(&ctx, block);
		memset(&st, 0, sizeof st);
		/* The fast test and the statistics must agree on every block. */
		if (fips_block_stats(&ctx_stats, block, &st) != mask || fips_stats_mask(&st) != mask)
			abort();
		for (n = 0; n < FIPS_BLOCK_BYTES; n++)
			(void)sp80090b_sample(&health, block[n]);
		if (size == 0)
			break;
	}
	return 0;
}
