/* SPDX-License-Identifier: MIT */
/*
 * sandbox-probe MODE: load the seccomp allow-list, then try one thing.
 *   work   what the daemon does (memory, a thread, a pipe, a Unix socket,
 *          the clock): exit 0 when all of it works
 *   inet   an IPv4 socket: exit 0 when refused with EPERM
 *   exec   execve: the process must die of SIGSYS
 *   random RNDADDENTROPY on /dev/random: the process must die of SIGSYS
 *   fork   a new process: exit 0 when refused with EPERM
 *   wx     memory both writable and executable, or made executable:
 *          exit 0 when both are refused with EPERM
 *   kill   a signal to another process (the parent): exit 0 when refused
 * Exit 77 when built without libseccomp, 2 when something else went wrong.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/random.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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

/* Writable and executable memory, both ways: 0 when both were refused. */
static int
probe_wx(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED || errno != EPERM)
		return 1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	return mprotect(p, 4096, PROT_READ | PROT_EXEC) == -1 && errno == EPERM ? 0 : 1;
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
	if (strcmp(argv[1], "random") == 0) {
		struct rand_pool_info none = { 0, 0 };
		int fd = open("/dev/random", O_RDONLY);

		if (fd == -1)
			return 2;
		ioctl(fd, RNDADDENTROPY, &none);
		return 1; /* not killed */
	}
	if (strcmp(argv[1], "fork") == 0) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return pid == -1 && errno == EPERM ? 0 : 1;
	}
	if (strcmp(argv[1], "wx") == 0)
		return probe_wx();
	if (strcmp(argv[1], "kill") == 0)
		return kill(getppid(), 0) == -1 && errno == EPERM ? 0 : 1;
	if (strcmp(argv[1], "exec") == 0) {
		char *args[] = { "true", NULL };

		execv("/bin/true", args);
		return 1; /* neither killed nor run */
	}
	return 2;
}
