/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>

#include "failure.h"

/* n tests, each failed or good. */
static void
blocks(struct failure_history *f, unsigned n, bool failed)
{
	while (n-- > 0)
		failure_block(f, failed);
}

Test(failure, suspends_at_the_limit_and_forgives_per_1000_good)
{
	struct failure_history f;

	failure_init(&f);
	blocks(&f, FAILURE_LIMIT - 1, true);
	cr_expect(!failure_over_limit(&f));
	blocks(&f, FAILURE_FORGIVE_BLOCKS, false);
	cr_expect_eq(f.score, FAILURE_LIMIT - 2, "1000 good blocks forgive one failure");
	failure_block(&f, true);
	cr_expect(!failure_over_limit(&f));
	failure_block(&f, true);
	cr_expect(failure_over_limit(&f));
}

Test(failure, a_suspended_source_returns_on_probation)
{
	struct failure_history f;

	failure_init(&f);
	blocks(&f, FAILURE_LIMIT, true);
	cr_assert(failure_over_limit(&f));
	failure_suspended(&f);
	cr_expect(failure_on_probation(&f));
	cr_expect(failure_over_limit(&f), "the score stands while it is suspended");
	failure_block(&f, false); /* re-probed: the first block after it */
	cr_expect_eq(f.score, FAILURE_LIMIT - FAILURE_PROBATION);
	cr_expect(!failure_over_limit(&f));
	blocks(&f, FAILURE_PROBATION - 1, true);
	cr_expect(!failure_over_limit(&f));
	failure_block(&f, true);
	cr_expect(failure_over_limit(&f), "%d more failures suspend it again", FAILURE_PROBATION);
	failure_suspended(&f);
	cr_expect_eq(f.suspensions, 2, "the engine doubles the backoff per suspension");
}

Test(failure, probation_ends_when_the_score_is_forgiven)
{
	struct failure_history f;

	failure_init(&f);
	blocks(&f, FAILURE_LIMIT, true);
	failure_suspended(&f);
	blocks(&f, (FAILURE_LIMIT - FAILURE_PROBATION) * FAILURE_FORGIVE_BLOCKS, false);
	cr_expect_eq(f.score, 0);
	cr_expect(!failure_on_probation(&f));
}

Test(failure, raw_failures_count_and_end_the_good_streak)
{
	struct failure_history f;

	failure_init(&f);
	blocks(&f, 999, false);
	failure_sample(&f);
	cr_expect_eq(f.score, 1);
	cr_expect_eq(f.good_streak, 0);
}

Test(failure, the_recent_rate_covers_one_to_two_windows)
{
	struct failure_history f;
	uint32_t failed, tests;

	failure_init(&f);
	cr_expect_eq(failure_recent(&f, &failed, &tests), 0);
	cr_expect_eq(tests, 0);
	blocks(&f, 90, false);
	blocks(&f, 10, true);
	cr_expect_eq(failure_recent(&f, &failed, &tests), 100, "10 of 100: 100 per 1000");
	cr_expect_eq(failed, 10);
	/* Two windows of good blocks later the failures are forgotten. */
	blocks(&f, 2 * FAILURE_RATE_WINDOW, false);
	cr_expect_eq(failure_recent(&f, &failed, &tests), 0);
	cr_expect_eq(failed, 0);
	cr_expect_geq(tests, FAILURE_RATE_WINDOW);
	cr_expect_leq(tests, 2 * FAILURE_RATE_WINDOW);
	/* Good data fails about 0.8 blocks in 1000: under the warning rate. */
	blocks(&f, 1, true);
	cr_expect_lt(failure_recent(&f, NULL, NULL), FAILURE_RATE_WARN_PERMILLE);
}
