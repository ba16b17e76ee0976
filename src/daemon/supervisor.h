/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SUPERVISOR_H
#define ENTROPYD_SUPERVISOR_H

struct config;
struct pidfile;

/* How long a stopping worker has before it is killed. */
#define SUPERVISOR_STOP_TIMEOUT_MS 10000

/*
 * The supervisor: the feeder's child that starts workers. It never runs the
 * loop and holds no device data; it does what the feeder's frames on
 * feeder_fd say (SPAWN a worker, KILL it, pass a SIGNAL on, STOP) and
 * reports each worker's start (with the worker's socket to the feeder) and
 * end. Each worker also gets a socket to the supervisor itself, on which
 * it asks for the generation hooks to run (HOOKS, src/daemon/hooks.c) and
 * hears how they went; a check of the hooks goes to it as it starts. On
 * STOP, on SIGTERM or SIGINT, or when the feeder goes away, it stops the
 * worker and any hook running, removes the pidfile and exits.
 *
 * Returns only in a newly forked worker, with that worker's end of its
 * socket to the feeder, and its end of the hooks' socket in *hook_fd; the
 * supervisor itself ends with exit().
 */
int supervisor_run(int feeder_fd, struct pidfile *, const struct config *, int *hook_fd);

#endif
