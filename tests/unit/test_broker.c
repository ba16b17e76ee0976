/* SPDX-License-Identifier: MIT */
/*
 * The EGD broker's rules, with a fake supply of pipelines and clients on
 * socket pairs: outputs of twice their bits of credited input, only from
 * sources the kernel may take from, within the share; round robin; the
 * rate; every byte to one client and wiped; a slow or vanished client.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/event.h>
#include <gcrypt.h>

#include "broker.h"
#include "options.h"

#define NFAKE 3

/* The fake supply: NFAKE pipelines, each the kernel may take from or not. */
static struct pipeline fake_pipe[NFAKE];
static bool fake_ok[NFAKE];
static uint64_t fake_clock_ns;
static unsigned wakes;
static struct event_base *base;
static struct config cfg;
static char dir[64];

static struct pipeline *
fake_next(void *ctx, struct pipeline *prev, bool *kernel_ok)
{
	size_t i = prev == NULL ? 0 : (size_t)(prev - fake_pipe) + 1;

	if (i >= NFAKE)
		return NULL;
	*kernel_ok = fake_ok[i];
	return &fake_pipe[i];
}

static const struct sink_supply supply = { .next = fake_next };

static uint64_t
fake_clock(void)
{
	return fake_clock_ns;
}

static void
fake_wake(void)
{
	wakes++;
}

/* Put n conditioned bytes carrying bits_per_byte each into pipeline i, as its conditioner would. */
static void
produce(int i, const uint8_t *buf, size_t n, unsigned bits_per_byte)
{
	reserve_put(&fake_pipe[i].reserve, buf, n, (uint64_t)n * bits_per_byte);
	fake_pipe[i].count.bytes_conditioned += n;
}

/* n bytes no test could guess. */
static void
noise(uint8_t *buf, size_t n)
{
	gcry_randomize(buf, n, GCRY_STRONG_RANDOM);
}

/* Fill pipeline i with random bytes at 8 bits a byte, n of them. */
static void
produce_noise(int i, size_t n)
{
	uint8_t *buf = malloc(n);

	noise(buf, n);
	produce(i, buf, n, 8);
	free(buf);
}

static void
setup(void)
{
	int i;

	condition_global_init();
	for (i = 0; i < NFAKE; i++) {
		pipeline_init(&fake_pipe[i], false, 8, 8.0);
		fake_ok[i] = true;
	}
	fake_clock_ns = 1000000000u;
	wakes = 0;
	broker_set_clock(fake_clock);
}

static void
teardown(void)
{
	int i;

	broker_stop();
	if (base != NULL)
		event_base_free(base);
	base = NULL;
	options_free(&cfg);
	if (dir[0] != '\0') {
		char path[96];

		snprintf(path, sizeof path, "%s/egd.sock", dir);
		unlink(path);
		rmdir(dir);
		dir[0] = '\0';
	}
	for (i = 0; i < NFAKE; i++)
		pipeline_free(&fake_pipe[i]);
	broker_set_clock(NULL);
}

TestSuite(draw, .init = setup, .fini = teardown);
TestSuite(broker, .init = setup, .fini = teardown);

/* SHA-256 of len bytes. */
static void
sha256(uint8_t out[32], const uint8_t *buf, size_t len)
{
	gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf, len);
}

/* Whether len bytes are all zero. */
static bool
all_zero(const uint8_t *buf, size_t len)
{
	while (len-- > 0)
		if (buf[len] != 0)
			return false;
	return true;
}

Test(draw, an_output_needs_twice_its_bits_of_credited_input)
{
	struct broker_draw d;
	uint8_t in[64], out[32], want[32];

	broker_draw_init(&d, 100);
	noise(in, sizeof in);
	produce(0, in, 63, 8);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 0, "504 bits make no output");
	cr_assert_eq(fake_pipe[0].reserve.len, 63, "and nothing is taken");
	produce(0, in + 63, 1, 8);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 32);
	sha256(want, in, 64);
	cr_assert_arr_eq(out, want, 32, "the output is SHA-256 of the 64 bytes carrying 512 bits");
	cr_assert_eq(d.bits_drawn, 512);
	cr_assert_eq(fake_pipe[0].reserve.len, 0);
	cr_assert(all_zero(d.input, BROKER_DRAW_INPUT_MAX_BYTES), "the input is wiped");
	cr_assert(all_zero(d.output, 32), "the output is wiped where it was made");
	broker_draw_free(&d);
}

