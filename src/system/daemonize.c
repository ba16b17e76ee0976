/* SPDX-License-Identifier: MIT */
/*
 * Detach with a readiness pipe, so a background start returns only once the
 * daemon is up (or with its exit status when it failed first).
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "daemonize.h"
#include "log.h"

static int daemonize_fd = -1; /* the daemon's end of the readiness pipe */

/* SIGCHLD only has to interrupt the middle process's wait. */
static void
daemonize_sigchld(int sig)
{
}

/* Exit with a child's outcome: its own exit status, or 71 when a signal ended it. */
static void __attribute__((noreturn))
daemonize_exit_as(int status)
{
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	_exit(EX_OSERR);
}

/*
 * The middle process: wait for the daemon's word (it is up: exit 0) or for
 * its end before that (exit with its status; it said why on stderr). The
 * daemon's end of the pipe may live on in a process it forked, so its exit
 * is watched too: SIGCHLD, unblocked only while waiting, interrupts ppoll.
 */
static void __attribute__((noreturn))
daemonize_wait(int fd, pid_t daemon, const sigset_t *waiting)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int status = EX_OSERR << 8; /* "exited 71", if the daemon cannot be reaped */
	ssize_t n;
	char c;

	for (;;) {
		if (waitpid(daemon, &status, WNOHANG) == daemon)
			break;
		if (ppoll(&pfd, 1, NULL, waiting) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((n = read(fd, &c, 1)) == 1)
			_exit(EX_OK);
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			/* Its end closed without a word: it is exiting. */
			while (waitpid(daemon, &status, 0) == -1 && errno == EINTR)
				;
			break;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EX_OK) {
		fprintf(stderr, "entropyd: the daemon exited before it was up\n");
		_exit(EX_OSERR);
	}
	if (WIFSIGNALED(status))
		fprintf(stderr, "entropyd: the daemon was killed by signal %d (%s) while "
		    "starting\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
	daemonize_exit_as(status);
}

/* The starting process: exit as the middle process does. */
static void __attribute__((noreturn))
daemonize_parent(pid_t middle)
{
	int status;

	while (waitpid(middle, &status, 0) == -1)
		if (errno != EINTR)
			_exit(EX_OSERR);
	daemonize_exit_as(status);
}

int
daemonize_start(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t chld, saved, waiting;
	int p[2], devnull;
	pid_t pid;

	/* Inherited SIG_IGN would reap the children before they could be waited for. */
	sigaction(SIGCHLD, &sa, NULL);
	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid != 0)
		daemonize_parent(pid);
	if (setsid() == -1)
		_exit(EX_OSERR);
	/* SIGCHLD blocked from before the fork, so none is lost before the wait. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sa.sa_handler = daemonize_sigchld;
	if (pipe2(p, O_CLOEXEC) == -1 || sigprocmask(SIG_BLOCK, &chld, &saved) == -1 ||
	    sigaction(SIGCHLD, &sa, NULL) == -1 || (pid = fork()) == -1) {
		fprintf(stderr, "entropyd: daemonize: %s\n", strerror(errno));
		_exit(EX_OSERR);
	}
	if (pid != 0) {
		/* Not a session leader, the daemon can never get a terminal back. */
		close(p[1]);
		waiting = saved;
		sigdelset(&waiting, SIGCHLD);
		daemonize_wait(p[0], pid, &waiting);
	}
	close(p[0]);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	daemonize_fd = p[1];
	if (chdir("/") == -1)
		return -1;
	if ((devnull = open("/dev/null", O_RDWR)) == -1)
		return -1;
	/* stderr stays the starting command's until the daemon is up. */
	if (dup2(devnull, STDIN_FILENO) == -1 || dup2(devnull, STDOUT_FILENO) == -1)
		return -1;
	if (devnull > STDERR_FILENO)
		close(devnull);
	log_copy_to_stderr(1);
	return 0;
}

void
daemonize_ready(void)
{
	char c = 1;
	int devnull;

	if (daemonize_fd == -1)
		return;
	log_copy_to_stderr(0);
	while (write(daemonize_fd, &c, 1) == -1 && errno == EINTR)
		;
	close(daemonize_fd);
	daemonize_fd = -1;
	if ((devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) != -1) {
		dup2(devnull, STDERR_FILENO);
		close(devnull);
	}
}

bool
daemonize_release(void)
{
	if (daemonize_fd == -1)
		return false;
	close(daemonize_fd);
	daemonize_fd = -1;
	return true;
}

void
daemonize_quiet(int devnull)
{
	log_copy_to_stderr(0);
	if (devnull == -1 && (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return;
	dup2(devnull, STDERR_FILENO);
	close(devnull);
}
