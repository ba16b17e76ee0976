/* SPDX-License-Identifier: MIT */
/*
 * sandbox-probe MODE: load the seccomp allow-list, then try one thing.
 *   work   what the daemon does (memory, a thread, a pipe, a Unix socket,
 *          the clock): exit 0 when all of it works
 *   inet   an IPv4 socket: exit 0 when refused with EPERM
 *   exec   execve: the process must die of SIGSYS
 * Exit 77 when built without libseccomp, 2 when something else went wrong.
 */
#include <sys/socket.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"

/* A reader thread's stand-in. */
static void *
probe_thread(void *arg)
{
	return arg;
}

/* Do what the running daemon does. */
static int
probe_work(void)
{
	struct timespec ts;
	pthread_t t;
	void *ret = NULL;
	char *p;
	int fds[2], s;
	char c = 'x';

	if ((p = malloc(1 << 20)) == NULL)
		return 2;
	memset(p, 1, 1 << 20);
	free(p);
	if (pthread_create(&t, NULL, probe_thread, &c) != 0 || pthread_join(t, &ret) != 0 ||
	    ret != &c)
		return 3;
	if (pipe(fds) == -1 || write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
		return 4;
	if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		return 5;
	close(s);
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 6;
	return 0;
}

int
main(int argc, char **argv)
{
	char err[256];
	int s;

	if (argc != 2)
		return 2;
	if (!sandbox_available())
		return 77;
	if (sandbox_apply(err, sizeof err) == -1) {
		fprintf(stderr, "sandbox-probe: %s\n", err);
		return 2;
	}
	if (strcmp(argv[1], "work") == 0)
		return probe_work();
	if (strcmp(argv[1], "inet") == 0) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		return s == -1 && errno == EPERM ? 0 : 1;
	}
	if (strcmp(argv[1], "exec") == 0) {
		char *args[] = { "true", NULL };

		execv("/bin/true", args);
		return 1; /* neither killed nor run */
	}
	return 2;
}
