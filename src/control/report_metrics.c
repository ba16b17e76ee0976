/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics: the same state as /health and /sources (the registry, the
 * pipeline counters, the sink, clone detection, the feeder's last word,
 * the plugin hosts) in the Prometheus text exposition format 0.0.4.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "clock.h"
#include "feedclient.h"
#include "hostproc.h"
#include "rates.h"
#include "registry.h"
#include "report.h"
#include "sink.h"
#include "vmgenid.h"

/* A monotonic time (0: never) as Unix seconds, or 0. */
static double
report_unix_seconds(uint64_t mono_ns)
{
	struct timespec now;
	double wall;

	if (mono_ns == 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	wall = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	return wall - (double)(clock_now_ns() - mono_ns) / 1e9;
}

/* Where report_plugin_line writes, and which family. */
struct report_plugin_walk {
	struct evbuffer *buf;
	const char *family;
	bool any;
};

/* Append a label value escaped for the text format: \\, \" and \n. */
void
report_label(struct evbuffer *buf, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\')
			evbuffer_add(buf, "\\\\", 2);
		else if (*v == '"')
			evbuffer_add(buf, "\\\"", 2);
		else if (*v == '\n')
			evbuffer_add(buf, "\\n", 2);
		else
			evbuffer_add(buf, v, 1);
	}
}

/* The HELP and TYPE lines of a metric family. */
void
report_family(struct evbuffer *buf, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(buf, "# HELP entropyd_%s %s\n# TYPE entropyd_%s %s\n", name, help,
	    name, type);
}

/* A value: v / div, exactly (div is 1, or 8 for bits as bytes). */
static void
report_value(struct evbuffer *buf, uint64_t v, unsigned div)
{
	if (v % div == 0)
		evbuffer_add_printf(buf, "%" PRIu64 "\n", v / div);
	else
		evbuffer_add_printf(buf, "%" PRIu64 ".%03u\n", v / div,
		    (unsigned)(v % div * 1000 / div));
}

/* One sample of a per-source family: entropyd_NAME{source="..."[,KEY="..."]} V/div. */
static void
report_sample_line(struct evbuffer *buf, const char *name, const char *source,
    const char *key, const char *value, uint64_t v, unsigned div)
{
	evbuffer_add_printf(buf, "entropyd_%s{source=\"", name);
	report_label(buf, source);
	if (key != NULL) {
		evbuffer_add_printf(buf, "\",%s=\"", key);
		report_label(buf, value);
	}
	evbuffer_add(buf, "\"} ", 3);
	report_value(buf, v, div);
}

/* A per-source counter family, read from each instance's pipeline counters. */
static void
report_counter(struct evbuffer *buf, const char *name, const char *help, size_t offset,
    unsigned div)
{
	struct entropyd_instance *inst;

	report_family(buf, name, "counter", help);
	TAILQ_FOREACH(inst, &registry_instances, all)
		report_sample_line(buf, name, inst->name, NULL, NULL,
		    *(const uint64_t *)(const void *)((const char *)&inst->pipe.count + offset), div);
}

/* Clone detection: changes by trigger, bytes forgotten, the last refill's latency. */
static void
report_clone_metrics(struct evbuffer *buf)
{
	const struct vmgenid_stats *v = vmgenid_stats();
	int t;

	report_family(buf, "vmgenid_armed", "gauge",
	    "1 when VM generation changes are detected (a bound device, the kernel log watched).");
	evbuffer_add_printf(buf, "entropyd_vmgenid_armed %d\n", vmgenid_armed());
	report_family(buf, "vmgenid_changes_total", "counter",
	    "VM generation changes acted on, by trigger (uevent, kmsg, vmclock, signal, control).");
	for (t = 0; t < VMGENID_NTRIGGERS; t++)
		evbuffer_add_printf(buf, "entropyd_vmgenid_changes_total{trigger=\"%s\"} %" PRIu64
		    "\n", vmgenid_trigger_name((enum vmgenid_trigger)t), v->changes[t]);
	report_family(buf, "vmgenid_ignored_total", "counter",
	    "Reports of a VM generation change refused: uevents or kernel log notices not "
	    "from the kernel.");
	evbuffer_add_printf(buf, "entropyd_vmgenid_ignored_total %" PRIu64 "\n",
	    v->ignored);
	report_family(buf, "vmgenid_discarded_bytes_total", "counter",
	    "Bytes held from before a VM generation change and wiped unused.");
	evbuffer_add_printf(buf, "entropyd_vmgenid_discarded_bytes_total %" PRIu64 "\n",
	    v->discarded_bytes);
	report_family(buf, "vmgenid_refills_total", "counter",
	    "Refills fed to the kernel and reseeded after a VM generation change.");
	evbuffer_add_printf(buf, "entropyd_vmgenid_refills_total %" PRIu64 "\n", v->refills);
	report_family(buf, "vmgenid_refill_seconds", "gauge",
	    "The last refill: seconds from the change to the kernel's reseed.");
	if (v->refills > 0)
		evbuffer_add_printf(buf, "entropyd_vmgenid_refill_seconds %.6f\n",
		    (double)v->last_refill_ns / 1e9);
}

