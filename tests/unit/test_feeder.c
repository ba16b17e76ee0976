/* SPDX-License-Identifier: MIT */
/*
 * The feeder: the ceiling it enforces, one request at a time on a real
 * socket, and the whole loop in a child process with this test playing the
 * supervisor and the workers. The kernel ops record what would have been
 * issued, in shared memory, so a feeder in a child process records too.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "feeder.h"
#include "msg.h"

/* What the kernel was asked, in order. */
struct record {
	char what;         /* 'a' add, 'm' mix, 'r' reseed */
	uint32_t len;
	uint32_t credit;
	uint8_t first;     /* the first byte, to tell frames apart */
};

struct journal {
	unsigned n;
	struct record r[512];
	int crng_ready;
	int avail;
	int fail_errno;    /* make every kernel call fail with this */
	unsigned fail_from; /* nonzero: adds fail with EIO once this many calls were made */
};

static struct journal *j;

static int
rec_add(struct feeder *f, const uint8_t *buf, size_t len, unsigned credit)
{
	if (j->fail_errno != 0 || (j->fail_from != 0 && j->n >= j->fail_from)) {
		errno = j->fail_errno != 0 ? j->fail_errno : EIO;
		return -1;
	}
	if (j->n < sizeof j->r / sizeof j->r[0])
		j->r[j->n] = (struct record){ 'a', (uint32_t)len, credit, len > 0 ? buf[0] : 0 };
	j->n++;
	return 0;
}

static int
rec_mix(struct feeder *f, const uint8_t *buf, size_t len)
{
	if (j->n < sizeof j->r / sizeof j->r[0])
		j->r[j->n] = (struct record){ 'm', (uint32_t)len, 0, len > 0 ? buf[0] : 0 };
	j->n++;
	return 0;
}

static int
rec_reseed(struct feeder *f)
{
	if (j->n < sizeof j->r / sizeof j->r[0])
		j->r[j->n] = (struct record){ 'r', 0, 0, 0 };
	j->n++;
	return 0;
}

static int
rec_crng_ready(struct feeder *f)
{
	return j->crng_ready;
}

static int
rec_entropy_avail(struct feeder *f)
{
	return j->avail;
}

static const struct feeder_kernel_ops recording = {
	.add = rec_add, .mix = rec_mix, .reseed = rec_reseed,
	.crng_ready = rec_crng_ready, .entropy_avail = rec_entropy_avail,
};

static struct feeder feeder;
static uint8_t frame[FEEDPROTO_MAX_FRAME + 1024], answer[FEEDPROTO_MAX_FRAME];
static uint8_t data[FEEDPROTO_MAX_PAYLOAD];

