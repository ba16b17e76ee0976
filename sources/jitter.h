/* SPDX-License-Identifier: MIT */
/*
 * The jitter source's pure parts, exposed for its tests: stuck-sample
 * detection by derivatives, folding a delta into a sample, the oversampling
 * accounting, the start-up assessment, option parsing, and the timestamp
 * seam.
 */
#ifndef ENTROPYD_JITTER_H
#define ENTROPYD_JITTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "estimate.h"

/* Per emitted sample the descriptor claims 1/JITTER_BASE_OSR bits. */
#define JITTER_BASE_OSR 3
#define JITTER_MAX_OSR 64
/* Start-up: SP 800-90B's 1024 delivered samples, assessed before any is used. */
#define JITTER_STARTUP_SAMPLES 1024
/* Start-up fails when more than this share (percent) of the deltas is stuck. */
#define JITTER_STARTUP_MAX_PERCENT 90
/* Start-up refuses a clock whose samples support less credit per sample. */
#define JITTER_MIN_BITS (1.0 / 64)
#define JITTER_MIN_QUANTIZE_HZ 1000u
#define JITTER_MAX_QUANTIZE_HZ 1000000000u
#define JITTER_MIN_MEMSIZE 4096u
#define JITTER_MAX_MEMSIZE (256u << 20)
/*
 * A coarse clock whose samples do not support the claim: the work per
 * sample doubles, up to
 * 2^JITTER_MAX_GROWTH times, the buffer with it (memsize auto) up to
 * JITTER_GROWN_MEMSIZE, judged each time on JITTER_GROW_SAMPLES warm
 * samples, until they support the claim and the work spans
 * JITTER_COARSE_STEPS steps.
 */
#define JITTER_MAX_GROWTH 6
#define JITTER_GROWN_MEMSIZE (2u << 20)
#define JITTER_GROW_SAMPLES 16384
/* A clock is coarse when the work spans fewer of its steps (24 MHz: 26; a TSC: 3000). */
#define JITTER_COARSE_STEPS 256
/*
 * Growth stops once the start-up look supports JITTER_GROW_MARGIN times the
 * claim: taken in one burst at start-up, it measures more than the online
 * estimate later finds over a sliding window (twice as much at 24 MHz).
 */
#define JITTER_GROW_MARGIN 2.0
/* Timed work thrown away before judging: a fresh buffer's first touches fault. */
#define JITTER_WARMUP_SAMPLES 64

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

/* The start-up assessment, fed one timestamp at a time. */
struct jitter_assessor {
	struct jitter_deriv deriv;
	struct jitter_emit emit;
	struct estimate est;   /* of the samples as they would be delivered */
	uint64_t last_stamp, sum_delta;
	bool have_stamp, backwards;
	size_t deltas, stuck, samples, max_deltas;
	unsigned run, max_run, cutoff;
};

/* What start-up found. */
struct jitter_verdict {
	size_t deltas, stuck, samples;
	double mean_delta;            /* in clock units */
	struct estimate_result est;   /* of the samples */
	double supported;             /* credit per sample the estimate supports, at most the claim */
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
void jitter_assess_init(struct jitter_assessor *, unsigned osr);
void jitter_assess_free(struct jitter_assessor *);
/* One more timestamp taken around the workload. */
void jitter_assess_stamp(struct jitter_assessor *, uint64_t stamp);
/*
 * Enough for a verdict: JITTER_STARTUP_SAMPLES samples delivered, a failure
 * already certain, or four times the deltas those samples should need.
 */
bool jitter_assess_done(const struct jitter_assessor *);
/*
 * The verdict: the clock must move forward, must not be stuck on more than
 * JITTER_STARTUP_MAX_PERCENT of the deltas nor for the repetition cutoff in
 * a row, must give JITTER_STARTUP_SAMPLES samples, and their entropy
 * estimate must support at least JITTER_MIN_BITS per sample
 * (estimate_credit_target of claim). false with why set on failure; v is
 * filled either way.
 */
bool jitter_assess_verdict(struct jitter_assessor *, double claim, struct jitter_verdict *v,
    char *why, size_t whylen);
/* The same on n + 1 timestamps. */
bool jitter_assess(const uint64_t *stamps, size_t n, unsigned osr, double claim,
    struct jitter_verdict *v, char *why, size_t whylen);
/* Parse osr (JITTER_BASE_OSR..JITTER_MAX_OSR) and memsize (bytes, k/M suffix, power of 2). */
int jitter_parse_osr(const char *, unsigned *);
int jitter_parse_memsize(const char *, size_t *);
/* Parse quantize_hz: 0, or JITTER_MIN_QUANTIZE_HZ..JITTER_MAX_QUANTIZE_HZ with k/M/G. */
int jitter_parse_hz(const char *, uint64_t *);

#endif
