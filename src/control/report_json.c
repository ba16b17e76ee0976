/* SPDX-License-Identifier: MIT */
/*
 * GET /health and GET /sources: the registry's instances, their pipeline
 * counters, the sink and the feeder's last word rendered as JSON (health
 * as application/health+json, the api-health-check draft's shape).
 */
#include <sys/wait.h>

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "clock.h"
#include "feedclient.h"
#include "rates.h"
#include "registry.h"
#include "report.h"
#include "sink.h"
#include "vmgenid.h"
#include "xmalloc.h"

static const char *const report_status_names[] = {
	[REPORT_PASS] = "pass",
	[REPORT_WARN] = "warn",
	[REPORT_FAIL] = "fail",
};

const char *
report_status_name(enum report_status s)
{
	return report_status_names[s];
}

struct report_clock
report_now(void)
{
	struct report_clock c = { .now_ns = clock_now_ns(), .wall = time(NULL) };

	return c;
}

/* A monotonic time as an RFC 3339 UTC wall-clock time. */
json_t *
report_time(const struct report_clock *c, uint64_t mono_ns)
{
	time_t t = c->wall;
	struct tm tm;
	char buf[32];

	if (mono_ns <= c->now_ns)
		t -= (time_t)((c->now_ns - mono_ns) / 1000000000u);
	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* Rates over the last full window, or since the first sample until there is one. */
static json_t *
report_rates_json(const struct entropyd_instance *inst, const struct report_clock *c)
{
	struct rates_window *r;
	const struct pipeline_counters *n = &inst->pipe.count;
	uint64_t dt;

	rates_catch_up(c->now_ns);
	r = rates_of(inst, c->now_ns);
	dt = c->now_ns - r->mark_ns;

	if (r->have)
		return json_pack("{s:f, s:f, s:f, s:i}", "read_bytes_per_second", r->read_bps,
		    "fed_bytes_per_second", r->fed_bps, "credited_bits_per_second", r->credited_bps,
		    "window_seconds", (json_int_t)(RATES_WINDOW_MS / 1000));
	return json_pack("{s:f, s:f, s:f, s:f}",
	    "read_bytes_per_second", rates_per_second(n->bytes_read, r->mark_read, dt),
	    "fed_bytes_per_second", rates_per_second(n->bytes_taken, r->mark_fed, dt),
	    "credited_bits_per_second", rates_per_second(n->bits_credited, r->mark_credited, dt),
	    "window_seconds", (double)dt / 1e9);
}

/* A counter as a JSON integer (jansson's are signed 64-bit). */
json_t *
report_count(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* A monotonic time (0: never) as RFC 3339, or JSON null. */
static json_t *
report_time_or_null(const struct report_clock *c, uint64_t mono_ns)
{
	return mono_ns == 0 ? json_null() : report_time(c, mono_ns);
}

/*
 * Whether an instance's credit is below what the operator accepts: it
 * claims entropy yet is credited nothing, or less than --min-credit.
 */
static bool
report_credit_too_low(const struct pipeline *p)
{
	return p->claim_bits > 0 && (p->unit_bits <= 0 || p->unit_bits < registry_min_credit());
}

/* An instance's health: running passes, starting and stalled warn, the rest fail. */
static enum report_status
report_instance_status(const struct entropyd_instance *inst)
{
	switch (inst->state) {
	case INSTANCE_RUNNING:
		return REPORT_PASS;
	case INSTANCE_STARTING:
	case INSTANCE_STALLED:
		return REPORT_WARN;
	default:
		return REPORT_FAIL;
	}
}

/* Why an instance is not passing, for a check's output (buf holds its last error). */
static const char *
report_instance_output(struct entropyd_instance *inst, char *buf, size_t len)
{
	registry_copy_error(inst, buf, len);
	if (buf[0] != '\0')
		return buf;
	switch (inst->state) {
	case INSTANCE_STARTING:
		return "start-up tests not yet passed";
	case INSTANCE_DRAINED:
		return "input ended";
	case INSTANCE_SUSPENDED:
		return "suspended after failed health tests";
	case INSTANCE_STALLED:
		return "stalled: no data while asked for it";
	default:
		return "not open";
	}
}

/* One check object as the draft shapes it; output only when not passing. */
json_t *
report_check(const char *id, const char *type, json_t *value, const char *unit,
    enum report_status status, json_t *time, const char *output)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:o}", "componentId", id,
	    "componentType", type, "observedValue", value, "status", report_status_name(status),
	    "time", time);

	if (unit != NULL)
		json_object_set_new(o, "observedUnit", json_string(unit));
	if (status != REPORT_PASS && output != NULL)
		json_object_set_new(o, "output", json_string(output));
	return o;
}

