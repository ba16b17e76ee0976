/* SPDX-License-Identifier: MIT */
/*
 * The plugin launcher's end, with the real entropyd-plugin and a built test
 * plugin: a worker that inherited the launcher leaves it running for the
 * next one (it still starts hosts), and launch_end() returns only once the
 * launcher and its hosts have gone; a wait on a host gives up at once when
 * a stop signal is pending.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "clock.h"
#include "hostproc.h"
#include "hostproc_int.h"
#include "stopsig.h"

/* The first child of pid whose command line holds word (0: none). */
static pid_t
child_with(pid_t pid, const char *word)
{
	char path[64], cmd[512];
	FILE *f;
	long c;
	size_t n, i;
	pid_t found = 0;

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (found == 0 && fscanf(f, "%ld", &c) == 1) {
		FILE *g;

		snprintf(path, sizeof path, "/proc/%ld/cmdline", c);
		if ((g = fopen(path, "r")) == NULL)
			continue;
		n = fread(cmd, 1, sizeof cmd - 1, g);
		fclose(g);
		for (i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, word) != NULL)
			found = (pid_t)c;
	}
	fclose(f);
	return found;
}

/* Whether pid runs (a zombie does not). */
static bool
running(pid_t pid)
{
	char path[64], stat[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	return (p = strrchr(stat, ')')) != NULL && p[1] == ' ' && p[2] != 'Z';
}

/* A host for the test plugin testgood; NULL with the reason in err. */
static struct hostproc *
start_host(const char *top, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof path, "%s/tests/plugins/.libs/testgood.so", top);
	cr_assert_neq(fd = open(path, O_RDONLY | O_CLOEXEC), -1, "%s: %s", path, strerror(errno));
	return hostproc_start(path, fd, err, errlen);
}

Test(launch, inherited_launcher_outlives_a_worker_and_launch_end_waits)
{
	const char *top = getenv("top_builddir");
	char host_program[PATH_MAX], err[256];
	struct hostproc *h, *again;
	pid_t launcher, host, worker;
	int status;

	if (top == NULL)
		cr_skip_test("top_builddir is not set (run through make check)");
	snprintf(host_program, sizeof host_program, "%s/entropyd-plugin", top);
	setenv("ENTROPYD_PLUGIN_HOST", host_program, 1);
	cr_assert_not_null(h = start_host(top, err, sizeof err), "%s", err);
	cr_assert_neq(launcher = child_with(getpid(), "--launcher"), 0, "no launcher child");
	cr_assert_neq(host = child_with(launcher, "--host"), 0, "no host under the launcher");

	/* A worker forked with the launcher inherited ends as a worker does. */
	cr_assert_neq(worker = fork(), -1);
	if (worker == 0) {
		launch_inherited();
		hostproc_free_all();
		_exit(0);
	}
	cr_assert_eq(waitpid(worker, &status, 0), worker);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert(running(launcher), "the inherited launcher ended with the worker");
	cr_assert_not_null(again = start_host(top, err, sizeof err),
	    "the launcher no longer starts hosts: %s", err);

	/* The end: the launcher and every host it started are gone on return. */
	host = child_with(launcher, "--host");
	cr_assert_neq(host, 0);
	launch_end();
	cr_assert_eq(kill(launcher, 0), -1, "the launcher is still there (or unreaped)");
	cr_assert_eq(errno, ESRCH);
	cr_assert(!running(host), "a host outlived launch_end()");
	hostproc_free(again);
	hostproc_free(h);
	hostproc_free_all();
}

Test(launch, a_pending_stop_signal_ends_a_wait_on_a_host)
{
	uint64_t deadline;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(stopsig_open(), 0, "signalfd: %s", strerror(errno));
	cr_assert_not(launch_stopping(), "no stop signal yet");
	cr_assert_eq(raise(SIGTERM), 0);
	cr_assert(launch_stopping(), "a SIGTERM is pending on the descriptor");
	/* Nothing will ever be written to p[0]: only the stop can end the wait. */
	deadline = clock_now_ns() + 600ull * 1000000000ull;
	cr_assert_not(launch_poll(p[0], deadline));
	cr_assert_lt(clock_now_ns(), deadline, "it waited for the deadline, not the stop");
	cr_assert_eq(stopsig_take(), SIGTERM);
	cr_assert_not(launch_stopping(), "taken");
	/* A readable descriptor still wins when no stop is pending. */
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert(launch_poll(p[0], clock_now_ns() + 600ull * 1000000000ull));
	stopsig_close();
	cr_assert_eq(stopsig_fd(), -1);
	close(p[0]);
	close(p[1]);
}
