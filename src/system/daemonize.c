/* SPDX-License-Identifier: MIT */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

#include "daemonize.h"

static int daemonize_fd = -1; /* write end of the pipe to the waiting parent */

/* Wait for the daemon's word and exit with the outcome. */
static void __attribute__((noreturn))
daemonize_wait(int fd, pid_t child)
{
	char c;
	ssize_t n;

	while ((n = read(fd, &c, 1)) == -1 && errno == EINTR)
		;
	/* The middle process has exited at once; reap it. */
	while (waitpid(child, NULL, 0) == -1 && errno == EINTR)
		;
	if (n == 1)
		_exit(EX_OK);
	fprintf(stderr, "entropyd: the daemon exited while starting; see the system log\n");
	_exit(EX_OSERR);
}

int
daemonize_start(void)
{
	int p[2], devnull;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1)
		return -1;
	if (pid != 0) {
		close(p[1]);
		daemonize_wait(p[0], pid);
	}
	close(p[0]);
	if (setsid() == -1)
		_exit(EX_OSERR);
	if ((pid = fork()) == -1)
		_exit(EX_OSERR);
	if (pid != 0)
		_exit(EX_OK); /* the session leader goes: no terminal can come back */
	daemonize_fd = p[1];
	if (chdir("/") == -1)
		return -1;
	if ((devnull = open("/dev/null", O_RDWR)) == -1)
		return -1;
	if (dup2(devnull, STDIN_FILENO) == -1 || dup2(devnull, STDOUT_FILENO) == -1 ||
	    dup2(devnull, STDERR_FILENO) == -1)
		return -1;
	if (devnull > STDERR_FILENO)
		close(devnull);
	return 0;
}

void
daemonize_ready(void)
{
	char c = 1;

	if (daemonize_fd == -1)
		return;
	while (write(daemonize_fd, &c, 1) == -1 && errno == EINTR)
		;
	close(daemonize_fd);
	daemonize_fd = -1;
}
