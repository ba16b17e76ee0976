/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FIPS_REF_H
#define ENTROPYD_FIPS_REF_H

#include <stdint.h>

/* What the bit-serial reference saw in one block. */
struct fips_ref_stats {
	unsigned ones;
	unsigned nibbles[16];
	uint64_t poker_sum;		/* sum of nibbles[i] squared */
	unsigned runs[2][6];		/* [bit][length 1..5, 6+] */
	unsigned longest_run;
	unsigned repeats;		/* aligned words equal to the one before */
};

/*
 * The FIPS 140-2 tests done the slow, obvious way, one bit at a time: the
 * same mask as fips_test_block(), and *last_word carried the same way.
 */
unsigned fips_ref_test_block(uint32_t *last_word, const uint8_t *block,
    struct fips_ref_stats *);

#endif
