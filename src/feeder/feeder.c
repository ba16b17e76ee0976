/* SPDX-License-Identifier: MIT */
/*
 * The feeder's loop: the one process holding /dev/random. It takes the
 * worker's frames within the ceiling (credit at most 8 bits a byte, one
 * request in flight, well-formed only), refuses and counts the rest, and
 * ends a worker that sent one.
 */
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "clock.h"
#include "daemonize.h"
#include "feeder.h"
#include "log.h"
#include "msg.h"
#include "notify.h"

/* What the loop knows besides the feeder: the supervisor, a pending restart, stopping. */
struct feeder_loop {
	pid_t supervisor;
	int supervisor_fd;
	unsigned restart_ms;        /* the next restart's pause */
	uint64_t restart_at_ns;     /* 0: no restart pending */
	bool stopping;
	int exit_code;
};

void
feeder_init(struct feeder *f, const struct feeder_kernel_ops *ops)
{
	memset(f, 0, sizeof *f);
	f->ops = ops;
	f->random_fd = -1;
	f->quiet_fd = -1;
	f->worker_fd = -1;
}

/* The pool's state into the counters an answer carries. */
static void
feeder_sample_pool(struct feeder *f)
{
	int avail = f->ops->entropy_avail(f);

	f->state.crng_ready = f->ops->crng_ready(f) == 1;
	f->state.entropy_avail = avail > 0 ? (uint32_t)avail : 0;
}

/* A STATUS line for systemd: the text is printable ASCII (feedproto checked it). */
static void
feeder_status(const struct feedproto_frame *fr)
{
	char text[FEEDPROTO_MAX_STATUS + 1];

	memcpy(text, fr->payload, fr->len);
	text[fr->len] = '\0';
	notify_send("STATUS=%s", text);
}

/*
 * An ADD: one RNDADDENTROPY per segment, in order, each counted when done;
 * the first that fails ends it. 0 or that call's errno.
 */
static int
feeder_add(struct feeder *f, const struct feedproto_frame *fr)
{
	struct feedproto_segment seg;
	size_t off = 0;

	while (feedproto_next_segment(fr, &off, &seg)) {
		if (f->ops->add(f, seg.bytes, seg.len, seg.credit) == -1)
			return errno != 0 ? errno : EIO;
		f->state.adds++;
		f->state.bits_credited += seg.credit;
		if (seg.credit > 0 && !f->credited) {
			/* The first credited feed, done by us: the daemon is doing its job. */
			f->credited = true;
			notify_send("READY=1");
		}
	}
	return 0;
}

/* Carry out an accepted request; 0 or the errno of the kernel call. */
static int
feeder_do(struct feeder *f, const struct feedproto_frame *fr)
{
	switch (fr->type) {
	case FEEDPROTO_HELLO:
		f->worker_up = f->ever_up = true;
		if (f->quiet_fd != -1) {
			/* The daemon is up: a background start has returned. */
			daemonize_quiet(f->quiet_fd);
			f->quiet_fd = -1;
		}
		feeder_sample_pool(f);
		return 0;
	case FEEDPROTO_ADD:
		return feeder_add(f, fr);
	case FEEDPROTO_MIX:
		if (f->ops->mix(f, fr->payload, fr->len) == -1)
			return errno != 0 ? errno : EIO;
		f->mixes++;
		return 0;
	case FEEDPROTO_RESEED:
		if (f->ops->reseed(f) == -1)
			return errno != 0 ? errno : EIO;
		f->reseeds++;
		return 0;
	case FEEDPROTO_QUERY:
		feeder_sample_pool(f);
		return 0;
	case FEEDPROTO_STATUS:
		feeder_status(fr);
		return 0;
	default:
		return EINVAL; /* not reached: feeder_handle admits worker requests only */
	}
}

