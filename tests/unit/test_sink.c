/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "sink.h"

/* What the kernel was asked, in order. */
struct call {
	char what;          /* 'a' add, 'm' mix, 'r' reseed */
	size_t len;
	unsigned credit;
};

static struct call calls[256];
static size_t ncalls;
static unsigned adds;             /* ADD requests, each holding one or more calls */
static int fail_adds;             /* nonzero: every ADD fails with this errno */
static unsigned ready_after_bits; /* the fake CRNG becomes ready after this much credit */
static unsigned credited_total;
static int pool_bits;             /* the fake entropy_avail */
static struct sink sink;
static struct config cfg;

/* Each segment of the ADD the feeder would get, as one call; the frame must pass its checks. */
static int
rec_add(struct sink *s, const struct feedproto_batch *b)
{
	static uint8_t wire[FEEDPROTO_MAX_FRAME];
	struct feedproto_segment seg;
	struct feedproto_frame f;
	size_t n = feedproto_encode(wire, sizeof wire, FEEDPROTO_ADD, b->segments, 0, b->payload,
	    b->len), off = 0;

	cr_assert_gt(n, 0, "an ADD of %u segments, %zu bytes, the feeder would refuse",
	    b->segments, b->len);
	cr_assert_eq(feedproto_decode(wire, n, false, &f), FEEDPROTO_OK);
	if (fail_adds != 0) {
		errno = fail_adds;
		return -1;
	}
	adds++;
	while (feedproto_next_segment(&f, &off, &seg)) {
		calls[ncalls++] = (struct call){ 'a', seg.len, seg.credit };
		credited_total += seg.credit;
	}
	return 0;
}

static int
rec_mix(struct sink *s, const uint8_t *buf, size_t len)
{
	calls[ncalls++] = (struct call){ 'm', len, 0 };
	return 0;
}

static int
rec_reseed(struct sink *s)
{
	calls[ncalls++] = (struct call){ 'r', 0, 0 };
	return 0;
}

static int
rec_crng_ready(struct sink *s)
{
	return credited_total >= ready_after_bits;
}

static int
rec_entropy_avail(struct sink *s)
{
	return pool_bits;
}

static const struct sink_kernel_ops recording = {
	.add = rec_add,
	.mix = rec_mix,
	.reseed = rec_reseed,
	.crng_ready = rec_crng_ready,
	.entropy_avail = rec_entropy_avail,
};

/* A source as a sink sees it: a pipeline, healthy or not, credited or not. */
struct fake_source {
	struct pipeline pipe;
	bool running;
	bool credited;
};

static struct fake_source sources[3];
static struct fake_source *a = &sources[0], *b = &sources[1], *none = &sources[2];

/* The supply: the three fake sources in order. */
static struct pipeline *
fake_next(void *ctx, struct pipeline *prev, bool *kernel_ok)
{
	size_t i = prev == NULL ? 0 : (size_t)((struct fake_source *)(void *)prev - sources) + 1;

	if (i >= sizeof sources / sizeof sources[0])
		return NULL;
	*kernel_ok = sources[i].running && sources[i].credited;
	return &sources[i].pipe;
}

static const struct sink_supply supply = { .next = fake_next };

/* Give a source len bytes of one value, carrying bits_per_byte each. */
static void
fill(struct fake_source *f, uint8_t value, size_t len, unsigned bits_per_byte)
{
	static uint8_t data[RESERVE_CAPACITY];

	memset(data, value, len);
	reserve_put(&f->pipe.reserve, data, len, (uint64_t)len * bits_per_byte);
}

/* A running source holding len bytes of conditioned data. */
static void
running(struct fake_source *f, bool credited, size_t len)
{
	pipeline_init(&f->pipe, false, 0, credited ? 8 : 0);
	f->running = true;
	f->credited = credited;
	fill(f, 0x5a, len, credited ? 8 : 0);
}

