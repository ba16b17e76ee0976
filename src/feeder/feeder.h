/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FEEDER_H
#define ENTROPYD_FEEDER_H
/*
 * The feeder: the one process that holds the kernel's pool (/dev/random
 * open, CAP_SYS_ADMIN). It takes frames (src/proto/feedproto.h) from the
 * worker and does what they ask, within the ceiling: at most 8 bits of
 * credit per byte, at most FEEDPROTO_MAX_PAYLOAD bytes a frame, one request
 * in flight, well-formed frames only. Anything else is refused, logged and
 * counted, and the worker that sent it is ended and started again. It parses
 * no device data, serves no HTTP and loads no plugin; its system calls are
 * the exact list in feeder_seccomp.c.
 */
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feedproto.h"

/* Restarting a worker that died: a doubling pause between these bounds. */
#define FEEDER_RESTART_MIN_MS 1000u
#define FEEDER_RESTART_MAX_MS 60000u
/* A worker that lived this long starts the pause over from the minimum. */
#define FEEDER_RESTART_RESET_MS 60000u

struct feeder;

/* The kernel's interfaces, replaceable so tests can record what would be issued. */
struct feeder_kernel_ops {
	/* RNDADDENTROPY: mix and credit. 0 or -1 with errno. */
	int (*add)(struct feeder *, const uint8_t *, size_t, unsigned credit_bits);
	/* A plain write: mixed in, never credited. */
	int (*mix)(struct feeder *, const uint8_t *, size_t);
	/* RNDRESEEDCRNG. */
	int (*reseed)(struct feeder *);
	/* 1 when the kernel's CRNG is initialised, else 0. */
	int (*crng_ready)(struct feeder *);
	/* The pool's entropy count in bits. */
	int (*entropy_avail)(struct feeder *);
};
/* The real ones, on the feeder's random_fd. */
extern const struct feeder_kernel_ops feeder_kernel_ops;

struct feeder {
	const struct feeder_kernel_ops *ops;
	void *ops_arg;              /* for recording ops in tests */
	int random_fd;              /* /dev/random, opened before the split */
	int quiet_fd;               /* /dev/null for stderr once a worker is up, or -1 */
	struct feedproto_state state; /* counters; QUERY and HELLO answers carry them */
	uint64_t mixes, reseeds;
	bool credited;              /* a credited feed succeeded: READY=1 was sent */
	/* The current worker. */
	int worker_fd;              /* its end of our socketpair, -1 between workers */
	pid_t worker_pid;           /* 0 between workers */
	bool worker_up;             /* it said HELLO */
	bool worker_refused;        /* a frame of it was refused: it is being ended */
	bool ever_up;               /* some worker said HELLO */
	unsigned worker_starts;
	uint64_t worker_started_ns;
};

/* Set up a feeder on the given kernel ops (random_fd -1, no worker). */
void feeder_init(struct feeder *, const struct feeder_kernel_ops *);
/*
 * Check and carry out one frame a worker sent (truncated: the socket cut it
 * short). FEEDPROTO_OK with the ANSWER to send in answer (*answer_len
 * bytes, answer holding at least FEEDPROTO_MAX_FRAME), or the refusal,
 * counted, and nothing done.
 */
enum feedproto_refusal feeder_handle(struct feeder *, const uint8_t *frame, size_t len,
    bool truncated, uint8_t *answer, size_t *answer_len);

/* What serving a worker's socket came to. */
enum feeder_served {
	FEEDER_SERVED,       /* everything queued was answered */
	FEEDER_WORKER_GONE,  /* the socket closed */
	FEEDER_REFUSED,      /* a frame was refused (counted and logged): end the worker */
};
/*
 * Read the requests queued on a worker's socket and answer each, one at a
 * time: a request queued behind one not yet answered is a flood, refused
 * before the first is carried out; so is a worker that does not read its
 * answers.
 */
enum feeder_served feeder_serve(struct feeder *, int fd);
/*
 * The feeder's loop: ask the supervisor (on supervisor_fd) for a worker,
 * serve it, restart it with backoff when it dies, pass SIGHUP, SIGUSR1 and
 * SIGUSR2 on and stop everything on SIGTERM or SIGINT (read from signal_fd, a
 * signalfd). Returns the daemon's exit status once the supervisor has ended.
 */
int feeder_run(struct feeder *, pid_t supervisor, int supervisor_fd, int signal_fd);
/* Log the feeder's counters in one line (SIGUSR1). */
void feeder_log_stats(const struct feeder *);
/*
 * Confine the feeder to its system-call allow-list (feeder_seccomp.c):
 * I/O on what it holds, the three random ioctls on random_fd, reaping,
 * exit. 0; 1 on an architecture it has no list for; -1 on failure; with one
 * line in err when not 0.
 */
int feeder_seccomp_apply(int random_fd, char *err, size_t errlen);

#endif