/* A per-source gauge of bits, in bytes: entropyd_NAME{source="..."[,estimator="..."]} V/8. */
static void
report_gauge_line(struct evbuffer *buf, const char *name, const char *source,
    const char *estimator, double bits)
{
	evbuffer_add_printf(buf, "entropyd_%s{source=\"", name);
	report_label(buf, source);
	if (estimator != NULL)
		evbuffer_add_printf(buf, "\",estimator=\"%s", estimator);
	evbuffer_add_printf(buf, "\"} %.6g\n", bits / 8);
}

/*
 * What each source is credited and claims, and what its online estimate
 * measures: per raw sample or per byte, in bytes (bits / 8) as Prometheus
 * wants base units.
 */
static void
report_credit_metrics(struct evbuffer *buf)
{
	struct entropyd_instance *inst;
	const struct estimate_result *r;

	report_family(buf, "source_credited_entropy_bytes", "gauge",
	    "Entropy credited per raw sample (raw-sample sources) or per byte now, in bytes "
	    "(bits / 8).");
	TAILQ_FOREACH(inst, &registry_instances, all)
		report_gauge_line(buf, "source_credited_entropy_bytes", inst->name, NULL,
		    inst->pipe.unit_bits);
	report_family(buf, "source_claimed_entropy_bytes", "gauge",
	    "The source's claim per raw sample or per byte, the most it may be credited, in "
	    "bytes (bits / 8).");
	TAILQ_FOREACH(inst, &registry_instances, all)
		report_gauge_line(buf, "source_claimed_entropy_bytes", inst->name, NULL,
		    inst->pipe.claim_bits);
	report_family(buf, "source_entropy_estimate_bytes", "gauge",
	    "Online SP 800-90B min-entropy estimate per raw sample or per byte, in bytes "
	    "(bits / 8), by estimator (min: the lowest).");
	TAILQ_FOREACH(inst, &registry_instances, all) {
		if ((r = pipeline_estimate_result(&inst->pipe)) == NULL)
			continue;
		report_gauge_line(buf, "source_entropy_estimate_bytes", inst->name, "min", r->min);
		report_gauge_line(buf, "source_entropy_estimate_bytes", inst->name, "mcv", r->mcv);
		if (r->markov >= 0)
			report_gauge_line(buf, "source_entropy_estimate_bytes", inst->name,
			    "markov", r->markov);
		if (r->lag >= 0)
			report_gauge_line(buf, "source_entropy_estimate_bytes", inst->name,
			    "lag", r->lag);
	}
	report_counter(buf, "credit_lowered_total",
	    "Times the online estimate lowered the source's credit.",
	    offsetof(struct pipeline_counters, credit_lowered), 1);
}

/* Unix seconds, 0 for never. */
static void
report_seconds(struct evbuffer *buf, double seconds)
{
	if (seconds <= 0)
		evbuffer_add(buf, "0\n", 2);
	else
		evbuffer_add_printf(buf, "%.3f\n", seconds);
}

