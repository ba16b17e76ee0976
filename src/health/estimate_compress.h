/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ESTIMATE_COMPRESS_H
#define ENTROPYD_ESTIMATE_COMPRESS_H

#include <stdbool.h>
#include <stdint.h>

/* SP 800-90B 6.3.4 of a bit string, as ea_non_iid computes it. */
struct estimate_compress {
	double h;       /* bits per bit; negative when not run */
	double mean;    /* X-bar, the mean log2 distance */
	double sigma;   /* sigma-hat */
	double p;       /* the block probability found */
};

/*
 * The compression estimate of n_bits bits packed most significant first
 * (one readable byte past the last); false (not run) below 6006 bits.
 */
bool estimate_compress(const uint8_t *packed, uint64_t n_bits, struct estimate_compress *);

#endif
