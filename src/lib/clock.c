/* SPDX-License-Identifier: MIT */
/*
 * The monotonic clock in nanoseconds, the one time base of the daemon.
 */
#include <time.h>

#include "clock.h"

uint64_t
clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