static void
setup(void)
{
	j = mmap(NULL, sizeof *j, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(j != MAP_FAILED);
	memset(j, 0, sizeof *j);
	feeder_init(&feeder, &recording);
	memset(data, 0x5a, sizeof data);
}

TestSuite(feeder, .init = setup);

/*
 * A frame as a sender writes it, with len bytes of data; an ADD of one
 * segment, credited arg0 bits. Its length, 0 if it would be refused.
 */
static size_t
encode(enum feedproto_type t, uint32_t arg0, size_t len)
{
	struct feedproto_batch b = { 0 };

	if (t != FEEDPROTO_ADD)
		return feedproto_encode(frame, sizeof frame, t, arg0, 0, data, len);
	if (feedproto_batch_add(&b, data, len, arg0) == -1)
		return 0;
	return feedproto_encode(frame, sizeof frame, t, b.segments, 0, b.payload, b.len);
}

/* encode(), which must succeed; a hostile frame is built by hand below. */
static size_t
frame_of(enum feedproto_type t, uint32_t arg0, size_t len)
{
	size_t n = encode(t, arg0, len);

	cr_assert_gt(n, 0, "type %d", t);
	return n;
}

/* A header with any fields at all, and len bytes after it. */
static size_t
hostile(uint16_t type, uint32_t payload_len, uint32_t arg0, uint32_t arg1, size_t len)
{
	uint32_t w[3] = { payload_len, arg0, arg1 };
	int i;

	memset(frame, 0, FEEDPROTO_HEADER_BYTES);
	frame[0] = (uint8_t)type;
	frame[1] = (uint8_t)(type >> 8);
	for (i = 0; i < 12; i++)
		frame[4 + i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
	memset(frame + FEEDPROTO_HEADER_BYTES, 0x33, len);
	return FEEDPROTO_HEADER_BYTES + len;
}

/*
 * An ADD of one segment whose header says seg_len bytes and credit bits,
 * followed by bytes bytes, as a hostile worker could write it.
 */
static size_t
hostile_segment(uint32_t seg_len, uint32_t credit, size_t bytes)
{
	uint32_t w[2] = { seg_len, credit };
	size_t n = hostile(FEEDPROTO_ADD, (uint32_t)(FEEDPROTO_SEGMENT_HEADER_BYTES + bytes), 1, 0,
	    FEEDPROTO_SEGMENT_HEADER_BYTES + bytes);
	int i;

	for (i = 0; i < 8; i++)
		frame[FEEDPROTO_HEADER_BYTES + i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
	return n;
}

/* Hand a frame to the feeder; the refusal (or OK) and the answer's status and state. */
static enum feedproto_refusal
handle(size_t len, bool truncated, int *status, struct feedproto_state *st)
{
	struct feedproto_frame a;
	size_t alen;
	enum feedproto_refusal r = feeder_handle(&feeder, frame, len, truncated, answer, &alen);

	if (r != FEEDPROTO_OK) {
		cr_expect_eq(alen, 0, "a refused frame gets no answer");
		return r;
	}
	cr_assert_eq(feedproto_decode(answer, alen, false, &a), FEEDPROTO_OK);
	cr_assert_eq(a.type, FEEDPROTO_ANSWER);
	if (status != NULL)
		*status = (int)a.arg0;
	if (st != NULL)
		feedproto_answer_state(&a, st);
	return r;
}

Test(feeder, an_add_within_the_ceiling_reaches_the_kernel)
{
	int status = -1;

	data[0] = 7;
	cr_assert_eq(handle(frame_of(FEEDPROTO_ADD, 512, 64), false, &status, NULL), FEEDPROTO_OK);
	cr_expect_eq(status, 0);
	cr_assert_eq(j->n, 1);
	cr_expect_eq(j->r[0].what, 'a');
	cr_expect_eq(j->r[0].len, 64);
	cr_expect_eq(j->r[0].credit, 512);
	cr_expect_eq(j->r[0].first, 7);
	/* The largest: 4088 bytes at 8 bits each. */
	cr_assert_eq(handle(frame_of(FEEDPROTO_ADD, 8 * 4088, 4088), false, NULL, NULL),
	    FEEDPROTO_OK);
	cr_expect_eq(j->r[1].credit, 8 * 4088);
	cr_expect_eq(feeder.state.adds, 2);
	cr_expect_eq(feeder.state.bits_credited, 512 + 8 * 4088);
}

/* An ADD's answer carries the feeder's counters: the worker's copy stays current without a QUERY. */
Test(feeder, an_add_answer_carries_the_counters)
{
	struct feedproto_state st;
	int status = -1;

	feeder.state.worker_restarts = 2;
	cr_assert_eq(handle(frame_of(FEEDPROTO_ADD, 512, 64), false, &status, &st), FEEDPROTO_OK);
	cr_expect_eq(status, 0);
	cr_expect_eq(st.adds, 1);
	cr_expect_eq(st.bits_credited, 512);
	cr_expect_eq(st.worker_restarts, 2);
}

/* An ADD of three segments, the first bytes 1, 2, 3. */
static size_t
three_segments(void)
{
	struct feedproto_batch b = { 0 };
	uint8_t i;

	for (i = 1; i <= 3; i++) {
		memset(data, i, 100);
		cr_assert_eq(feedproto_batch_add(&b, data, 10u * i, 8u * 10u * i), 0);
	}
	return feedproto_encode(frame, sizeof frame, FEEDPROTO_ADD, b.segments, 0, b.payload, b.len);
}

Test(feeder, each_segment_of_an_add_is_one_call_in_order)
{
	int status = -1;
	unsigned i;

	cr_assert_eq(handle(three_segments(), false, &status, NULL), FEEDPROTO_OK);
	cr_expect_eq(status, 0);
	cr_assert_eq(j->n, 3);
	for (i = 0; i < 3; i++) {
		cr_expect_eq(j->r[i].what, 'a');
		cr_expect_eq(j->r[i].len, 10 * (i + 1));
		cr_expect_eq(j->r[i].credit, 80 * (i + 1));
		cr_expect_eq(j->r[i].first, i + 1, "segment %u in its place", i);
	}
	cr_expect_eq(feeder.state.adds, 3, "one call each");
	cr_expect_eq(feeder.state.bits_credited, 80 + 160 + 240);
}

Test(feeder, a_failed_segment_ends_the_add_counting_what_was_done)
{
	int status = 0;

	j->fail_from = 1; /* the second call fails */
	cr_assert_eq(handle(three_segments(), false, &status, NULL), FEEDPROTO_OK);
	cr_expect_eq(status, EIO, "the answer carries the failed call's errno");
	cr_expect_eq(j->n, 1, "the third segment was not tried");
	cr_expect_eq(feeder.state.adds, 1);
	cr_expect_eq(feeder.state.bits_credited, 80, "only the first segment was credited");
}

Test(feeder, refused_frames_never_reach_the_kernel)
{
	static const struct {
		uint16_t type;
		uint32_t payload_len, arg0, arg1;
		size_t len;
		bool truncated;
		enum feedproto_refusal why;
	} bad[] = {
		{ FEEDPROTO_MIX, 64, 1, 0, 64, false, FEEDPROTO_CREDIT },
		{ FEEDPROTO_ADD, 4097, 8, 0, 4097, false, FEEDPROTO_OVERSIZED },
		{ FEEDPROTO_ADD, 64, 512, 0, 64, true, FEEDPROTO_OVERSIZED },
		{ FEEDPROTO_ADD, 64, 512, 0, 60, false, FEEDPROTO_MALFORMED },
		{ FEEDPROTO_ADD, 60, 480, 0, 64, false, FEEDPROTO_MALFORMED },
		{ FEEDPROTO_ADD, 64, 512, 1, 64, false, FEEDPROTO_MALFORMED },
		/* Header fields right, segments not: 0x33333333 bytes, or no segment. */
		{ FEEDPROTO_ADD, 64, 1, 0, 64, false, FEEDPROTO_MALFORMED },
		{ FEEDPROTO_ADD, 0, 1, 0, 0, false, FEEDPROTO_MALFORMED },
		{ FEEDPROTO_RESEED, 0, 1, 0, 0, false, FEEDPROTO_MALFORMED },
		{ 99, 0, 0, 0, 0, false, FEEDPROTO_UNKNOWN_TYPE },
		/* The supervisor's words and the feeder's own are not a worker's. */
		{ FEEDPROTO_STARTED, 0, 1234, 0, 0, false, FEEDPROTO_UNKNOWN_TYPE },
		{ FEEDPROTO_KILL, 0, 1234, 0, 0, false, FEEDPROTO_UNKNOWN_TYPE },
		{ FEEDPROTO_ANSWER, 0, 0, 0, 0, false, FEEDPROTO_UNKNOWN_TYPE },
		/* Hooks are asked of the supervisor, on another socket: never of the feeder. */
		{ FEEDPROTO_HOOKS, 24, 0, 0, 24, false, FEEDPROTO_UNKNOWN_TYPE },
	};
	/* Segments claiming more than 8 bits a byte: length, credit, bytes sent. */
	static const struct {
		uint32_t seg_len, credit;
		size_t bytes;
		enum feedproto_refusal why;
	} greedy[] = {
		{ 64, 513, 64, FEEDPROTO_CREDIT },
		{ 1, 9, 1, FEEDPROTO_CREDIT },
		{ 0, 1, 0, FEEDPROTO_MALFORMED }, /* an empty segment, credited */
		{ 4088, 0xffffffffu, 4088, FEEDPROTO_CREDIT },
		{ 4089, 8, 4089, FEEDPROTO_OVERSIZED },
		{ 65, 8, 64, FEEDPROTO_MALFORMED }, /* longer than what follows */
	};
	uint32_t expect[FEEDPROTO_NREFUSALS] = { 0 };
	size_t i, n;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		n = hostile(bad[i].type, bad[i].payload_len, bad[i].arg0, bad[i].arg1, bad[i].len);
		cr_expect_eq(handle(n, bad[i].truncated, NULL, NULL), bad[i].why, "case %zu", i);
		expect[bad[i].why]++;
	}
	for (i = 0; i < sizeof greedy / sizeof greedy[0]; i++) {
		n = hostile_segment(greedy[i].seg_len, greedy[i].credit, greedy[i].bytes);
		cr_expect_eq(handle(n, false, NULL, NULL), greedy[i].why, "segment case %zu", i);
		expect[greedy[i].why]++;
	}
	/* A header cut short. */
	hostile(FEEDPROTO_ADD, 0, 0, 0, 0);
	cr_expect_eq(handle(7, false, NULL, NULL), FEEDPROTO_MALFORMED);
	expect[FEEDPROTO_MALFORMED]++;
	cr_expect_eq(j->n, 0, "nothing was passed to the kernel");
	for (i = FEEDPROTO_MALFORMED; i < FEEDPROTO_NREFUSALS; i++)
		cr_expect_eq(feeder.state.refused[i], expect[i], "%s",
		    feedproto_refusal_name((enum feedproto_refusal)i));
	cr_expect_eq(feeder.state.bits_credited, 0);
}

Test(feeder, a_flood_of_bad_frames_is_refused_and_counted)
{
	const unsigned n = 100000;
	unsigned i;
	uint64_t total = 0;
	int r;

	for (i = 0; i < n; i++) {
		size_t len;

		switch (i % 4) {
		case 0: len = hostile_segment(64, 64 * 8 + 1 + i, 64); break;
		case 1: len = hostile(FEEDPROTO_ADD, 128, 8, 0, 64); break;
		case 2: len = hostile(FEEDPROTO_MIX, 5000, 0, 0, 5000); break;
		default: len = hostile((uint16_t)(200 + i % 50), 0, 0, 0, 0); break;
		}
		cr_assert_neq(feeder_handle(&feeder, frame, len, false, answer, &(size_t){ 0 }),
		    FEEDPROTO_OK, "frame %u", i);
	}
	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		total += feeder.state.refused[r];
	cr_expect_eq(total, n);
	cr_expect_eq(feeder.state.refused[FEEDPROTO_CREDIT], n / 4);
	cr_expect_eq(feeder.state.refused[FEEDPROTO_OVERSIZED], n / 4);
	cr_expect_eq(j->n, 0, "none of the flood reached the kernel");
	/* The core keeps its head: a good frame after it is carried out. */
	cr_expect_eq(handle(frame_of(FEEDPROTO_ADD, 8, 1), false, NULL, NULL), FEEDPROTO_OK);
	cr_expect_eq(j->n, 1);
}

Test(feeder, a_failed_kernel_call_is_answered_with_its_errno)
{
	int status = 0;

	j->fail_errno = EPERM;
	cr_assert_eq(handle(frame_of(FEEDPROTO_ADD, 512, 64), false, &status, NULL), FEEDPROTO_OK);
	cr_expect_eq(status, EPERM);
	cr_expect_eq(feeder.state.adds, 0);
	cr_expect_eq(feeder.state.bits_credited, 0, "nothing failed is counted as credited");
}

Test(feeder, query_mix_reseed_and_hello)
{
	struct feedproto_state st;
	int status = -1;

	j->crng_ready = 1;
	j->avail = 256;
	cr_assert_eq(handle(hostile_segment(8, 65, 8), false, NULL, NULL), FEEDPROTO_CREDIT);
	cr_assert_eq(handle(frame_of(FEEDPROTO_MIX, 0, 260), false, &status, NULL), FEEDPROTO_OK);
	cr_expect_eq(status, 0);
	cr_assert_eq(handle(frame_of(FEEDPROTO_RESEED, 0, 0), false, &status, NULL), FEEDPROTO_OK);
	cr_assert_eq(j->n, 2);
	cr_expect_eq(j->r[0].what, 'm');
	cr_expect_eq(j->r[0].len, 260);
	cr_expect_eq(j->r[0].credit, 0);
	cr_expect_eq(j->r[1].what, 'r');
	cr_assert_eq(handle(frame_of(FEEDPROTO_QUERY, 0, 0), false, &status, &st), FEEDPROTO_OK);
	cr_expect(st.crng_ready);
	cr_expect_eq(st.entropy_avail, 256);
	cr_expect_eq(st.refused[FEEDPROTO_CREDIT], 1);
	cr_expect_not(feeder.worker_up);
	cr_assert_eq(handle(frame_of(FEEDPROTO_HELLO, 0, 0), false, &status, &st), FEEDPROTO_OK);
	cr_expect(feeder.worker_up && feeder.ever_up);
	cr_expect_eq(st.refused[FEEDPROTO_CREDIT], 1);
	memcpy(data, "2 running", 9);
	cr_expect_eq(handle(frame_of(FEEDPROTO_STATUS, 0, 9), false, NULL, NULL), FEEDPROTO_OK);
}

/* A connected pair as the daemon has it: [0] the feeder's end, [1] the worker's. */
static void
pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* Read one answer from the worker's end, or fail. */
static int
answer_status(int fd)
{
	struct feedproto_frame a;
	ssize_t n = recv(fd, answer, sizeof answer, MSG_DONTWAIT);

	cr_assert_gt(n, 0, "an answer is waiting");
	cr_assert_eq(feedproto_decode(answer, (size_t)n, false, &a), FEEDPROTO_OK);
	cr_assert_eq(a.type, FEEDPROTO_ANSWER);
	return (int)a.arg0;
}

Test(feeder, serve_answers_one_request_at_a_time)
{
	int sv[2], i;

	pair(sv);
	for (i = 0; i < 3; i++) {
		size_t n = frame_of(FEEDPROTO_ADD, 64, 8);

		cr_assert_eq(send(sv[1], frame, n, 0), (ssize_t)n);
		cr_assert_eq(feeder_serve(&feeder, sv[0]), FEEDER_SERVED);
		cr_expect_eq(answer_status(sv[1]), 0);
	}
	cr_expect_eq(j->n, 3);
	close(sv[1]);
	cr_expect_eq(feeder_serve(&feeder, sv[0]), FEEDER_WORKER_GONE);
	close(sv[0]);
}

Test(feeder, a_request_behind_an_unanswered_one_is_a_flood)
{
	int sv[2], i;

	pair(sv);
	for (i = 0; i < 2; i++) {
		size_t n = frame_of(FEEDPROTO_ADD, 512, 64);

		cr_assert_eq(send(sv[1], frame, n, 0), (ssize_t)n);
	}
	cr_expect_eq(feeder_serve(&feeder, sv[0]), FEEDER_REFUSED);
	cr_expect_eq(feeder.state.refused[FEEDPROTO_FLOOD], 1);
	cr_expect_eq(j->n, 0, "refused before the first was carried out");
	close(sv[0]);
	close(sv[1]);
}

Test(feeder, a_worker_that_does_not_read_its_answers_floods)
{
	enum feeder_served r = FEEDER_SERVED;
	int sv[2], i;

	pair(sv);
	for (i = 0; i < 100000 && r == FEEDER_SERVED; i++) {
		size_t n = frame_of(FEEDPROTO_QUERY, 0, 0);

		cr_assert_eq(send(sv[1], frame, n, 0), (ssize_t)n);
		r = feeder_serve(&feeder, sv[0]);
	}
	cr_expect_eq(r, FEEDER_REFUSED, "refused after %d unread answers", i);
	cr_expect_eq(feeder.state.refused[FEEDPROTO_FLOOD], 1);
	close(sv[0]);
	close(sv[1]);
}

Test(feeder, an_oversized_datagram_is_refused_unread)
{
	static uint8_t big[FEEDPROTO_MAX_FRAME + 100];
	int sv[2];

	pair(sv);
	memcpy(big, frame, frame_of(FEEDPROTO_ADD, 512, 64));
	cr_assert_eq(send(sv[1], big, sizeof big, 0), (ssize_t)sizeof big);
	cr_expect_eq(feeder_serve(&feeder, sv[0]), FEEDER_REFUSED);
	cr_expect_eq(feeder.state.refused[FEEDPROTO_OVERSIZED], 1);
	cr_expect_eq(j->n, 0);
	close(sv[0]);
	close(sv[1]);
}

/* --- the loop in a child process; this test is its supervisor ------------ */

/* Wait up to ms for a frame from the feeder; its type (and arg0), or 0 at the end. */
static enum feedproto_type
expect_frame(int fd, int ms, uint32_t *arg0)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct feedproto_frame f;
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	ssize_t n;

	cr_assert_eq(poll(&p, 1, ms), 1, "the feeder said something within %d ms", ms);
	n = recv(fd, buf, sizeof buf, 0);
	if (n == 0)
		return 0;
	cr_assert_eq(feedproto_decode(buf, (size_t)n, false, &f), FEEDPROTO_OK);
	if (arg0 != NULL)
		*arg0 = f.arg0;
	return f.type;
}

/* Send the feeder a frame, with a descriptor when fd is not -1. */
static void
tell(int chan, enum feedproto_type t, uint32_t arg0, uint32_t arg1, int fd)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES];
	size_t len = feedproto_encode(buf, sizeof buf, t, arg0, arg1, NULL, 0);

	cr_assert_eq(msg_send(chan, buf, len, &fd, 1), 0);
}

