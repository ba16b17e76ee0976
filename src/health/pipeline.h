/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PIPELINE_H
#define ENTROPYD_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "condition.h"
#include "estimate.h"
#include "failure.h"
#include "fips.h"
#include "repeat.h"
#include "reserve.h"
#include "sp80090b.h"

/*
 * One source instance's data path, free of I/O. Bytes from a source go
 * through the raw-sample health tests (sources that declare raw samples),
 * FIPS 140-2 and SHA-256 conditioning into the reserve:
 *   whitened bytes: FIPS on the bytes, then conditioning;
 *   raw samples:    RCT/APT on the samples, conditioning, then FIPS on the
 *                   conditioned bytes (FIPS on raw noise would reject it).
 * Before either, the repeated-output test (repeat.c) holds the bytes back
 * until it knows whether they repeat recent output: a FIPS block holding a
 * repeated byte fails the test "repeat"; repeated raw samples are discarded
 * like samples failing RCT/APT.
 * A block that fails a test is discarded and counted, never reaching the
 * reserve. The conditioner decides the credit of each output (full entropy
 * for a credited source, unit_bits > 0; nothing otherwise), capped per byte
 * by the operator (-e), and the reserve carries it to the sink with the
 * bytes: no sink computes a credit of its own.
 *
 * Everything a source delivers is also measured (src/health/estimate.c):
 * raw samples by the MCV and Markov estimates over a window of
 * ESTIMATE_RAW_WINDOW samples, bytes by the MCV over ESTIMATE_BYTE_WINDOW.
 * Before the bytes of a read are tested, the credit per unit is lowered
 * when the window's estimate supports less (estimate_credit_target); it is
 * never raised again. Lowering discards what was conditioned at the old
 * figure, as pipeline_recredit does.
 */

/* rngd's policy: suspend at 25 failures, forgive one per 1000 good blocks (failure.h). */
#define PIPELINE_FAILURE_LIMIT FAILURE_LIMIT
#define PIPELINE_FORGIVE_BLOCKS FAILURE_FORGIVE_BLOCKS
/* The largest read pipeline_next_read() asks for once a source is warm. */
#define PIPELINE_READ_MAX 32768
/* Raw-sample sources are read in pieces of this size. */
#define PIPELINE_RAW_READ 4096

enum pipeline_test {
	PIPELINE_TEST_MONOBIT = FIPS_MONOBIT,
	PIPELINE_TEST_POKER = FIPS_POKER,
	PIPELINE_TEST_RUNS = FIPS_RUNS,
	PIPELINE_TEST_LONG_RUN = FIPS_LONG_RUN,
	PIPELINE_TEST_CONTINUOUS = FIPS_CONTINUOUS,
	PIPELINE_TEST_RCT,
	PIPELINE_TEST_APT,
	PIPELINE_TEST_REPEAT,     /* repeats recent output (repeat.c) */
	PIPELINE_NTESTS
};

struct pipeline_counters {
	uint64_t bytes_read;      /* from the source */
	uint64_t blocks_tested;   /* FIPS blocks */
	uint64_t blocks_passed;
	uint64_t blocks_failed;
	uint64_t samples_tested;  /* raw samples */
	uint64_t samples_discarded; /* raw samples not used (start-up, failures) */
	uint64_t test_failures[PIPELINE_NTESTS];
	uint64_t bytes_conditioned; /* put in the reserve */
	uint64_t bytes_taken;     /* taken by a sink */
	uint64_t bits_credited;   /* credited by the kernel sink */
	uint64_t credit_lowered;  /* times the estimate lowered the credit */
};

struct pipeline {
	bool raw;                 /* raw samples: RCT/APT first */
	size_t sample_bytes;      /* 1 or 2 */
	unsigned sample_mask;
	double unit_bits;         /* credited bits per byte or per sample, now */
	double claim_bits;        /* the most unit_bits may be: the source's claim */
	unsigned credit_cap;      /* at most this many bits credited per output byte (-e) */
	struct estimate *est;     /* the online estimate, or NULL when off */
	/* The estimate's figures when it last lowered the credit: what the log and reports quote. */
	struct estimate_result decided;
	bool have_decided;
	struct sp80090b health;
	uint8_t sample_carry;     /* low byte of a 2-byte sample split across reads */
	bool have_carry;
	struct fips_ctx fips;
	uint8_t bootstrap[FIPS_BOOTSTRAP_BYTES];
	size_t bootstrap_len;
	uint8_t block[FIPS_BLOCK_BYTES];
	size_t block_len;
	uint64_t block_credit;    /* raw path: the credit the block's bytes carry */
	bool warm;                /* a block was tested since the last (re)start */
	struct conditioner cond;
	struct reserve reserve;
	struct failure_history failures; /* kept across restarts */
	struct repeat repeat;     /* the repeated-output test; its history is kept across restarts */
	bool check_repeats;       /* false: --no-repeat-test */
	bool block_repeated;      /* the block being gathered holds a repeated byte */
	bool raw_repeating;       /* raw path: inside a repeated stretch */
	bool carry_repeated;      /* raw path: the carried half sample was repeated */
	struct pipeline_counters count;
};

