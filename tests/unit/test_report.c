/* SPDX-License-Identifier: MIT */
/* What the control socket renders, from a hand-built registry and sink. */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <time.h>

#include <criterion/criterion.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "feedclient.h"
#include "options.h"
#include "rates.h"
#include "registry.h"
#include "report.h"
#include "sink.h"
#include "vmgenid.h"

static const struct entropyd_source fake_src = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "fake",
	.description = "a source for tests",
};

static struct entropyd_module fake_module = { .src = &fake_src, .stall_timeout_ms = 10000 };
static struct entropyd_instance insts[3];
static struct sink sink;
/* 1700000000 is 2023-11-14T22:13:20Z; the monotonic clock reads 100 s. */
static const struct report_clock clock100 = { .now_ns = 100000000000u, .wall = 1700000000 };

/* Add a hand-made instance to the registry. */
static struct entropyd_instance *
add(int i, const char *name, enum instance_state state)
{
	struct entropyd_instance *inst = &insts[i];

	memset(inst, 0, sizeof *inst);
	inst->module = &fake_module;
	inst->name = (char *)name;
	inst->device = (char *)"/dev/fake";
	inst->state = state;
	inst->state_since_ns = 40000000000u;
	inst->driven_by = INSTANCE_DRIVE_POLL;
	inst->pipe.unit_bits = 8; /* credited, as the kernel sink wants */
	TAILQ_INSERT_TAIL(&registry_instances, inst, all);
	return inst;
}

static void
setup(void)
{
	TAILQ_INIT(&registry_instances);
	memset(&sink, 0, sizeof sink);
	sink.kind = SINK_KERNEL;
	sink.path = (char *)"/dev/random";
	rates_reset();
}

static void
teardown(void)
{
	rates_reset();
	TAILQ_INIT(&registry_instances);
}

TestSuite(report, .init = setup, .fini = teardown);

/* checks[key][0][field] as a string ("" when absent). */
static const char *
check_field(json_t *doc, const char *key, const char *field)
{
	json_t *c = json_array_get(json_object_get(json_object_get(doc, "checks"), key), 0);
	const char *s = json_string_value(json_object_get(c, field));

	return s != NULL ? s : "";
}

Test(report, health_passes_with_a_running_source)
{
	enum report_status st;
	json_t *doc, *c;

	add(0, "fake", INSTANCE_RUNNING)->pipe.count.blocks_failed = 3;
	sink.bits_credited = 512;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_PASS);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "pass");
	cr_assert_null(json_object_get(doc, "output"));
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "fake:state"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(c, "componentId")), "fake");
	cr_assert_str_eq(json_string_value(json_object_get(c, "componentType")), "entropy-source");
	cr_assert_str_eq(json_string_value(json_object_get(c, "observedValue")), "running");
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "pass");
	cr_assert_str_eq(json_string_value(json_object_get(c, "time")), "2023-11-14T22:12:20Z",
	    "the state began 60 s before the report");
	cr_assert_null(json_object_get(c, "output"), "no output on pass");
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "fake:failedBlocks"), 0);
	cr_assert_float_eq(json_real_value(json_object_get(c, "observedValue")), 0.0, 1e-9,
	    "no recent test failed");
	cr_assert_str_eq(json_string_value(json_object_get(c, "observedUnit")), "%");
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "pass");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "sink"),
	    "bits_credited")), 512);
	cr_assert_str_eq(check_field(doc, "sink:bitsCredited", "status"), "pass");
	json_decref(doc);
}

Test(report, health_fails_when_the_only_source_is_suspended)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_SUSPENDED);
	enum report_status st;
	json_t *doc;

	strcpy(inst->last_error, "suspended after 25 failed blocks of 25");
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_FAIL);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "fail");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "output")),
	    "no healthy credited entropy source");
	cr_assert_str_eq(check_field(doc, "fake:state", "status"), "fail");
	cr_assert_str_eq(check_field(doc, "fake:state", "output"),
	    "suspended after 25 failed blocks of 25");
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "fail");
	json_decref(doc);
}

