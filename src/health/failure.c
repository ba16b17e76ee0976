/* SPDX-License-Identifier: MIT */
/*
 * One source's failure history: the rngd-style score that suspends a source
 * and the recent failure rate reports quote, kept across reopens so a
 * source cannot clear its record by reconnecting.
 */
#include <string.h>

#include "failure.h"

/* A source with no failures yet. */
void
failure_init(struct failure_history *f)
{
	memset(f, 0, sizeof *f);
}

/* Count a test in the rate window; a full window becomes the one before. */
static void
failure_count(struct failure_history *f, bool failed)
{
	if (f->tests >= FAILURE_RATE_WINDOW) {
		f->last_tests = f->tests;
		f->last_failed = f->failed;
		f->tests = f->failed = 0;
	}
	f->tests++;
	if (failed)
		f->failed++;
}

/* The first test after a suspension: the score starts the probation. */
static void
failure_resume(struct failure_history *f)
{
	if (!f->resumed)
		return;
	f->resumed = false;
	f->score = FAILURE_LIMIT - FAILURE_PROBATION;
}

/* A block was tested: count it, score a failure, forgive per 1000 good. */
void
failure_block(struct failure_history *f, bool failed)
{
	failure_resume(f);
	failure_count(f, failed);
	if (failed) {
		/*
		 * Like rngd, good blocks count towards forgiveness across a
		 * failure: resetting the count would let FIPS's false alarms
		 * (about 1 in 1250 blocks) outpace forgiveness and suspend a
		 * perfect source.
		 */
		f->score++;
		return;
	}
	if (++f->good_streak >= FAILURE_FORGIVE_BLOCKS) {
		f->good_streak = 0;
		if (f->score > 0)
			f->score--;
		if (f->score == 0)
			f->suspensions = 0;
	}
}

/* A raw-sample test failed. */
void
failure_sample(struct failure_history *f)
{
	failure_resume(f);
	failure_count(f, true);
	f->score++;
	f->good_streak = 0;
}

/* Whether the source should be suspended. */
bool
failure_over_limit(const struct failure_history *f)
{
	return f->score >= FAILURE_LIMIT;
}

/* The source was suspended: probation when it returns. */
void
failure_suspended(struct failure_history *f)
{
	f->suspensions++;
	f->resumed = true;
}

/* Whether a suspension is not yet forgiven. */
bool
failure_on_probation(const struct failure_history *f)
{
	return f->suspensions > 0;
}

/* The recent failures and tests, and failures per 1000. */
unsigned
failure_recent(const struct failure_history *f, uint32_t *failed, uint32_t *tests)
{
	uint32_t n = f->tests + f->last_tests, k = f->failed + f->last_failed;

	if (failed != NULL)
		*failed = k;
	if (tests != NULL)
		*tests = n;
	return n == 0 ? 0 : (unsigned)((uint64_t)k * 1000 / n);
}

/* Whether the recent rate is high enough to warn. */
bool
failure_rate_high(const struct failure_history *f)
{
	uint32_t failed, tests;

	failure_recent(f, &failed, &tests);
	return failed >= FAILURE_RATE_MIN_FAILED &&
	    (uint64_t)failed * 1000 > (uint64_t)FAILURE_RATE_WARN_PERMILLE * tests;
}
