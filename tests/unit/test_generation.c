/* SPDX-License-Identifier: MIT */
/*
 * The worker's generation: a new ID only after the reseed that follows a
 * change (with the kernel sink), one ID for changes that came together,
 * one HOOKS request per ID and never another for the same change, IDs
 * drawn afresh each time, and what the supervisor's reports come to.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "clock.h"
#include "generation.h"
#include "hookclient.h"
#include "log.h"

static char dir[] = "/tmp/entropyd-generation.XXXXXX";
static char path[96];
static struct event_base *base;
static int super;            /* the supervisor's end of the hooks' socket */
static unsigned published;

static void
on_published(void *arg)
{
	published++;
}

static void
setup(void)
{
	int sv[2];

	log_init("test_generation", LOG_TO_STDERR, -1);
	cr_assert_not_null(mkdtemp(dir));
	/* The directory must exist: only the default runtime directory is made. */
	snprintf(path, sizeof path, "%s/run", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/run/generation", dir);
	cr_assert_not_null(base = event_base_new());
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	hookclient_attach(sv[0]);
	super = sv[1];
	published = 0;
}

static void
teardown(void)
{
	char cmd[160];

	generation_stop();
	close(super);
	event_base_free(base);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
}

TestSuite(generation, .init = setup, .fini = teardown);

/* The ID in the file now. */
static void
file_id(char *id)
{
	cr_assert_eq(genfile_read(path, id), 0, "%s: %s", path, strerror(errno));
}

/* The HOOKS requests the supervisor received since the last call. */
static unsigned
hooks_requests(struct feedproto_hooks *last)
{
	uint8_t buf[FEEDPROTO_MAX_FRAME];
	struct feedproto_frame f;
	unsigned n = 0;
	ssize_t len;

	while ((len = recv(super, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
		cr_assert_eq(feedproto_decode(buf, (size_t)len, false, &f), FEEDPROTO_OK);
		cr_assert_eq(f.type, FEEDPROTO_HOOKS);
		feedproto_hooks_of(&f, last);
		n++;
	}
	return n;
}

Test(generation, the_start_up_id_is_written_at_once)
{
	const struct generation_stats *g;
	struct feedproto_hooks req;
	char id[GENFILE_ID_CHARS + 1];

	generation_start(base, path, true);
	g = generation_stats();
	file_id(id);
	cr_expect_str_eq(id, g->id);
	cr_expect_eq(g->number, 0);
	cr_expect_str_eq(generation_trigger_name(g->trigger), "start");
	cr_expect_eq(id[14], '4', "a version 4 UUID: %s", id);
	cr_expect(strchr("89ab", id[19]) != NULL, "of the RFC's variant: %s", id);
	cr_expect_eq(hooks_requests(&req), 0, "no hooks for a start");
}

Test(generation, a_change_is_published_only_after_its_reseed)
{
	const struct generation_stats *g;
	struct feedproto_hooks req;
	char before[GENFILE_ID_CHARS + 1], after[GENFILE_ID_CHARS + 1], text[GENFILE_ID_CHARS + 1];
	uint64_t t0 = clock_now_ns();

	generation_start(base, path, true);
	generation_listen(on_published, NULL);
	file_id(before);
	generation_changed(VMGENID_TRIGGER_KMSG, clock_now_ns());
	generation_changed(VMGENID_TRIGGER_UEVENT, clock_now_ns());
	g = generation_stats();
	cr_expect(g->pending);
	file_id(after);
	cr_expect_str_eq(after, before, "no new ID before the reseed");
	generation_reseeded(t0);
	file_id(after);
	cr_expect_str_eq(after, before, "nor after a reseed from before the change");
	cr_expect_eq(published, 0);
	cr_expect_eq(hooks_requests(&req), 0);
	generation_reseeded(clock_now_ns());
	file_id(after);
	cr_expect_str_neq(after, before, "a new ID once the kernel was reseeded");
	cr_expect_str_eq(after, g->id);
	cr_expect_not(g->pending);
	cr_expect_eq(g->number, 1, "two changes heard together: one new generation");
	cr_expect_eq(g->changes, 2);
	cr_expect(g->reseeded);
	cr_expect_str_eq(generation_trigger_name(g->trigger), "kmsg", "the first change's trigger");
	cr_expect_eq(published, 1, "the long polls are told once");
	cr_assert_eq(hooks_requests(&req), 1, "the supervisor is asked once");
	cr_expect_eq(req.generation, 1);
	cr_expect_eq(req.trigger, VMGENID_TRIGGER_KMSG);
	genfile_format(req.id, text);
	cr_expect_str_eq(text, after, "the hooks get the ID in the file");
	/* Another refill's reseed, with no change since: nothing new, no hooks again. */
	generation_reseeded(clock_now_ns());
	file_id(text);
	cr_expect_str_eq(text, after);
	cr_expect_eq(hooks_requests(&req), 0, "never twice for one change");
	cr_expect_eq(published, 1);
}

Test(generation, each_change_draws_a_new_id)
{
	char seen[8][GENFILE_ID_CHARS + 1];
	struct feedproto_hooks req;
	unsigned i, k;

	generation_start(base, path, true);
	for (i = 0; i < 8; i++) {
		generation_changed(VMGENID_TRIGGER_CONTROL, clock_now_ns());
		generation_reseeded(clock_now_ns());
		file_id(seen[i]);
		for (k = 0; k < i; k++)
			cr_expect_str_neq(seen[i], seen[k]);
	}
	cr_expect_eq(generation_stats()->number, 8);
	cr_expect_eq(hooks_requests(&req), 8);
	cr_expect_eq(req.generation, 8);
}

Test(generation, without_the_kernel_sink_a_change_is_published_at_once)
{
	const struct generation_stats *g;
	char before[GENFILE_ID_CHARS + 1], after[GENFILE_ID_CHARS + 1];

	generation_start(base, path, false);
	file_id(before);
	generation_changed(VMGENID_TRIGGER_SIGNAL, clock_now_ns());
	g = generation_stats();
	file_id(after);
	cr_expect_str_neq(after, before);
	cr_expect_not(g->reseeded, "and says it was not reseeded");
	cr_expect_not(g->pending);
	cr_expect_eq(g->number, 1);
}

Test(generation, the_file_goes_with_the_daemon_unless_another_replaced_it)
{
	char other[GENFILE_ID_CHARS + 1] = "11111111-2222-4333-8444-555555555555";

	generation_start(base, path, true);
	generation_stop();
	cr_expect_eq(access(path, F_OK), -1, "removed at stop");
	generation_start(base, path, true);
	cr_assert_eq(genfile_write(path, other), 0);
	generation_stop();
	cr_expect_eq(access(path, F_OK), 0, "another's ID is left alone");
}

Test(generation, a_file_that_cannot_be_written_is_reported)
{
	char blocker[128];
	const struct generation_stats *g;

	/* The file's directory is a file: nothing can be written there. */
	snprintf(blocker, sizeof blocker, "%s/run", dir);
	cr_assert_eq(rmdir(blocker), 0);
	cr_assert_eq(close(open(blocker, O_WRONLY | O_CREAT, 0644)), 0);
	generation_start(base, path, true);
	g = generation_stats();
	cr_expect_neq(g->error[0], '\0', "the failure is kept for /health");
	cr_expect_eq(g->write_failures, 1);
	cr_expect_neq(g->id[0], '\0', "the ID is out all the same (the long polls have it)");
}

/* A frame as the supervisor sends it. */
static void
take_ran(uint64_t generation, const char *name, enum feedproto_hook_result result,
    enum feedproto_hook_reason reason)
{
	struct feedproto_hook_ran ran = { .generation = generation, .result = (uint8_t)result,
	    .reason = (uint8_t)reason };
	uint8_t frame[FEEDPROTO_MAX_FRAME];
	size_t len;

	snprintf(ran.name, sizeof ran.name, "%s", name);
	len = feedproto_encode_hook_ran(frame, sizeof frame, &ran);
	cr_assert_gt(len, 0);
	cr_assert(hookclient_take(frame, len));
}

Test(generation, the_supervisors_reports_are_counted_per_hook)
{
	const struct hookclient_stats *h = hookclient_stats();
	uint8_t frame[FEEDPROTO_MAX_FRAME];
	size_t len, i;

	/* The check at start: nothing is counted as run. */
	take_ran(0, "10-seed", FEEDPROTO_HOOK_READY, FEEDPROTO_HOOK_NONE);
	take_ran(0, "50-bad", FEEDPROTO_HOOK_REFUSED, FEEDPROTO_HOOK_WRITABLE);
	len = feedproto_encode_hooks_done(frame, sizeof frame, 0, 1, 1);
	cr_assert(hookclient_take(frame, len));
	cr_expect(h->checked);
	cr_expect_eq(h->check_refused, 1);
	for (i = 0; i < h->nhooks; i++)
		cr_expect_eq(h->hooks[i].runs[FEEDPROTO_HOOK_REFUSED] +
		    h->hooks[i].runs[FEEDPROTO_HOOK_READY], 0);
	/* A change's batch. */
	take_ran(1, "10-seed", FEEDPROTO_HOOK_OK, FEEDPROTO_HOOK_NONE);
	take_ran(1, "50-bad", FEEDPROTO_HOOK_REFUSED, FEEDPROTO_HOOK_WRITABLE);
	take_ran(1, "60-slow", FEEDPROTO_HOOK_TIMEOUT, FEEDPROTO_HOOK_NONE);
	len = feedproto_encode_hooks_done(frame, sizeof frame, 1, 2, 1);
	cr_assert(hookclient_take(frame, len));
	cr_expect(h->batch_done);
	cr_expect_eq(h->batch_generation, 1);
	cr_expect_eq(h->batch_ran, 2);
	cr_expect_eq(h->batch_failed, 1);
	cr_assert_eq(h->nhooks, 3);
	cr_expect_str_eq(h->hooks[0].name, "10-seed");
	cr_expect_eq(h->hooks[0].runs[FEEDPROTO_HOOK_OK], 1);
	cr_expect_eq(h->hooks[1].runs[FEEDPROTO_HOOK_REFUSED], 1);
	cr_expect_eq(h->hooks[2].runs[FEEDPROTO_HOOK_TIMEOUT], 1);
	/* What is not a report is refused. */
	len = feedproto_encode(frame, sizeof frame, FEEDPROTO_QUERY, 0, 0, NULL, 0);
	cr_expect_not(hookclient_take(frame, len));
	cr_expect_not(hookclient_take((const uint8_t *)"garbage", 7));
}
