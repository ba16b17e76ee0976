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

/* The pieces the reports are made of, shared with report_egd.c and report_generation.c. */
/* A monotonic time as an RFC 3339 UTC wall-clock time. */
json_t *report_time(const struct report_clock *, uint64_t mono_ns);
/* A counter as a JSON integer. */
json_t *report_count(uint64_t);
/* One health check object; output only when not passing. */
json_t *report_check(const char *id, const char *type, json_t *value, const char *unit,
    enum report_status, json_t *time, const char *output);
/* checks["component:measurement"] = [check]. */
void report_add_check(json_t *checks, const char *component, const char *measurement,
    json_t *check);
/* A label value escaped for the text format. */
void report_label(struct evbuffer *, const char *);
/* The HELP and TYPE lines of the metric family entropyd_NAME. */
void report_family(struct evbuffer *, const char *name, const char *type, const char *help);

/* report_egd.c: the EGD broker's part. */
/* GET /clients: the broker's clients, or {"enabled": false} when it is off. */
json_t *report_egd_clients(const struct report_clock *);
/* The egd:clients check, when the broker is on; its status (pass when off). */
enum report_status report_egd_check(json_t *checks, const struct report_clock *,
    const char **why);
/* The broker's metrics, when it is on. */
void report_egd_metrics(struct evbuffer *);

/* The VM generation (report_generation.c): GET /generation's document. */
json_t *report_generation(const struct report_clock *);
/* Its /health check, generation:hooks; its status. */
enum report_status report_generation_check(json_t *checks, const struct report_clock *);
/* Its metrics. */
void report_generation_metrics(struct evbuffer *buf);

#endif
