/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FIPS_H
#define ENTROPYD_FIPS_H

#include <stdint.h>

/* FIPS 140-2 (Change Notice 1, 2001-10-10) tests, as rngtest applies them. */
#define FIPS_BLOCK_BYTES 2500
#define FIPS_BOOTSTRAP_BYTES 4

enum fips_test {
	FIPS_MONOBIT,
	FIPS_POKER,
	FIPS_RUNS,
	FIPS_LONG_RUN,
	FIPS_CONTINUOUS,
	FIPS_NTESTS
};

/* Continuous-test state carried from block to block. */
struct fips_ctx {
	uint32_t last_word;
};

/* Start with the bootstrap word (the first 4 bytes, never output). */
void fips_init(struct fips_ctx *, const uint8_t bootstrap[FIPS_BOOTSTRAP_BYTES]);
/* Test one block: 0 when it passes, else a mask of (1u << enum fips_test). */
unsigned fips_test_block(struct fips_ctx *, const uint8_t block[FIPS_BLOCK_BYTES]);
/* rngtest's name of a test ("Monobit", "Poker", "Runs", "Long run", "Continuous run"). */
const char *fips_test_name(enum fips_test);
/* A short lowercase key for labels ("monobit", "poker", "runs", "long_run", "continuous"). */
const char *fips_test_key(enum fips_test);

#endif
