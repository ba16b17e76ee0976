/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ESTIMATE_H
#define ENTROPYD_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * SP 800-90B section 6.3 min-entropy estimates of a stream of samples,
 * kept incrementally over a sliding window of the last `window` samples
 * (or over every sample, window 0, for a file), computed the way NIST's
 * ea_non_iid computes them on a file:
 *   6.3.1 Most Common Value (MCV), on the samples as they are ("literal"),
 *         and on their bit string;
 *   6.3.3 Markov, on the bit string;
 *   6.3.8 Lag prediction, on the samples: a predictor that guesses each
 *         sample equals the one d back, for the d (1..128) that was right
 *         most often so far; its hits in the window bound the probability
 *         of guessing a sample (globally, and from the longest run of hits);
 *   6.3.2 Collision, on the bit string (over every sample only: offline).
 * A sample of b bits becomes b bits of the bit string, most significant
 * first, as ea_non_iid expands it; bit-string figures are per bit, and the
 * estimate per sample is min(MCV, b x min(bit-string figures)), the H_I of
 * section 3.1.3 over the estimators run here (ea_non_iid runs seven more,
 * which can only lower it: see ESTIMATE_RAW_MARGIN).
 *
 * The same code serves the daemon (each raw-sample source measured online,
 * and the MCV of byte sources) and entropytest --estimate (a file). Byte
 * sources, which can deliver hundreds of MB/s, are measured over
 * consecutive blocks instead of a sliding window (estimate_init_blocks): a
 * count per byte and no ring, so the measurement costs about a nanosecond a
 * byte.
 */

/* z for the 99 % upper bound on a proportion (ea_non_iid's ZALPHA). */
#define ESTIMATE_ZALPHA 2.5758293035489008
/* No figure from fewer samples than SP 800-90B's start-up test sees. */
#define ESTIMATE_MIN_SAMPLES 1024
/* The daemon's windows: raw samples, and the bytes of byte sources. */
#define ESTIMATE_RAW_WINDOW 65536
#define ESTIMATE_BYTE_WINDOW 16384
/* A window's figures are recomputed each time this share of it is new. */
#define ESTIMATE_REFRESH_DIVISOR 16
/* 6.3.8's D: the lags the predictor tries. */
#define ESTIMATE_LAG_DEPTH 128

/*
 * The credit rules (entropyd(8), ONLINE ENTROPY ESTIMATES).
 * Raw samples: what is credited per sample is at most the estimate divided
 * by ESTIMATE_RAW_MARGIN; three of SP 800-90B's ten estimators run online,
 * and the others (t-tuple, LRS, the other predictors) can find structure
 * they miss.
 * Bytes (whitened or DRBG output): such output looks full-entropy to any
 * estimator, so the MCV cannot confirm a claim, only refute it; perfect bytes
 * measure about 7.2 bits over ESTIMATE_BYTE_WINDOW. The claim stands while
 * the estimate is at least ESTIMATE_BYTE_KEEP of it; below, the credit is
 * the estimate itself.
 */
#define ESTIMATE_RAW_MARGIN 2.0
#define ESTIMATE_BYTE_KEEP 0.75
/* A lowered credit is this share of what the estimate supports, so the
 * window's fluctuations do not lower it again at every refresh. */
#define ESTIMATE_HEADROOM 0.9

/* The figures of one window; bit-string figures are negative when not kept. */
struct estimate_result {
	uint64_t samples;       /* in the window */
	unsigned sample_bits;
	uint64_t mode;          /* the most common value's count */
	double mcv;             /* 6.3.1 on the samples: bits per sample */
	double mcv_bits;        /* 6.3.1 on the bit string: bits per bit */
	double markov_bits;     /* 6.3.3: bits per bit */
	double collision_bits;  /* 6.3.2: bits per bit */
	double lag;             /* 6.3.8: bits per sample */
	uint64_t lag_hits;      /* its correct predictions in the window */
	uint64_t lag_run;       /* and the longest run of them */
	double markov;          /* markov_bits x sample_bits: bits per sample */
	double min;             /* the estimate: bits per sample */
};