Test(draw, capped_credit_takes_more_input)
{
	struct broker_draw d;
	uint8_t in[128], out[32], want[32];

	broker_draw_init(&d, 100);
	noise(in, sizeof in);
	/* -e 4: each conditioned byte carries 4 bits. */
	produce(0, in, 127, 4);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 0);
	produce(0, in + 127, 1, 4);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 32);
	sha256(want, in, 128);
	cr_assert_arr_eq(out, want, 32);
	broker_draw_free(&d);
}

Test(draw, only_sources_the_kernel_may_take_from)
{
	struct broker_draw d;
	uint8_t in[4096], out[32];

	broker_draw_init(&d, 100);
	noise(in, sizeof in);
	fake_ok[0] = false;   /* suspended, or not credited */
	produce(0, in, sizeof in, 8);
	produce(1, in, sizeof in, 0); /* an uncredited source's output */
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 0);
	cr_assert_eq(fake_pipe[0].reserve.len, sizeof in, "untouched");
	cr_assert_eq(fake_pipe[1].reserve.len, sizeof in, "untouched");
	cr_assert_eq(broker_draw_ready(&d, &supply), 0);
	broker_draw_free(&d);
}

Test(draw, an_output_may_span_reserves)
{
	struct broker_draw d;
	uint8_t in[64], out[32], want[32];

	broker_draw_init(&d, 100);
	noise(in, sizeof in);
	produce(0, in, 32, 8);
	produce(1, in + 32, 32, 8);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 32);
	sha256(want, in, 64);
	cr_assert_arr_eq(out, want, 32);
	broker_draw_free(&d);
}

Test(draw, each_byte_is_given_once_in_order)
{
	struct broker_draw d;
	uint8_t in[128], out[64], want[32];

	broker_draw_init(&d, 100);
	noise(in, sizeof in);
	produce(0, in, sizeof in, 8);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 10), 10);
	cr_assert_eq(broker_draw_give(&d, &supply, out + 10, 54), 54);
	sha256(want, in, 64);
	cr_assert_arr_eq(out, want, 32);
	sha256(want, in + 64, 64);
	cr_assert_arr_eq(out + 32, want, 32);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 1), 0, "nothing is given twice");
	cr_assert_eq(d.bytes_given, 64);
	broker_draw_free(&d);
}

Test(draw, the_share_of_what_the_sources_condition)
{
	struct broker_draw d;
	uint8_t out[4096];
	size_t got = 0, n;

	broker_draw_init(&d, 50);
	broker_draw_accrue(&d, &supply); /* what was conditioned before does not count */
	produce_noise(0, 8192);
	while ((n = broker_draw_give(&d, &supply, out, 32)) > 0)
		got += n;
	cr_assert_leq(d.bytes_drawn, 4096, "at most half of the 8192 bytes conditioned "
	    "(took %llu)", (unsigned long long)d.bytes_drawn);
	cr_assert_geq(d.bytes_drawn, 4096 - 64, "and about that much");
	cr_assert_eq(got, d.bytes_drawn / 2);
	cr_assert_eq(fake_pipe[0].reserve.len, 8192 - d.bytes_drawn, "the rest stays for the sink");
	/* No more conditioned: nothing more, however much the reserve holds. */
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 0);
	produce_noise(0, 512);
	cr_assert_eq(broker_draw_give(&d, &supply, out, 256), 128);
	broker_draw_free(&d);
}

Test(draw, the_share_banks_a_bounded_allowance)
{
	struct broker_draw d;
	uint8_t out[32];
	int i;

	broker_draw_init(&d, 25);
	broker_draw_accrue(&d, &supply);
	/* The sink took all of a lot of output: the allowance is capped. */
	for (i = 0; i < 20; i++) {
		produce_noise(0, 16384);
		broker_draw_accrue(&d, &supply);
		reserve_clear(&fake_pipe[0].reserve);
	}
	produce_noise(0, 16384);
	produce_noise(1, 16384);
	while (broker_draw_give(&d, &supply, out, 32) > 0)
		continue;
	cr_assert_leq(d.bytes_drawn, BROKER_DRAW_BANK_BYTES / 4, "took %llu",
	    (unsigned long long)d.bytes_drawn);
	cr_assert_geq(d.bytes_drawn, BROKER_DRAW_BANK_BYTES / 4 - 64);
	broker_draw_free(&d);
}