enum feedproto_refusal
feeder_handle(struct feeder *f, const uint8_t *frame, size_t len, bool truncated,
    uint8_t *answer, size_t *answer_len)
{
	struct feedproto_frame fr;
	enum feedproto_refusal r;
	int status;

	*answer_len = 0;
	r = feedproto_decode(frame, len, truncated, &fr);
	if (r == FEEDPROTO_OK && !feedproto_from_worker(fr.type))
		r = FEEDPROTO_UNKNOWN_TYPE;
	if (r != FEEDPROTO_OK) {
		f->state.refused[r]++;
		return r;
	}
	errno = 0;
	status = feeder_do(f, &fr);
	/* An ADD's answer carries the counters too: the worker's copy stays current. */
	*answer_len = feedproto_encode_answer(answer, FEEDPROTO_MAX_FRAME, status,
	    fr.type == FEEDPROTO_QUERY || fr.type == FEEDPROTO_HELLO ||
	    fr.type == FEEDPROTO_ADD ? &f->state : NULL);
	return FEEDPROTO_OK;
}

/* Count and log a refusal that feeder_handle did not see. */
static enum feeder_served
feeder_refuse(struct feeder *f, enum feedproto_refusal r, const char *why)
{
	f->state.refused[r]++;
	log_warnx("feeder: refused a frame from the worker (pid %ld): %s (%s); ending it",
	    (long)f->worker_pid, feedproto_refusal_name(r), why);
	return FEEDER_REFUSED;
}

/* Whether another message waits behind the one just read. */
static bool
feeder_more_queued(int fd)
{
	uint8_t c;

	return recv(fd, &c, sizeof c, MSG_PEEK | MSG_DONTWAIT) > 0;
}

enum feeder_served
feeder_serve(struct feeder *f, int fd)
{
	uint8_t frame[FEEDPROTO_MAX_FRAME], answer[FEEDPROTO_MAX_FRAME];
	enum feeder_served out = FEEDER_SERVED;

	for (;;) {
		struct iovec iov = { frame, sizeof frame };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		enum feedproto_refusal r;
		size_t alen;
		ssize_t n;

		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			out = FEEDER_WORKER_GONE;
			break;
		}
		/* One request at a time: a worker that did not wait for its answer floods. */
		if (feeder_more_queued(fd)) {
			out = feeder_refuse(f, FEEDPROTO_FLOOD, "a request sent before the last "
			    "was answered");
			break;
		}
		r = feeder_handle(f, frame, (size_t)n, (msg.msg_flags & MSG_TRUNC) != 0, answer,
		    &alen);
		if (r != FEEDPROTO_OK) {
			log_warnx("feeder: refused a frame from the worker (pid %ld): %s; ending it",
			    (long)f->worker_pid, feedproto_refusal_name(r));
			out = FEEDER_REFUSED;
			break;
		}
		if (send(fd, answer, alen, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)alen) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				out = feeder_refuse(f, FEEDPROTO_FLOOD, "it does not read its answers");
			else
				out = FEEDER_WORKER_GONE;
			break;
		}
	}
	explicit_bzero(frame, sizeof frame);
	return out;
}

