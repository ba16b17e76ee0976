/* SPDX-License-Identifier: MIT */
/*
 * Source ABI 1.1: host->defer (calls from any thread made on the loop's
 * thread, in order; dropped with their module), host->instance_gone, and
 * the optional descriptor shutdown.
 */
#include <pthread.h>
#include <string.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "defer.h"
#include "registry.h"

#define TEST_CALLS 1000

static struct event_base *base;
static pthread_t loop_thread;
static int calls_made, out_of_order, off_loop;
static struct entropyd_module *seen_module;

/* A deferred call: counts, checks its order and its thread; the last ends the loop. */
static void
test_call(struct entropyd_module *m, void *arg)
{
	if ((intptr_t)arg != calls_made)
		out_of_order++;
	if (!pthread_equal(pthread_self(), loop_thread))
		off_loop++;
	seen_module = m;
	if (++calls_made == TEST_CALLS)
		event_base_loopbreak(base);
}

/* Another thread: defer TEST_CALLS calls through the host table. */
static void *
test_deferrer(void *module)
{
	intptr_t i;

	for (i = 0; i < TEST_CALLS; i++)
		registry_host()->defer(module, test_call, (void *)i);
	return NULL;
}

static void
setup(void)
{
	base = event_base_new();
	loop_thread = pthread_self();
	calls_made = out_of_order = off_loop = 0;
	seen_module = NULL;
}

static void
teardown(void)
{
	defer_detach();
	defer_drop(NULL);
	event_base_free(base);
}

TestSuite(defer, .init = setup, .fini = teardown, .timeout = 60);

Test(defer, calls_from_another_thread_run_on_the_loop_in_order)
{
	struct entropyd_module *m = (struct entropyd_module *)&base;
	pthread_t t;

	cr_assert(ENTROPYD_HOST_HAS(registry_host(), defer));
	cr_assert_eq(defer_attach(base), 0);
	cr_assert_eq(pthread_create(&t, NULL, test_deferrer, m), 0);
	event_base_dispatch(base);
	pthread_join(t, NULL);
	cr_assert_eq(calls_made, TEST_CALLS);
	cr_assert_eq(out_of_order, 0);
	cr_assert_eq(off_loop, 0);
	cr_assert_eq(seen_module, m);
}

Test(defer, calls_queued_before_the_loop_run_once_it_is_attached)
{
	test_deferrer(NULL);
	cr_assert_eq(calls_made, 0);
	cr_assert_eq(defer_attach(base), 0);
	event_base_dispatch(base);
	cr_assert_eq(calls_made, TEST_CALLS);
	cr_assert_eq(out_of_order, 0);
}

static int dropped_ran;

/* A call that must never be made. */
static void
test_dropped(struct entropyd_module *m, void *arg)
{
	dropped_ran++;
}

Test(defer, dropping_a_module_drops_only_its_calls)
{
	struct entropyd_module *gone = (struct entropyd_module *)&dropped_ran;
	intptr_t i;

	dropped_ran = 0;
	for (i = 0; i < TEST_CALLS; i++) {
		registry_host()->defer(gone, test_dropped, NULL);
		registry_host()->defer(NULL, test_call, (void *)i);
	}
	defer_drop(gone);
	cr_assert_eq(defer_attach(base), 0);
	event_base_dispatch(base);
	cr_assert_eq(calls_made, TEST_CALLS);
	cr_assert_eq(dropped_ran, 0);
}

static struct entropyd_instance *gone_instance;
static char gone_reason[64];

/* The engine's hook, recorded. */
static void
test_gone(struct entropyd_instance *inst, const char *reason)
{
	gone_instance = inst;
	snprintf(gone_reason, sizeof gone_reason, "%s", reason);
}

static int shutdowns;

static int
test_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	return 0;
}

static void
test_shutdown(struct entropyd_module *m)
{
	cr_assert(TAILQ_EMPTY(&m->instances), "shutdown after the instances are gone");
	shutdowns++;
}

static struct entropyd_source test_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "deftest",
	.entropy_bits = 1.0, /* every descriptor claims something (registry_check_claims) */
	.probe = test_probe,
	.shutdown = test_shutdown,
};

Test(defer, instance_gone_reaches_the_engine_and_shutdown_follows_the_instances)
{
	static const struct registry_hooks hooks = { .gone = test_gone };
	struct entropyd_instance *inst;
	struct entropyd_module *m;
	char err[128];

	cr_assert_geq(ENTROPYD_SOURCE_ABI_MINOR, 1);
	cr_assert(ENTROPYD_HOST_HAS(registry_host(), instance_gone));
	registry_set_hooks(&hooks);
	cr_assert_eq(registry_add(&test_source, NULL, err, sizeof err), 0, "%s", err);
	m = registry_find("deftest");
	inst = registry_host()->add_instance(m, "k1", "/dev/k1", NULL);
	registry_host()->instance_gone(inst, "unplugged");
	cr_assert_eq(gone_instance, inst);
	cr_assert_str_eq(gone_reason, "unplugged");
	registry_remove_module(m);
	cr_assert_eq(shutdowns, 1);

	/* A 1.0 descriptor ends before shutdown: the daemon must not call it. */
	test_source.size = (uint32_t)offsetof(struct entropyd_source, shutdown);
	cr_assert_eq(registry_add(&test_source, NULL, err, sizeof err), 0, "%s", err);
	registry_remove_module(registry_find("deftest"));
	cr_assert_eq(shutdowns, 1);
}