Test(draw, a_source_joining_brings_no_allowance)
{
	struct broker_draw d;
	uint8_t out[32];

	broker_draw_init(&d, 50);
	fake_ok[1] = false;
	broker_draw_accrue(&d, &supply);
	/* Conditioned while suspended, then back: its old count is no new output. */
	produce_noise(1, 16384);
	fake_ok[1] = true;
	cr_assert_eq(broker_draw_give(&d, &supply, out, 32), 0);
	broker_draw_free(&d);
}

Test(draw, the_stock_and_its_wipe)
{
	struct broker_draw d;

	broker_draw_init(&d, 100);
	produce_noise(0, 16384);
	cr_assert(broker_draw_fill(&d, &supply));
	cr_assert_geq(d.stock.len, BROKER_DRAW_STOCK_BYTES);
	cr_assert_eq(broker_draw_ready(&d, &supply), d.stock.len + fake_pipe[0].reserve.len / 2,
	    "ready: the stock and what the reserve can make");
	cr_assert_eq(broker_draw_forget(&d), BROKER_DRAW_STOCK_BYTES);
	cr_assert_eq(d.stock.len, 0);
	cr_assert(all_zero(d.stock.ring, RESERVE_CAPACITY), "the stock is wiped");
	reserve_clear(&fake_pipe[0].reserve);
	cr_assert_not(broker_draw_fill(&d, &supply), "no input: the stock stays short");
	broker_draw_free(&d);
}

/* --- the broker, its clients on socket pairs -------------------------------- */

/* Start the broker with these options after the socket's. */
static void
start(const char *rate, const char *share)
{
	char path[96], err[256];
	char *argv[] = { "entropyd", "--egd-socket", path, "--egd-rate", (char *)rate,
		"--egd-share", (char *)share, NULL };
	const char *tmpdir = getenv("TMPDIR");

	/* A Unix socket's path is short: TMPDIR when it leaves room. */
	if (tmpdir == NULL || tmpdir[0] == '\0' || strlen(tmpdir) > 40)
		tmpdir = "/tmp";
	snprintf(dir, sizeof dir, "%s/test_broker.XXXXXX", tmpdir);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/egd.sock", dir);
	cr_assert_eq(options_parse(&cfg, 7, argv, err, sizeof err), 0, "%s", err);
	base = event_base_new();
	cr_assert_eq(broker_start(base, &cfg, &supply, fake_wake), 0);
	cr_assert_not_null(broker_get());
}

/* A client on a socket pair: the broker's end is added, the test's returned. */
static int
connect_client(const char *name, struct broker_client **c)
{
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	*c = broker_client_add(sv[0], name, "test", true);
	return sv[1];
}

