/* SPDX-License-Identifier: MIT */
/*
 * A core-owned reader thread for a source whose read() blocks or computes:
 * it reads only while the loop wants data and wakes the loop through an
 * eventfd.
 */
#include <sys/eventfd.h>
#include <sys/queue.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "defer.h"
#include "log.h"
#include "reader.h"
#include "xmalloc.h"

/*
 * The signal sent to a reader to interrupt a blocked read(): a real-time
 * one, so SIGUSR2 stays free for operators (entropyd(8) SIGNALS).
 */
#define READER_SIGNAL SIGRTMIN

struct reader {
	TAILQ_ENTRY(reader) orphans; /* while stopped but still inside read() */
	pthread_t thread;
	const struct entropyd_source *src;
	void *state;
	int wake_fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool want, stop, done;
	bool orphaned;             /* given up by the loop: reaped when read() returns */
	bool reading;              /* inside src->read() */
	uint64_t generation;       /* bumped by reader_forget() */
	uint64_t forgotten;        /* the generation src->forget() was last called for */
	size_t stale_bytes;        /* read across a reader_forget(), wiped, not yet counted */
	bool ahead;                /* may read the next buffer while one waits */
	size_t read_len;           /* what the next read asks for */
	bool full;                 /* buf[ready] holds a finished read for the loop */
	int ready;
	ssize_t result;
	int err;
	/*
	 * Two buffers: the thread reads into buf[ready ^ 1] (or either when
	 * none is full) while the loop uses buf[ready] in place until
	 * reader_release(); so the thread need not wait for the loop between
	 * reads when reading ahead, and nothing is copied.
	 */
	uint8_t *buf[2];           /* READER_BUFFER_BYTES each, from malloc: */
};                                 /* pages untouched until a read fills them */

/*
 * Readers the loop stopped while their thread was stuck inside read(): the
 * thread still runs the module's code with its state, so neither may be
 * freed (nor the module unloaded) until read() returns. Then the thread asks
 * the loop (through defer) to reap it: join, close the state, free.
 */
static TAILQ_HEAD(, reader) reader_orphans = TAILQ_HEAD_INITIALIZER(reader_orphans);
static pthread_mutex_t reader_orphans_lock = PTHREAD_MUTEX_INITIALIZER;

static void reader_reap_deferred(struct entropyd_module *, void *);
static void reader_free(struct reader *);

/* Does nothing: its delivery makes a blocked read() return EINTR. */
static void
reader_interrupt(int sig)
{
}

void
reader_global_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = reader_interrupt;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: read() must return */
	if (sigaction(READER_SIGNAL, &sa, NULL) == -1)
		fatal("sigaction");
}

/*
 * The thread: wait to be wanted, read into the buffer the loop is not
 * using, hand it over once the previous one was taken, repeat. Without
 * read-ahead a read starts only when no finished read waits for the loop.
 */
static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	sigset_t set;
	uint64_t one = 1;
	int fill = 0;

	sigfillset(&set);
	sigdelset(&set, READER_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	pthread_mutex_lock(&r->lock);
	for (;;) {
		uint64_t generation;
		ssize_t n;
		size_t len;
		int err;

		while (!r->stop && (!r->want || (r->full && !r->ahead)))
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stop)
			break;
		if (r->forgotten != r->generation) {
			/* The module's forget() runs here, never alongside its read(). */
			generation = r->generation;
			pthread_mutex_unlock(&r->lock);
			if (ENTROPYD_SOURCE_HAS(r->src, forget) && r->src->forget != NULL)
				r->src->forget(r->state);
			pthread_mutex_lock(&r->lock);
			r->forgotten = generation;
			continue;
		}
		generation = r->generation;
		len = r->read_len;
		if (r->full)
			fill = r->ready ^ 1;
		r->reading = true;
		pthread_mutex_unlock(&r->lock);
		errno = 0;
		n = r->src->read(r->state, r->buf[fill], len);
		err = errno;
		pthread_mutex_lock(&r->lock);
		r->reading = false;
		while (!r->stop && r->full && generation == r->generation)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stop)
			break;
		if (generation != r->generation) {
			/* Read (at least partly) before the VM generation changed: drop it. */
			if (n > 0) {
				explicit_bzero(r->buf[fill], (size_t)n);
				r->stale_bytes += (size_t)n;
			}
			continue;
		}
		if (n == ENTROPYD_READ_AGAIN) {
			/* Interrupted, or nothing yet: pause so a source cannot spin us. */
			struct timespec pause = { 0, 10 * 1000 * 1000 };

			pthread_mutex_unlock(&r->lock);
			nanosleep(&pause, NULL);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		r->result = n;
		r->err = err;
		r->ready = fill;
		r->full = true;
		fill ^= 1;
		if (write(r->wake_fd, &one, sizeof one) == -1 && errno != EAGAIN)
			log_warn("reader: eventfd");
		if (n <= 0)
			r->want = false; /* the loop decides what happens next */
	}
	r->done = true;
	pthread_cond_broadcast(&r->cond);
	if (r->orphaned)
		defer_add(NULL, reader_reap_deferred, NULL);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct reader *
