/* SPDX-License-Identifier: MIT */
/*
 * The supervisor: the feeder's child, root with a bounded set, that starts
 * and restarts workers as the feeder's frames say and reports each one's
 * start and end; it parses nothing else and runs no loop.
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"
#include "daemonize.h"
#include "feedproto.h"
#include "log.h"
#include "msg.h"
#include "pidfile.h"
#include "supervisor.h"

struct supervisor {
	int feeder_fd;
	int signal_fd;
	sigset_t saved_mask;     /* the mask a worker starts with */
	struct pidfile *pidfile;
	pid_t worker;            /* 0: none running */
	bool stopping;
	uint64_t kill_at_ns;     /* stopping: SIGKILL the worker then */
};

/* Tell the feeder something, with a descriptor when fd is not -1. */
static void
supervisor_tell(struct supervisor *s, enum feedproto_type type, uint32_t arg0, uint32_t arg1,
    int fd)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	size_t len = feedproto_encode(buf, sizeof buf, type, arg0, arg1, NULL, 0);

	if (len == 0 || msg_send(s->feeder_fd, buf, len, &fd, 1) == -1)
		log_debug("supervisor: telling the feeder: %s", strerror(errno));
}

/* Leave: the worker is gone; the pidfile goes with the daemon. */
static void __attribute__((noreturn))
supervisor_exit(struct supervisor *s)
{
	pidfile_close(s->pidfile);
	exit(EX_OK);
}

/* Stop: ask the worker to end (it has SUPERVISOR_STOP_TIMEOUT_MS), or leave now. */
static void
supervisor_stop(struct supervisor *s)
{
	if (s->worker == 0)
		supervisor_exit(s);
	if (s->stopping)
		return;
	s->stopping = true;
	s->kill_at_ns = clock_now_ns() + (uint64_t)SUPERVISOR_STOP_TIMEOUT_MS * 1000000u;
	kill(s->worker, SIGTERM);
}

/*
 * Fork a worker: in the child, undo what is the supervisor's and return its
 * socket; in the supervisor, hand the other end to the feeder and return -1.
 */
static int
supervisor_spawn(struct supervisor *s)
{
	int sv[2];
	pid_t pid;

	if (s->worker != 0 || s->stopping)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("supervisor: socketpair");
		supervisor_tell(s, FEEDPROTO_EXITED, 0, (uint32_t)(EX_OSERR << 8), -1);
		return -1;
	}
	if ((pid = fork()) == -1) {
		log_warn("supervisor: fork");
		close(sv[0]);
		close(sv[1]);
		/* A worker that could not start counts as one that died at once. */
		supervisor_tell(s, FEEDPROTO_EXITED, 0, (uint32_t)(EX_OSERR << 8), -1);
		return -1;
	}
	if (pid == 0) {
		pid_t supervisor = getppid();

		close(sv[0]);
		close(s->feeder_fd);
		close(s->signal_fd);
		/* The pidfile is the feeder's and ours: the worker neither holds nor removes it. */
		if (s->pidfile->fd != -1)
			close(s->pidfile->fd);
		s->pidfile->fd = -1;
		if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 || getppid() != supervisor)
			_exit(EX_OSERR);
		sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
		return sv[1];
	}
	close(sv[1]);
	s->worker = pid;
	supervisor_tell(s, FEEDPROTO_STARTED, (uint32_t)pid, 0, sv[0]);
	close(sv[0]);
	/* The first worker reports a background start up; we hold no terminal. */
	if (daemonize_release())
		daemonize_quiet(-1);
	return -1;
}

/* Reap the worker; tell the feeder how it ended. */
static void
supervisor_reap(struct supervisor *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0 || (pid == -1 && errno == EINTR)) {
		if (pid != s->worker)
			continue;
		s->worker = 0;
		supervisor_tell(s, FEEDPROTO_EXITED, (uint32_t)pid, (uint32_t)status, -1);
		if (s->stopping)
			supervisor_exit(s);
	}
}

/* A command from the feeder; -1, or a new worker's socket (in that worker). */
static int
supervisor_command(struct supervisor *s)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	struct feedproto_frame f;
	ssize_t n;

	while ((n = recv(s->feeder_fd, buf, sizeof buf, 0)) == -1 && errno == EINTR)
		;
	if (n <= 0) {
		/* The feeder is gone: nothing the worker does can reach the kernel now. */
		supervisor_stop(s);
		return -1;
	}
	if (feedproto_decode(buf, (size_t)n, false, &f) != FEEDPROTO_OK)
		return -1;
	switch (f.type) {
	case FEEDPROTO_SPAWN:
		return supervisor_spawn(s);
	case FEEDPROTO_KILL:
		if (s->worker != 0 && (pid_t)f.arg0 == s->worker)
			kill(s->worker, SIGKILL);
		break;
	case FEEDPROTO_SIGNAL:
		if (s->worker != 0 && (f.arg0 == SIGHUP || f.arg0 == SIGUSR1 || f.arg0 == SIGUSR2))
			kill(s->worker, (int)f.arg0);
		break;
	case FEEDPROTO_STOP:
		supervisor_stop(s);
		break;
	default:
		break;
	}
	return -1;
}

int
supervisor_run(int feeder_fd, struct pidfile *pf)
{
	struct supervisor s = { .feeder_fd = feeder_fd, .pidfile = pf };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	/* SIGHUP, SIGUSR1 and SIGUSR2 reach the worker through the feeder, not us. */
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, &s.saved_mask) == -1 ||
	    (s.signal_fd = signalfd(-1, &set, SFD_CLOEXEC)) == -1)
		fatal("supervisor: signals");
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s.signal_fd, .events = POLLIN },
			{ .fd = s.feeder_fd, .events = POLLIN },
		};
		int timeout = -1, fd;

		if (s.stopping) {
			uint64_t now = clock_now_ns();

			timeout = now >= s.kill_at_ns ? 0 :
			    (int)((s.kill_at_ns - now + 999999u) / 1000000u);
		}
		if (poll(pfd, s.stopping ? 1 : 2, timeout) == -1 && errno != EINTR)
			fatal("supervisor: poll");
		if (s.stopping && clock_now_ns() >= s.kill_at_ns && s.worker != 0) {
			log_warnx("supervisor: the worker (pid %ld) did not stop; killing it",
			    (long)s.worker);
			kill(s.worker, SIGKILL);
			s.kill_at_ns = UINT64_MAX;
		}
		if (pfd[0].revents != 0) {
			struct signalfd_siginfo si;

			if (read(s.signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo == SIGCHLD)
					supervisor_reap(&s);
				else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					supervisor_stop(&s);
			}
		}
		if (!s.stopping && pfd[1].revents != 0 && (fd = supervisor_command(&s)) != -1)
			return fd;
	}
}
