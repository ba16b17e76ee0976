/* SPDX-License-Identifier: MIT */
/*
 * What the control socket says of the EGD broker: GET /clients as JSON,
 * the egd:clients health check, and the entropyd_egd_* metrics, read from
 * the broker's clients and counters (src/worker/broker.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "broker.h"
#include "report.h"

/* One client as JSON. */
static json_t *
report_egd_client(const struct broker *b, const struct broker_client *c,
    const struct report_clock *clock)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:b, s:I, s:I, s:I}",
	    "name", c->name, "socket", c->socket,
	    "connected_since", report_time(clock, c->connected_ns),
	    "bytes_served", report_count(c->bytes_served),
	    "requests", report_count(c->requests),
	    "waiting", c->need_bytes > 0,
	    "wanted_bytes", (json_int_t)c->need_bytes,
	    "unsent_bytes", (json_int_t)(c->out_len - c->out_off),
	    "rate_bytes_per_second", (json_int_t)b->rate_bytes);
}

json_t *
report_egd_clients(const struct report_clock *clock)
{
	const struct broker *b = broker_get();
	const struct broker_client *c;
	json_t *list, *doc;

	if (b == NULL)
		return json_pack("{s:b, s:[]}", "enabled", 0, "clients");
	list = json_array();
	TAILQ_FOREACH(c, &b->clients, entry)
		json_array_append_new(list, report_egd_client(b, c, clock));
	doc = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:{s:o, s:o, s:o}}",
	    "enabled", 1, "rate_bytes_per_second", (json_int_t)b->rate_bytes,
	    "share_percent", (json_int_t)b->draw.share_percent,
	    "max_clients", (json_int_t)b->max_clients,
	    "connected", (json_int_t)b->nclients, "waiting", (json_int_t)b->nwaiting,
	    "bytes_served", report_count(b->bytes_served),
	    "stock_bytes", report_count(b->draw.stock.len),
	    "connections", report_count(b->connections),
	    "refused", "full", report_count(b->refused[BROKER_REFUSED_FULL]),
	    "write", report_count(b->refused[BROKER_REFUSED_WRITE]),
	    "invalid", report_count(b->refused[BROKER_REFUSED_INVALID]));
	json_object_set_new(doc, "clients", list);
	return doc;
}

enum report_status
report_egd_check(json_t *checks, const struct report_clock *clock, const char **why)
{
	const struct broker *b = broker_get();
	enum report_status st;

	*why = NULL;
	if (b == NULL)
		return REPORT_PASS;
	st = broker_healthy(clock->now_ns, why) ? REPORT_PASS : REPORT_WARN;
	report_add_check(checks, "egd", "clients", report_check("egd", "component",
	    json_integer(b->nclients), "clients", st, report_time(clock, clock->now_ns), *why));
	return st;
}

/* The per-client families: bytes served, and requests by command. */
static void
report_egd_tallies(struct evbuffer *buf, const struct broker *b)
{
	const struct broker_tally *t;
	int cmd;

	report_family(buf, "egd_bytes_served_total", "counter",
	    "Full-entropy bytes the EGD broker sent, by client.");
	TAILQ_FOREACH(t, &b->tallies, entry) {
		evbuffer_add_printf(buf, "entropyd_egd_bytes_served_total{client=\"");
		report_label(buf, t->name);
		evbuffer_add_printf(buf, "\"} %" PRIu64 "\n", t->bytes_served);
	}
	report_family(buf, "egd_requests_total", "counter",
	    "EGD requests, by client and command.");
	TAILQ_FOREACH(t, &b->tallies, entry)
		for (cmd = 0; cmd < EGD_NCOMMANDS; cmd++) {
			evbuffer_add_printf(buf, "entropyd_egd_requests_total{client=\"");
			report_label(buf, t->name);
			evbuffer_add_printf(buf, "\",command=\"%s\"} %" PRIu64 "\n",
			    egd_command_name((enum egd_command)cmd), t->requests[cmd]);
		}
}

void
report_egd_metrics(struct evbuffer *buf)
{
	const struct broker *b = broker_get();
	uint64_t below = 0;
	int i;

	if (b == NULL)
		return;
	report_egd_tallies(buf, b);
	report_family(buf, "egd_clients", "gauge", "EGD connections open.");
	evbuffer_add_printf(buf, "entropyd_egd_clients %u\n", b->nclients);
	report_family(buf, "egd_waiting", "gauge", "EGD clients with a blocking read unanswered.");
	evbuffer_add_printf(buf, "entropyd_egd_waiting %u\n", b->nwaiting);
	report_family(buf, "egd_refused_total", "counter",
	    "EGD connections refused at --egd-max-clients (full) or closed for a write or an "
	    "invalid request.");
	evbuffer_add_printf(buf, "entropyd_egd_refused_total{reason=\"full\"} %" PRIu64 "\n"
	    "entropyd_egd_refused_total{reason=\"write\"} %" PRIu64 "\n"
	    "entropyd_egd_refused_total{reason=\"invalid\"} %" PRIu64 "\n",
	    b->refused[BROKER_REFUSED_FULL], b->refused[BROKER_REFUSED_WRITE],
	    b->refused[BROKER_REFUSED_INVALID]);
	report_family(buf, "egd_drawn_bytes_total", "counter",
	    "Conditioned bytes the EGD broker took from the reserves (two per byte it serves "
	    "at 8 bits a byte).");
	evbuffer_add_printf(buf, "entropyd_egd_drawn_bytes_total %" PRIu64 "\n",
	    b->draw.bytes_drawn);
	report_family(buf, "egd_wait_seconds", "histogram",
	    "How long EGD blocking reads waited for their last byte.");
	for (i = 0; i < BROKER_WAIT_BUCKETS; i++) {
		below += b->wait_buckets[i];
		evbuffer_add_printf(buf, "entropyd_egd_wait_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
		    broker_wait_bounds_s[i], below);
	}
	evbuffer_add_printf(buf, "entropyd_egd_wait_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
	    "entropyd_egd_wait_seconds_sum %.6f\nentropyd_egd_wait_seconds_count %" PRIu64 "\n",
	    b->wait_count, b->wait_sum_s, b->wait_count);
}
