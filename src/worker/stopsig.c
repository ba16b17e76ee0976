/* SPDX-License-Identifier: MIT */
/*
 * The stop signals as a descriptor. With libevent's own signal handling a
 * SIGTERM is seen only when the loop runs again; while the loop's thread
 * waits on a plugin host (which may take its full 5 s), the stop waited
 * too. A signalfd can be polled by such a wait as well as by the loop.
 */
#include <sys/signalfd.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "stopsig.h"

static int stopsig_sfd = -1;

/* SIGTERM and SIGINT. */
static void
stopsig_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

int
stopsig_open(void)
{
	sigset_t set;
	int e;

	if (stopsig_sfd != -1)
		return 0;
	stopsig_set(&set);
	if ((e = pthread_sigmask(SIG_BLOCK, &set, NULL)) != 0) {
		errno = e;
		return -1;
	}
	if ((stopsig_sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		e = errno;
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		errno = e;
		return -1;
	}
	return 0;
}

int
stopsig_fd(void)
{
	return stopsig_sfd;
}

int
stopsig_take(void)
{
	struct signalfd_siginfo si;

	if (stopsig_sfd == -1 || read(stopsig_sfd, &si, sizeof si) != (ssize_t)sizeof si)
		return 0;
	return (int)si.ssi_signo;
}

void
stopsig_close(void)
{
	if (stopsig_sfd == -1)
		return;
	close(stopsig_sfd);
	stopsig_sfd = -1;
}
