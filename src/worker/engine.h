/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ENGINE_H
#define ENTROPYD_ENGINE_H

#include "options.h"
#include "sink.h"

/* How long shutdown waits for a reader thread stuck in read(). */
#define ENGINE_STOP_TIMEOUT_MS 300u
/* What a polled source is asked for per readable event. */
#define ENGINE_POLL_READ_BYTES 4096

struct event_base;

/*
 * What the process around the worker adds to its loop. The engine calls up
 * only through these, so the worker's folder needs nothing of the folders
 * above it (plugins, control, the process split). Any may be NULL.
 */
struct engine_parts {
	/* The loop exists: start serving on it (plugin hosts, the control server). 0 or a sysexits code. */
	int (*start)(struct event_base *, const struct config *, struct sink *);
	/* The loop ended and every source is closed: stop what start started. */
	void (*stop)(void);
	/* SIGHUP: load what was added since (drop-ins), before the re-probe. */
	void (*reload)(const struct config *);
	/* Before the sources open, and once they are probed: the privilege steps. */
	void (*setup)(const struct config *);
	void (*ready)(const struct config *, struct sink *);
};

/*
 * Run the daemon: probe the enabled sources, read them on demand through
 * the pipeline into their reserves, and feed the sink, until SIGTERM or
 * SIGINT. Returns a sysexits code.
 */
int engine_run(const struct config *, struct sink *, const struct engine_parts *);

#endif
