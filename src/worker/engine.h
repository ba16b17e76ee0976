/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_ENGINE_H
#define ENTROPYD_ENGINE_H

#include "options.h"
#include "sink.h"

/* Backoff for re-opening absent or suspended sources and for re-probing. */
#define ENGINE_BACKOFF_MIN_MS 1000u
#define ENGINE_BACKOFF_MAX_MS 300000u
/* How long shutdown waits for a reader thread stuck in read(). */
#define ENGINE_STOP_TIMEOUT_MS 300u
/* What a polled source is asked for per readable event. */
#define ENGINE_POLL_READ_BYTES 4096

/*
 * Run the daemon: probe the enabled sources, read them on demand through
 * the pipeline into their reserves, and feed the sink, until SIGTERM or
 * SIGINT. Returns a sysexits code.
 */
int engine_run(const struct config *, struct sink *);

#endif