/* Add checks[key] = [check]. */
void
report_add_check(json_t *checks, const char *component, const char *measurement, json_t *check)
{
	char *key;

	xasprintf(&key, "%s:%s", component, measurement);
	json_object_set_new(checks, key, json_pack("[o]", check));
	free(key);
}

/* The sink's state as a JSON object. */
static json_t *
report_sink_json(const struct sink *s)
{
	static const char *const names[] = {
		[SINK_OK] = "ok", [SINK_CLOSED] = "closed", [SINK_FAILED] = "failed",
	};
	json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:I}",
	    "kind", sink_kind_name(s->kind), "path", s->path ? s->path : "",
	    "state", names[s->status],
	    "bytes_written", report_count(s->bytes_written),
	    "bits_credited", report_count(s->bits_credited),
	    "feeds", report_count(s->feeds),
	    "wanted_bits", json_integer(s->want_bits > 0 ? (json_int_t)s->want_bits : 0),
	    "pending_bytes", (json_int_t)(s->pending_len - s->pending_off));

	json_object_set_new(o, "error", s->status == SINK_OK ? json_null() :
	    json_string(strerror(s->error)));
	return o;
}

/*
 * Clone detection as a check: pass when armed, and when the machine has no
 * VM generation ID device (nothing to detect: not a VM, or a hypervisor
 * without one; restore hooks use the manual trigger); warn when it has one
 * whose changes would go unseen (no driver bound, or no uevent socket).
 */
static enum report_status
report_clone_check(json_t *checks, const struct report_clock *c)
{
	const struct vmgenid_stats *v = vmgenid_stats();
	enum report_status st = REPORT_PASS;
	char why[640];
	json_t *check;

	vmgenid_describe(why, sizeof why);
	if (!vmgenid_armed() && v->probe.device != VMGENID_DEVICE_NONE)
		st = REPORT_WARN;
	check = report_check("vmgenid", "system", json_string(vmgenid_armed() ? "armed" :
	    st == REPORT_PASS ? "not available" : "not armed"), NULL, st,
	    report_time(c, c->now_ns), why);
	json_object_set_new(check, "description", json_string(why));
	report_add_check(checks, "vmgenid", "cloneDetection", check);
	return st;
}

/*
 * The check of an instance's online entropy estimate, once it has one. A
 * credit lowered by the source's own measurement is the estimate working:
 * it passes, and says so in its description, quoting the estimate that
 * lowered it (the figure the log gave). It warns only when the credit is
 * too low for the operator (report_credit_too_low). True when it warns.
 */
static bool
report_estimate_check(json_t *checks, struct entropyd_instance *inst,
    const struct report_clock *c)
{
	const struct estimate_result *r = pipeline_estimate_result(&inst->pipe);
	const struct pipeline *p = &inst->pipe;
	const char *unit_name = registry_unit_name(inst);
	bool lowered, low;
	char *output = NULL, unit[16];
	json_t *check;
	double figure;

	if (r == NULL)
		return false;
	lowered = p->unit_bits < p->claim_bits;
	low = report_credit_too_low(p);
	/* The estimate that made the decision in force, as the log quoted it. */
	figure = lowered && p->have_decided ? p->decided.min : r->min;
	snprintf(unit, sizeof unit, "bits/%s", unit_name);
	if (lowered)
		xasprintf(&output, "credit lowered to %g of the %g bits per %s claimed: the online "
		    "estimate was %.3g bits per %s when it decided%s", p->unit_bits, p->claim_bits,
		    unit_name, figure, unit_name, low ? p->unit_bits <= 0 ? "; it credits nothing" :
		    "; below the --min-credit floor" : "");
	check = report_check(inst->name, "entropy-source", json_real(figure), unit,
	    low ? REPORT_WARN : REPORT_PASS, report_time(c, c->now_ns), output);
	if (output != NULL && !low)
		json_object_set_new(check, "description", json_string(output));
	report_add_check(checks, inst->name, "entropyEstimate", check);
	free(output);
	return low;
}

/* The online estimate of an instance as JSON, or null before its first figures. */
static json_t *
report_estimate_json(const struct entropyd_instance *inst)
{
	const struct estimate_result *r = pipeline_estimate_result(&inst->pipe);
	json_t *o;

	if (r == NULL)
		return json_null();
	o = json_pack("{s:f, s:f, s:I, s:I}", "bits", r->min, "mcv", r->mcv,
	    "window_samples", (json_int_t)r->samples,
	    "window_capacity", (json_int_t)inst->pipe.est->window);
	if (r->markov >= 0)
		json_object_set_new(o, "markov", json_real(r->markov));
	if (r->lag >= 0)
		json_object_set_new(o, "lag", json_real(r->lag));
	return o;
}