Test(report, health_warns_when_some_sources_are_down)
{
	enum report_status st;
	json_t *doc;

	add(0, "fake:a", INSTANCE_RUNNING);
	add(1, "fake:b", INSTANCE_ABSENT);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_WARN);
	cr_assert_str_eq(check_field(doc, "fake:a:state", "status"), "pass");
	cr_assert_str_eq(check_field(doc, "fake:b:state", "status"), "fail");
	cr_assert_str_eq(check_field(doc, "fake:b:state", "output"), "not open");
	json_decref(doc);
}

Test(report, health_fails_without_sources_or_with_a_failed_sink)
{
	enum report_status st;
	json_t *doc;

	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_FAIL);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "output")),
	    "no entropy source found");
	json_decref(doc);

	add(0, "fake", INSTANCE_RUNNING);
	sink.status = SINK_FAILED;
	sink.error = EIO;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_FAIL, "a failed sink fails health even with a running source");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "output")), "the sink failed");
	cr_assert_str_eq(check_field(doc, "sink:bitsCredited", "status"), "fail");
	cr_assert_str_eq(check_field(doc, "sink:bitsCredited", "output"), strerror(EIO));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "sink"), "state")),
	    "failed");
	json_decref(doc);
}

Test(report, sources_carry_every_counter)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	json_t *doc, *src, *c, *f;
	int t;

	inst->pipe.count.bytes_read = 1001;
	inst->pipe.count.blocks_tested = 1002;
	inst->pipe.count.blocks_passed = 1003;
	inst->pipe.count.blocks_failed = 1004;
	inst->pipe.count.bytes_conditioned = 1005;
	inst->pipe.count.bytes_taken = 1006;
	inst->pipe.count.bits_credited = 1007;
	for (t = 0; t < PIPELINE_NTESTS; t++)
		inst->pipe.count.test_failures[t] = 10u + (unsigned)t;
	inst->backoff_ms = 4000;
	doc = report_sources(&clock100);
	src = json_array_get(json_object_get(doc, "sources"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(src, "device")), "/dev/fake");
	cr_assert_str_eq(json_string_value(json_object_get(src, "state_since")),
	    "2023-11-14T22:12:20Z");
	cr_assert_float_eq(json_real_value(json_object_get(src, "state_seconds")), 60.0, 1e-9);
	cr_assert(json_is_null(json_object_get(src, "last_error")));
	cr_assert_eq(json_integer_value(json_object_get(src, "backoff_ms")), 4000);
	c = json_object_get(src, "counters");
	cr_assert_eq(json_integer_value(json_object_get(c, "bytes_read")), 1001);
	cr_assert_eq(json_integer_value(json_object_get(c, "blocks_failed")), 1004);
	cr_assert_eq(json_integer_value(json_object_get(c, "bytes_fed")), 1006);
	cr_assert_eq(json_integer_value(json_object_get(c, "bits_credited")), 1007);
	f = json_object_get(src, "test_failures");
	for (t = 0; t < PIPELINE_NTESTS; t++)
		cr_assert_eq(json_integer_value(json_object_get(f,
		    pipeline_test_key((enum pipeline_test)t))), 10 + t);
	json_decref(doc);
	doc = report_source("fake", &clock100);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "name")), "fake");
	json_decref(doc);
	cr_assert_null(report_source("nosuch", &clock100));
}

Test(report, rates_over_a_window)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	struct report_clock c = clock100;
	json_t *doc, *r;

	rates_sample(c.now_ns);
	inst->pipe.count.bytes_read = 5000;
	inst->pipe.count.bytes_taken = 2000;
	c.now_ns += 10000000000u;
	rates_sample(c.now_ns);
	inst->pipe.count.bytes_read = 999999; /* after the window: not in the rate yet */
	doc = report_source("fake", &c);
	r = json_object_get(doc, "rates");
	cr_assert_float_eq(json_real_value(json_object_get(r, "read_bytes_per_second")), 500.0,
	    1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(r, "fed_bytes_per_second")), 200.0,
	    1e-9);
	json_decref(doc);
}

/* A source's read rate and window length, as a report at c shows them. */
static void
read_rate_at(const struct report_clock *c, double *bps, double *window)
{
	json_t *doc = report_source("fake", c), *r = json_object_get(doc, "rates");

	*bps = json_real_value(json_object_get(r, "read_bytes_per_second"));
	*window = json_number_value(json_object_get(r, "window_seconds"));
	json_decref(doc);
}

/*
 * Without a timer, the windows that ended are sampled when a report is made
 * or a counter is about to change, with the values a timer would have seen.
 */