static void
setup(void)
{
	memset(&cfg, 0, sizeof cfg);
	cfg.random_step_bytes = 64;
	cfg.entropy_count_bits = 8;
	cfg.fill_watermark_bits = 2048;
	cfg.refill_bits = 2048;
	memset(&sink, 0, sizeof sink);
	sink.path = (char *)"recorder";
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &recording;
	ncalls = 0;
	adds = 0;
	fail_adds = 0;
	credited_total = 0;
	ready_after_bits = 0;
	pool_bits = 4096;
	running(a, true, 8192);
	running(b, true, 8192);
	running(none, false, 8192);
}

static void
teardown(void)
{
	size_t i;

	for (i = 0; i < sizeof sources / sizeof sources[0]; i++)
		pipeline_free(&sources[i].pipe);
}

/* Count the calls of one kind. */
static size_t
count(char what)
{
	size_t i, n = 0;

	for (i = 0; i < ncalls; i++)
		n += calls[i].what == what;
	return n;
}

TestSuite(sink, .init = setup, .fini = teardown);

Test(sink, host_mix_comes_first_and_is_never_credited)
{
	uint8_t host[] = "machine-id=0123\n";

	ready_after_bits = 1024;
	cr_assert_eq(sink_mix_host(&sink, host, sizeof host), 0);
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	cr_assert_gt(ncalls, 1);
	cr_expect_eq(calls[0].what, 'm', "the uncredited host mix is the first thing written");
	cr_expect_eq(calls[0].credit, 0);
	cr_expect_eq(calls[1].what, 'a', "credited feeding follows it");
}

Test(sink, boot_feeds_until_ready_then_a_burst)
{
	ready_after_bits = 1536; /* three 64-byte steps at 8 bits per byte */
	cr_assert_eq(sink.phase, SINK_BOOT);
	sink_service(&sink, &supply);
	cr_expect_eq(sink.phase, SINK_STEADY);
	/* Whole passes over the two credited sources: 1536 bits is reached after
	 * the second pass (4 steps, 2048 bits); the burst adds 2048 more. */
	cr_expect_eq(credited_total, 2048 + SINK_BURST_BITS);
	cr_expect_eq(count('a'), 8);
	cr_expect_eq(count('r'), 0, "no reseed during start-up");
	cr_expect_eq(none->pipe.count.bytes_taken, 0, "uncredited data never reaches the kernel");
}

Test(sink, steps_go_to_the_feeder_in_batches)
{
	size_t i;

	/* Whole passes of a step from each source: 80 steps of 64 bytes at 8 bits a byte. */
	sink.want_bits = 40000;
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	cr_expect_eq(count('a'), 80, "each step is one RNDADDENTROPY");
	for (i = 0; i < 80; i++)
		cr_expect(calls[i].what == 'a' && calls[i].len == 64 && calls[i].credit == 512,
		    "step %zu: %c %zu bytes %u bits", i, calls[i].what, calls[i].len,
		    calls[i].credit);
	cr_expect_eq(calls[80].what, 'r', "the reseed after the burst follows every step");
	/* 56 steps with their 8-byte headers fill 4032 of an ADD's 4096 bytes. */
	cr_expect_eq(adds, 2, "80 steps in two requests, not %u", adds);
	cr_expect_eq(sink.feeds, 80);
	cr_expect_eq(sink.bits_credited, 80 * 512);
	cr_expect_eq(sink.bytes_written, 80 * 64);
	cr_expect_eq(a->pipe.count.bits_credited, 40 * 512, "each source is counted for its "
	    "own steps");
	cr_expect_eq(b->pipe.count.bits_credited, 40 * 512);
	cr_expect_eq(sink.batch.segments, 0, "nothing left batched");
}

Test(sink, a_failed_add_counts_nothing)
{
	fail_adds = EPERM;
	cr_expect_eq(sink_service(&sink, &supply), SINK_FAILED);
	cr_expect_eq(sink.error, EPERM);
	cr_expect_gt(a->pipe.count.bytes_taken, 0, "the steps were taken");
	cr_expect_eq(sink.feeds, 0);
	cr_expect_eq(sink.bits_credited, 0, "nothing counted that the kernel did not get");
	cr_expect_eq(sink.bytes_written, 0);
	cr_expect_eq(a->pipe.count.bits_credited, 0);
	cr_expect_eq(sink.last_credit_ns, 0);
	cr_expect_eq(sink.batch.segments, 0, "the failed batch is not sent again");
}

