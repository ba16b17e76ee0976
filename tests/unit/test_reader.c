/* SPDX-License-Identifier: MIT */
/*
 * The reader thread against a fake source whose reads the test lets finish
 * one by one: reads start only while wanted, ask for what the loop said,
 * read ahead into the other buffer only when allowed, and hand the bytes
 * over in place until released.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "defer.h"
#include "reader.h"

#define FAKE_MAX_READS 64

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started;              /* reads entered */
	int allowed;              /* reads allowed to finish */
	size_t lens[FAKE_MAX_READS];
	int forgets;              /* forget() calls */
	int forgets_before[FAKE_MAX_READS]; /* forget() calls when read n started */
	bool in_read;             /* inside read(): forget() must never see it */
	bool forget_in_read;
	pthread_t read_thread, forget_thread;
} fake = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, { 0 }, 0, { 0 }, false,
	false, 0, 0 };

/* Read n fills the buffer with the byte n + 1 once the test allows it. */
static ssize_t
fake_read(void *state, void *buf, size_t len)
{
	int idx;

	pthread_mutex_lock(&fake.lock);
	idx = fake.started++;
	if (idx < FAKE_MAX_READS) {
		fake.lens[idx] = len;
		fake.forgets_before[idx] = fake.forgets;
	}
	fake.in_read = true;
	fake.read_thread = pthread_self();
	pthread_cond_broadcast(&fake.cond);
	while (fake.allowed <= idx)
		pthread_cond_wait(&fake.cond, &fake.lock);
	fake.in_read = false;
	pthread_mutex_unlock(&fake.lock);
	memset(buf, idx + 1, len);
	return (ssize_t)len;
}

static int fake_closed; /* close() calls, each with its state */
static void *fake_closed_state;

static void
fake_close(void *state)
{
	fake_closed++;
	fake_closed_state = state;
}

/* The module's forget(): counted, with the thread it ran on. */
static void
fake_forget(void *state)
{
	pthread_mutex_lock(&fake.lock);
	fake.forgets++;
	if (fake.in_read)
		fake.forget_in_read = true;
	fake.forget_thread = pthread_self();
	pthread_cond_broadcast(&fake.cond);
	pthread_mutex_unlock(&fake.lock);
}

/* The same source with an ABI 1.2 descriptor: it has forget(). */
static const struct entropyd_source forget_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "fake",
	.read = fake_read,
	.forget = fake_forget,
};

static const struct entropyd_source fake_source = {
	.name = "fake",
	.read = fake_read,
	.close = fake_close,
};

/* Let reads up to n finish. */
static void
fake_allow(int n)
{
	pthread_mutex_lock(&fake.lock);
	fake.allowed = n;
	pthread_cond_broadcast(&fake.cond);
	pthread_mutex_unlock(&fake.lock);
}

/* Reads started once n have started, or after 10 s (a guard against hangs). */
static int
fake_wait_started(int n)
{
	struct timespec until;
	int got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&fake.lock);
	while (fake.started < n &&
	    pthread_cond_timedwait(&fake.cond, &fake.lock, &until) != ETIMEDOUT)
		;
	got = fake.started;
	pthread_mutex_unlock(&fake.lock);
	return got;
}

/* Reads started after a quiet pause: a read that should not start has had the time to. */
static int
fake_started_after_pause(void)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	int got;

	nanosleep(&pause, NULL);
	pthread_mutex_lock(&fake.lock);
	got = fake.started;
	pthread_mutex_unlock(&fake.lock);
	return got;
}

/* Wait for a finished read and take it. */
static void
take(struct reader *r, const uint8_t **buf, ssize_t *n)
{
	struct pollfd pfd = { .fd = reader_fd(r), .events = POLLIN };
	int err;

	cr_assert_eq(poll(&pfd, 1, 10000), 1, "a finished read wakes the loop");
	cr_assert(reader_take(r, buf, n, &err));
}

/* Let everything finish and stop the thread. */
static void
finish(struct reader *r)
{
	reader_want(r, false, 0, false);
	fake_allow(FAKE_MAX_READS);
	cr_expect(reader_stop(r, 5000));
}

static void
setup(void)
{
	reader_global_init();
	fake.started = fake.allowed = 0;
	fake.forgets = 0;
	fake.forget_in_read = false;
}

