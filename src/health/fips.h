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

/* What the tests look at in one block (the fast engine's counters). */
struct fips_stats {
	unsigned ones;			/* monobit */
	uint64_t poker_sum;		/* sum of the squared nibble counts */
	unsigned runs[2][6];		/* [bit][length 1..5, 6 and longer] */
	unsigned longest_run;		/* longest run of equal bits */
	unsigned repeats;		/* aligned words equal to the one before */
};

/* Continuous-test state carried from block to block. */
struct fips_ctx {
	uint32_t last_word;
};

/* Start with the bootstrap word (the first 4 bytes, never output). */
void fips_init(struct fips_ctx *, const uint8_t bootstrap[FIPS_BOOTSTRAP_BYTES]);
/* Test one block: 0 when it passes, else a mask of (1u << enum fips_test). */
unsigned fips_test_block(struct fips_ctx *, const uint8_t block[FIPS_BLOCK_BYTES]);
/*
 * Count a block's statistics (the continuous test compares with, and
 * updates, the context) and return the failure mask fips_test_block returns.
 */
unsigned fips_block_stats(struct fips_ctx *, const uint8_t block[FIPS_BLOCK_BYTES],
    struct fips_stats *);
/*
 * Use one CPU variant of the engine ("generic", "popcnt", "avx512"; the best
 * one is chosen by default): 0, or -1 when this CPU lacks it.  For tests.
 */
int fips_use(const char *name);
/* The failure mask of a block's statistics. */
unsigned fips_stats_mask(const struct fips_stats *);
/* rngtest's name of a test ("Monobit", "Poker", "Runs", "Long run", "Continuous run"). */
const char *fips_test_name(enum fips_test);
/* A short lowercase key for labels ("monobit", "poker", "runs", "long_run", "continuous"). */
const char *fips_test_key(enum fips_test);

#endif
