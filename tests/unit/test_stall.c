/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <criterion/criterion.h>

#include "options.h"
#include "registry.h"
#include "stall.h"

#define S 1000000000ull

Test(stall, wanted_and_silent_for_the_timeout_is_stalled)
{
	struct stall s;

	stall_init(&s, 10000);
	cr_expect_eq(stall_want(&s, true, 100 * S), 10 * S, "a deadline 10 s ahead");
	cr_expect(!stall_check(&s, 105 * S));
	cr_expect_eq(stall_want(&s, true, 105 * S), 5 * S, "wanting again does not restart the clock");
	cr_expect(stall_check(&s, 110 * S));
	cr_expect(s.stalled);
	cr_expect_eq(stall_want(&s, true, 111 * S), 0, "no timer while stalled");
	cr_expect(!stall_check(&s, 200 * S), "stalled once, not again");
	cr_expect(stall_delivered(&s), "bytes end the stall");
	cr_expect(!s.stalled);
	cr_expect_eq(stall_want(&s, true, 201 * S), 10 * S, "the clock starts afresh");
}

Test(stall, nothing_wanted_means_no_timer_and_no_stall)
{
	struct stall s;

	stall_init(&s, 10000);
	cr_expect_eq(stall_want(&s, false, 100 * S), 0, "an idle daemon arms nothing");
	cr_expect(!stall_check(&s, 1000 * S), "a source nobody asked is never stalled");
	stall_want(&s, true, 1000 * S);
	cr_expect_eq(stall_want(&s, false, 1005 * S), 0, "the reserve filled: the clock stops");
	cr_expect(!stall_check(&s, 1011 * S));
	cr_expect_eq(stall_want(&s, true, 1020 * S), 10 * S, "wanted again: a full timeout");
}

Test(stall, bytes_restart_the_clock)
{
	struct stall s;

	stall_init(&s, 10000);
	stall_want(&s, true, 100 * S);
	cr_expect(!stall_delivered(&s), "not stalled before");
	cr_expect_eq(stall_want(&s, true, 108 * S), 10 * S);
	cr_expect(!stall_check(&s, 112 * S), "8 s + 4 s with bytes between: not stalled");
}

Test(stall, a_timeout_of_0_never_stalls)
{
	struct stall s;

	stall_init(&s, 0);
	cr_expect_eq(stall_want(&s, true, 100 * S), 0);
	cr_expect(!stall_check(&s, 100000 * S));
}

Test(stall, stop_forgets_the_clock)
{
	struct stall s;

	stall_init(&s, 1000);
	stall_want(&s, true, 100 * S);
	cr_expect(stall_check(&s, 101 * S));
	stall_stop(&s);
	cr_expect(!s.stalled);
	cr_expect(!stall_check(&s, 200 * S));
}

static const struct entropyd_option claims_stall_options[] = {
	{ OPTIONS_STALL_TIMEOUT_KEY, "5", "a module may not take the daemon's key" },
	{ NULL, NULL, NULL },
};

static const struct entropyd_source stall_src = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "stalltest",
	.description = "a source for the stall option",
	.entropy_bits = 8.0, /* a claim in range: the claims are checked at load too */
};

static const struct entropyd_source claims_stall_src = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "claimsstall",
	.description = "declares stall_timeout itself",
	.entropy_bits = 8.0,
	.options = claims_stall_options,
};

Test(stall, the_timeout_is_a_daemon_option_of_every_source)
{
	char *argv[] = { "entropyd", "-O", "stalltest:stall_timeout:7", NULL };
	struct entropyd_module *m;
	struct config cfg;
	char err[256];

	cr_assert_eq(registry_add(&claims_stall_src, NULL, err, sizeof err), -1);
	cr_expect_not_null(strstr(err, "reserved"), "%s", err);
	cr_assert_eq(registry_add(&stall_src, NULL, err, sizeof err), 0, "%s", err);
	m = registry_find("stalltest");
	cr_expect_eq(m->stall_timeout_ms, OPTIONS_STALL_TIMEOUT_DEFAULT_S * 1000u, "10 s by default");
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), 0, "%s", err);
	cr_assert_eq(registry_configure(&cfg, NULL, err, sizeof err), 0, "%s", err);
	cr_expect_eq(m->stall_timeout_ms, 7000);
	options_free(&cfg);
	registry_free();
}