Test(report, rates_caught_up_without_a_timer)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	struct report_clock c = clock100;
	double bps, window;

	rates_sample(c.now_ns);			/* the first sample, at 100 s */
	c.now_ns = clock100.now_ns + 4000000000u;
	rates_catch_up(c.now_ns);			/* before a change at 104 s */
	inst->pipe.count.bytes_read = 3000;
	/* At 115 s: the window 100..110 s, which saw the 3000 bytes. */
	c.now_ns = clock100.now_ns + 15000000000u;
	read_rate_at(&c, &bps, &window);
	cr_assert_float_eq(bps, 300.0, 1e-9);
	cr_assert_float_eq(window, 10.0, 1e-9);
	/* At 139 s, nothing having changed: the window 120..130 s saw none. */
	c.now_ns = clock100.now_ns + 39000000000u;
	read_rate_at(&c, &bps, &window);
	cr_assert_float_eq(bps, 0.0, 1e-9);
	/* A change at 141 s shows once the window 140..150 s has ended. */
	c.now_ns = clock100.now_ns + 41000000000u;
	rates_catch_up(c.now_ns);
	inst->pipe.count.bytes_read = 3500;
	read_rate_at(&c, &bps, &window);
	cr_assert_float_eq(bps, 0.0, 1e-9);
	c.now_ns = clock100.now_ns + 50000000000u;
	read_rate_at(&c, &bps, &window);
	cr_assert_float_eq(bps, 50.0, 1e-9);
}

/* Until a window has ended, the rate is since the first sample. */
Test(report, rates_before_the_first_window_ends)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	struct report_clock c = clock100;
	double bps, window;

	rates_sample(c.now_ns);
	inst->pipe.count.bytes_read = 800;
	c.now_ns += 4000000000u;
	read_rate_at(&c, &bps, &window);
	cr_assert_float_eq(bps, 200.0, 1e-9);
	cr_assert_float_eq(window, 4.0, 1e-9);
}

/* The metrics text as a C string (freed by the caller). */
static char *
metrics(void)
{
	struct evbuffer *buf = evbuffer_new();
	size_t len = evbuffer_get_length(buf);
	char *text;

	report_metrics(buf, &sink);
	len = evbuffer_get_length(buf);
	text = malloc(len + 1);
	evbuffer_remove(buf, text, len);
	text[len] = '\0';
	evbuffer_free(buf);
	return text;
}

Test(report, metrics_counters_labels_and_help)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_SUSPENDED);
	char *text;

	inst->pipe.count.bytes_read = 123456;
	inst->pipe.count.bits_credited = 12;
	inst->pipe.count.test_failures[PIPELINE_TEST_LONG_RUN] = 7;
	sink.feeds = 9;
	text = metrics();
	cr_assert_not_null(strstr(text, "# TYPE entropyd_bytes_read_total counter\n"
	    "entropyd_bytes_read_total{source=\"fake\"} 123456\n"));
	cr_assert_not_null(strstr(text, "# HELP entropyd_bytes_read_total "));
	cr_assert_not_null(strstr(text, "entropyd_credited_bytes_total{source=\"fake\"} 1.500\n"),
	    "12 bits are 1.5 bytes");
	cr_assert_not_null(strstr(text,
	    "entropyd_test_failures_total{source=\"fake\",test=\"long_run\"} 7\n"));
	cr_assert_not_null(strstr(text,
	    "entropyd_source_state{source=\"fake\",state=\"suspended\"} 1\n"));
	cr_assert_not_null(strstr(text,
	    "entropyd_source_state{source=\"fake\",state=\"running\"} 0\n"));
	cr_assert_not_null(strstr(text, "entropyd_kernel_feeds_total{sink=\"kernel\"} 9\n"));
	cr_assert_not_null(strstr(text, "entropyd_build_info{version=\"" PACKAGE_VERSION "\""));
	free(text);
}

Test(report, metrics_escape_label_values)
{
	char *text;

	add(0, "we\"ird\\na\nme", INSTANCE_RUNNING);
	text = metrics();
	cr_assert_not_null(strstr(text,
	    "entropyd_bytes_read_total{source=\"we\\\"ird\\\\na\\nme\"} 0\n"), "%s", text);
	free(text);
}

