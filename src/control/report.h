/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_REPORT_H
#define ENTROPYD_REPORT_H

#include <stdint.h>
#include <time.h>

#include <jansson.h>

struct evbuffer;
struct sink;

/*
 * What the control socket says, rendered from the registry's instances,
 * their pipeline counters and the sink: health as application/health+json,
 * full detail per source as JSON, and Prometheus text exposition 0.0.4.
 * Nothing here keeps counters of its own except the rate windows below.
 */

/*
 * The rates are over windows of this length, back to back from the first
 * sample.  Nothing wakes up to sample them: report_touch() (before the
 * engine changes a counter) and the reports take the samples of the
 * windows that ended since, as a timer would have.
 */
#define REPORT_RATE_WINDOW_MS 10000u

/* Overall health, as the api-health-check draft names it. */
enum report_status { REPORT_PASS, REPORT_WARN, REPORT_FAIL };

/* The clocks a report is made at: monotonic (as clock_now_ns) and wall. */
struct report_clock {
	uint64_t now_ns;
	time_t wall;
};

struct report_clock report_now(void);
/* Note the daemon's start time (entropyd_start_time_seconds, /health's startTime). */
void report_started(void);
/* Take a rate sample of every instance's counters (at start, and each window's end). */
void report_sample(const struct report_clock *);
/* Take the samples of the windows that ended by the clock. */
void report_catch_up(const struct report_clock *);
/* The same at this moment; call before changing a counter (cheap; no-op before a first sample). */
void report_touch(void);
/* Forget the rate samples. */
void report_reset(void);
/* GET /health: the document, and its overall status in *status. */
json_t *report_health(const struct sink *, const struct report_clock *,
    enum report_status *status);
const char *report_status_name(enum report_status);
/* GET /sources: {"sources": [...]}. */
json_t *report_sources(const struct report_clock *);
/* GET /sources/NAME: one instance, or NULL when there is none of that name. */
json_t *report_source(const char *name, const struct report_clock *);
/* GET /metrics: Prometheus text into buf. */
void report_metrics(struct evbuffer *buf, const struct sink *);

#endif