/* Send the supervisor a command. */
static void
feeder_command(struct feeder_loop *l, enum feedproto_type type, uint32_t arg0)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	size_t len = feedproto_encode(buf, sizeof buf, type, arg0, 0, NULL, 0);

	if (len == 0 || send(l->supervisor_fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		log_warn("feeder: telling the supervisor");
}

/* Stop everything: the supervisor stops the worker and exits, then so do we. */
static void
feeder_stop(struct feeder_loop *l, int exit_code)
{
	if (l->stopping)
		return;
	l->stopping = true;
	l->exit_code = exit_code;
	l->restart_at_ns = 0;
	notify_send("STOPPING=1");
	feeder_command(l, FEEDPROTO_STOP, 0);
}

/* Forget the worker's socket, answering what it queued before it went. */
static void
feeder_drop_worker(struct feeder *f)
{
	if (f->worker_fd == -1)
		return;
	(void)feeder_serve(f, f->worker_fd);
	close(f->worker_fd);
	f->worker_fd = -1;
	f->worker_up = false;
}

/* Describe a wait status in words. */
static void
feeder_describe(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* The worker ended: stop with it, or start another after a pause. */
static void
feeder_worker_exited(struct feeder *f, struct feeder_loop *l, pid_t pid, int status)
{
	uint64_t now = clock_now_ns();
	char how[128], who[48];
	/* Ended by us: however it went (it may exit 0 on losing its socket), it failed. */
	bool refused = pid != 0 && pid == f->worker_pid && f->worker_refused;

	feeder_describe(status, how, sizeof how);
	if (refused)
		strncat(how, ", after its frame was refused", sizeof how - strlen(how) - 1);
	if (pid != 0)
		snprintf(who, sizeof who, "the worker (pid %ld)", (long)pid);
	else
		snprintf(who, sizeof who, "a worker that could not be forked");
	if (pid == f->worker_pid)
		feeder_drop_worker(f);
	f->worker_pid = 0;
	f->state.worker_exits++;
	f->state.last_exit = (uint32_t)status;
	if (l->stopping) {
		log_debug("feeder: %s %s", who, how);
		return;
	}
	if (!f->ever_up) {
		/* It never came up: what stopped it would stop the next one too. */
		log_warnx("feeder: %s %s while starting; stopping", who, how);
		feeder_stop(l, WIFEXITED(status) && WEXITSTATUS(status) != 0 ?
		    WEXITSTATUS(status) : EX_SOFTWARE);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !refused) {
		log_info("feeder: %s stopped; stopping", who);
		feeder_stop(l, EX_OK);
		return;
	}
	if (now - f->worker_started_ns >= (uint64_t)FEEDER_RESTART_RESET_MS * 1000000u)
		l->restart_ms = FEEDER_RESTART_MIN_MS;
	log_warnx("feeder: %s %s; starting another in %u ms", who, how, l->restart_ms);
	l->restart_at_ns = now + (uint64_t)l->restart_ms * 1000000u;
	l->restart_ms = l->restart_ms >= FEEDER_RESTART_MAX_MS / 2 ? FEEDER_RESTART_MAX_MS :
	    l->restart_ms * 2;
}

/* A worker was forked: take its socket. */
static void
feeder_worker_started(struct feeder *f, pid_t pid, int fd)
{
	feeder_drop_worker(f);
	f->worker_fd = fd;
	f->worker_pid = pid;
	f->worker_up = false;
	f->worker_refused = false;
	f->worker_started_ns = clock_now_ns();
	if (++f->worker_starts > 1) {
		f->state.worker_restarts++;
		log_info("feeder: worker restarted (pid %ld, restart %" PRIu32 ")", (long)pid,
		    f->state.worker_restarts);
	} else
		log_debug("feeder: worker started (pid %ld)", (long)pid);
}

/* Read one frame from the supervisor, with the descriptor it may carry; false at its end. */
static bool
feeder_from_supervisor(struct feeder *f, struct feeder_loop *l)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	struct feedproto_frame fr;
	int fds[MSG_MAX_FDS], passed;
	ssize_t n;

	n = msg_recv(l->supervisor_fd, buf, sizeof buf, 0, fds);
	if (n == 0 || (n == -1 && errno != EMSGSIZE))
		return false;
	passed = fds[0];
	if (fds[1] != -1)
		close(fds[1]);
	/* A frame cut short (EMSGSIZE) is malformed, as one with a descriptor where none belongs. */
	if (n == -1 || feedproto_decode(buf, (size_t)n, false, &fr) != FEEDPROTO_OK ||
	    (fr.type == FEEDPROTO_STARTED) != (passed != -1)) {
		log_warnx("feeder: a malformed frame from the supervisor; ignored");
		if (passed != -1)
			close(passed);
		return true;
	}
	if (fr.type == FEEDPROTO_STARTED)
		feeder_worker_started(f, (pid_t)fr.arg0, passed);
	else if (fr.type == FEEDPROTO_EXITED)
		feeder_worker_exited(f, l, (pid_t)fr.arg0, (int)fr.arg1);
	else
		log_warnx("feeder: an unexpected frame from the supervisor; ignored");
	return true;
}

void
feeder_log_stats(const struct feeder *f)
{
	const struct feedproto_state *s = &f->state;

	log_info("feeder: %" PRIu64 " bits credited in %" PRIu64 " feeds, %" PRIu64 " mixes, %"
	    PRIu64 " reseeds; worker restarts %" PRIu32 "; refused frames: malformed=%" PRIu32
	    " unknown_type=%" PRIu32 " oversized=%" PRIu32 " credit=%" PRIu32 " flood=%" PRIu32,
	    s->bits_credited, s->adds, f->mixes, f->reseeds, s->worker_restarts,
	    s->refused[FEEDPROTO_MALFORMED], s->refused[FEEDPROTO_UNKNOWN_TYPE],
	    s->refused[FEEDPROTO_OVERSIZED], s->refused[FEEDPROTO_CREDIT],
	    s->refused[FEEDPROTO_FLOOD]);
}

/* A signal arrived: stop, or report and pass it on. */
static void
feeder_signal(struct feeder *f, struct feeder_loop *l, int sig)
{
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("feeder: %s: stopping", strsignal(sig));
		feeder_stop(l, EX_OK);
		break;
	case SIGUSR1:
		feeder_log_stats(f);
		/* FALLTHROUGH */
	case SIGHUP:
	case SIGUSR2:
		/* Not before its HELLO: a worker setting up has no handler yet and would die. */
		if (!l->stopping && f->worker_up)
			feeder_command(l, FEEDPROTO_SIGNAL, (uint32_t)sig);
		else if (!l->stopping)
			log_info("feeder: %s: no worker is up to pass it to", strsignal(sig));
		break;
	}
}

