/* SPDX-License-Identifier: MIT */
/*
 * defer: a module's thread (a libusb hotplug thread, say) may not touch the
 * registry or the engine, which belong to the loop's thread. It queues a
 * call here instead; an eventfd wakes the loop, which makes the calls.
 */
#include <sys/eventfd.h>
#include <sys/queue.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "defer.h"
#include "log.h"
#include "xmalloc.h"

struct defer_call {
	TAILQ_ENTRY(defer_call) entry;
	struct entropyd_module *module;
	void (*fn)(struct entropyd_module *, void *);
	void *arg;
};

static TAILQ_HEAD(, defer_call) defer_calls = TAILQ_HEAD_INITIALIZER(defer_calls);
static pthread_mutex_t defer_lock = PTHREAD_MUTEX_INITIALIZER;
static int defer_fd = -1;
static struct event *defer_ev;

/* The eventfd is readable: make every queued call, one at a time, unlocked. */
static void
defer_run(int fd, short what, void *unused)
{
	struct defer_call *c;
	uint64_t n;

	if (read(fd, &n, sizeof n) == -1 && errno != EAGAIN)
		log_warn("defer: read");
	for (;;) {
		pthread_mutex_lock(&defer_lock);
		if ((c = TAILQ_FIRST(&defer_calls)) != NULL)
			TAILQ_REMOVE(&defer_calls, c, entry);
		pthread_mutex_unlock(&defer_lock);
		if (c == NULL)
			break;
		c->fn(c->module, c->arg);
		free(c);
	}
}

/* Wake the loop; the lock is held, so the fd cannot close under us. */
static void
defer_wake(void)
{
	uint64_t one = 1;

	if (defer_fd != -1 && write(defer_fd, &one, sizeof one) == -1 && errno != EAGAIN)
		log_warn("defer: write");
}

int
defer_attach(struct event_base *base)
{
	int fd;

	if ((fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		return -1;
	if ((defer_ev = event_new(base, fd, EV_READ | EV_PERSIST, defer_run, NULL)) == NULL ||
	    event_add(defer_ev, NULL) == -1) {
		if (defer_ev != NULL)
			event_free(defer_ev);
		defer_ev = NULL;
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&defer_lock);
	defer_fd = fd;
	if (!TAILQ_EMPTY(&defer_calls))
		defer_wake();
	pthread_mutex_unlock(&defer_lock);
	return 0;
}

void
defer_detach(void)
{
	int fd;

	pthread_mutex_lock(&defer_lock);
	fd = defer_fd;
	defer_fd = -1;
	pthread_mutex_unlock(&defer_lock);
	if (defer_ev != NULL)
		event_free(defer_ev);
	defer_ev = NULL;
	if (fd != -1)
		close(fd);
}

void
defer_add(struct entropyd_module *module, void (*fn)(struct entropyd_module *, void *),
    void *arg)
{
	struct defer_call *c = xcalloc(1, sizeof *c);

	c->module = module;
	c->fn = fn;
	c->arg = arg;
	pthread_mutex_lock(&defer_lock);
	TAILQ_INSERT_TAIL(&defer_calls, c, entry);
	defer_wake();
	pthread_mutex_unlock(&defer_lock);
}

void
defer_drop(struct entropyd_module *module)
{
	struct defer_call *c, *next;

	pthread_mutex_lock(&defer_lock);
	for (c = TAILQ_FIRST(&defer_calls); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (module == NULL || c->module == module) {
			TAILQ_REMOVE(&defer_calls, c, entry);
			free(c);
		}
	}
	pthread_mutex_unlock(&defer_lock);
}