/*
 * raw: the source yields samples of sample_bits (1..16); unit_bits is the
 * assessed min-entropy per byte (or per sample when raw), 0 for none.
 */
void pipeline_init(struct pipeline *, bool raw, unsigned sample_bits, double unit_bits);
void pipeline_free(struct pipeline *);
/*
 * Restart the tests after a reopen; the reserve, the counters, the failure
 * history and the repeat test's history stay.
 */
void pipeline_restart(struct pipeline *);
/*
 * Bytes held from the source that have not reached a sink: the reserve, a
 * partial FIPS block, input absorbed by the conditioner but not yet output,
 * half a two-byte sample, and what the repeat test holds back (the
 * bootstrap word is never output: not counted).
 */
size_t pipeline_held(const struct pipeline *);
/*
 * The VM generation changed (a snapshot was restored or cloned): wipe every
 * byte held, as pipeline_held() counts them, and the bootstrap word, so
 * nothing read before reaches a sink. The raw-sample health tests, the
 * failure score and the counters stay: they describe the source, not the
 * bytes. Returns the bytes discarded.
 */
size_t pipeline_forget(struct pipeline *);
/*
 * Credit unit_bits per unit from now on: what was absorbed or conditioned at
 * the old figure and not taken is discarded (the reserve too, unless the
 * figure rose), and the health tests start afresh with the new figure;
 * counters and estimates stay.
 */
void pipeline_recredit(struct pipeline *, double unit_bits);
/*
 * Lower the claim (the ceiling of the credit) to bits, and the credit with
 * it; never raises it. Returns the claim in force.
 */
double pipeline_limit(struct pipeline *, double bits);
/* Measure the input online (the default) or not. */
void pipeline_estimating(struct pipeline *, bool on);
/* The latest figures of the online estimate, or NULL before the first. */
const struct estimate_result *pipeline_estimate_result(const struct pipeline *);
/* Leave out the repeated-output test (--no-repeat-test). */
void pipeline_skip_repeats(struct pipeline *);
/* The input ended for good: test and pass on what the repeat test holds back. */
void pipeline_end_input(struct pipeline *);
/* The source was suspended for its failures: it returns on probation (failure.h). */
void pipeline_suspended(struct pipeline *);
/* Whether the source was suspended since its failure score was last 0. */
bool pipeline_on_probation(const struct pipeline *);
/* At most bits_per_byte (1..8) credited per output byte; 8 unless set. */
void pipeline_cap_credit(struct pipeline *, unsigned bits_per_byte);
/* Push bytes read from the source through the tests into the reserve. */
void pipeline_input(struct pipeline *, const uint8_t *buf, size_t len);
/* True when failures crossed PIPELINE_FAILURE_LIMIT (the source should be suspended). */
bool pipeline_failing(const struct pipeline *);
/* Whether the source is credited at all. */
bool pipeline_credited(const struct pipeline *);
/* True once raw-sample start-up tests passed (always true for byte sources). */
bool pipeline_started(const struct pipeline *);
/*
 * How many bytes to ask the source for. Until a block was tested since the
 * last (re)start: exactly what completes the next block, so the first output
 * comes as early as possible. After that: what completes the next block plus
 * as many whole blocks as half the reserve's free room needs as input, at
 * most PIPELINE_READ_MAX, so a fast source is read in few large pieces and
 * a second one can be read while the first is put through.
 */
size_t pipeline_next_read(const struct pipeline *);
/*
 * Whether a second read of pipeline_next_read() bytes may start before the
 * first was put through: the source is warm and the reserve's free room
 * takes the output of both (so reading ahead never overflows it).
 */
bool pipeline_read_ahead(const struct pipeline *);
/*
 * A sink takes up to len conditioned bytes: returns how many, and the
 * entropy they carry in *credit_bits (what the conditioner decided). Counted
 * as taken.
 */
size_t pipeline_take(struct pipeline *, uint8_t *buf, size_t len, unsigned *credit_bits);
/* The kernel accepted bits of credit for what was taken: count them. */
void pipeline_note_credit(struct pipeline *, unsigned bits);
/* The label of a test for logs and metrics. */
const char *pipeline_test_key(enum pipeline_test);

#endif