Test(sink, a_step_larger_than_one_call_takes_is_cut)
{
	cfg.random_step_bytes = 4096;
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &recording;
	cr_expect_eq(sink.step_bytes, FEEDPROTO_MAX_SEGMENT_BYTES);
	sink_service(&sink, &supply);
	cr_assert_gt(count('a'), 0);
	cr_expect_eq(calls[0].len, 4088);
	cr_expect_eq(adds, count('a'), "a step that large is an ADD of its own");
}

Test(sink, boot_waits_for_data)
{
	ready_after_bits = 100000;
	reserve_clear(&a->pipe.reserve);
	reserve_clear(&b->pipe.reserve);
	sink_service(&sink, &supply);
	cr_expect_eq(count('a'), 0);
	cr_expect_eq(sink.phase, SINK_BOOT, "still booting: the CRNG is not ready");
}

Test(sink, topup_mixes_every_source_then_reseeds)
{
	sink_service(&sink, &supply); /* ready at once: burst */
	cr_assert_eq(sink.phase, SINK_STEADY);
	ncalls = 0;
	sink_service(&sink, &supply);
	cr_expect_eq(ncalls, 0, "nothing between top-ups");
	sink_topup(&sink);
	sink_service(&sink, &supply);
	cr_assert_eq(count('a'), 2, "one step from each healthy credited source");
	cr_expect(calls[0].len == 64 && calls[1].len == 64);
	cr_expect_geq(calls[0].credit + calls[1].credit, SINK_TOPUP_BITS);
	cr_expect_eq(calls[2].what, 'r', "RNDRESEEDCRNG follows the top-up");
	cr_expect_eq(sink.topups, 1);
	cr_expect_eq(sink.reseeds, 2, "one after the start-up burst (the CRNG was ready at "
	    "start), one after the top-up");
}

Test(sink, no_reseed_turns_reseeding_off)
{
	cfg.no_reseed = true;
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &recording;
	sink_service(&sink, &supply);
	ncalls = 0;
	sink_topup(&sink);
	sink_service(&sink, &supply);
	cr_expect_eq(count('a'), 2);
	cr_expect_eq(count('r'), 0);
}

Test(sink, a_failed_source_is_left_out)
{
	uint64_t b_taken;

	sink_service(&sink, &supply);
	ncalls = 0;
	b->running = false;
	b_taken = b->pipe.count.bytes_taken;
	sink_topup(&sink);
	sink_service(&sink, &supply);
	cr_expect_eq(count('a'), 1, "one step (512 bits) from the healthy source covers it");
	cr_expect_eq(b->pipe.count.bytes_taken, b_taken, "nothing from the suspended source");
}

Test(sink, credits_what_the_conditioner_decided)
{
	uint8_t drop[RESERVE_CAPACITY];

	/* Bytes carrying 2 bits each, as a pipeline capped by -e 2 holds them. */
	reserve_take(&a->pipe.reserve, drop, sizeof drop, NULL);
	reserve_take(&b->pipe.reserve, drop, sizeof drop, NULL);
	fill(a, 1, 8192, 2);
	fill(b, 2, 8192, 2);
	ready_after_bits = 0;
	sink_service(&sink, &supply);
	cr_assert_gt(count('a'), 0);
	cr_expect_eq(calls[0].credit, 64 * 2, "the sink's own -e (8) adds nothing");
	cr_expect_eq(credited_total, SINK_BURST_BITS);
	cr_expect_eq(a->pipe.count.bits_credited + b->pipe.count.bits_credited, SINK_BURST_BITS,
	    "each source counts what the kernel accepted from it");
}

Test(sink, bytes_without_credit_are_never_credited)
{
	uint8_t drop[RESERVE_CAPACITY];

	reserve_take(&a->pipe.reserve, drop, sizeof drop, NULL);
	reserve_take(&b->pipe.reserve, drop, sizeof drop, NULL);
	fill(a, 1, 1024, 0);
	ready_after_bits = 100000;
	sink_service(&sink, &supply);
	cr_assert_gt(count('a'), 0, "the bytes still reach the pool");
	cr_expect_eq(credited_total, 0, "with the credit they carry: none");
}