static enum vmgenid_trigger handled_trigger = VMGENID_NTRIGGERS;

/* The engine's part in a change, for the report: wipe 1000 bytes, refill in 3 ms. */
static void
handle_change(enum vmgenid_trigger t, uint64_t event_ns)
{
	handled_trigger = t;
	vmgenid_note_discarded(1000);
	vmgenid_note_refill(3000000);
}

/* A fake sysfs: a generation ID device, bound to the vmgenid driver or not. */
static void
fake_sysfs(char *dir, bool bound)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "mkdir -p %s/bus/acpi/devices/VMGENCTR:00", dir);
	cr_assert_eq(system(cmd), 0);
	if (bound) {
		snprintf(cmd, sizeof cmd, "mkdir -p %s/bus/platform/drivers/vmgenid && ln -sf "
		    "../../../../devices/platform/VMGENCTR:00 %s/bus/platform/drivers/vmgenid/"
		    "VMGENCTR:00", dir, dir);
		cr_assert_eq(system(cmd), 0);
	}
	setenv(VMGENID_SYSFS_ENV, dir, 1);
}

/* Health and metrics say whether clone detection is armed, and what it did. */
Test(report, clone_detection_in_health_and_metrics)
{
	char dir[] = "/tmp/entropyd-report.XXXXXX", cmd[256];
	struct event_base *base = event_base_new();
	struct evbuffer *buf = evbuffer_new();
	enum report_status st;
	json_t *doc;
	char *text;

	if (access(VMGENID_KMSG_PATH, R_OK) != 0)
		cr_skip("%s is not readable here (needs root or CAP_SYSLOG)", VMGENID_KMSG_PATH);
	cr_assert_not_null(mkdtemp(dir));
	add(0, "fake", INSTANCE_RUNNING);
	/* A device bound to the driver and the uevent socket open: armed. */
	fake_sysfs(dir, true);
	cr_assert_eq(vmgenid_start(base, handle_change), 0, "the uevent socket opens");
	doc = report_health(&sink, &clock100, &st);
	cr_expect_eq(st, REPORT_PASS);
	cr_expect_str_eq(check_field(doc, "vmgenid:cloneDetection", "observedValue"), "armed");
	cr_expect_str_eq(check_field(doc, "vmgenid:cloneDetection", "status"), "pass");
	cr_expect(strstr(check_field(doc, "vmgenid:cloneDetection", "description"),
	    "VMGENCTR:00") != NULL);
	json_decref(doc);
	vmgenid_trigger(VMGENID_TRIGGER_CONTROL);
	cr_expect_eq(handled_trigger, VMGENID_TRIGGER_CONTROL);
	report_metrics(buf, &sink);
	evbuffer_add(buf, "", 1);
	text = (char *)evbuffer_pullup(buf, -1);
	cr_expect(strstr(text, "entropyd_vmgenid_armed 1\n") != NULL, "%s", text);
	cr_expect(strstr(text, "entropyd_vmgenid_changes_total{trigger=\"control\"} 1\n") != NULL);
	cr_expect(strstr(text, "entropyd_vmgenid_changes_total{trigger=\"uevent\"} 0\n") != NULL);
	cr_expect(strstr(text, "entropyd_vmgenid_discarded_bytes_total 1000\n") != NULL);
	cr_expect(strstr(text, "entropyd_vmgenid_refills_total 1\n") != NULL);
	cr_expect(strstr(text, "entropyd_vmgenid_refill_seconds 0.003000\n") != NULL);
	vmgenid_stop();
	/* The device without its driver: changes would go unseen, a warning. */
	snprintf(cmd, sizeof cmd, "rm -rf %s/bus/platform", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(vmgenid_start(base, handle_change), 0);
	doc = report_health(&sink, &clock100, &st);
	cr_expect_eq(st, REPORT_WARN);
	cr_expect_str_eq(check_field(doc, "vmgenid:cloneDetection", "observedValue"), "not armed");
	cr_expect(strstr(check_field(doc, "vmgenid:cloneDetection", "output"),
	    "has no driver bound") != NULL);
	json_decref(doc);
	vmgenid_stop();
	/* No device at all: nothing to detect, no warning. */
	snprintf(cmd, sizeof cmd, "rm -rf %s/bus", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(vmgenid_start(base, handle_change), 0);
	doc = report_health(&sink, &clock100, &st);
	cr_expect_eq(st, REPORT_PASS);
	cr_expect_str_eq(check_field(doc, "vmgenid:cloneDetection", "observedValue"),
	    "not available");
	json_decref(doc);
	vmgenid_stop();
	unsetenv(VMGENID_SYSFS_ENV);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	evbuffer_free(buf);
	event_base_free(base);
}

Test(report, a_stalled_source_warns_and_alone_fails)
{
	struct entropyd_instance *inst = add(0, "fake:a", INSTANCE_STALLED);
	enum report_status st;
	json_t *doc;

	strcpy(inst->last_error, "stalled: no data for 10 s while asked for it");
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_FAIL, "the only source stalled: no healthy credited source");
	cr_assert_str_eq(check_field(doc, "fake:a:state", "status"), "warn");
	cr_assert_str_eq(check_field(doc, "fake:a:state", "observedValue"), "stalled");
	cr_assert_str_eq(check_field(doc, "fake:a:state", "output"),
	    "stalled: no data for 10 s while asked for it");
	cr_assert_str_eq(check_field(doc, "fake:a:lastDelivery", "status"), "warn");
	json_decref(doc);
	add(1, "fake:b", INSTANCE_RUNNING);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_WARN, "another source runs: warn");
	json_decref(doc);
}

