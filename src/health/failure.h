/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FAILURE_H
#define ENTROPYD_FAILURE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One source's failure history, kept for as long as the source is known:
 * across reopens (a FIFO writer reconnecting) and across suspension and
 * re-probe, so a source cannot clear its record by reconnecting.
 *
 * The score, as rngd keeps it: one point per failed block (or raw-sample
 * test failure), one point forgiven per FAILURE_FORGIVE_BLOCKS good blocks;
 * at FAILURE_LIMIT the source is suspended. A suspended source comes back
 * on probation: its score starts at FAILURE_LIMIT - FAILURE_PROBATION, so a
 * few more failures suspend it again (and the engine doubles its backoff
 * each time) until good blocks bring the score back to 0.
 *
 * The recent rate: failures per test over the last one to two windows of
 * FAILURE_RATE_WINDOW tests. It is high above FAILURE_RATE_WARN_PERMILLE
 * with at least FAILURE_RATE_MIN_FAILED failures (good data fails about
 * 0.8 blocks per 1000, so 8 failures among at most 1024 tests happen by
 * chance about once in a million windows): /health then warns, and the
 * source no longer counts as healthy.
 */
#define FAILURE_LIMIT 25
#define FAILURE_FORGIVE_BLOCKS 1000
/*
 * Ten, not fewer: a good source's score wanders (FIPS 140-2 false alarms,
 * 0.73 per 1000 blocks, against one point forgiven per 1000), and from 10
 * below the limit it reaches it again about once in 2000 returns (from 5
 * below: once in 45).
 */
#define FAILURE_PROBATION 10
#define FAILURE_RATE_WINDOW 512u
/* 10 per 1000: good data fails FIPS 140-2 about 0.8 times per 1000 blocks. */
#define FAILURE_RATE_WARN_PERMILLE 10
#define FAILURE_RATE_MIN_FAILED 8

struct failure_history {
	unsigned score;          /* rises per failure, falls per FAILURE_FORGIVE_BLOCKS good */
	unsigned good_streak;    /* good blocks since the last forgiveness */
	unsigned suspensions;    /* suspensions since the score was last 0 */
	bool resumed;            /* suspended: the next test starts the probation */
	uint32_t tests, failed;  /* the current rate window */
	uint32_t last_tests, last_failed; /* the window before it */
};

void failure_init(struct failure_history *);
/* A block was tested: failed or good. */
void failure_block(struct failure_history *, bool failed);
/* A raw-sample health test failed (it also ends the good streak). */
void failure_sample(struct failure_history *);
/* Whether the score reached FAILURE_LIMIT. */
bool failure_over_limit(const struct failure_history *);
/* The source was suspended: on its return it is on probation. */
void failure_suspended(struct failure_history *);
/* Whether the source was suspended since its score was last 0. */
bool failure_on_probation(const struct failure_history *);
/* Failed and total tests of the recent window(s); returns failures per 1000. */
unsigned failure_recent(const struct failure_history *, uint32_t *failed, uint32_t *tests);
/* Whether the recent rate is high (see above). */
bool failure_rate_high(const struct failure_history *);

#endif
