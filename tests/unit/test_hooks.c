/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's generation hooks, driven as the supervisor's loop drives
 * them (reap, tick): lexical order and the environment, the refusal rules
 * (owner and mode of the hook and of every directory above it, links and
 * where they lead), the timeout that kills a hook's whole process group,
 * and hooks that never run twice for one generation ID. Hooks must be
 * root's, so these run as root (else they are skipped, saying so).
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "genfile.h"
#include "hooks.h"
#include "log.h"
#include "vmgenid.h"

static char top[] = "/tmp/entropyd-hooks.XXXXXX";
static char hookdir[128];

/* What the runner reported. */
static struct {
	unsigned n;
	struct feedproto_hook_ran ran[32];
	unsigned batches;
	uint64_t done_generation;
	uint32_t done_ran, done_refused;
} out;

static void
on_ran(const struct feedproto_hook_ran *r, void *arg)
{
	if (out.n < sizeof out.ran / sizeof out.ran[0])
		out.ran[out.n] = *r;
	out.n++;
}

static void
on_done(uint64_t generation, uint32_t ran, uint32_t refused, void *arg)
{
	out.batches++;
	out.done_generation = generation;
	out.done_ran = ran;
	out.done_refused = refused;
}

static const struct hooks_sink sink = { .ran = on_ran, .done = on_done };

static void
setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: a hook runs only when root owns it");
	log_init("test_hooks", LOG_TO_STDERR, -1);
	memset(&out, 0, sizeof out);
	cr_assert_not_null(mkdtemp(top));
	snprintf(hookdir, sizeof hookdir, "%s/hooks", top);
	cr_assert_eq(mkdir(hookdir, 0755), 0);
	/* Orphans of a killed hook come back to us, to be seen gone. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

static void
teardown(void)
{
	char cmd[256];

	if (geteuid() != 0)
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
	(void)system(cmd);
}

TestSuite(hooks, .init = setup, .fini = teardown);

/* Write a file with this text, mode and owner. */
static void
put(const char *path, const char *text, mode_t mode, uid_t uid)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	cr_assert_eq(chown(path, uid, 0), 0);
}

/* A hook in the hook directory that leaves a mark named after itself in top. */
static void
hook(const char *name, mode_t mode, uid_t uid)
{
	char path[256], text[512];

	snprintf(path, sizeof path, "%s/%s", hookdir, name);
	/* A script's $0 is the path it was run by: the name is its last part. */
	snprintf(text, sizeof text, "#!/bin/sh\necho \"${0##*/} $ENTROPYD_GENERATION "
	    "$ENTROPYD_GENERATION_ID $ENTROPYD_TRIGGER\" >>'%s/ran'\n: >'%s/mark.%s'\n", top, top,
	    name);
	put(path, text, mode, uid);
}

/* Whether the hook of this name left its mark. */
static bool
marked(const char *name)
{
	char path[256];

	snprintf(path, sizeof path, "%s/mark.%s", top, name);
	return access(path, F_OK) == 0;
}

/* A request for a generation whose ID's bytes are all b. */
static struct feedproto_hooks
request(uint64_t generation, uint8_t b)
{
	struct feedproto_hooks req = { .generation = generation,
	    .trigger = VMGENID_TRIGGER_CONTROL };

	memset(req.id, b, sizeof req.id);
	return req;
}

/* Children reaped that were no hook of the runner's (orphans of a killed one). */
static pid_t others[16];
static unsigned nothers;

/* Drive the runner as the supervisor's loop does, until no batch is in hand. */
static void
drive(struct hooks_run *h)
{
	int status, timeout;
	pid_t pid;

	while (h->active) {
		timeout = hooks_timeout_ms(h);
		poll(NULL, 0, timeout < 0 || timeout > 20 ? 20 : timeout);
		hooks_tick(h);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (!hooks_reaped(h, pid, status) && nothers < 16)
				others[nothers++] = pid;
	}
}