Test(report, the_kernel_needs_a_credited_source)
{
	enum report_status st;
	json_t *doc;

	add(0, "fake", INSTANCE_RUNNING)->pipe.unit_bits = 0;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_FAIL, "running but credited nothing: the kernel gets nothing");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "output")),
	    "no healthy credited entropy source");
	json_decref(doc);
	sink.kind = SINK_FILE;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_PASS, "a file sink takes uncredited bytes");
	json_decref(doc);
}

Test(report, failed_blocks_is_the_recent_rate)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	enum report_status st;
	json_t *doc, *c;
	unsigned i;

	inst->pipe.count.blocks_failed = 933;
	for (i = 0; i < 990; i++)
		failure_block(&inst->pipe.failures, false);
	for (i = 0; i < 10; i++)
		failure_block(&inst->pipe.failures, true);
	doc = report_health(&sink, &clock100, &st);
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "fake:failedBlocks"), 0);
	cr_assert_float_eq(json_real_value(json_object_get(c, "observedValue")), 1.0, 1e-9,
	    "10 of the last 1000 tests");
	cr_assert_eq(st, REPORT_PASS);
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "pass",
	    "1%% is the limit, not above it");
	json_decref(doc);
	failure_block(&inst->pipe.failures, true);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "warn");
	cr_assert_eq(st, REPORT_FAIL, "the only source fails often: no healthy source");
	json_decref(doc);
	add(1, "fake:b", INSTANCE_RUNNING);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_WARN, "with a healthy source beside it: warn");
	TAILQ_REMOVE(&registry_instances, &insts[1], all);
	cr_assert_not_null(strstr(check_field(doc, "fake:failedBlocks", "output"),
	    "933 blocks failed in all"));
	json_decref(doc);
	inst->state = INSTANCE_SUSPENDED;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "fail");
	json_decref(doc);
	/* Back from suspension on good blocks: the rate falls as they come, not at once. */
	inst->state = INSTANCE_RUNNING;
	for (i = 0; i < 100; i++)
		failure_block(&inst->pipe.failures, false);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "warn");
	json_decref(doc);
}

Test(report, a_few_early_failures_are_no_warning)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	enum report_status st;
	json_t *doc;
	unsigned i;

	/* The first block failed by chance: 1 of 20, but one failure is no pattern. */
	failure_block(&inst->pipe.failures, true);
	for (i = 0; i < 19; i++)
		failure_block(&inst->pipe.failures, false);
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_PASS);
	cr_assert_str_eq(check_field(doc, "fake:failedBlocks", "status"), "pass");
	json_decref(doc);
}

