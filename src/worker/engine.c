/* SPDX-License-Identifier: MIT */
/*
 * The worker's engine: one libevent loop that opens sources, reads them on
 * demand (their fd, or a reader thread) through their pipelines, feeds the
 * sink, retries what failed with backoff, and forgets everything held when
 * the VM generation changes.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <syslog.h>

#include <event2/event.h>

#include "backoff.h"
#include "broker.h"
#include "capture.h"
#include "clock.h"
#include "daemonize.h"
#include "defer.h"
#include "engine.h"
#include "feedclient.h"
#include "generation.h"
#include "hostmix.h"
#include "log.h"
#include "notify.h"
#include "probing.h"
#include "rates.h"
#include "reader.h"
#include "registry.h"
#include "stall.h"
#include "stopsig.h"
#include "vmgenid.h"
#include "xmalloc.h"

struct engine {
	struct event_base *base;
	const struct config *cfg;
	struct sink *sink;
	const struct engine_parts *parts;
	struct event *ev_signals[3];   /* SIGHUP, SIGUSR1, SIGUSR2 */
	struct event *ev_stop;         /* SIGTERM, SIGINT (stopsig.c) */
	struct event *ev_topup;
	struct event *ev_rate;
	struct event *ev_pool;     /* kernels before 5.18: /dev/random writable */
	struct event *ev_pool_rearm;
	bool ready;                /* READY=1 sent */
	char status[512];          /* the last STATUS= sent */
	uint64_t rate_mark_ns;
	uint64_t vm_changed_ns;    /* the last VM generation change */
	uint64_t refills_seen;     /* sink refills already reported */
	int exit_code;
};

static struct engine engine;

/* How the engine drives one instance: the machinery the registry's record leaves out. */
struct engine_slot {
	void *source_state;  /* the module's, between open and close */
	int fd;              /* polled fd, or -1 for a reader thread */
	struct event *ev_read;
	struct event *ev_retry;
	struct reader *reader;
	uint64_t rate_mark;  /* bytes taken at the last rate line (test mode) */
	struct event *ev_stall; /* armed only while data is wanted and outstanding */
	struct stall stall;
	bool capture_only;   /* suspended by its tests, still read for --capture */
};

static void engine_open(struct entropyd_instance *);
static void engine_close(struct entropyd_instance *);
static void engine_demand(struct entropyd_instance *);
static void engine_feed(void);
static void engine_feed_and_demand(void);
static void engine_free_slot(struct entropyd_instance *);
static void engine_refill_done(void);
static void engine_capture_only(struct entropyd_instance *);
static void engine_capture_reopen(struct entropyd_instance *);

/* Tell systemd which sources run, when that changed. */
static void
engine_notify_status(void)
{
	struct entropyd_instance *inst;
	char status[sizeof engine.status] = "";
	size_t len = 0;
	int running = 0;

	TAILQ_FOREACH(inst, &registry_instances, all) {
		if (inst->state == INSTANCE_RUNNING)
			running++;
		if (len < sizeof status)
			len += (size_t)snprintf(status + len, sizeof status - len, "%s%s %s",
			    len ? ", " : "", inst->name, registry_state_name(inst->state));
	}
	if (strcmp(status, engine.status) == 0)
		return;
	memcpy(engine.status, status, sizeof status);
	notify_send("STATUS=%d running: %s", running, len ? status : "no sources");
}

/* Try an instance again after its backoff. */
static void
engine_schedule_retry(struct entropyd_instance *inst)
{
	struct timeval tv;

	inst->backoff_ms = backoff_next(inst->backoff_ms);
	tv = clock_tv_ms(inst->backoff_ms);
	evtimer_add(inst->slot->ev_retry, &tv);
	log_debug("%s: retry in %u ms", inst->name, inst->backoff_ms);
}

static void
engine_retry(int fd, short what, void *arg)
{
	engine_open(arg);
}

/* Whether an instance is open (has source state). */
static bool
engine_is_open(const struct entropyd_instance *inst)
{
	return inst->state == INSTANCE_STARTING || inst->state == INSTANCE_RUNNING ||
	    inst->state == INSTANCE_STALLED;
}

/* The state of an open instance that is not stalled: running once start-up passed. */
static enum instance_state
engine_open_state(const struct entropyd_instance *inst)
{
	return pipeline_started(&inst->pipe) ? INSTANCE_RUNNING : INSTANCE_STARTING;
}

