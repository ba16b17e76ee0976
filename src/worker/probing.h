/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PROBING_H
#define ENTROPYD_PROBING_H

struct event_base;

/* Which modules probing_run probes. */
enum probing_set {
	PROBING_ALL,
	PROBING_QUICK,          /* all but the slow-starting ones (at start) */
	PROBING_SLOW,           /* the slow-starting ones */
};

/* The most the slow-starting modules wait for the first feed. */
#define PROBING_SLOW_START_MS 1000

/* Make and free the timers (re-probe, slow start) on the loop. */
void probing_start(struct event_base *);
void probing_stop(void);
/*
 * Probe the enabled modules of a set. After PROBING_QUICK the slow ones
 * (ENTROPYD_SOURCE_SLOW_START) follow at the first feed, at once when no
 * other module has an instance, or after PROBING_SLOW_START_MS. With no
 * instance at all once every module was probed, say so once and retry
 * with backoff.
 */
void probing_run(enum probing_set);
/* The first feed went out: the slow-starting modules' turn. */
void probing_fed(void);
/* A source opened: losing every source later is worth a warning again. */
void probing_found(void);

#endif