/*
 * The failedBlocks check: the recent failure rate in percent; fail while
 * suspended, warn above FAILURE_RATE_WARN_PERMILLE.
 */
static json_t *
report_failed_blocks(struct entropyd_instance *inst, const struct report_clock *c)
{
	char output[sizeof inst->last_error + 160], why[sizeof inst->last_error];
	uint32_t failed, tests;
	enum report_status st;

	failure_recent(&inst->pipe.failures, &failed, &tests);
	st = inst->state == INSTANCE_SUSPENDED ? REPORT_FAIL :
	    failure_rate_high(&inst->pipe.failures) ? REPORT_WARN : REPORT_PASS;
	/* Suspended: why first, as the state check says it. */
	snprintf(output, sizeof output, "%.*s%s%" PRIu32 " of the last %" PRIu32 " tests failed "
	    "(warning above %d.%d%% and %d failures); %" PRIu64 " blocks failed in all",
	    (int)sizeof why - 1, st == REPORT_FAIL ? report_instance_output(inst, why,
	    sizeof why) : "", st == REPORT_FAIL ? "; " : "", failed, tests,
	    FAILURE_RATE_WARN_PERMILLE / 10, FAILURE_RATE_WARN_PERMILLE % 10,
	    FAILURE_RATE_MIN_FAILED, inst->pipe.count.blocks_failed);
	return report_check(inst->name, "entropy-source",
	    json_real(tests == 0 ? 0.0 : (double)failed * 100.0 / (double)tests), "%", st,
	    report_time(c, c->now_ns), output);
}

/* The times operators alert on: start, each source's last delivery, the last credited feed. */
static void
report_health_times(json_t *checks, const struct sink *s, const struct report_clock *c)
{
	struct entropyd_instance *inst;

	report_add_check(checks, "entropyd", "startTime", report_check("entropyd", "system",
	    report_time_or_null(c, rates_start_ns()), NULL, REPORT_PASS, report_time(c, c->now_ns),
	    NULL));
	TAILQ_FOREACH(inst, &registry_instances, all)
		report_add_check(checks, inst->name, "lastDelivery", report_check(inst->name,
		    "entropy-source", report_time_or_null(c, inst->last_delivery_ns), NULL,
		    inst->state == INSTANCE_STALLED ? REPORT_WARN : REPORT_PASS,
		    report_time(c, c->now_ns), "stalled: no data while asked for it"));
	report_add_check(checks, "sink", "lastCreditedFeed", report_check(s->path ? s->path : "",
	    sink_kind_name(s->kind), report_time_or_null(c, s->last_credit_ns), NULL, REPORT_PASS,
	    report_time(c, c->now_ns), NULL));
}

/*
 * Whether an instance counts as healthy: running, not failing often, and
 * credited when the kernel is fed.
 */
static bool
report_instance_healthy(const struct entropyd_instance *inst, const struct sink *s)
{
	return report_instance_status(inst) == REPORT_PASS &&
	    !failure_rate_high(&inst->pipe.failures) &&
	    (s->kind != SINK_KERNEL || pipeline_credited(&inst->pipe));
}

/*
 * The feeder's checks, from its last word (never asked here: a report does
 * not wait on the feeder): worker:restarts (passing; the output
 * says how the last worker ended) and feeder:refusedFrames (a warning once
 * any frame was refused). Whether one warns.
 */