/* Turn the loop until it has nothing more to do now. */
static void
run(void)
{
	int i;

	for (i = 0; i < 50; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* Append what the test's end can read to buf (at most cap in all); returns the new length. */
static size_t
drain(int fd, uint8_t *buf, size_t len, size_t cap)
{
	ssize_t n;

	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	return len;
}

/* Whether a and b have a 16-byte window in common. */
static bool
share_window(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t i, j;

	for (i = 0; i + 16 <= alen; i++)
		for (j = 0; j + 16 <= blen; j++)
			if (memcmp(a + i, b + j, 16) == 0)
				return true;
	return false;
}

Test(broker, every_command_answered)
{
	struct broker_client *c;
	uint8_t buf[512];
	size_t len;
	int fd;

	start("0", "100");
	produce_noise(0, 4096);
	fd = connect_client("guest", &c);
	cr_assert_eq(write(fd, "\x00", 1), 1);
	run();
	len = drain(fd, buf, 0, sizeof buf);
	cr_assert_eq(len, 4);
	cr_assert_eq(((uint32_t)buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3]), 2048,
	    "available: what 4096 conditioned bytes make");
	cr_assert_eq(write(fd, "\x01\x10\x02\x21\x04", 5), 5);
	run();
	len = drain(fd, buf, 0, sizeof buf);
	cr_assert_eq(buf[0], 16, "non-blocking read: a length byte");
	cr_assert_eq(len, 1 + 16 + 0x21 + 1 + (size_t)buf[1 + 16 + 0x21]);
	cr_assert_eq(buf[1 + 16 + 0x21], (uint8_t)snprintf(NULL, 0, "%ld", (long)getpid()));
	cr_assert_eq(c->tally->requests[EGD_AVAILABLE], 1);
	cr_assert_eq(c->tally->requests[EGD_READ_NONBLOCKING], 1);
	cr_assert_eq(c->tally->requests[EGD_READ_BLOCKING], 1);
	cr_assert_eq(c->tally->requests[EGD_PID], 1);
	cr_assert_eq(c->bytes_served, 16 + 0x21);
	cr_assert(all_zero(c->out, sizeof c->out), "what was sent is wiped");
	close(fd);
}

Test(broker, invalid_requests_and_writes_close_only_their_connection)
{
	static const struct { const char *bytes; size_t len; } bad[] = {
		{ "\x05", 1 }, { "\xff\x10", 2 }, { "\x01\x00", 2 }, { "\x02\x00", 2 },
		{ "\x03\x00\x08\x01x", 5 },
	};
	struct broker_client *c, *good;
	uint8_t buf[64];
	size_t i, len;
	int fd, gfd;

	start("0", "100");
	produce_noise(0, 8192);
	gfd = connect_client("good", &good);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		fd = connect_client("bad", &c);
		cr_assert_eq(write(fd, bad[i].bytes, bad[i].len), (ssize_t)bad[i].len);
		run();
		cr_assert_eq(read(fd, buf, sizeof buf), 0, "request %zu: closed, nothing sent", i);
		close(fd);
	}
	cr_assert_eq(broker_get()->nclients, 1);
	cr_assert_eq(broker_get()->refused[BROKER_REFUSED_INVALID], 4);
	cr_assert_eq(broker_get()->refused[BROKER_REFUSED_WRITE], 1);
	cr_assert_eq(write(gfd, "\x02\x20", 2), 2);
	run();
	len = drain(gfd, buf, 0, sizeof buf);
	cr_assert_eq(len, 32, "the other client is served");
	close(gfd);
}

Test(broker, waiting_clients_are_served_round_robin)
{
	struct broker_client *c[3];
	uint8_t got[3][255];
	size_t len[3] = { 0 }, total = 0, lo = 255, hi = 0;
	int fd[3], i, j;

	start("0", "100");
	/* 12 outputs for three clients asking 255 bytes each. */
	produce_noise(0, 12 * 64);
	for (i = 0; i < 3; i++) {
		fd[i] = connect_client(i == 0 ? "a" : i == 1 ? "b" : "c", &c[i]);
		cr_assert_eq(write(fd[i], "\x02\xff", 2), 2);
	}
	run();
	for (i = 0; i < 3; i++) {
		len[i] = drain(fd[i], got[i], 0, sizeof got[i]);
		total += len[i];
		lo = len[i] < lo ? len[i] : lo;
		hi = len[i] > hi ? len[i] : hi;
	}
	cr_assert_eq(total, 12 * 32, "every byte made went to a client");
	cr_assert_leq(hi - lo, BROKER_CHUNK_BYTES, "shared round robin: %zu %zu %zu", len[0],
	    len[1], len[2]);
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			cr_assert_not(share_window(got[i], len[i], got[j], len[j]),
			    "clients %d and %d got the same bytes", i, j);
	cr_assert_eq(broker_get()->nwaiting, 3);
	cr_assert(broker_hungry(), "they wait: the sources must be read on");
	run();
	cr_assert_geq(wakes, 1, "the engine was told");
	/* More conditioned: the engine feeds and the broker serves. */
	produce_noise(1, 16384);
	broker_service();
	run();
	for (i = 0; i < 3; i++)
		cr_assert_eq(drain(fd[i], got[i], len[i], sizeof got[i]), 255);
	cr_assert_eq(broker_get()->nwaiting, 0);
	for (i = 0; i < 3; i++)
		close(fd[i]);
}