/* Fork the feeder's loop on the recording ops; its pid, our end in *chan. */
static pid_t
start_feeder(int *chan)
{
	int sv[2];
	pid_t pid;

	pair(sv);
	if ((pid = fork()) == 0) {
		sigset_t set;
		int sfd;

		/* A test that failed half-way must not leave its children behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(sv[1]);
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sfd = signalfd(-1, &set, 0);
		feeder_init(&feeder, &recording);
		_exit(feeder_run(&feeder, getppid(), sv[0], sfd));
	}
	cr_assert_gt(pid, 0);
	close(sv[0]);
	*chan = sv[1];
	return pid;
}

/* A worker's request and its answer (the state, when st is not NULL). */
static int
request(int fd, enum feedproto_type t, uint32_t credit, uint8_t first, size_t len,
    struct feedproto_state *st)
{
	struct feedproto_frame a;
	size_t n;
	ssize_t got;

	data[0] = first;
	if ((n = encode(t, credit, len)) == 0 || send(fd, frame, n, 0) != (ssize_t)n)
		return -1;
	got = recv(fd, answer, sizeof answer, 0);
	if (got <= 0 || feedproto_decode(answer, (size_t)got, false, &a) != FEEDPROTO_OK)
		return -1;
	if (st != NULL)
		feedproto_answer_state(&a, st);
	return (int)a.arg0;
}

/* Start a worker running body on its socket; hand the socket to the feeder. */
static pid_t
start_worker(int chan, int (*body)(int fd))
{
	int sv[2];
	pid_t pid;

	pair(sv);
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(sv[0]);
		close(chan);
		_exit(body(sv[1]));
	}
	cr_assert_gt(pid, 0);
	close(sv[1]);
	tell(chan, FEEDPROTO_STARTED, (uint32_t)pid, 0, sv[0]);
	close(sv[0]);
	return pid;
}

#define MID_FEED_FRAMES 20

/* Fork the feeder's loop, and the first worker it asks for running body. */
static pid_t
start_with_worker(int *chan, int (*body)(int fd), pid_t *worker)
{
	pid_t pid = start_feeder(chan);

	cr_assert_eq(expect_frame(*chan, 5000, NULL), FEEDPROTO_SPAWN);
	*worker = start_worker(*chan, body);
	return pid;
}

/* Feed MID_FEED_FRAMES frames, answered, then one more and die before its answer. */
static int
worker_killed_mid_feed(int fd)
{
	uint8_t i;

	if (request(fd, FEEDPROTO_HELLO, 0, 0, 0, NULL) != 0)
		return 1;
	for (i = 0; i < MID_FEED_FRAMES; i++)
		if (request(fd, FEEDPROTO_ADD, 512, i, 64, NULL) != 0)
			return 1;
	data[0] = MID_FEED_FRAMES;
	send(fd, frame, encode(FEEDPROTO_ADD, 512, 64), 0);
	raise(SIGKILL);
	return 1;
}

/* The next worker: the feeder's counters say one restart and every frame credited once. */
static int
worker_checks_the_count(int fd)
{
	struct feedproto_state st;

	if (request(fd, FEEDPROTO_HELLO, 0, 0, 0, &st) != 0)
		return 1;
	if (st.worker_restarts != 1 || st.adds != MID_FEED_FRAMES + 1 ||
	    st.bits_credited != 512u * (MID_FEED_FRAMES + 1) || st.worker_exits != 1 ||
	    !WIFSIGNALED((int)st.last_exit) || WTERMSIG((int)st.last_exit) != SIGKILL)
		return 2;
	return request(fd, FEEDPROTO_ADD, 8, 0xee, 1, NULL) == 0 ? 0 : 3;
}

Test(feeder, a_worker_killed_mid_feed_loses_nothing_and_is_restarted, .timeout = 30)
{
	int chan, status;
	pid_t feeder_pid, w;
	unsigned i;

	feeder_pid = start_with_worker(&chan, worker_killed_mid_feed, &w);
	cr_assert_eq(waitpid(w, &status, 0), w);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the worker died mid-feed");
	tell(chan, FEEDPROTO_EXITED, (uint32_t)w, (uint32_t)status, -1);
	/* After the pause (FEEDER_RESTART_MIN_MS), another worker is asked for. */
	cr_assert_eq(expect_frame(chan, 5000, NULL), FEEDPROTO_SPAWN);
	w = start_worker(chan, worker_checks_the_count);
	cr_assert_eq(waitpid(w, &status, 0), w);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the feeder's counters after the restart (worker status %#x)", status);
	/* A worker that stops cleanly stops the daemon. */
	tell(chan, FEEDPROTO_EXITED, (uint32_t)w, (uint32_t)status, -1);
	cr_assert_eq(expect_frame(chan, 5000, NULL), FEEDPROTO_STOP);
	close(chan);
	cr_assert_eq(waitpid(feeder_pid, &status, 0), feeder_pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "feeder status %#x", status);
	/* Every frame once, in order, the one sent as the worker died included. */
	cr_assert_eq(j->n, MID_FEED_FRAMES + 2);
	for (i = 0; i <= MID_FEED_FRAMES; i++) {
		cr_expect_eq(j->r[i].what, 'a');
		cr_expect_eq(j->r[i].first, i, "frame %u", i);
		cr_expect_eq(j->r[i].credit, 512);
	}
	cr_expect_eq(j->r[MID_FEED_FRAMES + 1].first, 0xee);
}

/* Say HELLO, then credit 9 bits a byte; wait to be killed. */
static int
worker_cheats(int fd)
{
	size_t n;

	if (request(fd, FEEDPROTO_HELLO, 0, 0, 0, NULL) != 0)
		return 1;
	n = hostile_segment(64, 9 * 64, 64);
	send(fd, frame, n, 0);
	pause();
	return 1;
}

/* SIGTERM: the feeder stops everything (a pending restart too) and exits 0. */
static void
stop_feeder(pid_t feeder_pid, int chan)
{
	enum feedproto_type t;
	int status;

	kill(feeder_pid, SIGTERM);
	while ((t = expect_frame(chan, 5000, NULL)) == FEEDPROTO_SPAWN)
		;
	cr_expect_eq(t, FEEDPROTO_STOP);
	close(chan);
	cr_assert_eq(waitpid(feeder_pid, &status, 0), feeder_pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "feeder status %#x", status);
}

Test(feeder, a_refused_frame_ends_the_worker, .timeout = 30)
{
	uint32_t arg0 = 0;
	int chan, status;
	pid_t feeder_pid, w;

	feeder_pid = start_with_worker(&chan, worker_cheats, &w);
	cr_assert_eq(expect_frame(chan, 5000, &arg0), FEEDPROTO_KILL);
	cr_expect_eq(arg0, (uint32_t)w, "the feeder asks for that worker's end");
	kill(w, SIGKILL);
	cr_assert_eq(waitpid(w, &status, 0), w);
	tell(chan, FEEDPROTO_EXITED, (uint32_t)w, (uint32_t)status, -1);
	stop_feeder(feeder_pid, chan);
	cr_expect_eq(j->n, 0, "the cheat never reached the kernel");
}

/* Say HELLO, credit 9 bits a byte, and exit 0 once the feeder hangs up on us. */
static int
worker_cheats_then_exits(int fd)
{
	uint8_t b;

	if (request(fd, FEEDPROTO_HELLO, 0, 0, 0, NULL) != 0)
		return 1;
	send(fd, frame, hostile_segment(64, 9 * 64, 64), 0);
	while (recv(fd, &b, 1, 0) > 0)
		;
	return 0;
}

Test(feeder, a_refused_worker_that_exits_0_is_restarted_not_obeyed, .timeout = 30)
{
	int chan, status;
	pid_t feeder_pid, w;

	feeder_pid = start_with_worker(&chan, worker_cheats_then_exits, &w);
	/* It ends by itself, cleanly, before its KILL is carried out. */
	cr_assert_eq(waitpid(w, &status, 0), w);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker status %#x", status);
	cr_assert_eq(expect_frame(chan, 5000, NULL), FEEDPROTO_KILL);
	tell(chan, FEEDPROTO_EXITED, (uint32_t)w, (uint32_t)status, -1);
	/* A clean exit would stop the daemon; this one was ended: another worker. */
	cr_expect_eq(expect_frame(chan, 5000, NULL), FEEDPROTO_SPAWN,
	    "a refused worker's exit 0 is a failure, not a stop");
	stop_feeder(feeder_pid, chan);
	cr_expect_eq(j->n, 0, "the cheat never reached the kernel");
}

/* A worker that ends before it came up: the daemon ends with its status. */
static int
worker_fails_to_start(int fd)
{
	return 78;
}

Test(feeder, a_first_worker_that_cannot_start_ends_the_daemon, .timeout = 30)
{
	int chan, status;
	pid_t feeder_pid, w;

	feeder_pid = start_with_worker(&chan, worker_fails_to_start, &w);
	cr_assert_eq(waitpid(w, &status, 0), w);
	tell(chan, FEEDPROTO_EXITED, (uint32_t)w, (uint32_t)status, -1);
	cr_assert_eq(expect_frame(chan, 5000, NULL), FEEDPROTO_STOP);
	close(chan);
	cr_assert_eq(waitpid(feeder_pid, &status, 0), feeder_pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 78, "feeder status %#x", status);
}