static bool
report_feeder_checks(json_t *checks, const struct feedclient *feeder,
    const struct report_clock *c)
{
	const struct feedproto_state *sp = feedclient_state(feeder);
	struct feedproto_state st;
	char last[128] = "", refused[160];
	uint64_t total = 0;
	int r, st_exit;

	if (sp == NULL)
		return false;
	st = *sp;
	st_exit = (int)st.last_exit;
	if (st.worker_exits > 0 && WIFSIGNALED(st_exit))
		snprintf(last, sizeof last, "the last worker to end was killed by signal %d (%s)",
		    WTERMSIG(st_exit), strsignal(WTERMSIG(st_exit)));
	else if (st.worker_exits > 0)
		snprintf(last, sizeof last, "the last worker to end exited with status %d",
		    WEXITSTATUS(st_exit));
	report_add_check(checks, "worker", "restarts", report_check("worker", "process",
	    json_integer(st.worker_restarts), "restarts", REPORT_PASS, report_time(c, c->now_ns),
	    NULL));
	if (last[0] != '\0')
		json_object_set_new(json_array_get(json_object_get(checks, "worker:restarts"), 0),
		    "output", json_string(last));
	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		total += st.refused[r];
	snprintf(refused, sizeof refused, "malformed %" PRIu32 ", unknown type %" PRIu32
	    ", oversized %" PRIu32 ", credit above 8 bits a byte %" PRIu32 ", flood %" PRIu32,
	    st.refused[FEEDPROTO_MALFORMED], st.refused[FEEDPROTO_UNKNOWN_TYPE],
	    st.refused[FEEDPROTO_OVERSIZED], st.refused[FEEDPROTO_CREDIT],
	    st.refused[FEEDPROTO_FLOOD]);
	report_add_check(checks, "feeder", "refusedFrames", report_check("feeder", "process",
	    report_count(total), "frames", total > 0 ? REPORT_WARN : REPORT_PASS,
	    report_time(c, c->now_ns), refused));
	return total > 0;
}

json_t *
report_health(const struct sink *s, const struct report_clock *c, enum report_status *status)
{
	struct entropyd_instance *inst;
	enum report_status st, overall = REPORT_PASS;
	json_t *doc, *checks = json_object();
	unsigned healthy = 0, total = 0;
	const char *why = NULL, *egd_why;
	bool sink_failed = s->status == SINK_FAILED, too_low = false, unwell = false;

	TAILQ_FOREACH(inst, &registry_instances, all) {
		char output[sizeof inst->last_error];
		json_t *failed_blocks;

		total++;
		st = report_instance_status(inst);
		if (report_instance_healthy(inst, s))
			healthy++;
		if (st != REPORT_PASS)
			unwell = true;
		report_add_check(checks, inst->name, "state", report_check(inst->name,
		    "entropy-source", json_string(registry_state_name(inst->state)), NULL, st,
		    report_time(c, inst->state_since_ns), report_instance_output(inst, output,
		    sizeof output)));
		failed_blocks = report_failed_blocks(inst, c);
		if (strcmp(json_string_value(json_object_get(failed_blocks, "status")), "warn") == 0)
			unwell = true;
		report_add_check(checks, inst->name, "failedBlocks", failed_blocks);
		if (report_estimate_check(checks, inst, c))
			too_low = true;
	}
	if (unwell || too_low)
		overall = REPORT_WARN;
	report_add_check(checks, "sink", "bitsCredited", report_check(s->path ? s->path : "",
	    sink_kind_name(s->kind), report_count(s->bits_credited), "bits",
	    sink_failed ? REPORT_FAIL : REPORT_PASS, report_time(c, c->now_ns),
	    sink_failed ? strerror(s->error) : NULL));
	if (report_clone_check(checks, c) != REPORT_PASS)
		overall = REPORT_WARN;
	if (report_generation_check(checks, c) != REPORT_PASS && overall == REPORT_PASS) {
		overall = REPORT_WARN;
		why = "generation hooks were refused or failed, or the generation file was not written";
	}
	report_health_times(checks, s, c);
	if (s->feeder != NULL && report_feeder_checks(checks, s->feeder, c) &&
	    overall == REPORT_PASS) {
		overall = REPORT_WARN;
		why = "the feeder refused frames from a worker";
	}
	if (report_egd_check(checks, c, &egd_why) != REPORT_PASS && overall == REPORT_PASS) {
		overall = REPORT_WARN;
		why = egd_why;
	}
	if (healthy == 0) {
		overall = REPORT_FAIL;
		why = total == 0 ? "no entropy source found" : s->kind == SINK_KERNEL ?
		    "no healthy credited entropy source" : "no healthy entropy source";
	}
	if (sink_failed) {
		overall = REPORT_FAIL;
		why = "the sink failed";
	}
	doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "status",
	    report_status_name(overall), "version", "1", "releaseId", PACKAGE_VERSION,
	    "serviceId", "entropyd", "description", "entropyd hardware entropy daemon",
	    "checks", checks, "sink", report_sink_json(s));
	if (why != NULL)
		json_object_set_new(doc, "output", json_string(why));
	else if (overall == REPORT_WARN)
		json_object_set_new(doc, "output", json_string(unwell ? "some sources are not "
		    "running or fail often" : too_low ? "some sources are credited less than the "
		    "operator accepts (--min-credit), or nothing at all" :
		    "VM generation changes would go unseen"));
	*status = overall;
	return doc;
}