/* Keep the stall deadline in step with demand: armed only while data is wanted. */
static void
engine_stall_watch(struct entropyd_instance *inst, bool want)
{
	uint64_t left_ns = stall_want(&inst->slot->stall, want, clock_now_ns());
	struct timeval tv;

	if (left_ns == 0) {
		evtimer_del(inst->slot->ev_stall);
		return;
	}
	if (evtimer_pending(inst->slot->ev_stall, NULL))
		return;
	tv.tv_sec = (time_t)(left_ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(left_ns % 1000000000u / 1000u) + 1;
	evtimer_add(inst->slot->ev_stall, &tv);
}

/* The stall deadline passed: a source asked for data that gave none is stalled. */
static void
engine_stall_due(int fd, short what, void *arg)
{
	struct entropyd_instance *inst = arg;

	if (!engine_is_open(inst))
		return;
	if (!stall_check(&inst->slot->stall, clock_now_ns())) {
		engine_demand(inst); /* early, or no longer wanted: re-arm or stay off */
		return;
	}
	registry_set_error(inst, "stalled: no data for %u s while asked for it",
	    inst->module->stall_timeout_ms / 1000u);
	rates_touch();
	registry_set_state(inst, INSTANCE_STALLED);
	engine_notify_status();
}

/* Bytes arrived: note when, and end a stall. */
static void
engine_stall_delivered(struct entropyd_instance *inst)
{
	inst->last_delivery_ns = clock_now_ns();
	evtimer_del(inst->slot->ev_stall);
	if (!stall_delivered(&inst->slot->stall) || inst->state != INSTANCE_STALLED)
		return;
	log_info("%s: data flows again; no longer stalled", inst->name);
	registry_clear_error(inst);
	registry_set_state(inst, engine_open_state(inst));
	engine_notify_status();
}

/* Close a source and stop watching it for stalls (and reading it for a capture). */
static void
engine_halt(struct entropyd_instance *inst)
{
	engine_close(inst);
	stall_stop(&inst->slot->stall);
	evtimer_del(inst->slot->ev_stall);
	inst->slot->capture_only = false;
}

/* Stop a source: suspended after failed tests, absent after an error. */
static void
engine_take_down(struct entropyd_instance *inst, enum instance_state state)
{
	engine_halt(inst);
	registry_set_state(inst, state);
	if (state != INSTANCE_DRAINED)
		engine_schedule_retry(inst);
	engine_notify_status();
}

/*
 * A read failed: the last error becomes the reason the module logged since
 * it was opened (a signal that went bad, say), or else errno's.
 */
static void
engine_read_failed(struct entropyd_instance *inst, int err)
{
	char why[sizeof inst->last_error];

	registry_copy_error(inst, why, sizeof why);
	if (why[0] == '\0') {
		registry_set_error(inst, "read: %s; absent", strerror(err));
		return;
	}
	/* Keep the module's own reason as the last error; still log the outcome. */
	log_warnx("%s: read: %s; absent", inst->name, strerror(err));
	registry_note_error(inst, "%.*s; absent", (int)sizeof why - 16, why);
}

/* A read's outcome: bytes into the pipeline, or the end, an error, a reopen. */
static void
engine_handle(struct entropyd_instance *inst, ssize_t n, int err, const uint8_t *buf)
{
	struct pipeline *p = &inst->pipe;
	uint64_t passed = p->count.blocks_passed;
	double credit;

	switch (n) {
	case ENTROPYD_READ_AGAIN:
		return;
	case ENTROPYD_READ_EOF:
		log_info("%s: input ended; source drained", inst->name);
		pipeline_end_input(p);
		engine_take_down(inst, INSTANCE_DRAINED);
		engine_feed();
		return;
	case ENTROPYD_READ_REOPEN:
		log_debug("%s: stream ended; reopening", inst->name);
		engine_close(inst);
		registry_set_state(inst, INSTANCE_ABSENT);
		engine_open(inst);
		return;
	case ENTROPYD_READ_ERROR:
		engine_read_failed(inst, err);
		engine_take_down(inst, INSTANCE_ABSENT);
		return;
	}
	if (n < 0) {
		registry_set_error(inst, "read returned %zd; absent", n);
		engine_take_down(inst, INSTANCE_ABSENT);
		return;
	}
	if (capture_input(inst, buf, (size_t)n, inst->slot->capture_only) == CAPTURE_REOPEN) {
		engine_capture_reopen(inst);
		return;
	}
	rates_touch();
	engine_stall_delivered(inst);
	if (inst->slot->capture_only) {
		engine_capture_only(inst);
		return;
	}
	credit = p->unit_bits;
	pipeline_input(p, buf, (size_t)n);
	if (p->unit_bits != credit)
		registry_credit_moved(inst, credit);
	/* A source suspended before keeps its growing backoff until forgiven. */
	if (p->count.blocks_passed > passed && !pipeline_on_probation(p))
		inst->backoff_ms = 0;
	if (pipeline_failing(p) && !engine.cfg->ignorefail) {
		registry_set_error(inst, "suspended after %" PRIu64 " failed blocks of %" PRIu64
		    " (monobit %" PRIu64 ", poker %" PRIu64 ", runs %" PRIu64 ", long run %" PRIu64
		    ", continuous %" PRIu64 ", rct %" PRIu64 ", apt %" PRIu64 ", repeat %" PRIu64 ")",
		    p->count.blocks_failed, p->count.blocks_tested,
		    p->count.test_failures[PIPELINE_TEST_MONOBIT],
		    p->count.test_failures[PIPELINE_TEST_POKER],
		    p->count.test_failures[PIPELINE_TEST_RUNS],
		    p->count.test_failures[PIPELINE_TEST_LONG_RUN],
		    p->count.test_failures[PIPELINE_TEST_CONTINUOUS],
		    p->count.test_failures[PIPELINE_TEST_RCT],
		    p->count.test_failures[PIPELINE_TEST_APT],
		    p->count.test_failures[PIPELINE_TEST_REPEAT]);
		reserve_clear(&p->reserve);
		pipeline_suspended(p);
		if (capture_wants(inst)) {
			/* The capture is the noise source's, not the tests'. */
			log_warnx("%s: suspended; still read for its capture, nothing of it "
			    "credited or fed, until that is complete", inst->name);
			inst->slot->capture_only = true;
			registry_set_state(inst, INSTANCE_SUSPENDED);
			engine_notify_status();
			engine_demand(inst);
			return;
		}
		engine_take_down(inst, INSTANCE_SUSPENDED);
		return;
	}
	if (inst->state == INSTANCE_STARTING && pipeline_started(p)) {
		log_info("%s: start-up tests passed", inst->name);
		registry_set_state(inst, INSTANCE_RUNNING);
		engine_notify_status();
	}
	engine_feed_and_demand();
}

/*
 * A read of a source suspended by its tests went to its capture alone:
 * once the capture is complete, the source is taken down as it would
 * have been.
 */
static void
engine_capture_only(struct entropyd_instance *inst)
{
	if (!capture_wants(inst))
		engine_take_down(inst, INSTANCE_SUSPENDED);
}

/*
 * A restart capture took its samples: close the source, and open it afresh
 * from the loop (not here, with a reader's buffer in hand).
 */
static void
engine_capture_reopen(struct entropyd_instance *inst)
{
	struct timeval now = { 0, 0 };

	engine_halt(inst);
	registry_set_state(inst, INSTANCE_ABSENT);
	evtimer_add(inst->slot->ev_retry, &now);
}

/* The source's own fd is readable. */
static void
engine_readable(int fd, short what, void *arg)
{
	struct entropyd_instance *inst = arg;
	uint8_t buf[ENGINE_POLL_READ_BYTES];
	ssize_t n;
	int err;

	errno = 0;
	n = inst->module->src->read(inst->slot->source_state, buf, sizeof buf);
	err = errno;
	engine_handle(inst, n, err, buf);
	explicit_bzero(buf, sizeof buf);
}

/*
 * A reader thread finished a read: put its buffer through in place, then
 * release it. Handling may close the instance (its reader is then gone)
 * but never opens one synchronously with bytes in hand; a read without
 * bytes is released first, as a reopen starts a new reader.
 */
static void
engine_reader_ready(int fd, short what, void *arg)
{
	struct entropyd_instance *inst = arg;
	struct reader *r = inst->slot->reader;
	const uint8_t *buf;
	ssize_t n;
	int err;

	vmgenid_note_discarded(reader_take_stale(r));
	if (!reader_take(r, &buf, &n, &err))
		return;
	if (n <= 0) {
		reader_release(r);
		engine_handle(inst, n, err, NULL);
		return;
	}
	engine_handle(inst, n, err, buf);
	if (inst->slot->reader == r)
		reader_release(r);
}

/* Read a source only while its reserve wants filling (or its capture, samples). */
static void
engine_demand(struct entropyd_instance *inst)
{
	/* Read on, even with a full reserve, while the EGD broker wants more than it holds. */
	bool want = reserve_wants(&inst->pipe.reserve) ||
	    (broker_hungry() && pipeline_credited(&inst->pipe)) ||
	    inst->slot->capture_only;

	if (inst->slot->reader != NULL)
		reader_want(inst->slot->reader, want, pipeline_next_read(&inst->pipe),
		    pipeline_read_ahead(&inst->pipe));
	else if (want)
		event_add(inst->slot->ev_read, NULL);
	else
		event_del(inst->slot->ev_read);
	engine_stall_watch(inst, want);
}

/* Open an instance and start reading it, or schedule another try. */
static void
engine_open(struct entropyd_instance *inst)
{
	const struct entropyd_source *src = inst->module->src;
	bool quiet = capture_reopening(inst);
	void *state = NULL;
	int rc;

	if (engine_is_open(inst) || inst->removed)
		return;
	evtimer_del(inst->slot->ev_retry);
	/* Set only while open runs, in this thread, before any reader starts. */
	inst->quiet = quiet;
	rc = src->open(inst, &state);
	inst->quiet = false;
	if (rc == -1) {
		if (!registry_has_error(inst))
			registry_set_error(inst, "cannot open %s", inst->device);
		registry_set_state(inst, INSTANCE_ABSENT);
		engine_schedule_retry(inst);
		return;
	}
	inst->slot->source_state = state;
	inst->slot->capture_only = false;
	capture_opened(inst);
	registry_clear_error(inst);
	pipeline_restart(&inst->pipe);
	inst->slot->fd = src->pollfd(state);
	if (inst->slot->fd >= 0) {
		inst->slot->ev_read = event_new(engine.base, inst->slot->fd, EV_READ | EV_PERSIST,
		    engine_readable, inst);
		inst->driven_by = INSTANCE_DRIVE_POLL;
	} else {
		inst->slot->reader = reader_start(src, state);
		inst->slot->ev_read = event_new(engine.base, reader_fd(inst->slot->reader),
		    EV_READ | EV_PERSIST, engine_reader_ready, inst);
		event_add(inst->slot->ev_read, NULL);
		inst->driven_by = INSTANCE_DRIVE_THREAD;
	}
	/* A reopen is no delivery: a stalled source stays stalled until bytes come. */
	registry_set_state(inst, inst->slot->stall.stalled ? INSTANCE_STALLED :
	    engine_open_state(inst));
	log_printf(quiet ? LOG_DEBUG : LOG_INFO, "%s: reading %s (%s, %g bits per %s "
	    "credited)", inst->name, inst->device,
	    inst->slot->fd >= 0 ? "polled" : "reader thread", inst->pipe.unit_bits,
	    registry_unit_name(inst));
	probing_found();
	engine_notify_status();
	engine_demand(inst);
}

/* Close an open instance: stop its reader, free its events, close the module state. */
static void
engine_close(struct entropyd_instance *inst)
{
	bool stopped = true;

	if (!engine_is_open(inst))
		return;
	if (inst->slot->ev_read != NULL)
		event_free(inst->slot->ev_read);
	inst->slot->ev_read = NULL;
	if (inst->slot->reader != NULL)
		stopped = reader_stop(inst->slot->reader, ENGINE_STOP_TIMEOUT_MS);
	inst->slot->reader = NULL;
	if (stopped)
		inst->module->src->close(inst->slot->source_state);
	else
		log_warnx("%s: reader stuck in read(); it is closed when read() returns",
		    inst->name);
	inst->slot->source_state = NULL;
	inst->slot->fd = -1;
	inst->driven_by = INSTANCE_DRIVE_NONE;
}

/* A module added an instance (probe, re-probe or hotplug): open it unless it is. */
static void
engine_added(struct entropyd_instance *inst)
{
	if (inst->slot == NULL) {
		inst->slot = xcalloc(1, sizeof *inst->slot);
		inst->slot->fd = -1;
		inst->slot->ev_retry = evtimer_new(engine.base, engine_retry, inst);
		inst->slot->ev_stall = evtimer_new(engine.base, engine_stall_due, inst);
		stall_init(&inst->slot->stall, inst->module->stall_timeout_ms);
	}
	if (!engine_is_open(inst)) {
		inst->backoff_ms = 0;
		engine_open(inst);
	}
}

/* Forget the machinery of a closed instance. */
static void
engine_free_slot(struct entropyd_instance *inst)
{
	if (inst->slot == NULL)
		return;
	event_free(inst->slot->ev_retry);
	event_free(inst->slot->ev_stall);
	free(inst->slot);
	inst->slot = NULL;
}

/* A module removed an instance (unplug): close and forget it. */
static void
engine_removed(struct entropyd_instance *inst)
{
	log_info("%s: removed", inst->name);
	engine_close(inst);
	engine_free_slot(inst);
	registry_free_instance(inst);
	engine_notify_status();
}

/* A module says its device went away (unplugged): absent now, retried with backoff. */
static void
engine_gone(struct entropyd_instance *inst, const char *reason)
{
	if (inst->removed)
		return;
	registry_set_error(inst, "%s; absent", reason);
	if (inst->state == INSTANCE_ABSENT) {
		engine_notify_status();
		return;
	}
	inst->backoff_ms = 0;
	engine_take_down(inst, INSTANCE_ABSENT);
}

/*
 * The sink's supply: every instance's pipeline in the registry's order; the
 * kernel may take from running, credited ones.
 */
static struct pipeline *
engine_supply_next(void *ctx, struct pipeline *prev, bool *kernel_ok)
{
	struct entropyd_instance *inst;

	if (prev == NULL)
		inst = TAILQ_FIRST(&registry_instances);
	else
		inst = TAILQ_NEXT((struct entropyd_instance *)(void *)((char *)prev -
		    offsetof(struct entropyd_instance, pipe)), all);
	if (inst == NULL)
		return NULL;
	*kernel_ok = inst->state == INSTANCE_RUNNING && pipeline_credited(&inst->pipe);
	return &inst->pipe;
}

static const struct sink_supply engine_supply = { .next = engine_supply_next };

/*
 * The VM generation changed: wipe every byte held from before, in every
 * pipeline (open or not), reader thread, module and the sink; returns how
 * many. Nothing is fed in between: this runs within one loop callback.
 */
static uint64_t
engine_forget_all(void)
{
	struct entropyd_instance *inst;
	const struct entropyd_source *src;
	uint64_t held = 0;

	TAILQ_FOREACH(inst, &registry_instances, all) {
		held += pipeline_forget(&inst->pipe);
		if (!engine_is_open(inst))
			continue;
		src = inst->module->src;
		if (inst->slot->reader != NULL)
			held += reader_forget(inst->slot->reader); /* calls forget() on its thread */
		else if (inst->module->forget_held != NULL)
			held += inst->module->forget_held(inst->slot->source_state);
		else if (ENTROPYD_SOURCE_HAS(src, forget) && src->forget != NULL)
			src->forget(inst->slot->source_state);
	}
	return held + sink_forget(engine.sink) + broker_forget();
}

/* The kernel (a uevent, its log), SIGUSR2 or the control socket says the VM generation changed. */
static void
engine_vm_changed(enum vmgenid_trigger trigger, uint64_t event_ns)
{
	uint64_t held = engine_forget_all();

	vmgenid_note_discarded(held);
	engine.vm_changed_ns = event_ns;
	if (engine.sink->kind == SINK_KERNEL)
		log_info("VM generation changed (%s): discarded %" PRIu64 " bytes held from "
		    "before; refilling %u bits from fresh reads", vmgenid_trigger_name(trigger),
		    held, engine.sink->refill_bits);
	else
		log_info("VM generation changed (%s): discarded %" PRIu64 " bytes held from "
		    "before; the sink gets fresh reads only", vmgenid_trigger_name(trigger), held);
	generation_changed(trigger, event_ns);
	engine_feed_and_demand();
}

/* The kernel sink reseeded with a refill: log and count the time since the change. */
static void
engine_refill_done(void)
{
	uint64_t latency;

	if (engine.sink->refills == engine.refills_seen)
		return;
	engine.refills_seen = engine.sink->refills;
	latency = engine.sink->refill_reseed_ns - engine.vm_changed_ns;
	vmgenid_note_refill(latency);
	log_info("VM generation change: %u fresh bits fed and the kernel's CRNG reseeded "
	    "%.1f ms after the change", engine.sink->refill_bits, (double)latency / 1e6);
	generation_reseeded(engine.sink->refill_reseed_ns);
}

/* Let the sink take what it wants; a failed sink ends the daemon. */
static void
engine_feed(void)
{
	uint64_t credited = engine.sink->bits_credited;

	rates_touch();
	/* A stream sink takes what the broker's share leaves; the kernel goes first. */
	if (engine.sink->kind != SINK_KERNEL)
		broker_service();
	switch (sink_service(engine.sink, &engine_supply)) {
	case SINK_OK:
		break;
	case SINK_CLOSED:
		log_info("%s: closed by its reader; exiting", engine.sink->path);
		engine.exit_code = EX_OK;
		event_base_loopbreak(engine.base);
		return;
	case SINK_FAILED:
		errno = engine.sink->error;
		log_warn("%s: write failed; exiting", engine.sink->path);
		engine.exit_code = EX_IOERR;
		event_base_loopbreak(engine.base);
		return;
	}
	if (engine.sink->kind == SINK_KERNEL)
		broker_service();
	engine_refill_done();
	if (credited == 0 && engine.sink->bits_credited > 0)
		log_info("first feed: %" PRIu64 " bits credited to the kernel",
		    engine.sink->bits_credited);
	else if (engine.sink->bits_credited > credited)
		log_debug("fed the kernel: %" PRIu64 " bits credited",
		    engine.sink->bits_credited - credited);
	if (!engine.ready && (engine.sink->bits_credited > 0 ||
	    (engine.sink->kind != SINK_KERNEL && engine.sink->bytes_written > 0))) {
		engine.ready = true;
		notify_send("READY=1");
		probing_fed();
	}
	if (engine.ev_pool != NULL && engine.sink->want_bits <= 0 &&
	    !evtimer_pending(engine.ev_pool_rearm, NULL))
		event_add(engine.ev_pool, NULL);
}

/* After a feed the reserves have room: read the sources again. */
static void
engine_feed_and_demand(void)
{
	struct entropyd_instance *inst;

	engine_feed();
	TAILQ_FOREACH(inst, &registry_instances, all)
		if (engine_is_open(inst))
			engine_demand(inst);
}

/* The sink's fd is writable again. */
static void
engine_sink_writable(int fd, short what, void *arg)
{
	engine_feed_and_demand();
}

/* Older kernels: the pool is writable, so below -W: feed a step. */
static void
engine_pool_writable(int fd, short what, void *arg)
{
	struct timeval second = { 1, 0 };

	sink_pool_writable(engine.sink);
	engine_feed_and_demand();
	/* Level-triggered: look again in a second, not at once. */
	event_del(engine.ev_pool);
	evtimer_add(engine.ev_pool_rearm, &second);
}

static void
engine_pool_rearm(int fd, short what, void *arg)
{
	event_add(engine.ev_pool, NULL);
}

/* Mix host-unique data into the pool before anything is credited. */
static void
engine_mix_host(void)
{
	uint8_t buf[HOSTMIX_MAX_BYTES];
	size_t len = hostmix_collect("", buf, sizeof buf);

	if (sink_mix_host(engine.sink, buf, len) == -1)
		log_warn("%s: mixing host data", engine.sink->path);
	else
		log_info("mixed %zu bytes of host-unique data into the pool (uncredited)", len);
	explicit_bzero(buf, sizeof buf);
}

/* Every -R seconds: top the kernel up. */
static void
engine_topup(int fd, short what, void *arg)
{
	/* Refresh the reports' copy of the feeder's state (the pool's fill and readiness). */
	if (engine.sink->feeder != NULL && feedclient_query(engine.sink->feeder, NULL) == -1)
		log_debug("feeder: QUERY: %s", strerror(errno));
	sink_topup(engine.sink);
	engine_feed_and_demand();
}

/* Log one line of counters per instance (SIGUSR1). */
static void
engine_log_stats(void)
{
	struct entropyd_instance *inst;
	uint64_t now = clock_now_ns();

	TAILQ_FOREACH(inst, &registry_instances, all) {
		const struct pipeline_counters *c = &inst->pipe.count;
		char failures[256] = "", last_error[sizeof inst->last_error];
		size_t len = 0;
		int t;

		registry_copy_error(inst, last_error, sizeof last_error);
		for (t = 0; t < PIPELINE_NTESTS; t++)
			len += (size_t)snprintf(failures + len, sizeof failures - len, "%s%s=%" PRIu64,
			    t ? " " : "", pipeline_test_key((enum pipeline_test)t),
			    c->test_failures[t]);
		log_info("%s: %s for %" PRIu64 " s; read %" PRIu64 " bytes; blocks %" PRIu64
		    " passed, %" PRIu64 " failed; failures %s; conditioned %" PRIu64 " bytes, taken %"
		    PRIu64 ", credited %" PRIu64 " bits%s%s", inst->name,
		    registry_state_name(inst->state), (now - inst->state_since_ns) / 1000000000u,
		    c->bytes_read, c->blocks_passed, c->blocks_failed, failures,
		    c->bytes_conditioned, c->bytes_taken, c->bits_credited,
		    last_error[0] ? "; last error: " : "", last_error);
	}
	log_info("sink %s (%s): %" PRIu64 " bytes written, %" PRIu64 " bits credited in %" PRIu64
	    " feeds; phase %s, %" PRIu64 " top-ups, %" PRIu64 " reseeds", engine.sink->path,
	    sink_kind_name(engine.sink->kind), engine.sink->bytes_written,
	    engine.sink->bits_credited, engine.sink->feeds, sink_phase_name(engine.sink->phase),
	    engine.sink->topups, engine.sink->reseeds);
}

/* Test mode: one line a second with each source's rate. */
static void
engine_rate(int fd, short what, void *arg)
{
	struct entropyd_instance *inst;
	uint64_t now = clock_now_ns();
	double secs = (double)(now - engine.rate_mark_ns) / 1e9;
	char line[1024] = "";
	size_t len = 0;

	engine.rate_mark_ns = now;
	TAILQ_FOREACH(inst, &registry_instances, all) {
		uint64_t taken = inst->pipe.count.bytes_taken;

		if (len < sizeof line)
			len += (size_t)snprintf(line + len, sizeof line - len,
			    "%s%s %.1f kB/s (%s)", len ? ", " : "", inst->name,
			    (double)(taken - inst->slot->rate_mark) / secs / 1000.0,
			    registry_state_name(inst->state));
		inst->slot->rate_mark = taken;
	}
	log_info("rate: %s", len ? line : "no sources");
}

static void
engine_signal(int sig, short what, void *arg)
{
	struct entropyd_instance *inst;

	switch (sig) {
	case SIGHUP:
		log_info("SIGHUP: re-probing sources");
		TAILQ_FOREACH(inst, &registry_instances, all)
			if (!engine_is_open(inst) && inst->module->enabled) {
				inst->backoff_ms = 0;
				engine_open(inst);
			}
		if (engine.parts->reload != NULL)
			engine.parts->reload(engine.cfg);
		probing_run(PROBING_ALL);
		break;
	case SIGUSR1:
		engine_log_stats();
		break;
	case SIGUSR2:
		log_info("SIGUSR2: the VM generation changed (a restore hook says so)");
		vmgenid_trigger(VMGENID_TRIGGER_SIGNAL);
		break;
	}
}

/* A stop signal (SIGTERM, SIGINT) is pending: end the loop. */
static void
engine_stop_signal(int fd, short what, void *arg)
{
	int sig = stopsig_take();

	if (sig == 0)
		return;
	log_info("%s: exiting", strsignal(sig));
	event_base_loopbreak(engine.base);
}

/* Add a persistent timer firing every ms. */
static struct event *
engine_every(unsigned ms, void (*fn)(int, short, void *))
{
	struct event *ev = event_new(engine.base, -1, EV_PERSIST, fn, NULL);
	struct timeval tv = clock_tv_ms(ms);

	event_add(ev, &tv);
	return ev;
}

int
engine_run(const struct config *cfg, struct sink *sink, const struct engine_parts *parts)
{
	static const int sigs[] = { SIGHUP, SIGUSR1, SIGUSR2 };
	static const struct registry_hooks hooks = {
		.added = engine_added, .removed = engine_removed, .gone = engine_gone,
	};
	struct entropyd_instance *inst;
	size_t i;
	int rc;

	memset(&engine, 0, sizeof engine);
	rates_started();
	engine.cfg = cfg;
	engine.sink = sink;
	engine.parts = parts;
	engine.exit_code = EX_OK;
	if ((engine.base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	/* Two priorities: a VM generation change (0) goes before everything else (1). */
	if (event_base_priority_init(engine.base, 2) == -1)
		fatalx("event_base_priority_init failed");
	if (defer_attach(engine.base) == -1)
		fatal("defer");
	rc = parts->start != NULL ? parts->start(engine.base, cfg, sink) : 0;
	/* The EGD sockets are made as the control socket is: before the sources open. */
	if (rc == 0 && (rc = broker_start(engine.base, cfg, &engine_supply,
	    engine_feed_and_demand)) != 0 && parts->stop != NULL)
		parts->stop();
	if (rc != 0) {
		defer_detach();
		event_base_free(engine.base);
		return rc;
	}
	signal(SIGPIPE, SIG_IGN);
	reader_global_init();
	/* Before any thread: each inherits the stop signals blocked. */
	if (stopsig_open() == -1)
		fatal("signalfd");
	engine.ev_stop = event_new(engine.base, stopsig_fd(), EV_READ | EV_PERSIST,
	    engine_stop_signal, NULL);
	event_add(engine.ev_stop, NULL);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		engine.ev_signals[i] = evsignal_new(engine.base, sigs[i], engine_signal, NULL);
		evsignal_add(engine.ev_signals[i], NULL);
	}
	sink_attach(sink, engine.base, engine_sink_writable);
	probing_start(engine.base);
	if (sink->kind == SINK_KERNEL) {
		engine.ev_topup = engine_every(cfg->reseed_interval_s * 1000u, engine_topup);
		if (!sink->modern) {
			engine.ev_pool = event_new(engine.base, sink->fd, EV_WRITE,
			    engine_pool_writable, NULL);
			engine.ev_pool_rearm = evtimer_new(engine.base, engine_pool_rearm, NULL);
			event_add(engine.ev_pool, NULL);
		}
		if (!cfg->no_host_mix)
			engine_mix_host();
	}
	if (cfg->test_mode) {
		log_info("test mode: nothing is written to the kernel");
		engine.rate_mark_ns = clock_now_ns();
		engine.ev_rate = engine_every(1000, engine_rate);
	}
	vmgenid_start(engine.base, engine_vm_changed);
	generation_start(engine.base, cfg->generation_file, sink->kind == SINK_KERNEL);
	registry_set_hooks(&hooks);
	if (parts->setup != NULL)
		parts->setup(cfg);
	probing_run(PROBING_QUICK);
	if (parts->ready != NULL)
		parts->ready(cfg, sink);
	engine_notify_status();
	/* Sources probed, control socket listening, privileges dropped: -b may return. */
	daemonize_ready();
	event_base_dispatch(engine.base);
	notify_send("STOPPING=1");
	broker_stop();
	vmgenid_stop();
	generation_stop();

	/* Interrupt every blocked reader at once, then close them one by one. */
	TAILQ_FOREACH(inst, &registry_instances, all)
		if (inst->slot != NULL && inst->slot->reader != NULL)
			reader_request_stop(inst->slot->reader);
	TAILQ_FOREACH(inst, &registry_instances, all) {
		engine_close(inst);
		engine_free_slot(inst);
	}
	reader_reap();
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		event_free(engine.ev_signals[i]);
	event_free(engine.ev_stop);
	stopsig_close();
	probing_stop();
	if (engine.ev_topup != NULL)
		event_free(engine.ev_topup);
	if (engine.ev_rate != NULL)
		event_free(engine.ev_rate);
	if (engine.ev_pool != NULL) {
		event_free(engine.ev_pool);
		event_free(engine.ev_pool_rearm);
	}
	if (sink->ev_write != NULL)
		event_free(sink->ev_write);
	sink->ev_write = NULL;
	if (parts->stop != NULL)
		parts->stop();
	defer_detach();
	event_base_free(engine.base);
	return engine.exit_code;
}
