/* SPDX-License-Identifier: MIT */
/*
 * Stall detection for one source: a deadline only while data is wanted and
 * none came, so an idle daemon arms no timer.
 */
#include <string.h>

#include "stall.h"

/* A source not yet asked for anything. */
void
stall_init(struct stall *s, unsigned timeout_ms)
{
	memset(s, 0, sizeof *s);
	s->timeout_ns = (uint64_t)timeout_ms * 1000000u;
}

/* Demand changed (or was restated): start, keep or stop the clock. */
uint64_t
stall_want(struct stall *s, bool want, uint64_t now_ns)
{
	uint64_t due;

	if (!want || s->timeout_ns == 0) {
		/* Not asked for data: no clock runs (a stalled source stays so until bytes come). */
		s->waiting_since_ns = 0;
		return 0;
	}
	if (s->stalled)
		return 0;
	if (s->waiting_since_ns == 0)
		s->waiting_since_ns = now_ns != 0 ? now_ns : 1;
	due = s->waiting_since_ns + s->timeout_ns;
	return due > now_ns ? due - now_ns : 1;
}

/* Bytes arrived: the clock stops, a stall ends. */
bool
stall_delivered(struct stall *s)
{
	bool was = s->stalled;

	s->stalled = false;
	s->waiting_since_ns = 0;
	return was;
}

/* The deadline: stalled when wanted and silent for the timeout. */
bool
stall_check(struct stall *s, uint64_t now_ns)
{
	if (s->stalled || s->waiting_since_ns == 0 || s->timeout_ns == 0 ||
	    now_ns < s->waiting_since_ns + s->timeout_ns)
		return false;
	s->stalled = true;
	return true;
}

/* Closed for good: no clock, no stall. */
void
stall_stop(struct stall *s)
{
	s->stalled = false;
	s->waiting_since_ns = 0;
}