/*
 * A source handing back one random block over and over (a 2500-byte block,
 * a 4096-byte buffer) through its real pipeline: not a byte of the repeats
 * reaches the kernel, nor any credit. FIPS 140-2 alone would pass them.
 */
static void
repeats_reach_no_kernel(size_t period)
{
	uint8_t *in = malloc(4 + 60 * FIPS_BLOCK_BYTES), drop[RESERVE_CAPACITY];
	size_t len = 4 + 60 * FIPS_BLOCK_BYTES, i, first_clean;

	for (i = 0; i < period; i++)
		in[i] = (uint8_t)(rand() >> 7);
	for (i = period; i < len; i++)
		in[i] = in[i - period];
	pipeline_free(&a->pipe);
	pipeline_init(&a->pipe, false, 0, 8);
	/* The blocks before the first repeat are fine: take them out first. */
	first_clean = period > FIPS_BLOCK_BYTES + 67 ? (period - 4 - 63) / FIPS_BLOCK_BYTES : 0;
	pipeline_input(&a->pipe, in, 4 + first_clean * FIPS_BLOCK_BYTES + 63);
	cr_assert_eq(a->pipe.count.blocks_tested, first_clean);
	reserve_take(&a->pipe.reserve, drop, sizeof drop, NULL);
	reserve_take(&b->pipe.reserve, drop, sizeof drop, NULL);
	none->running = false;
	/* Then the repeats, and the kernel asks for all it can get. */
	pipeline_input(&a->pipe, in + 4 + first_clean * FIPS_BLOCK_BYTES + 63,
	    len - 4 - first_clean * FIPS_BLOCK_BYTES - 63);
	pipeline_end_input(&a->pipe);
	ready_after_bits = 100000;
	sink_service(&sink, &supply);
	cr_expect_eq(a->pipe.count.test_failures[PIPELINE_TEST_REPEAT], 60 - first_clean,
	    "every later block failed the repeat test");
	cr_expect_eq(a->pipe.reserve.len, 0, "nothing of them was conditioned");
	cr_expect_eq(count('a'), 0, "the kernel was fed nothing");
	cr_expect_eq(credited_total, 0, "and credited nothing");
	free(in);
}

Test(sink, a_repeated_2500_byte_block_is_never_credited)
{
	repeats_reach_no_kernel(2500);
}

Test(sink, a_repeated_4096_byte_buffer_is_never_credited)
{
	repeats_reach_no_kernel(4096);
}

Test(sink, older_kernels_feed_below_the_watermark)
{
	sink_kernel_init(&sink, &cfg, false);
	sink.ops = &recording;
	sink_service(&sink, &supply); /* boot and burst */
	ncalls = 0;
	pool_bits = 3000;
	sink_pool_writable(&sink);
	sink_service(&sink, &supply);
	cr_expect_eq(count('a'), 0, "at or above -W: nothing");
	pool_bits = 100;
	sink_pool_writable(&sink);
	sink_service(&sink, &supply);
	cr_expect_eq(count('a'), 2, "below -W: one -s step (a pass over the sources)");
	cr_expect_eq(count('r'), 0, "a watermark feed is not a top-up");
}

Test(sink, modern_kernels_ignore_the_watermark)
{
	sink_service(&sink, &supply);
	ncalls = 0;
	pool_bits = 0;
	sink_pool_writable(&sink);
	sink_service(&sink, &supply);
	cr_expect_eq(ncalls, 0);
}

/* Empty a source's reserve, then give it len bytes of one value. */
static void
refill(struct fake_source *f, uint8_t value, size_t len)
{
	static uint8_t buf[RESERVE_CAPACITY];

	while (reserve_take(&f->pipe.reserve, buf, sizeof buf, NULL) > 0)
		continue;
	fill(f, value, len, 8);
}