struct estimate {
	unsigned sample_bits;   /* 1..16 */
	uint32_t mask;
	bool bits;              /* keep the bit-string figures */
	bool collision;         /* keep the collision figure (window 0 only) */
	size_t window;          /* samples kept; 0: every sample */
	bool blocks;            /* consecutive blocks of window samples, not a sliding window */
	bool fresh;             /* blocks: a block ended since estimate_refresh */
	uint64_t first_at;      /* estimate_refresh gives figures from this many samples */
	void *ring;             /* the window: uint8_t or uint16_t samples */
	size_t head;            /* the oldest sample in the ring */
	uint64_t n;             /* samples in the window */
	uint64_t total;         /* samples ever taken */
	uint32_t *counts;       /* per value, in the window */
	uint8_t (*bit_table)[5]; /* per value up to 8 bits: zeros, pairs 00 01 10 11 inside */
	uint64_t zeros;         /* zero bits of the window's bit string */
	uint64_t pairs[4];      /* its adjacent bit pairs: 00, 01, 10, 11 */
	uint32_t newest;
	/* 6.3.8: the last ESTIMATE_LAG_DEPTH samples twice over (all of them in
	 * a row from lag_pos), each lag's score, the winning lag (0: one back),
	 * and which samples of the window it predicted (a bit each, in ring
	 * order). */
	bool lag;
	uint16_t lag_hist[2 * ESTIMATE_LAG_DEPTH]; /* newest first from lag_pos */
	uint8_t lag_hist8[2 * ESTIMATE_LAG_DEPTH]; /* the same for samples of up to 8 bits */
	unsigned lag_pos;
	uint64_t lag_score[ESTIMATE_LAG_DEPTH];
	unsigned lag_winner;
	uint64_t lag_high;
	uint64_t *lag_hit;      /* window bits, or NULL over every sample */
	uint64_t lag_hits;      /* hits in the window */
	uint64_t lag_run, lag_max_run; /* over every sample (window 0) */
	/* 6.3.2 over every bit: the group in progress, and the sums over groups. */
	unsigned col_held;      /* bits of the current group seen (0..2) */
	unsigned col_first;
	uint64_t col_groups, col_sum, col_sum_sq;
	/* The figures computed last, and the total they were computed at. */
	struct estimate_result last;
	bool have_last;
	uint64_t last_at;
};

/*
 * sample_bits 1..16; window 0 keeps every sample (no ring, for files);
 * bits: also the bit-string figures and the Lag prediction; collision:
 * also 6.3.2 (window 0 only). Memory is taken on the first sample.
 */
void estimate_init(struct estimate *, unsigned sample_bits, size_t window, bool bits,
    bool collision);
/*
 * The Most Common Value of samples over consecutive blocks of block samples,
 * each block's figures computed when it ends (no ring: for byte sources).
 */
void estimate_init_blocks(struct estimate *, unsigned sample_bits, size_t block);
void estimate_free(struct estimate *);
/* Forget every sample. */
void estimate_reset(struct estimate *);
/* Take one sample (masked to sample_bits). */
void estimate_sample(struct estimate *, uint32_t sample);
/* Take bytes as 8-bit samples. */
void estimate_bytes(struct estimate *, const uint8_t *buf, size_t len);
/* The figures of the window now; false (nothing set) below ESTIMATE_MIN_SAMPLES. */
bool estimate_compute(const struct estimate *, struct estimate_result *);
/*
 * Recompute the figures into e->last when enough is new: the first time
 * once the window holds first_at samples (ESTIMATE_MIN_SAMPLES unless set),
 * then each 1/ESTIMATE_REFRESH_DIVISOR of a window; over blocks, when a
 * block ended. True when there are new figures.
 */
bool estimate_refresh(struct estimate *);

/* The formulas, on counts: each is a min-entropy in bits. */
/* 6.3.1: -log2 of the 99 % upper bound on mode / n. */
double estimate_mcv_formula(uint64_t mode, uint64_t n);
/* 6.3.3 from the bit pairs (00, 01, 10, 11) and the zeros of n bits: per bit. */
double estimate_markov_formula(const uint64_t pairs[4], uint64_t zeros, uint64_t n);
/* 6.3.2 from the groups, the sum of their lengths and of the squares: per bit. */
double estimate_collision_formula(uint64_t groups, uint64_t sum, uint64_t sum_sq);
/*
 * A predictor's estimate (6.3.7 to 6.3.10): hits correct of n predictions,
 * the longest run of hits, k possible values: -log2 of the largest of 1/k,
 * the 99 % bound on hits / n, and the probability a run that long implies.
 */
double estimate_predictor_formula(uint64_t hits, uint64_t n, uint64_t run, uint64_t k);

/*
 * What the measurement supports per unit (raw: sample; else byte): the
 * claim while the estimate allows it, else less (the rules above). Never
 * above the claim.
 */
double estimate_credit_target(double claim, double estimate, bool raw);
/*
 * The credit to apply, given the one in force and the target: lowered at
 * once, to ESTIMATE_HEADROOM of the target, when the target is below it;
 * else unchanged. It is never raised again: a window's figures swing with
 * the longest run of correct guesses it happens to hold, and following them
 * up would credit the good stretches of a source whose long-run figure is
 * the low one.
 */
double estimate_next_credit(double credit, double target);

#endif