/* Milliseconds until the pending restart (-1: none pending). */
static int
feeder_timeout(const struct feeder_loop *l)
{
	uint64_t now = clock_now_ns();

	if (l->restart_at_ns == 0)
		return -1;
	if (now >= l->restart_at_ns)
		return 0;
	return (int)((l->restart_at_ns - now + 999999u) / 1000000u);
}

/* The supervisor is gone: reap it and say with what the daemon ends. */
static int
feeder_supervisor_gone(struct feeder *f, struct feeder_loop *l)
{
	int status = 0;

	while (waitpid(l->supervisor, &status, 0) == -1 && errno == EINTR)
		;
	feeder_drop_worker(f);
	if (l->stopping)
		return l->exit_code;
	log_warnx("feeder: the supervisor (pid %ld) ended unexpectedly; exiting",
	    (long)l->supervisor);
	return EX_SOFTWARE;
}

int
feeder_run(struct feeder *f, pid_t supervisor, int supervisor_fd, int signal_fd)
{
	struct feeder_loop l = {
		.supervisor = supervisor, .supervisor_fd = supervisor_fd,
		.restart_ms = FEEDER_RESTART_MIN_MS, .exit_code = EX_OK,
	};

	feeder_command(&l, FEEDPROTO_SPAWN, 0);
	/* The supervisor's end of its socket closes when it ends: no SIGCHLD needed. */
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = signal_fd, .events = POLLIN },
			{ .fd = supervisor_fd, .events = POLLIN },
			{ .fd = f->worker_fd, .events = POLLIN },
		};
		int n = poll(pfd, 3, feeder_timeout(&l));

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			fatal("feeder: poll");
		if (l.restart_at_ns != 0 && clock_now_ns() >= l.restart_at_ns) {
			l.restart_at_ns = 0;
			feeder_command(&l, FEEDPROTO_SPAWN, 0);
		}
		if (pfd[2].revents != 0 && f->worker_fd != -1) {
			switch (feeder_serve(f, f->worker_fd)) {
			case FEEDER_SERVED:
				break;
			case FEEDER_REFUSED:
				/* What it queued after the refused frame is dropped unread. */
				close(f->worker_fd);
				f->worker_fd = -1;
				f->worker_refused = true;
				if (f->worker_pid != 0 && !l.stopping)
					feeder_command(&l, FEEDPROTO_KILL, (uint32_t)f->worker_pid);
				break;
			case FEEDER_WORKER_GONE:
				/* It is ending (the supervisor will say how), or it cut itself off. */
				close(f->worker_fd);
				f->worker_fd = -1;
				break;
			}
		}
		if (pfd[1].revents != 0 && !feeder_from_supervisor(f, &l))
			return feeder_supervisor_gone(f, &l);
		if (pfd[0].revents != 0) {
			struct signalfd_siginfo si;

			if (read(signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
				feeder_signal(f, &l, (int)si.ssi_signo);
		}
	}
}