Test(sink, a_stream_sink_takes_turns_between_sources)
{
	char path[] = "/tmp/entropyd-sink.XXXXXX";
	uint8_t out[3 * 1000];
	int fd = mkstemp(path);

	cr_assert_neq(fd, -1);
	unlink(path);
	sink.kind = SINK_FILE;
	sink.fd = fd;
	refill(none, 0, 0);
	refill(b, 0, 0);
	/* a alone: a is taken. Then a again, and b: b's turn comes first. */
	refill(a, 'A', 1000);
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	refill(a, 'a', 1000);
	refill(b, 'B', 1000);
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	cr_assert_eq(pread(fd, out, sizeof out, 0), (ssize_t)sizeof out);
	cr_expect(out[0] == 'A' && out[999] == 'A', "a first, alone");
	cr_expect(out[1000] == 'B' && out[1999] == 'B', "then b, whose turn it was: %c", out[1000]);
	cr_expect(out[2000] == 'a' && out[2999] == 'a', "then a again");
	cr_expect_eq(a->pipe.count.bytes_taken, 2000);
	cr_expect_eq(b->pipe.count.bytes_taken, 1000);
	close(fd);
}

Test(sink, kernel_release_parsing)
{
	cr_expect(sink_kernel_is_modern("6.1.0-18-amd64"));
	cr_expect(sink_kernel_is_modern("5.18.0"));
	cr_expect_not(sink_kernel_is_modern("5.17.15"));
	cr_expect_not(sink_kernel_is_modern("4.19.0-26-amd64"));
}

/* The CRNG was ready before anything was fed: the burst is reseeded at once. */
Test(sink, a_burst_into_a_ready_crng_is_reseeded)
{
	size_t i;

	sink_service(&sink, &supply);
	cr_assert_eq(sink.phase, SINK_STEADY);
	cr_assert_eq(credited_total, SINK_BURST_BITS);
	cr_assert_eq(count('r'), 1);
	cr_expect_eq(calls[ncalls - 1].what, 'r', "after the whole burst");
	for (i = 0; i + 1 < ncalls; i++)
		cr_expect_eq(calls[i].what, 'a');
}

/* --no-reseed: not after the burst either. */
Test(sink, no_reseed_after_the_burst_either)
{
	cfg.no_reseed = true;
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &recording;
	sink_service(&sink, &supply);
	cr_assert_eq(sink.phase, SINK_STEADY);
	cr_expect_eq(count('r'), 0);
}

/* Empty both credited sources' reserves, as a VM generation change does. */
static void
forget_sources(void)
{
	pipeline_forget(&a->pipe);
	pipeline_forget(&b->pipe);
}

/*
 * After a VM generation change the sink waits for fresh data, feeds a
 * refill of --refill-bits, then reseeds once; --no-reseed does not stop it.
 */
static void
check_refill(unsigned refill_bits)
{
	size_t i, refill_adds = 0;
	unsigned credited = 0;

	sink_service(&sink, &supply);
	cr_assert_eq(sink.phase, SINK_STEADY);
	ncalls = 0;
	forget_sources();
	cr_expect_eq(sink_forget(&sink), 0, "the kernel sink holds nothing itself");
	sink_service(&sink, &supply);
	cr_expect_eq(ncalls, 0, "nothing to feed and no reseed before fresh data");
	cr_expect_eq(sink.refills, 0);
	fill(a, 0x11, 8192, 8);
	fill(b, 0x22, 8192, 8);
	sink_service(&sink, &supply);
	for (i = 0; i < ncalls && calls[i].what == 'a'; i++) {
		credited += calls[i].credit;
		refill_adds++;
	}
	cr_expect_geq(credited, refill_bits, "a refill of at least %u bits", refill_bits);
	cr_expect_lt(credited, refill_bits + 2 * 512, "in whole passes, no more");
	cr_assert_eq(i + 1, ncalls, "then one call: %zu adds of %zu calls", refill_adds, ncalls);
	cr_expect_eq(calls[i].what, 'r', "RNDRESEEDCRNG ends the refill");
	cr_expect_eq(sink.refills, 1);
	cr_expect_gt(sink.refill_reseed_ns, 0);
	ncalls = 0;
	sink_service(&sink, &supply);
	cr_expect_eq(ncalls, 0, "and nothing more until the next top-up");
}