/* The recent failures of an instance: failed and tested, and their ratio. */
static json_t *
report_recent_json(const struct entropyd_instance *inst)
{
	uint32_t failed, tests;

	failure_recent(&inst->pipe.failures, &failed, &tests);
	return json_pack("{s:i, s:i, s:f, s:b}", "failed", (int)failed, "tested", (int)tests,
	    "rate", tests == 0 ? 0.0 : (double)failed / (double)tests,
	    "high", failure_rate_high(&inst->pipe.failures));
}

/* Every detail of one instance. */
static json_t *
report_instance_json(struct entropyd_instance *inst, const struct report_clock *c)
{
	char last_error[sizeof inst->last_error];
	const struct pipeline_counters *n = &inst->pipe.count;
	const struct entropyd_source *src = inst->module->src;
	json_t *failures = json_object(), *o;
	int t;

	for (t = 0; t < PIPELINE_NTESTS; t++)
		json_object_set_new(failures, pipeline_test_key((enum pipeline_test)t),
		    report_count(n->test_failures[t]));
	o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:f}",
	    "name", inst->name, "module", src->name, "device", inst->device,
	    "state", registry_state_name(inst->state),
	    "state_since", report_time(c, inst->state_since_ns),
	    "state_seconds", inst->state_since_ns <= c->now_ns ?
	    (double)(c->now_ns - inst->state_since_ns) / 1e9 : 0.0);
	json_object_set_new(o, "estimate", json_pack("{s:f, s:f, s:s, s:b, s:o, s:o}",
	    "bits", inst->pipe.unit_bits, "claimed_bits", inst->pipe.claim_bits,
	    "per", registry_unit_name(inst),
	    "credited", pipeline_credited(&inst->pipe),
	    "online", report_estimate_json(inst),
	    "lowered", report_count(n->credit_lowered)));
	json_object_set_new(o, "driven_by", json_string(
	    inst->driven_by == INSTANCE_DRIVE_THREAD ? "reader-thread" :
	    inst->driven_by == INSTANCE_DRIVE_POLL ? "poll" : "none"));
	json_object_set_new(o, "rates", report_rates_json(inst, c));
	json_object_set_new(o, "counters", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "bytes_read", report_count(n->bytes_read),
	    "blocks_tested", report_count(n->blocks_tested),
	    "blocks_passed", report_count(n->blocks_passed),
	    "blocks_failed", report_count(n->blocks_failed),
	    "samples_tested", report_count(n->samples_tested),
	    "samples_discarded", report_count(n->samples_discarded),
	    "bytes_conditioned", report_count(n->bytes_conditioned),
	    "bytes_fed", report_count(n->bytes_taken),
	    "bits_credited", report_count(n->bits_credited)));
	json_object_set_new(o, "test_failures", failures);
	json_object_set_new(o, "held_bytes", json_integer((json_int_t)pipeline_held(&inst->pipe)));
	json_object_set_new(o, "reserve", json_pack("{s:I, s:I, s:o}",
	    "bytes", (json_int_t)inst->pipe.reserve.len,
	    "capacity", (json_int_t)RESERVE_CAPACITY,
	    "dropped_bytes", report_count(inst->pipe.reserve.dropped)));
	json_object_set_new(o, "failure_score", json_pack("{s:i, s:i, s:i, s:b}",
	    "value", (int)inst->pipe.failures.score, "limit", PIPELINE_FAILURE_LIMIT,
	    "suspensions", (int)inst->pipe.failures.suspensions,
	    "probation", pipeline_on_probation(&inst->pipe)));
	json_object_set_new(o, "recent_failures", report_recent_json(inst));
	json_object_set_new(o, "last_delivery", report_time_or_null(c, inst->last_delivery_ns));
	json_object_set_new(o, "stall_timeout_seconds",
	    json_integer(inst->module->stall_timeout_ms / 1000u));
	registry_copy_error(inst, last_error, sizeof last_error);
	json_object_set_new(o, "last_error", last_error[0] != '\0' ?
	    json_string(last_error) : json_null());
	json_object_set_new(o, "backoff_ms", json_integer(inst->backoff_ms));
	return o;
}

json_t *
report_sources(const struct report_clock *c)
{
	struct entropyd_instance *inst;
	json_t *list = json_array();

	TAILQ_FOREACH(inst, &registry_instances, all)
		json_array_append_new(list, report_instance_json(inst, c));
	return json_pack("{s:o}", "sources", list);
}

json_t *
report_source(const char *name, const struct report_clock *c)
{
	struct entropyd_instance *inst;

	TAILQ_FOREACH(inst, &registry_instances, all)
		if (strcmp(inst->name, name) == 0)
			return report_instance_json(inst, c);
	return NULL;
}
