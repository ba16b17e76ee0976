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
 * Nothing here keeps counters of its own: the rate windows are the
 * worker's (rates.h).
 */

/* Overall health, as the api-health-check draft names it. */
enum report_status { REPORT_PASS, REPORT_WARN, REPORT_FAIL };

/* The clocks a report is made at: monotonic (as clock_now_ns) and wall. */
struct report_clock {
	uint64_t now_ns;
	time_t wall;
};

struct report_clock report_now(void);
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