TestSuite(reader, .init = setup);

Test(reader, reads_only_while_wanted_and_as_much_as_asked)
{
	struct reader *r = reader_start(&fake_source, NULL);
	const uint8_t *buf;
	ssize_t n;

	cr_expect_eq(fake_started_after_pause(), 0, "nothing is read until wanted");
	reader_want(r, true, 2504, false);
	cr_assert_eq(fake_wait_started(1), 1);
	cr_expect_eq(fake.lens[0], 2504, "the read asks for what the loop said");
	reader_want(r, false, 2504, false);
	fake_allow(1);
	take(r, &buf, &n);
	cr_expect_eq(n, 2504);
	cr_expect_eq(buf[0], 1);
	cr_expect_eq(buf[n - 1], 1);
	reader_release(r);
	cr_expect_eq(fake_started_after_pause(), 1, "no read starts once not wanted");
	reader_want(r, true, 10 * READER_BUFFER_BYTES, false);
	cr_assert_eq(fake_wait_started(2), 2);
	cr_expect_eq(fake.lens[1], READER_BUFFER_BYTES, "a read never exceeds the buffer");
	finish(r);
}

Test(reader, without_read_ahead_one_read_at_a_time)
{
	struct reader *r = reader_start(&fake_source, NULL);
	const uint8_t *buf;
	ssize_t n;

	reader_want(r, true, 1000, false);
	fake_allow(1);
	take(r, &buf, &n);
	cr_expect_eq(fake_started_after_pause(), 1,
	    "the next read waits until the loop released this one");
	reader_release(r);
	cr_expect_eq(fake_wait_started(2), 2, "and starts once it did");
	finish(r);
}

Test(reader, read_ahead_fills_the_other_buffer_and_keeps_this_one)
{
	struct reader *r = reader_start(&fake_source, NULL);
	const uint8_t *first, *second;
	ssize_t n;
	int i;

	reader_want(r, true, 1000, true);
	fake_allow(2);
	take(r, &first, &n);
	cr_assert_eq(fake_wait_started(2), 2, "the next read starts before the release");
	cr_expect_eq(fake_started_after_pause(), 2, "but only one read ahead");
	/* Read 2 is done (allowed) and waits for the release; read 1 is intact. */
	for (i = 0; i < n; i++)
		if (first[i] != 1)
			break;
	cr_expect_eq(i, n, "the taken bytes stay put while the other buffer fills");
	reader_want(r, false, 1000, false);
	reader_release(r);
	take(r, &second, &n);
	cr_expect_neq(first, second, "two buffers");
	cr_expect_eq(second[0], 2);
	cr_expect_eq(first[0], 0, "a released buffer is wiped");
	reader_release(r);
	finish(r);
}

Test(reader, a_reader_stuck_in_read_is_reaped_once_read_returns)
{
	struct event_base *base = event_base_new();
	int state_token;
	struct reader *r;
	int turns;

	cr_assert_not_null(base);
	cr_assert_eq(defer_attach(base), 0);
	fake_closed = 0;
	r = reader_start(&fake_source, &state_token);
	reader_want(r, true, 100, false);
	cr_assert_eq(fake_wait_started(1), 1);
	/* The fake read waits on a condition variable: signals cannot end it. */
	cr_expect_not(reader_stop(r, 50), "a read that ignores signals is stuck");
	cr_expect(reader_runs_module(&fake_source), "its module's code still runs");
	reader_reap();
	cr_expect_eq(fake_closed, 0, "the state is not closed under a running read()");
	fake_allow(FAKE_MAX_READS);
	for (turns = 0; turns < 100 && fake_closed == 0; turns++) {
		struct timeval tenth = { 0, 100000 };

		event_base_loopexit(base, &tenth);
		event_base_dispatch(base);
	}
	cr_expect_eq(fake_closed, 1, "once read() returns, the loop closes the state");
	cr_expect_eq(fake_closed_state, &state_token);
	cr_expect_not(reader_runs_module(&fake_source), "and forgets the thread");
	defer_detach();
	event_base_free(base);
}

/* Wait up to 10 s for the fd to be readable (a finished read). */
static bool
readable(struct reader *r)
{
	struct pollfd pfd = { .fd = reader_fd(r), .events = POLLIN };

	return poll(&pfd, 1, 10000) == 1;
}

