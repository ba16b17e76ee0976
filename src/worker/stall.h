/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_STALL_H
#define ENTROPYD_STALL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Stall detection for one source, free of the loop: the engine says when it
 * wants data from the source and when bytes arrive; a source that was
 * wanted and delivered nothing for its timeout is stalled until bytes
 * arrive again. Only while data is wanted and outstanding is there a
 * deadline, so an idle daemon (full reserves, nothing wanted) arms no timer
 * and marks nothing stalled. A reopen (a FIFO writer reconnecting) does not
 * restart the clock: only bytes do.
 */
struct stall {
	uint64_t timeout_ns;       /* 0: never stalled */
	uint64_t waiting_since_ns; /* wanted since, with nothing since; 0 when not waiting */
	bool stalled;
};

/* timeout_ms 0: never stalled. */
void stall_init(struct stall *, unsigned timeout_ms);
/*
 * Whether data is wanted now. Returns the nanoseconds left until the
 * source is overdue (at least 1), or 0 when no deadline runs (nothing
 * wanted, no timeout, or already stalled).
 */
uint64_t stall_want(struct stall *, bool want, uint64_t now_ns);
/* Bytes arrived. Returns true when the source was stalled (it recovered). */
bool stall_delivered(struct stall *);
/* The deadline passed? Returns true when the source just became stalled. */
bool stall_check(struct stall *, uint64_t now_ns);
/* The source closed for good (absent, suspended, drained): forget the clock. */
void stall_stop(struct stall *);

#endif
