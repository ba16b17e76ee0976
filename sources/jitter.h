/* SPDX-License-Identifier: MIT */
/*
 * The jitter source's pure parts, exposed for its tests: stuck-sample
 * detection by derivatives, folding a delta into a sample, the oversampling
 * accounting, the start-up verdict, option parsing, and the timestamp seam.
 */
#ifndef ENTROPYD_JITTER_H
#define ENTROPYD_JITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per emitted sample the descriptor claims 1/JITTER_BASE_OSR bits. */
#define JITTER_BASE_OSR 3
#define JITTER_MAX_OSR 64
/* Start-up: at least SP 800-90B's 1024 samples. */
#define JITTER_STARTUP_SAMPLES 1024
/* Start-up fails when more than this share (percent) is stuck or coarse. */
#define JITTER_STARTUP_MAX_PERCENT 90
#define JITTER_MIN_MEMSIZE 4096u
#define JITTER_MAX_MEMSIZE (256u << 20)

/* Derivatives of the timestamp: the delta and the two before it. */
struct jitter_deriv {
	uint64_t last_delta;
	uint64_t last_delta2;
};

/* Oversampling: XOR deltas together so each emitted sample covers osr/3 of them. */
struct jitter_emit {
	unsigned osr;
	unsigned credit; /* thirds of a delta gathered in acc */
	uint8_t acc;
};

/* Test seam: when set, the timestamp every jitter measurement takes. */
extern uint64_t (*jitter_clock_override)(void);

/* Whether delta is stuck: its 1st, 2nd or 3rd derivative of time is zero. */
bool jitter_stuck(struct jitter_deriv *, uint64_t delta);
/* Fold a 64-bit delta into one 8-bit sample (XOR of its bytes). */
uint8_t jitter_fold(uint64_t delta);
void jitter_emit_init(struct jitter_emit *, unsigned osr);
/* Take one non-stuck delta's sample; true with *out set when a sample is due. */
bool jitter_emit_sample(struct jitter_emit *, uint8_t sample, uint8_t *out);
/* The repetition cutoff for stuck deltas at 1/osr bits each (SP 800-90B 4.4.1). */
unsigned jitter_stuck_cutoff(unsigned osr);
/*
 * The start-up verdict on n + 1 timestamps taken around the workload: the
 * clock must move forward, must not be coarse or stuck on more than
 * JITTER_STARTUP_MAX_PERCENT of the deltas, and must not stay stuck for
 * the cutoff in a row. false with why set on failure.
 */
bool jitter_assess(const uint64_t *stamps, size_t n, unsigned osr, char *why, size_t whylen);
/* Parse osr (JITTER_BASE_OSR..JITTER_MAX_OSR) and memsize (bytes, k/M suffix, power of 2). */
int jitter_parse_osr(const char *, unsigned *);
int jitter_parse_memsize(const char *, size_t *);

#endif