/* A finished read the loop has not taken is wiped, counted and never handed over. */
Test(reader, forget_wipes_a_finished_read_and_calls_forget_on_the_thread)
{
	struct reader *r = reader_start(&forget_source, NULL);
	const uint8_t *buf;
	ssize_t n;
	int err;

	reader_want(r, true, 1000, false);
	fake_allow(1);
	cr_assert(readable(r));
	cr_expect_eq(reader_forget(r), 1000, "the finished read's bytes are discarded");
	cr_expect_not(reader_take(r, &buf, &n, &err), "and not handed over");
	fake_allow(2);
	cr_assert_eq(fake_wait_started(2), 2);
	cr_expect_eq(fake.forgets_before[1], 1, "forget() ran before the next read");
	take(r, &buf, &n);
	cr_expect_eq(buf[0], 2, "the next read's bytes come through");
	reader_release(r);
	cr_expect(pthread_equal(fake.forget_thread, fake.read_thread),
	    "forget() runs on the thread that reads");
	cr_expect_not(fake.forget_in_read);
	finish(r);
}

/* A read in progress when the generation changes is dropped when it ends. */
Test(reader, forget_drops_a_read_in_progress)
{
	struct reader *r = reader_start(&forget_source, NULL);
	const uint8_t *buf;
	ssize_t n;

	reader_want(r, true, 1000, false);
	cr_assert_eq(fake_wait_started(1), 1);
	cr_expect_eq(reader_forget(r), 0, "nothing finished yet");
	fake_allow(2);
	take(r, &buf, &n);
	cr_expect_eq(buf[0], 2, "read 1 (begun before the change) never reaches the loop");
	cr_expect_eq(fake.forgets_before[1], 1, "forget() came between the two reads");
	cr_expect_not(fake.forget_in_read, "never alongside read()");
	reader_release(r);
	cr_expect_eq(reader_take_stale(r), 1000, "its bytes are counted as discarded");
	cr_expect_eq(reader_take_stale(r), 0);
	finish(r);
}

/* An old (ABI 1.1) descriptor has no forget(): the reader still drops old reads. */
Test(reader, forget_without_a_hook)
{
	struct reader *r = reader_start(&fake_source, NULL);
	const uint8_t *buf;
	ssize_t n;
	int err;

	reader_want(r, true, 1000, false);
	fake_allow(1);
	cr_assert(readable(r));
	cr_expect_eq(reader_forget(r), 1000);
	cr_expect_not(reader_take(r, &buf, &n, &err), "the loop's wake-up finds nothing");
	fake_allow(2);
	take(r, &buf, &n);
	cr_expect_eq(buf[0], 2);
	cr_expect_eq(fake.forgets, 0);
	reader_release(r);
	finish(r);
}

static int blocked_fd = -1;

/* Blocks in read() on an empty pipe; a signal makes it return AGAIN. */
static ssize_t
blocking_read(void *state, void *buf, size_t len)
{
	ssize_t n = read(blocked_fd, buf, len);

	return n > 0 ? n : n == -1 && errno == EINTR ? ENTROPYD_READ_AGAIN : ENTROPYD_READ_ERROR;
}

static const struct entropyd_source blocking_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "blocking",
	.read = blocking_read,
	.forget = fake_forget,
};

/* A read blocked on its device is interrupted, so forget() and fresh reads follow at once. */
Test(reader, forget_interrupts_a_blocked_read)
{
	struct timespec until;
	struct reader *r;
	int p[2], got;

	cr_assert_eq(pipe(p), 0);
	blocked_fd = p[0];
	r = reader_start(&blocking_source, NULL);
	reader_want(r, true, 1000, false);
	fake_started_after_pause(); /* the thread is in read() by now */
	reader_forget(r);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&fake.lock);
	while (fake.forgets == 0 &&
	    pthread_cond_timedwait(&fake.cond, &fake.lock, &until) != ETIMEDOUT)
		;
	got = fake.forgets;
	pthread_mutex_unlock(&fake.lock);
	cr_expect_eq(got, 1, "the blocked read returned and forget() ran, with nothing written");
	cr_expect(write(p[1], "fresh", 5) == 5);
	cr_assert(readable(r));
	reader_want(r, false, 0, false);
	cr_expect(reader_stop(r, 5000));
	close(p[0]);
	close(p[1]);
}