/* The outcome reported for a hook of this name, or NULL. */
static const struct feedproto_hook_ran *
result(const char *name)
{
	unsigned i;

	for (i = 0; i < out.n; i++)
		if (strcmp(out.ran[i].name, name) == 0)
			return &out.ran[i];
	return NULL;
}

/* Run one batch for generation 1 and return it. */
static void
run(struct hooks_run *h, unsigned timeout_s)
{
	struct feedproto_hooks req = request(1, 0x42);

	hooks_init(h, hookdir, timeout_s, &sink, NULL);
	hooks_request(h, &req);
	drive(h);
}

/* Expect a hook refused for this reason, and never run. */
static void
expect_refused(const char *name, enum feedproto_hook_reason why)
{
	const struct feedproto_hook_ran *r = result(name);

	cr_assert_not_null(r, "%s is reported", name);
	cr_expect_eq(r->result, FEEDPROTO_HOOK_REFUSED, "%s: result %u", name, r->result);
	cr_expect_eq(r->reason, why, "%s: reason %u (%s), not %u", name, r->reason,
	    feedproto_hook_reason_text(r->reason), why);
	cr_expect_not(marked(name), "%s never ran", name);
}

Test(hooks, lexical_order_and_the_environment)
{
	struct hooks_run h;
	char path[256], line[512], want[512], id[GENFILE_ID_CHARS + 1], env[2048];
	const char *order[] = { "10-a", "20-b", "9-z" };
	FILE *f;
	size_t n;
	int i;

	hook("20-b", 0755, 0);
	hook("9-z", 0700, 0);
	hook("10-a", 0755, 0);
	snprintf(path, sizeof path, "%s/30-env", hookdir);
	snprintf(line, sizeof line, "#!/bin/sh\nenv | sort >'%s/env'\n", top);
	put(path, line, 0755, 0);
	setenv("ENTROPYD_TEST_LEAK", "1", 1);
	run(&h, 30);
	cr_assert_eq(out.batches, 1);
	cr_expect_eq(out.done_ran, 4);
	cr_expect_eq(out.done_refused, 0);
	cr_expect_eq(out.done_generation, 1);
	snprintf(path, sizeof path, "%s/ran", top);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	memset(id, 0, sizeof id);
	genfile_format(request(1, 0x42).id, id);
	for (i = 0; i < 3; i++) {
		cr_assert_not_null(fgets(line, sizeof line, f));
		snprintf(want, sizeof want, "%s 1 %s control\n", order[i], id);
		cr_expect_str_eq(line, want, "hook %d in byte order, with its environment", i);
	}
	fclose(f);
	snprintf(path, sizeof path, "%s/env", top);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(env, 1, sizeof env - 1, f);
	env[n] = '\0';
	fclose(f);
	cr_expect(strstr(env, "ENTROPYD_GENERATION=1\n") != NULL, "%s", env);
	cr_expect(strstr(env, "ENTROPYD_TRIGGER=control\n") != NULL, "%s", env);
	cr_expect(strstr(env, "PATH=" HOOKS_PATH "\n") != NULL, "%s", env);
	cr_expect(strstr(env, "ENTROPYD_TEST_LEAK") == NULL, "nothing of the daemon's environment");
	cr_expect_eq(result("10-a")->result, FEEDPROTO_HOOK_OK);
}

Test(hooks, a_hook_writable_by_others_or_not_roots_never_runs)
{
	struct hooks_run h;

	hook("10-good", 0755, 0);
	hook("20-world", 0757, 0);
	hook("30-group", 0775, 0);
	hook("40-nobody", 0755, 65534);
	run(&h, 30);
	expect_refused("20-world", FEEDPROTO_HOOK_WRITABLE);
	expect_refused("30-group", FEEDPROTO_HOOK_WRITABLE);
	expect_refused("40-nobody", FEEDPROTO_HOOK_OWNER);
	cr_expect(marked("10-good"), "the good one ran");
	cr_expect_eq(out.done_ran, 1);
	cr_expect_eq(out.done_refused, 3);
}