/* The times and the interval alerts are written against. */
static void
report_metric_times(struct evbuffer *buf, const struct sink *s)
{
	struct entropyd_instance *inst;
	struct timespec wall;

	report_family(buf, "start_time_seconds", "gauge",
	    "Start time of the daemon since the Unix epoch in seconds.");
	evbuffer_add_printf(buf, "entropyd_start_time_seconds ");
	wall = rates_start_wall();
	report_seconds(buf, rates_start_ns() == 0 ? 0 : (double)wall.tv_sec +
	    (double)wall.tv_nsec / 1e9);
	report_family(buf, "last_credited_feed_timestamp_seconds", "gauge",
	    "When the sink last credited entropy (Unix seconds; 0 before the first).");
	evbuffer_add_printf(buf, "entropyd_last_credited_feed_timestamp_seconds ");
	report_seconds(buf, report_unix_seconds(s->last_credit_ns));
	report_family(buf, "source_last_delivery_timestamp_seconds", "gauge",
	    "When the source last delivered bytes (Unix seconds; 0 before the first).");
	TAILQ_FOREACH(inst, &registry_instances, all) {
		evbuffer_add_printf(buf, "entropyd_source_last_delivery_timestamp_seconds{source=\"");
		report_label(buf, inst->name);
		evbuffer_add(buf, "\"} ", 3);
		report_seconds(buf, report_unix_seconds(inst->last_delivery_ns));
	}
	report_family(buf, "reseed_interval_seconds", "gauge",
	    "The top-up interval (-R) in seconds.");
	evbuffer_add_printf(buf, "entropyd_reseed_interval_seconds %u\n", s->reseed_interval_s);
}

/* The feeder's counters (as it last told them): they outlive the worker that renders them. */
static void
report_feeder_metrics(struct evbuffer *buf, const struct feedclient *feeder)
{
	const struct feedproto_state *sp = feedclient_state(feeder);
	struct feedproto_state st;
	int r;

	if (sp == NULL)
		return;
	st = *sp;
	report_family(buf, "worker_restarts_total", "counter",
	    "Workers started again after one ended (a crash, a kill, a refused frame).");
	evbuffer_add_printf(buf, "entropyd_worker_restarts_total %" PRIu32 "\n",
	    st.worker_restarts);
	report_family(buf, "feeder_refused_frames_total", "counter",
	    "Frames the feeder refused, by reason; each ended the worker that sent it.");
	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		evbuffer_add_printf(buf, "entropyd_feeder_refused_frames_total{reason=\"%s\"} %"
		    PRIu32 "\n", feedproto_refusal_name((enum feedproto_refusal)r), st.refused[r]);
	report_family(buf, "feeder_feeds_total", "counter",
	    "RNDADDENTROPY calls the feeder made, every worker together.");
	evbuffer_add_printf(buf, "entropyd_feeder_feeds_total %" PRIu64 "\n", st.adds);
	report_family(buf, "feeder_credited_bytes_total", "counter",
	    "Entropy the feeder credited to the kernel's pool, every worker together, in bytes "
	    "(bits / 8).");
	evbuffer_add_printf(buf, "entropyd_feeder_credited_bytes_total ");
	report_value(buf, st.bits_credited, 8);
}

/* One plugin host's line of the family being written (arg: which). */
static void
report_plugin_line(const struct hostproc_stats *st, void *arg)
{
	struct report_plugin_walk *w = arg;

	evbuffer_add_printf(w->buf, "entropyd_%s{plugin=\"", w->family);
	report_label(w->buf, st->name);
	if (strcmp(w->family, "plugin_up") == 0)
		evbuffer_add_printf(w->buf, "\"} %d\n", st->up);
	else
		evbuffer_add_printf(w->buf, "\"} %" PRIu64 "\n",
		    strcmp(w->family, "plugin_restarts_total") == 0 ? st->restarts :
		    st->protocol_errors);
	w->any = true;
}

/* The plugin families (up, restarts, protocol errors), when plugins are loaded. */
static void
report_plugin_metrics(struct evbuffer *buf)
{
	static const struct {
		const char *family, *type, *help;
	} families[] = {
		{ "plugin_up", "gauge", "1 while the plugin's host process runs." },
		{ "plugin_restarts_total", "counter",
		  "Restarts of the plugin's host after it crashed, hung, or broke the protocol." },
		{ "plugin_protocol_errors_total", "counter",
		  "Malformed or unasked-for messages from the plugin's host (each ends it)." },
	};
	struct report_plugin_walk w = { .buf = evbuffer_new() };
	size_t i;

	for (i = 0; i < sizeof families / sizeof families[0]; i++) {
		report_family(w.buf, families[i].family, families[i].type, families[i].help);
		w.family = families[i].family;
		hostproc_each(report_plugin_line, &w);
	}
	if (w.any)
		evbuffer_add_buffer(buf, w.buf);
	evbuffer_free(w.buf);
}

