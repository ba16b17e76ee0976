/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PRIVSEP_H
#define ENTROPYD_PRIVSEP_H

#include "options.h"
#include "sink.h"

struct pidfile;

/*
 * Split the daemon for the kernel sink (see privsep.c for what each
 * process may do). This process becomes the feeder, which keeps the sink's
 * /dev/random, the pidfile and the systemd socket; a supervisor is forked
 * and forks the worker. Returns only in a worker, with the sink turned into
 * requests to the feeder and the hooks' socket to the supervisor handed to
 * the hook client; the feeder and the supervisor end with exit().
 */
void privsep_split(struct sink *, struct pidfile *, const struct config *);
/*
 * The worker is about to open its sources and start its threads: without
 * -D, drop every capability now, so that no thread of it ever holds one
 * (root keeps uid 0's owner access to root's devices); with -D, empty the
 * bounding set for every thread to come, and keep the rest until
 * privsep_worker_ready() switches user.
 */
void privsep_worker_setup(const struct config *);
/*
 * The worker is set up (sources probed, control socket open): drop to the
 * worker's powers (no capability; with -D the user; under a feeder or with
 * -D the seccomp allow-list), then, under a feeder, say HELLO. Also the drop of a daemon
 * that has no feeder (file, FIFO and stdout sinks, -t).
 */
void privsep_worker_ready(const struct config *, struct sink *);
/* The worker's loop ended: close its link to the feeder (none without a feeder). */
void privsep_worker_end(struct sink *);

#endif