Test(hooks, names_that_are_no_hooks_are_skipped_unreported)
{
	struct hooks_run h;
	char path[256];

	hook(".hidden", 0755, 0);
	hook("10-backup~", 0755, 0);
	hook("10-a.dpkg-old", 0755, 0);
	hook("10-a.ucf-dist", 0755, 0);
	hook("10-plain", 0644, 0);
	snprintf(path, sizeof path, "%s/sub", hookdir);
	cr_assert_eq(mkdir(path, 0755), 0);
	hook("20-run", 0755, 0);
	run(&h, 30);
	cr_expect_eq(out.n, 1, "only the hook is reported (%u)", out.n);
	cr_expect(marked("20-run"));
	cr_expect_not(marked(".hidden"));
	cr_expect_not(marked("10-backup~"));
	cr_expect_not(marked("10-a.dpkg-old"));
	cr_expect_not(marked("10-plain"), "not executable: not a hook");
}

Test(hooks, a_directory_others_may_write_refuses_every_hook_in_it)
{
	struct hooks_run h;

	hook("10-a", 0755, 0);
	cr_assert_eq(chmod(hookdir, 0775), 0);
	run(&h, 30);
	expect_refused("10-a", FEEDPROTO_HOOK_DIRECTORY);
	/* Sticky as /tmp is, but the hook directory itself: still refused. */
	memset(&out, 0, sizeof out);
	cr_assert_eq(chmod(hookdir, 01777), 0);
	run(&h, 30);
	expect_refused("10-a", FEEDPROTO_HOOK_DIRECTORY);
	/* Not root's. */
	memset(&out, 0, sizeof out);
	cr_assert_eq(chmod(hookdir, 0755), 0);
	cr_assert_eq(chown(hookdir, 65534, 0), 0);
	run(&h, 30);
	expect_refused("10-a", FEEDPROTO_HOOK_DIRECTORY);
	/* A directory above it that others may write (not sticky). */
	memset(&out, 0, sizeof out);
	cr_assert_eq(chown(hookdir, 0, 0), 0);
	cr_assert_eq(chmod(top, 0777), 0);
	run(&h, 30);
	expect_refused("10-a", FEEDPROTO_HOOK_DIRECTORY);
	/* Sticky above it: others cannot replace root's entries there. */
	memset(&out, 0, sizeof out);
	cr_assert_eq(chmod(top, 01777), 0);
	run(&h, 30);
	cr_expect(marked("10-a"), "a sticky directory above is safe");
	cr_assert_eq(chmod(top, 0700), 0);
}