Test(sink, a_vm_generation_change_refills_then_reseeds)
{
	check_refill(2048);
}

Test(sink, the_refill_size_is_the_option_and_reseeds_even_with_no_reseed)
{
	cfg.no_reseed = true;
	cfg.refill_bits = 4096;
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &recording;
	check_refill(4096);
}

/* A change while booting: the refill's reseed comes once the CRNG is ready and fed. */
Test(sink, a_change_during_boot_reseeds_after_boot_and_burst)
{
	ready_after_bits = 100000;
	reserve_clear(&a->pipe.reserve);
	reserve_clear(&b->pipe.reserve);
	sink_service(&sink, &supply);
	cr_assert_eq(sink.phase, SINK_BOOT);
	sink_forget(&sink);
	fill(a, 0x11, 8192, 8);
	sink_service(&sink, &supply);
	cr_expect_eq(sink.phase, SINK_BOOT);
	cr_expect_eq(count('r'), 0, "no reseed while the CRNG is not ready");
	ready_after_bits = 0;
	fill(b, 0x22, 8192, 8);
	sink_service(&sink, &supply);
	cr_expect_eq(sink.phase, SINK_STEADY);
	cr_expect_eq(count('r'), 1, "one reseed for the refill (the CRNG was not ready at start)");
	cr_expect_eq(calls[ncalls - 1].what, 'r');
	cr_expect_eq(sink.refills, 1);
}

static void
ignore_event(int fd, short what, void *arg)
{
}

/* A stream sink: bytes taken but not yet written are wiped, counted, never written. */
Test(sink, forget_drops_a_batch_not_yet_sent)
{
	static const uint8_t stale[100] = { 'S' };
	size_t i;

	/* A batch is sent before each service returns; one left over is forgotten all the same. */
	cr_assert_eq(feedproto_batch_add(&sink.batch, stale, sizeof stale, 8), 0);
	cr_expect_eq(sink_forget(&sink), sizeof stale);
	cr_expect_eq(sink.batch.segments, 0);
	for (i = 0; i < sizeof sink.batch.payload; i++)
		cr_assert_eq(sink.batch.payload[i], 0, "the batch is wiped");
	sink_service(&sink, &supply);
	for (i = 0; i < ncalls; i++)
		cr_expect(calls[i].what != 'a' || calls[i].len != sizeof stale,
		    "the forgotten step never reaches the kernel");
}

Test(sink, forget_drops_what_a_stream_sink_has_not_written)
{
	struct event_base *base = event_base_new();
	uint8_t out[65536];
	int p[2];
	size_t pending, i;
	ssize_t n, got = 0;

	cr_assert_not_null(base);
	cr_assert_eq(pipe2(p, O_NONBLOCK), 0);
	cr_assert_eq(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	sink.kind = SINK_FILE;
	sink.fd = p[1];
	sink.nonblocking = true;
	sink_attach(&sink, base, ignore_event);
	refill(none, 0, 0);
	refill(b, 0, 0);
	refill(a, 'O', 8192);
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	pending = sink.pending_len - sink.pending_off;
	cr_assert_eq(pending, 8192 - 4096, "the pipe took a page, the rest waits");
	cr_expect_eq(sink_forget(&sink), pending);
	cr_expect_eq(sink.pending_len, 0);
	for (i = 0; i < sizeof sink.pending; i++)
		cr_assert_eq(sink.pending[i], 0, "the pending buffer is wiped");
	while ((n = read(p[0], out + got, sizeof out - (size_t)got)) > 0)
		got += n;
	cr_assert_eq(got, 4096);
	refill(a, 'N', 1000);
	cr_assert_eq(sink_service(&sink, &supply), SINK_OK);
	got = read(p[0], out, sizeof out);
	cr_assert_eq(got, 1000, "only the fresh bytes follow");
	for (i = 0; i < 1000; i++)
		cr_assert_eq(out[i], 'N');
	event_free(sink.ev_write);
	sink.ev_write = NULL;
	close(p[0]);
	close(p[1]);
	event_base_free(base);
}
