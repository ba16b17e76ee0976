/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SP80090B_H
#define ENTROPYD_SP80090B_H

#include <stdbool.h>
#include <stdint.h>

/* SP 800-90B section 4.4 continuous health tests on raw noise samples. */
#define SP80090B_STARTUP_SAMPLES 1024

enum sp80090b_result {
	SP80090B_PASS = 0,
	SP80090B_RCT_FAIL = 1,
	SP80090B_APT_FAIL = 2,
};

struct sp80090b {
	double h;              /* assessed min-entropy, bits per sample */
	unsigned sample_bits;  /* 1: binary (APT window 1024), else 512 */
	unsigned rct_cutoff;
	unsigned apt_window;
	unsigned apt_cutoff;
	/* Repetition Count Test */
	uint32_t rct_last;
	unsigned rct_count;
	/* Adaptive Proportion Test */
	uint32_t apt_first;
	unsigned apt_count;
	unsigned apt_index;
	/* Samples still to pass before output may be used (start-up test). */
	unsigned startup_remaining;
	uint64_t rct_failures, apt_failures;
};

/* RCT cutoff C = 1 + ceil(20 / H), for alpha = 2^-20. */
unsigned sp80090b_rct_cutoff(double h);
/* APT cutoff C = 1 + CRITBINOM(W, 2^-H, 1 - 2^-20). */
unsigned sp80090b_apt_cutoff(double h, unsigned window);
/* Window size: 1024 for binary samples, 512 otherwise. */
unsigned sp80090b_apt_window(unsigned sample_bits);
void sp80090b_init(struct sp80090b *, double h, unsigned sample_bits);
/* Restart the tests and the start-up count (after a failure or a reopen). */
void sp80090b_reset(struct sp80090b *);
/*
 * Feed one sample (masked to sample_bits): SP80090B_PASS or which test
 * failed on it; both bits are set when both tests fail on the same sample.
 */
enum sp80090b_result sp80090b_sample(struct sp80090b *, uint32_t sample);
/* True once the start-up samples have passed. */
bool sp80090b_ready(const struct sp80090b *);

#endif
