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
#include "hooks.h"
#include "hostproc.h"
#include "log.h"
#include "msg.h"
#include "options.h"
#include "pidfile.h"
#include "supervisor.h"

struct supervisor {
	int feeder_fd;
	int signal_fd;
	sigset_t saved_mask;     /* the mask a worker starts with */
	struct pidfile *pidfile;
	pid_t worker;            /* 0: none running */
	int hook_fd;             /* our end of the worker's hooks socket, -1 when none */
	struct hooks_run hooks;
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

/* Send the worker a frame on the hooks' socket, never waiting for it to read. */
static void
supervisor_tell_worker(struct supervisor *s, const uint8_t *frame, size_t len)
{
	if (s->hook_fd == -1 || len == 0)
		return;
	if (send(s->hook_fd, frame, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		log_debug("supervisor: telling the worker how the hooks went: %s",
		    strerror(errno));
}

/* A hook's outcome, for the worker. */
static void
supervisor_hook_ran(const struct feedproto_hook_ran *ran, void *arg)
{
	uint8_t frame[FEEDPROTO_HEADER_BYTES + 8 + FEEDPROTO_MAX_HOOK_NAME];

	supervisor_tell_worker(arg, frame, feedproto_encode_hook_ran(frame, sizeof frame, ran));
}

/* The hooks of a generation are done. */
static void
supervisor_hooks_done(uint64_t generation, uint32_t ran, uint32_t refused, void *arg)
{
	uint8_t frame[FEEDPROTO_HEADER_BYTES + 8];

	supervisor_tell_worker(arg, frame, feedproto_encode_hooks_done(frame, sizeof frame,
	    generation, ran, refused));
}

/* The worker asks for the hooks: one fixed-size HOOKS frame at a time, nothing else. */
static void
supervisor_hook_request(struct supervisor *s)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES + FEEDPROTO_HOOKS_BYTES];
	struct feedproto_hooks req;
	struct feedproto_frame f;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	while ((n = recvmsg(s->hook_fd, &msg, MSG_DONTWAIT)) == -1 && errno == EINTR)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		/* The worker is gone: its end closed. */
		close(s->hook_fd);
		s->hook_fd = -1;
		return;
	}
	if (feedproto_decode(buf, (size_t)n, (msg.msg_flags & MSG_TRUNC) != 0, &f) !=
	    FEEDPROTO_OK || f.type != FEEDPROTO_HOOKS) {
		log_warnx("supervisor: a malformed frame from the worker on the hooks' socket; "
		    "ignored");
		return;
	}
	feedproto_hooks_of(&f, &req);
	hooks_request(&s->hooks, &req);
}

/* Leave: the worker is gone, the plugin hosts go now; the pidfile goes with the daemon. */
static void __attribute__((noreturn))
supervisor_exit(struct supervisor *s)
{
	hooks_abort(&s->hooks);
	launch_end();
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
supervisor_spawn(struct supervisor *s, int *hook_fd)
{
	int sv[2], hv[2];
	pid_t pid;

	if (s->worker != 0 || s->stopping)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("supervisor: socketpair");
		supervisor_tell(s, FEEDPROTO_EXITED, 0, (uint32_t)(EX_OSERR << 8), -1);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hv) == -1) {
		log_warn("supervisor: socketpair");
		close(sv[0]);
		close(sv[1]);
		supervisor_tell(s, FEEDPROTO_EXITED, 0, (uint32_t)(EX_OSERR << 8), -1);
		return -1;
	}
	if ((pid = fork()) == -1) {
		log_warn("supervisor: fork");
		close(sv[0]);
		close(sv[1]);
		close(hv[0]);
		close(hv[1]);
		/* A worker that could not start counts as one that died at once. */
		supervisor_tell(s, FEEDPROTO_EXITED, 0, (uint32_t)(EX_OSERR << 8), -1);
		return -1;
	}
	if (pid == 0) {
		pid_t supervisor = getppid();

		close(sv[0]);
		close(hv[0]);
		close(s->feeder_fd);
		close(s->signal_fd);
		if (s->hook_fd != -1)
			close(s->hook_fd);
		/* A hook running is the supervisor's: not this worker's to wait for. */
		s->hooks.pid = 0;
		*hook_fd = hv[1];
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
	close(hv[1]);
	s->worker = pid;
	supervisor_tell(s, FEEDPROTO_STARTED, (uint32_t)pid, 0, sv[0]);
	close(sv[0]);
	if (s->hook_fd != -1)
		close(s->hook_fd);
	s->hook_fd = hv[0];
	/* The worker hears at once which hooks would run and which are refused. */
	hooks_check(&s->hooks);
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
		if (pid <= 0 || hooks_reaped(&s->hooks, pid, status) || pid != s->worker)
			continue;
		s->worker = 0;
		if (s->hook_fd != -1)
			close(s->hook_fd);
		s->hook_fd = -1;
		supervisor_tell(s, FEEDPROTO_EXITED, (uint32_t)pid, (uint32_t)status, -1);
		if (s->stopping)
			supervisor_exit(s);
	}
}

/* A command from the feeder; -1, or a new worker's socket (in that worker). */
static int
supervisor_command(struct supervisor *s, int *hook_fd)
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
		return supervisor_spawn(s, hook_fd);
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
supervisor_run(int feeder_fd, struct pidfile *pf, const struct config *cfg, int *hook_fd)
{
	static struct supervisor s;
	struct hooks_sink sink = {
		.ran = supervisor_hook_ran, .done = supervisor_hooks_done, .arg = &s,
	};
	sigset_t set;

	s.feeder_fd = feeder_fd;
	s.pidfile = pf;
	s.hook_fd = -1;

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
	hooks_init(&s.hooks, cfg->generation_hooks, cfg->generation_hook_timeout_s, &sink,
	    &s.saved_mask);
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = s.signal_fd, .events = POLLIN },
			{ .fd = s.feeder_fd, .events = POLLIN },
			{ .fd = s.hook_fd, .events = POLLIN },
		};
		int timeout = hooks_timeout_ms(&s.hooks), fd;

		if (s.stopping) {
			uint64_t now = clock_now_ns();

			timeout = now >= s.kill_at_ns ? 0 :
			    (int)((s.kill_at_ns - now + 999999u) / 1000000u);
		}
		if (poll(pfd, s.stopping ? 1 : 3, timeout) == -1 && errno != EINTR)
			fatal("supervisor: poll");
		hooks_tick(&s.hooks);
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
		if (!s.stopping && s.hook_fd != -1 && pfd[2].revents != 0)
			supervisor_hook_request(&s);
		if (!s.stopping && pfd[1].revents != 0 &&
		    (fd = supervisor_command(&s, hook_fd)) != -1)
			return fd;
	}
}
