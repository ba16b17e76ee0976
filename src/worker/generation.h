/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_GENERATION_H
#define ENTROPYD_GENERATION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "genfile.h"
#include "vmgenid.h"

struct event_base;

/*
 * The VM generation as applications see it: an ID (a random version 4
 * UUID) in the generation file (src/proto/genfile.h), GET /generation and
 * its long poll, and the hooks the supervisor runs.
 *
 * At start the file gets a fresh ID, as soon as the kernel's CRNG is ready
 * (the daemon cannot know what happened while it did not run: a new start
 * is a new generation). On a change (any trigger of vmgenid.h) the ID is
 * not replaced at once: with the kernel sink, only once the refill that
 * follows the change was fed and the CRNG reseeded (RNDRESEEDCRNG), so a
 * reader who sees a new ID may rely on the kernel's output being the new
 * generation's. Then, in this order: the file is replaced (write, rename),
 * the listener (the long polls) is told, and the supervisor is asked to run
 * the hooks. Changes that come while one waits for its reseed make one new
 * generation. Other sinks reseed nothing: there the new ID follows the
 * change at once, and says it was not reseeded.
 *
 * Every ID is drawn from the kernel (getrandom) after the reseed, never
 * kept from before: two clones restored from one snapshot get two IDs.
 */

/* The trigger of the start-up ID (the others are enum vmgenid_trigger's). */
#define GENERATION_TRIGGER_START VMGENID_NTRIGGERS

struct generation_stats {
	const char *path;              /* the generation file */
	uint64_t number;               /* 0 for the start-up ID, then one more per change */
	char id[GENFILE_ID_CHARS + 1]; /* "" until the first is published */
	int trigger;                   /* enum vmgenid_trigger, or GENERATION_TRIGGER_START */
	struct timespec since;         /* wall clock of the publish */
	uint64_t since_ns;             /* the same, CLOCK_MONOTONIC */
	bool reseeded;                 /* published after the kernel's reseed */
	uint64_t reseed_ns;            /* change to publish, of the last change; 0 for none */
	bool pending;                  /* a change was heard, its ID is not out yet */
	int pending_trigger;
	uint64_t pending_since_ns;     /* the first change not yet published */
	uint64_t changes;              /* changes heard */
	uint64_t write_failures;
	char error[192];               /* the last write failure, "" when none */
};

/*
 * Start, before the worker's sandbox: the file's directory is made if need
 * be (0755; with -D handed to the daemon's user, as the control socket's
 * is), the start-up ID is published once the CRNG is ready, and the hook
 * client is put on the loop. reseeds: the sink is the kernel's, so a change
 * waits for generation_reseeded(). A file that cannot be written is logged
 * and reported; the daemon carries on.
 */
void generation_start(struct event_base *, const char *path, bool reseeds);
/* Stop; the file is removed (a stale ID must not outlive the daemon that keeps it). */
void generation_stop(void);
/* A change was heard (after the engine forgot what it held). */
void generation_changed(enum vmgenid_trigger, uint64_t event_ns);
/* The kernel's CRNG was reseeded with a refill at reseed_ns (CLOCK_MONOTONIC). */
void generation_reseeded(uint64_t reseed_ns);
/* Who is told of each publish (the control server's long polls): one listener. */
void generation_listen(void (*published)(void *), void *arg);
const struct generation_stats *generation_stats(void);
/* The name of a trigger as /generation and the hooks give it ("start", "kmsg", ...). */
const char *generation_trigger_name(int trigger);

#endif