Test(broker, each_client_within_its_rate)
{
	struct broker_client *c;
	uint8_t got[1024];
	size_t len;
	int fd, t;

	start("100", "100");
	produce_noise(0, 16384);
	fd = connect_client("slow", &c);
	cr_assert_eq(write(fd, "\x02\xff\x02\xff", 4), 4);
	run();
	len = drain(fd, got, 0, sizeof got);
	cr_assert_eq(len, 96, "a second's burst in whole chunks: %zu", len);
	cr_assert(evtimer_pending(broker_get()->ev_rate, NULL), "a timer for its next chunk");
	cr_assert_not(broker_hungry(), "held by its rate, it wants no reading");
	/* Each half second of the clock: at most 50 bytes more, and never more than it may. */
	for (t = 1; t <= 10; t++) {
		fake_clock_ns += 500000000u;
		broker_service();
		run();
		len = drain(fd, got, len, sizeof got);
		cr_assert_leq(len, 100 + 50 * (size_t)t, "after %d.%d s: %zu bytes", t / 2,
		    t % 2 * 5, len);
		cr_assert_geq(len + BROKER_CHUNK_BYTES, 100 + 50 * (size_t)t < 510 ?
		    100 + 50 * (size_t)t : 510, "and about that much: %zu", len);
	}
	cr_assert_eq(len, 510, "both reads answered whole");
	close(fd);
}

Test(broker, a_slow_reader_holds_one_reply_and_a_vanished_one_loses_it)
{
	struct broker_client *slow, *other;
	uint8_t unsent[BROKER_OUT_BYTES], got[8192], req[512];
	size_t nunsent = 0, len = 0, i;
	int sfd, ofd, round, sndbuf = 1;

	start("0", "100");
	sfd = connect_client("slow", &slow);
	ofd = connect_client("other", &other);
	setsockopt(slow->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
	for (i = 0; i < sizeof req; i += 2) {
		req[i] = 0x02;
		req[i + 1] = 0xff;
	}
	/* The slow client asks and asks, and never reads. */
	for (round = 0; round < 200 && slow->out_off == slow->out_len; round++) {
		(void)!write(sfd, req, sizeof req);
		for (i = 0; i < NFAKE; i++)
			if (fake_pipe[i].reserve.len < 1024)
				produce_noise((int)i, 8192);
		broker_service();
		run();
	}
	cr_assert_lt(slow->out_off, slow->out_len, "its reply waits for it to read");
	nunsent = slow->out_len - slow->out_off;
	memcpy(unsent, slow->out + slow->out_off, nunsent);
	/* Meanwhile another client is served. */
	cr_assert_eq(write(ofd, "\x02\xff\x02\xff", 4), 4);
	broker_service();
	run();
	len = drain(ofd, got, 0, sizeof got);
	cr_assert_eq(len, 510, "the other client is not held up");
	/* The slow one goes away: its unsent bytes are wiped, and never given again. */
	close(sfd);
	for (round = 0; round < 10 && broker_get()->nclients > 1; round++)
		run();
	cr_assert_eq(broker_get()->nclients, 1);
	for (round = 0; round < 10; round++) {
		cr_assert_eq(write(ofd, "\x02\xff", 2), 2);
		broker_service();
		run();
		len = drain(ofd, got, len, sizeof got);
	}
	cr_assert_eq(len, 510 + 10 * 255);
	cr_assert_not(share_window(unsent, nunsent, got, len));
	close(ofd);
}

Test(broker, a_vm_generation_change_wipes_what_was_made)
{
	struct broker_client *c;
	uint8_t got[512];
	size_t len;
	int fd;

	start("0", "100");
	produce_noise(0, 16384);
	fd = connect_client("guest", &c);
	cr_assert_eq(write(fd, "\x02\x20", 2), 2);
	run();
	cr_assert_eq(drain(fd, got, 0, sizeof got), 32);
	cr_assert_geq(broker_get()->draw.stock.len, BROKER_DRAW_STOCK_BYTES);
	reserve_clear(&fake_pipe[0].reserve);
	cr_assert_geq(broker_forget(), BROKER_DRAW_STOCK_BYTES);
	cr_assert_eq(broker_get()->draw.stock.len, 0);
	/* Nothing from before is left to give: a read waits for fresh input. */
	cr_assert_eq(write(fd, "\x02\x20", 2), 2);
	run();
	len = drain(fd, got, 0, sizeof got);
	cr_assert_eq(len, 0);
	produce_noise(0, 64);
	broker_service();
	run();
	cr_assert_eq(drain(fd, got, 0, sizeof got), 32);
	close(fd);
}
