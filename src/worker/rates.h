/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RATES_H
#define ENTROPYD_RATES_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct entropyd_instance;

/*
 * The worker's numbers over time, kept for the reports: when the daemon
 * started, and each instance's rates over windows of RATES_WINDOW_MS, back
 * to back from the first sample. Nothing wakes up to sample them:
 * rates_touch() (before the engine changes a counter) and the reports take
 * the samples of the windows that ended since, as a timer would have.
 */
#define RATES_WINDOW_MS 10000u

/* One instance's counters at the start of its window, and the rates of the last full one. */
struct rates_window {
	char *name;
	uint64_t mark_ns;
	uint64_t mark_read, mark_fed, mark_credited;
	bool have;            /* a full window was measured */
	double read_bps, fed_bps, credited_bps;
};

/* Note the daemon's start, on both clocks. */
void rates_started(void);
/* When the daemon started: monotonic ns (0 before rates_started) and wall clock. */
uint64_t rates_start_ns(void);
struct timespec rates_start_wall(void);
/* Take a sample of every instance's counters at now_ns (at start, and each window's end). */
void rates_sample(uint64_t now_ns);
/* Take the samples of the windows that ended by now_ns. */
void rates_catch_up(uint64_t now_ns);
/* The same at this moment; call before changing a counter (cheap; no-op before a first sample). */
void rates_touch(void);
/* Forget the samples. */
void rates_reset(void);
/* An instance's window, created on first sight counting from the first sample. */
struct rates_window *rates_of(const struct entropyd_instance *, uint64_t now_ns);
/* A counter's rise per second since a mark (0 when no time passed). */
double rates_per_second(uint64_t now, uint64_t mark, uint64_t dt_ns);

#endif
