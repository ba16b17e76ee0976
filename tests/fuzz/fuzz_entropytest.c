/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: entropytest's input path, the block loop: a bootstrap, then
 * FIPS 140-2 blocks through fips_test_block() and fips_block_stats(), and
 * every byte through the SP 800-90B continuous tests.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fips.h"
#include "sp80090b.h"

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
