/* SPDX-License-Identifier: MIT */
/*
 * What the control socket says about the VM generation: GET /generation's
 * document, the generation:hooks and generation:file checks of /health,
 * and the entropyd_generation_* metrics, from the worker's generation and
 * hook client state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "generation.h"
#include "gensock.h"
#include "hookclient.h"
#include "longpoll.h"
#include "report.h"

/* Results a change's hook can have: the metric's label values (the check's "ready" is not one). */
static const enum feedproto_hook_result report_generation_results[] = {
	FEEDPROTO_HOOK_OK, FEEDPROTO_HOOK_FAILED, FEEDPROTO_HOOK_TIMEOUT, FEEDPROTO_HOOK_REFUSED,
};

json_t *
report_generation(const struct report_clock *c)
{
	const struct generation_stats *g = generation_stats();
	bool out = g->id[0] != '\0';

	return json_pack("{s:o, s:o, s:o, s:s, s:o, s:b, s:b, s:s}",
	    "generation", report_count(g->number),
	    "id", out ? json_string(g->id) : json_null(),
	    "since", out ? report_time(c, g->since_ns) : json_null(),
	    "trigger", generation_trigger_name(g->trigger),
	    "reseed_seconds", g->number > 0 ? json_real((double)g->reseed_ns / 1e9) : json_null(),
	    "reseeded", g->reseeded, "pending", g->pending,
	    "file", g->path != NULL ? g->path : "");
}

/* "NAME: refused: why; NAME: failed (exit status 3)" for the hooks not ok, into buf. */
static void
report_generation_troubles(const struct hookclient_stats *h, char *buf, size_t len)
{
	const struct feedproto_hook_ran *r;
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < h->nhooks && used < len; i++) {
		r = &h->hooks[i].last;
		if (r->result == FEEDPROTO_HOOK_REFUSED)
			used += (size_t)snprintf(buf + used, len - used, "%s%s refused: %s",
			    used ? "; " : "", h->hooks[i].name,
			    feedproto_hook_reason_text(r->reason));
		else if (r->result == FEEDPROTO_HOOK_FAILED && r->reason == FEEDPROTO_HOOK_NONE)
			used += (size_t)snprintf(buf + used, len - used, "%s%s failed: exit status %u",
			    used ? "; " : "", h->hooks[i].name, r->exit_status);
		else if (r->result == FEEDPROTO_HOOK_FAILED)
			used += (size_t)snprintf(buf + used, len - used, "%s%s failed: %s",
			    used ? "; " : "", h->hooks[i].name,
			    feedproto_hook_reason_text(r->reason));
		else if (r->result == FEEDPROTO_HOOK_TIMEOUT)
			used += (size_t)snprintf(buf + used, len - used, "%s%s timed out",
			    used ? "; " : "", h->hooks[i].name);
	}
}

/* The generation:hooks check: what the last batch (or the start-up check) said. */
static enum report_status
report_generation_hooks(json_t *checks, const struct report_clock *c)
{
	const struct hookclient_stats *h = hookclient_stats();
	enum report_status st = REPORT_PASS;
	char value[128], troubles[768];
	json_t *check;

	report_generation_troubles(h, troubles, sizeof troubles);
	if (troubles[0] != '\0')
		st = REPORT_WARN;
	if (!h->supervised)
		snprintf(value, sizeof value, "not run: no supervisor");
	else if (h->batch_done)
		snprintf(value, sizeof value, "generation %" PRIu64 ": %" PRIu32 " run, %" PRIu32
		    " failed, %" PRIu32 " refused", h->batch_generation, h->batch_ran,
		    h->batch_failed, h->batch_refused);
	else if (h->checked)
		snprintf(value, sizeof value, "%" PRIu32 " ready, %" PRIu32 " refused",
		    h->check_ready, h->check_refused);
	else
		snprintf(value, sizeof value, "not checked yet");
	check = report_check("generation", "system", json_string(value), NULL, st,
	    report_time(c, c->now_ns), troubles);
	json_object_set_new(check, "description", json_string(h->supervised ?
	    "generation hooks, run by the supervisor after each new generation ID" :
	    "generation hooks run only under the supervisor (the kernel sink); this daemon "
	    "runs none"));
	report_add_check(checks, "generation", "hooks", check);
	return st;
}

enum report_status
report_generation_check(json_t *checks, const struct report_clock *c)
{
	const struct generation_stats *g = generation_stats();
	enum report_status st = g->error[0] != '\0' ? REPORT_WARN : REPORT_PASS;

	report_add_check(checks, "generation", "file", report_check("generation", "system",
	    g->id[0] != '\0' ? json_string(g->id) : json_null(), NULL, st,
	    report_time(c, g->since_ns != 0 ? g->since_ns : c->now_ns), g->error));
	if (report_generation_hooks(checks, c) != REPORT_PASS)
		st = REPORT_WARN;
	return st;
}

void
report_generation_metrics(struct evbuffer *buf)
{
	const struct generation_stats *g = generation_stats();
	const struct hookclient_stats *h = hookclient_stats();
	size_t i, r;

	report_family(buf, "generation", "gauge",
	    "The VM generation: 0 for the ID of the daemon's start, one more per change published.");
	evbuffer_add_printf(buf, "entropyd_generation %" PRIu64 "\n", g->number);
	report_family(buf, "generation_pending", "gauge",
	    "1 while a change waits for the kernel's reseed before its ID is published.");
	evbuffer_add_printf(buf, "entropyd_generation_pending %d\n", g->pending);
	report_family(buf, "generation_reseed_seconds", "gauge",
	    "The last change: seconds from the change to its ID's publish, after the refill "
	    "and the kernel's reseed.");
	if (g->number > 0)
		evbuffer_add_printf(buf, "entropyd_generation_reseed_seconds %.6f\n",
		    (double)g->reseed_ns / 1e9);
	report_family(buf, "generation_write_failures_total", "counter",
	    "Failed writes of the generation file.");
	evbuffer_add_printf(buf, "entropyd_generation_write_failures_total %" PRIu64 "\n",
	    g->write_failures);
	report_family(buf, "generation_waiters", "gauge",
	    "Long polls of GET /generation waiting for a new ID.");
	evbuffer_add_printf(buf, "entropyd_generation_waiters %zu\n", longpoll_waiters());
	report_family(buf, "generation_refused_total", "counter",
	    "Connections to the generation socket closed at once: over a limit.");
	evbuffer_add_printf(buf, "entropyd_generation_refused_total %lu\n", gensock_refused());
	report_family(buf, "generation_hook_runs_total", "counter",
	    "Generation hooks run for a change (or refused), by hook and result.");
	for (i = 0; i < h->nhooks; i++)
		for (r = 0; r < sizeof report_generation_results / sizeof report_generation_results[0];
		    r++) {
			evbuffer_add_printf(buf, "entropyd_generation_hook_runs_total{hook=\"");
			report_label(buf, h->hooks[i].name);
			evbuffer_add_printf(buf, "\",result=\"%s\"} %" PRIu64 "\n",
			    feedproto_hook_result_name(report_generation_results[r]),
			    h->hooks[i].runs[report_generation_results[r]]);
		}
}