Test(report, health_carries_the_alerting_times)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_RUNNING);
	enum report_status st;
	json_t *doc, *c;

	rates_started();
	doc = report_health(&sink, &clock100, &st);
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "fake:lastDelivery"), 0);
	cr_assert(json_is_null(json_object_get(c, "observedValue")), "no delivery yet");
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "sink:lastCreditedFeed"),
	    0);
	cr_assert(json_is_null(json_object_get(c, "observedValue")), "no credited feed yet");
	cr_assert_eq(strlen(check_field(doc, "entropyd:startTime", "observedValue")), 20,
	    "RFC 3339");
	json_decref(doc);
	inst->last_delivery_ns = 90000000000u;
	sink.last_credit_ns = 70000000000u;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_str_eq(check_field(doc, "fake:lastDelivery", "observedValue"),
	    "2023-11-14T22:13:10Z", "10 s before the report");
	cr_assert_str_eq(check_field(doc, "sink:lastCreditedFeed", "observedValue"),
	    "2023-11-14T22:12:50Z");
	json_decref(doc);
}

/* The value of a metric line that starts with prefix, or -1. */
static double
metric_value(const char *text, const char *prefix)
{
	const char *at = strstr(text, prefix);

	return at != NULL ? strtod(at + strlen(prefix), NULL) : -1;
}

Test(report, metrics_stalled_repeat_and_times)
{
	struct entropyd_instance *inst = add(0, "fake", INSTANCE_STALLED);
	double now = (double)time(NULL);
	char *text;

	inst->pipe.count.test_failures[PIPELINE_TEST_REPEAT] = 4;
	sink.reseed_interval_s = 60;
	rates_started();
	text = metrics();
	cr_assert_not_null(strstr(text,
	    "entropyd_source_state{source=\"fake\",state=\"stalled\"} 1\n"));
	cr_assert_not_null(strstr(text,
	    "entropyd_test_failures_total{source=\"fake\",test=\"repeat\"} 4\n"));
	cr_assert_not_null(strstr(text, "# TYPE entropyd_start_time_seconds gauge\n"));
	cr_assert_float_eq(metric_value(text, "\nentropyd_start_time_seconds "), now, 2.0);
	cr_assert_not_null(strstr(text, "\nentropyd_last_credited_feed_timestamp_seconds 0\n"),
	    "0 before the first credited feed");
	cr_assert_not_null(strstr(text,
	    "\nentropyd_source_last_delivery_timestamp_seconds{source=\"fake\"} 0\n"));
	cr_assert_not_null(strstr(text, "\nentropyd_reseed_interval_seconds 60\n"));
	free(text);
	inst->last_delivery_ns = clock_now_ns() - 5000000000u;
	sink.last_credit_ns = clock_now_ns() - 20000000000u;
	text = metrics();
	cr_assert_float_eq(metric_value(text,
	    "entropyd_source_last_delivery_timestamp_seconds{source=\"fake\"} "), now - 5, 2.0);
	cr_assert_float_eq(metric_value(text, "\nentropyd_last_credited_feed_timestamp_seconds "),
	    now - 20, 2.0);
	free(text);
}

/*
 * A report reads the copy of the feeder's state its answers carried: it
 * never asks the feeder, so a feeder that does not answer (here: a socket
 * nobody reads) cannot hold /health or /metrics. Asking would block on
 * the socket, and the test would hang until the suite's time limit.
 */
Test(report, the_feeder_is_never_asked_during_a_report)
{
	enum report_status st;
	struct evbuffer *buf = evbuffer_new();
	struct feedclient *c;
	char *text, probe;
	json_t *doc;
	int sv[2];

	add(0, "fake", INSTANCE_RUNNING);
	sink.bits_credited = 512;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	c = feedclient_new(sv[0]);
	sink.feeder = c;
	/* Before the feeder's first word there is nothing of its to report. */
	doc = report_health(&sink, &clock100, &st);
	cr_assert_str_eq(check_field(doc, "feeder:refusedFrames", "status"), "");
	json_decref(doc);
	c->state.worker_restarts = 3;
	c->state.refused[FEEDPROTO_CREDIT] = 2;
	c->state.adds = 41;
	c->have_state = true;
	doc = report_health(&sink, &clock100, &st);
	cr_assert_eq(st, REPORT_WARN, "refused frames warn");
	cr_assert_str_eq(check_field(doc, "feeder:refusedFrames", "status"), "warn");
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(json_object_get(
	    json_object_get(doc, "checks"), "worker:restarts"), 0), "observedValue")), 3);
	json_decref(doc);
	report_metrics(buf, &sink);
	evbuffer_add(buf, "", 1);
	text = (char *)evbuffer_pullup(buf, -1);
	cr_assert_not_null(strstr(text, "\nentropyd_feeder_feeds_total 41\n"), "%s", text);
	cr_assert_not_null(strstr(text, "\nentropyd_worker_restarts_total 3\n"));
	cr_assert_eq(recv(sv[1], &probe, 1, MSG_DONTWAIT), -1, "nothing was sent to the feeder");
	cr_assert_eq(errno, EAGAIN);
	evbuffer_free(buf);
	sink.feeder = NULL;
	feedclient_free(c);
	close(sv[1]);
}