reader_start(const struct entropyd_source *src, void *state)
{
	struct reader *r = xcalloc(1, sizeof *r);
	int e;

	r->src = src;
	r->state = state;
	r->read_len = READER_BUFFER_BYTES;
	r->buf[0] = xmalloc(READER_BUFFER_BYTES);
	r->buf[1] = xmalloc(READER_BUFFER_BYTES);
	if ((r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		fatal("eventfd");
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	if ((e = pthread_create(&r->thread, NULL, reader_main, r)) != 0) {
		errno = e;
		fatal("pthread_create");
	}
	return r;
}

int
reader_fd(const struct reader *r)
{
	return r->wake_fd;
}

void
reader_want(struct reader *r, bool want, size_t len, bool ahead)
{
	pthread_mutex_lock(&r->lock);
	r->read_len = len == 0 || len > READER_BUFFER_BYTES ? READER_BUFFER_BYTES : len;
	if (r->want != want || r->ahead != ahead) {
		r->want = want;
		r->ahead = ahead;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
}

bool
reader_take(struct reader *r, const uint8_t **buf, ssize_t *result, int *err)
{
	uint64_t count;
	bool got;

	if (read(r->wake_fd, &count, sizeof count) == -1 && errno != EAGAIN)
		log_warn("reader: eventfd");
	pthread_mutex_lock(&r->lock);
	got = r->full;
	if (got) {
		*result = r->result;
		*err = r->err;
		*buf = r->buf[r->ready];
	}
	pthread_mutex_unlock(&r->lock);
	return got;
}

void
reader_release(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->full) {
		if (r->result > 0)
			explicit_bzero(r->buf[r->ready], (size_t)r->result);
		r->full = false;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
}

size_t
reader_forget(struct reader *r)
{
	size_t held = 0;

	pthread_mutex_lock(&r->lock);
	r->generation++;
	if (r->full) {
		if (r->result > 0) {
			explicit_bzero(r->buf[r->ready], (size_t)r->result);
			held = (size_t)r->result;
		}
		r->full = false;
	}
	if (r->reading && !r->done)
		pthread_kill(r->thread, READER_SIGNAL);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return held;
}

size_t
reader_take_stale(struct reader *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->stale_bytes;
	r->stale_bytes = 0;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void
reader_request_stop(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->cond);
	if (!r->done)
		pthread_kill(r->thread, READER_SIGNAL);
	pthread_mutex_unlock(&r->lock);
}

bool
reader_stop(struct reader *r, unsigned timeout_ms)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned waited_ms = 0;
	bool done;

	reader_request_stop(r);
	for (;;) {
		pthread_mutex_lock(&r->lock);
		done = r->done;
		pthread_mutex_unlock(&r->lock);
		if (done || waited_ms >= timeout_ms)
			break;
		/* Again and again: the signal may land just before read() begins. */
		pthread_kill(r->thread, READER_SIGNAL);
		nanosleep(&pause, NULL);
		waited_ms += 10;
	}
	if (!done) {
		/* Stuck in read(): the thread reaps it once read() returns. */
		pthread_mutex_lock(&reader_orphans_lock);
		pthread_mutex_lock(&r->lock);
		if (!(done = r->done)) {
			r->orphaned = true;
			TAILQ_INSERT_TAIL(&reader_orphans, r, orphans);
		}
		pthread_mutex_unlock(&r->lock);
		pthread_mutex_unlock(&reader_orphans_lock);
		if (!done)
			return false;
	}
	reader_free(r);
	return true;
}

/* Join a finished thread and free everything of its reader. */
static void
reader_free(struct reader *r)
{
	pthread_join(r->thread, NULL);
	close(r->wake_fd);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	explicit_bzero(r->buf[0], READER_BUFFER_BYTES);
	explicit_bzero(r->buf[1], READER_BUFFER_BYTES);
	free(r->buf[0]);
	free(r->buf[1]);
	free(r);
}

void
reader_reap(void)
{
	struct reader *r, *next;

	pthread_mutex_lock(&reader_orphans_lock);
	for (r = TAILQ_FIRST(&reader_orphans); r != NULL; r = next) {
		bool done;

		next = TAILQ_NEXT(r, orphans);
		pthread_mutex_lock(&r->lock);
		done = r->done;
		pthread_mutex_unlock(&r->lock);
		if (!done)
			continue;
		TAILQ_REMOVE(&reader_orphans, r, orphans);
		r->src->close(r->state);
		reader_free(r);
	}
	pthread_mutex_unlock(&reader_orphans_lock);
}

/* An orphan's read() returned: reap on the loop. */
static void
reader_reap_deferred(struct entropyd_module *unused, void *arg)
{
	reader_reap();
}

bool
reader_runs_module(const struct entropyd_source *src)
{
	struct reader *r;
	bool running = false;

	pthread_mutex_lock(&reader_orphans_lock);
	TAILQ_FOREACH(r, &reader_orphans, orphans)
		if (r->src == src)
			running = true;
	pthread_mutex_unlock(&reader_orphans_lock);
	return running;
}
