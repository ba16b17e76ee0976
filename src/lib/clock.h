/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CLOCK_H
#define ENTROPYD_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: the one clock of the daemon and its tools. */
uint64_t clock_now_ns(void);

#endif
