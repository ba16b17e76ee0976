/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CLOCK_H
#define ENTROPYD_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

/* CLOCK_MONOTONIC in nanoseconds: the one clock of the daemon and its tools. */
uint64_t clock_now_ns(void);

/* A delay of ms milliseconds as a timeval (for libevent's timers). */
static inline struct timeval
clock_tv_ms(unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	return tv;
}

#endif