/* The health of a source credited unit_bits of a 2-bit claim, its estimate live at live_bits. */
static json_t *
estimate_health(struct estimate *est, double unit_bits, double decided_bits, double live_bits,
    enum report_status *st)
{
	struct entropyd_instance *inst;

	TAILQ_INIT(&registry_instances); /* each call adds the one instance afresh */
	inst = add(0, "raw", INSTANCE_RUNNING);
	memset(est, 0, sizeof *est);
	est->have_last = true;
	est->last.min = live_bits;
	inst->pipe.est = est;
	inst->pipe.claim_bits = 2;
	inst->pipe.unit_bits = unit_bits;
	inst->pipe.have_decided = decided_bits >= 0;
	inst->pipe.decided.min = decided_bits;
	sink.bits_credited = 512;
	return report_health(&sink, &clock100, st);
}

/*
 * A credit its own estimate lowered, that still credits, passes: the
 * detail is in the check's description, quoting the estimate that decided
 * (the figure the log gave), not the one of the moment. Below the
 * operator's floor (--min-credit), or at nothing, it warns.
 */
Test(report, a_lowered_credit_passes_and_quotes_the_estimate_that_decided)
{
	struct estimate est;
	struct config cfg = { .min_credit_bits = 0 };
	enum report_status st;
	json_t *doc, *c;
	char err[128];

	cr_assert_eq(registry_configure(&cfg, NULL, err, sizeof err), 0, "%s", err);
	doc = estimate_health(&est, 0.75, 1.5, 1.9, &st);
	c = json_array_get(json_object_get(json_object_get(doc, "checks"), "raw:entropyEstimate"), 0);
	cr_assert_eq(st, REPORT_PASS, "lowered by its own measurement: pass");
	cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "pass");
	cr_assert_float_eq(json_real_value(json_object_get(c, "observedValue")), 1.5, 1e-9,
	    "the estimate that decided, not the live one");
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "description")),
	    "the online estimate was 1.5 bits per byte when it decided"));
	cr_assert_null(json_object_get(c, "output"));
	json_decref(doc);

	cfg.min_credit_bits = 1;
	cr_assert_eq(registry_configure(&cfg, NULL, err, sizeof err), 0, "%s", err);
	doc = estimate_health(&est, 0.75, 1.5, 1.9, &st);
	cr_assert_eq(st, REPORT_WARN, "below --min-credit: warn");
	cr_assert_str_eq(check_field(doc, "raw:entropyEstimate", "status"), "warn");
	cr_assert_not_null(strstr(check_field(doc, "raw:entropyEstimate", "output"),
	    "below the --min-credit floor"));
	json_decref(doc);

	cfg.min_credit_bits = 0;
	cr_assert_eq(registry_configure(&cfg, NULL, err, sizeof err), 0, "%s", err);
	doc = estimate_health(&est, 0, 0.1, 0.1, &st);
	/* Its check warns; with the kernel sink and no other source the whole fails. */
	cr_assert_str_eq(check_field(doc, "raw:entropyEstimate", "status"), "warn",
	    "credited nothing: warn");
	cr_assert_eq(st, REPORT_FAIL, "no healthy credited source for the kernel");
	cr_assert_not_null(strstr(check_field(doc, "raw:entropyEstimate", "output"),
	    "it credits nothing"));
	json_decref(doc);

	doc = estimate_health(&est, 2, -1, 3.5, &st);
	cr_assert_eq(st, REPORT_PASS, "at its claim: pass");
	cr_assert_float_eq(json_real_value(json_object_get(json_array_get(json_object_get(
	    json_object_get(doc, "checks"), "raw:entropyEstimate"), 0), "observedValue")), 3.5,
	    1e-9, "not lowered: the live estimate");
	json_decref(doc);
}