Test(hooks, links_are_followed_and_what_they_lead_to_is_checked)
{
	char target[256], link[256], bad[256], text[512];
	struct hooks_run h;

	/* A good hook elsewhere, linked in: runs. */
	snprintf(target, sizeof target, "%s/lib", top);
	cr_assert_eq(mkdir(target, 0755), 0);
	snprintf(target, sizeof target, "%s/lib/good", top);
	snprintf(text, sizeof text, "#!/bin/sh\n: >'%s/mark.10-linked'\n", top);
	put(target, text, 0755, 0);
	snprintf(link, sizeof link, "%s/10-linked", hookdir);
	cr_assert_eq(symlink(target, link), 0);
	/* Into a directory anyone may write (not sticky). */
	snprintf(bad, sizeof bad, "%s/open", top);
	cr_assert_eq(mkdir(bad, 0777), 0);
	cr_assert_eq(chmod(bad, 0777), 0);
	snprintf(target, sizeof target, "%s/open/evil", top);
	put(target, "#!/bin/sh\nexit 0\n", 0755, 0);
	snprintf(link, sizeof link, "%s/20-open", hookdir);
	cr_assert_eq(symlink(target, link), 0);
	/* To a file that is not root's. */
	snprintf(target, sizeof target, "%s/lib/theirs", top);
	put(target, "#!/bin/sh\nexit 0\n", 0755, 65534);
	snprintf(link, sizeof link, "%s/30-theirs", hookdir);
	cr_assert_eq(symlink(target, link), 0);
	/* To nothing, and to a directory. */
	snprintf(link, sizeof link, "%s/40-dangling", hookdir);
	cr_assert_eq(symlink("/nonexistent/hook", link), 0);
	snprintf(link, sizeof link, "%s/50-dir", hookdir);
	snprintf(target, sizeof target, "%s/lib", top);
	cr_assert_eq(symlink(target, link), 0);
	/* A FIFO is no program. */
	snprintf(link, sizeof link, "%s/60-fifo", hookdir);
	cr_assert_eq(mkfifo(link, 0700), 0);
	run(&h, 30);
	cr_expect_eq(result("10-linked") != NULL ? result("10-linked")->result : 99,
	    FEEDPROTO_HOOK_OK, "a link to a safe hook runs");
	cr_expect(marked("10-linked"));
	expect_refused("20-open", FEEDPROTO_HOOK_DIRECTORY);
	expect_refused("30-theirs", FEEDPROTO_HOOK_OWNER);
	expect_refused("40-dangling", FEEDPROTO_HOOK_LINK);
	expect_refused("50-dir", FEEDPROTO_HOOK_NOT_FILE);
	expect_refused("60-fifo", FEEDPROTO_HOOK_NOT_FILE);
}

Test(hooks, a_hook_directory_that_is_a_link_is_judged_where_it_leads)
{
	char real[256], link[256];
	struct hooks_run h;
	struct feedproto_hooks req = request(1, 0x42);

	hook("10-a", 0755, 0);
	snprintf(link, sizeof link, "%s/via", top);
	cr_assert_eq(symlink(hookdir, link), 0);
	hooks_init(&h, link, 30, &sink, NULL);
	hooks_request(&h, &req);
	drive(&h);
	cr_expect(marked("10-a"), "a link to a safe directory");
	memset(&out, 0, sizeof out);
	snprintf(real, sizeof real, "rm -f '%s/mark.10-a'", top);
	(void)system(real);
	cr_assert_eq(chmod(hookdir, 0777), 0);
	req = request(2, 0x43);
	hooks_request(&h, &req);
	drive(&h);
	expect_refused("10-a", FEEDPROTO_HOOK_DIRECTORY);
}

Test(hooks, a_hook_past_its_timeout_is_killed_with_what_it_started)
{
	char path[256], text[512], pidtext[32];
	struct hooks_run h;
	unsigned i;
	FILE *f;
	pid_t child;

	snprintf(path, sizeof path, "%s/10-slow", hookdir);
	snprintf(text, sizeof text, "#!/bin/sh\nsleep 300 &\necho $! >'%s/child'\nwait\n", top);
	put(path, text, 0755, 0);
	hook("20-after", 0755, 0);
	run(&h, 1);
	cr_assert_not_null(result("10-slow"));
	cr_expect_eq(result("10-slow")->result, FEEDPROTO_HOOK_TIMEOUT);
	cr_expect(marked("20-after"), "the next hook still runs");
	snprintf(path, sizeof path, "%s/child", top);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(pidtext, sizeof pidtext, f));
	fclose(f);
	child = (pid_t)atol(pidtext);
	/* Killed with its group: reparented to us, reaped by the loop or there to be reaped. */
	for (i = 0; i < nothers && others[i] != child; i++)
		;
	cr_expect(i < nothers || waitpid(child, NULL, 0) == child,
	    "what the hook started died with it");
}