void
report_metrics(struct evbuffer *buf, const struct sink *s)
{
	struct entropyd_instance *inst;
	int t, st;

	report_family(buf, "build_info", "gauge", "Version of entropyd and its source ABI.");
	evbuffer_add_printf(buf, "entropyd_build_info{version=\"%s\",abi=\"%d.%d\"} 1\n",
	    PACKAGE_VERSION, ENTROPYD_SOURCE_ABI_MAJOR, ENTROPYD_SOURCE_ABI_MINOR);
	report_counter(buf, "bytes_read_total", "Bytes read from the source.",
	    offsetof(struct pipeline_counters, bytes_read), 1);
	report_counter(buf, "bytes_fed_total", "Conditioned bytes of the source taken by the sink.",
	    offsetof(struct pipeline_counters, bytes_taken), 1);
	report_counter(buf, "credited_bytes_total",
	    "Entropy of the source credited to the kernel's pool, in bytes (bits / 8).",
	    offsetof(struct pipeline_counters, bits_credited), 8);
	report_counter(buf, "blocks_tested_total", "FIPS 140-2 blocks tested.",
	    offsetof(struct pipeline_counters, blocks_tested), 1);
	report_counter(buf, "blocks_failed_total", "FIPS 140-2 blocks failed and discarded.",
	    offsetof(struct pipeline_counters, blocks_failed), 1);
	report_counter(buf, "samples_tested_total", "Raw noise samples tested (SP 800-90B).",
	    offsetof(struct pipeline_counters, samples_tested), 1);
	report_family(buf, "test_failures_total", "counter",
	    "Health test failures by test (one block can fail several).");
	TAILQ_FOREACH(inst, &registry_instances, all)
		for (t = 0; t < PIPELINE_NTESTS; t++)
			report_sample_line(buf, "test_failures_total", inst->name, "test",
			    pipeline_test_key((enum pipeline_test)t),
			    inst->pipe.count.test_failures[t], 1);
	report_credit_metrics(buf);
	report_family(buf, "source_state", "gauge",
	    "Source state: 1 for the current state, 0 for the others.");
	TAILQ_FOREACH(inst, &registry_instances, all)
		for (st = INSTANCE_ABSENT; st < INSTANCE_NSTATES; st++)
			report_sample_line(buf, "source_state", inst->name, "state",
			    registry_state_name((enum instance_state)st), (int)inst->state == st, 1);
	report_family(buf, "kernel_feeds_total", "counter",
	    "Writes to the sink (RNDADDENTROPY calls for the kernel).");
	evbuffer_add_printf(buf, "entropyd_kernel_feeds_total{sink=\"%s\"} %" PRIu64 "\n",
	    sink_kind_name(s->kind), s->feeds);
	report_family(buf, "kernel_credited_bytes_total", "counter",
	    "Entropy credited to the kernel's pool, all sources, in bytes (bits / 8).");
	evbuffer_add_printf(buf, "entropyd_kernel_credited_bytes_total{sink=\"%s\"} ",
	    sink_kind_name(s->kind));
	report_value(buf, s->bits_credited, 8);
	report_family(buf, "sink_bytes_written_total", "counter", "Bytes written to the sink.");
	evbuffer_add_printf(buf, "entropyd_sink_bytes_written_total{sink=\"%s\"} %" PRIu64 "\n",
	    sink_kind_name(s->kind), s->bytes_written);
	report_family(buf, "sink_up", "gauge", "1 while the sink accepts writes.");
	evbuffer_add_printf(buf, "entropyd_sink_up{sink=\"%s\"} %d\n", sink_kind_name(s->kind),
	    s->status == SINK_OK);
	report_clone_metrics(buf);
	report_generation_metrics(buf);
	report_metric_times(buf, s);
	if (s->feeder != NULL)
		report_feeder_metrics(buf, s->feeder);
	report_egd_metrics(buf);
	report_plugin_metrics(buf);
}