Test(hooks, failures_are_told_apart)
{
	char path[256];
	struct hooks_run h;

	snprintf(path, sizeof path, "%s/10-exit3", hookdir);
	put(path, "#!/bin/sh\nexit 3\n", 0755, 0);
	snprintf(path, sizeof path, "%s/20-killed", hookdir);
	put(path, "#!/bin/sh\nkill -TERM $$\nsleep 5\n", 0755, 0);
	snprintf(path, sizeof path, "%s/30-noexec", hookdir);
	put(path, "#!/nonexistent/interpreter\n", 0755, 0);
	run(&h, 30);
	cr_assert_not_null(result("10-exit3"));
	cr_expect_eq(result("10-exit3")->result, FEEDPROTO_HOOK_FAILED);
	cr_expect_eq(result("10-exit3")->exit_status, 3);
	cr_expect_eq(result("20-killed")->result, FEEDPROTO_HOOK_FAILED);
	cr_expect_eq(result("20-killed")->reason, FEEDPROTO_HOOK_SIGNAL);
	cr_expect_eq(result("20-killed")->exit_status, SIGTERM);
	cr_expect_eq(result("30-noexec")->result, FEEDPROTO_HOOK_FAILED);
	cr_expect_eq(result("30-noexec")->reason, FEEDPROTO_HOOK_EXEC);
	cr_expect_eq(out.done_ran, 3);
}

Test(hooks, never_twice_for_one_generation_id)
{
	struct feedproto_hooks a = request(1, 0xa1), b = request(2, 0xb2), c = request(3, 0xc3);
	struct hooks_run h;
	char path[256], line[256];
	unsigned lines = 0;
	FILE *f;

	hook("10-count", 0755, 0);
	hooks_init(&h, hookdir, 30, &sink, NULL);
	hooks_request(&h, &a);
	/* While A's hooks run: the same ID again, then B (waits), then C (replaces B). */
	hooks_request(&h, &a);
	hooks_request(&h, &b);
	hooks_request(&h, &c);
	hooks_request(&h, &c);
	drive(&h);
	cr_expect_eq(out.batches, 2, "A's batch and C's (%u)", out.batches);
	cr_expect_eq(out.done_generation, 3);
	/* A again, and C again, after they ran. */
	hooks_request(&h, &c);
	drive(&h);
	cr_expect_eq(out.batches, 2, "C's ID again: refused");
	snprintf(path, sizeof path, "%s/ran", top);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f) != NULL)
		lines++;
	fclose(f);
	cr_expect_eq(lines, 2, "the hook ran once for A and once for C (%u)", lines);
}

Test(hooks, a_request_naming_no_trigger_is_refused)
{
	struct feedproto_hooks req = request(1, 0x42);
	struct hooks_run h;

	hook("10-a", 0755, 0);
	req.trigger = VMGENID_NTRIGGERS;
	hooks_init(&h, hookdir, 30, &sink, NULL);
	hooks_request(&h, &req);
	drive(&h);
	cr_expect_eq(out.batches, 0);
	cr_expect_not(marked("10-a"));
}

Test(hooks, the_check_at_start_runs_nothing)
{
	struct hooks_run h;

	hook("10-a", 0755, 0);
	hook("20-world", 0757, 0);
	hooks_init(&h, hookdir, 30, &sink, NULL);
	hooks_check(&h);
	cr_expect_not(h.active);
	cr_expect_eq(out.batches, 1);
	cr_expect_eq(out.done_generation, 0);
	cr_expect_eq(out.done_ran, 1, "ready");
	cr_expect_eq(out.done_refused, 1);
	cr_expect_eq(result("10-a")->result, FEEDPROTO_HOOK_READY);
	expect_refused("20-world", FEEDPROTO_HOOK_WRITABLE);
	cr_expect_not(marked("10-a"));
}

Test(hooks, no_directory_no_hooks)
{
	struct feedproto_hooks req = request(1, 0x42);
	struct hooks_run h;
	char missing[256];

	snprintf(missing, sizeof missing, "%s/missing", top);
	hooks_init(&h, missing, 30, &sink, NULL);
	hooks_request(&h, &req);
	drive(&h);
	cr_expect_eq(out.batches, 1);
	cr_expect_eq(out.n, 0);
	cr_expect_eq(out.done_ran, 0);
}
