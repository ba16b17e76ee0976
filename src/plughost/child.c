/* SPDX-License-Identifier: MIT */
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <entropyd/source.h>

#include "child.h"
#include "clock.h"
#include "confine.h"
#include "pluginproto.h"

/* The signal that interrupts a reader thread's blocked read(). */
#define CHILD_SIGNAL SIGUSR2
/* How long closing waits for a reader thread to leave read(). */
#define CHILD_STOP_TIMEOUT_MS 300u
/* The smallest descriptor accepted: ABI 1.0's, ending with configure. */
#define CHILD_MIN_SOURCE_SIZE \
	(offsetof(struct entropyd_source, configure) + sizeof(void (*)(void)))

/* The one module of this host, as the plugin sees it. */
struct entropyd_module {
	const struct entropyd_source *src;
	void (*cookie_release)(void *);
	char **values;       /* -O values in the order of src->options; NULL: unset */
	size_t n_options;
	double estimate;     /* the module's estimate in force (after -O NAME:entropy) */
};

/* One instance the plugin added. */
struct entropyd_instance {
	struct entropyd_instance *next;
	uint32_t id;
	char *name;          /* the plugin's id ("" for the module's own name) */
	void *cookie;
	double estimate;
	bool removed;
	/* While open: */
	bool open;
	void *state;
	int data;            /* the data socket to the daemon */
	int fd;              /* the plugin's descriptor, or -1 (a reader thread) */
	bool ended;          /* read() said EOF, ERROR or REOPEN: nothing more until closed */
	uint32_t wants[PLUGINPROTO_WINDOW];
	unsigned n_wants;
	uint8_t *buf;
	uint64_t read_since_ns; /* nonzero while in read() or forget() (the watchdog's) */
	const char *call;       /* which of the two, for the fault */
	uint32_t forget_seq;    /* the last PP_FORGET's; forget() is due while it differs from: */
	uint32_t forgotten_seq; /* the last answered with PP_FORGOTTEN */
	int wake;               /* a reader thread's eventfd: look at forget_seq, or -1 */
	pthread_t thread;
	bool threaded, stop, done;
};

static struct entropyd_module child_module;
static struct entropyd_instance *child_instances;
static uint32_t child_next_id = 1;
static int child_control = -1;
static void *child_handle;
/* One lock for the instance list, the wants and the watchdog's view. */
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t child_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t child_watch_cond = PTHREAD_COND_INITIALIZER;
static unsigned child_busy;      /* calls into the plugin in progress */
static const char *child_busy_what; /* what the main thread is calling, for the fault */
static uint64_t child_main_since_ns;

/* host->defer's queue, run on the main thread. */
struct child_deferred {
	struct child_deferred *next;
	void (*fn)(struct entropyd_module *, void *);
	void *arg;
};
static struct child_deferred *child_deferred_head, **child_deferred_tail = &child_deferred_head;
static pthread_mutex_t child_defer_lock = PTHREAD_MUTEX_INITIALIZER;
static int child_defer_fd = -1;

static void child_log(struct entropyd_instance *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static void child_module_log(struct entropyd_module *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static void child_unusable(struct entropyd_module *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static const char *child_option(struct entropyd_module *, const char *);
static struct entropyd_instance *child_add_instance(struct entropyd_module *, const char *,
    const char *, void *);
static void child_remove_instance(struct entropyd_instance *);
static void *child_instance_cookie(struct entropyd_instance *);
static struct entropyd_module *child_instance_module(struct entropyd_instance *);
static void child_set_cookie_release(struct entropyd_module *, void (*)(void *));
static double child_limit_entropy(struct entropyd_instance *, double);
static void child_defer(struct entropyd_module *, void (*)(struct entropyd_module *, void *),
    void *);
static void child_instance_gone(struct entropyd_instance *, const char *);
static void child_close(struct entropyd_instance *);
static bool child_take_wants(struct entropyd_instance *);

static const struct entropyd_host child_host = {
	.size = sizeof(struct entropyd_host),
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.log = child_log,
	.module_log = child_module_log,
	.option = child_option,
	.unusable = child_unusable,
	.add_instance = child_add_instance,
	.remove_instance = child_remove_instance,
	.instance_cookie = child_instance_cookie,
	.instance_module = child_instance_module,
	.now_ns = clock_now_ns,
	.set_cookie_release = child_set_cookie_release,
	.limit_entropy = child_limit_entropy,
	.defer = child_defer,
	.instance_gone = child_instance_gone,
};

/* Send a message on the control socket (any thread: one message is one send). */
static void
child_send(struct pluginproto_msg *m)
{
	pluginproto_send(child_control, m, -1, -1);
}

/* Say why the host ends because of its plugin (a PLUGINPROTO_FAULT_* kind), and end it. */
static void __attribute__((noreturn))
child_fault_kind(int kind, const char *fmt, ...)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];
	char reason[PLUGINPROTO_STRING_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	pluginproto_begin(&m, buf, sizeof buf, PP_FAULT, 0);
	pluginproto_put_i32(&m, kind);
	pluginproto_put_str(&m, reason);
	child_send(&m);
	_exit(EX_SOFTWARE);
}

#define child_fault(...) child_fault_kind(PLUGINPROTO_FAULT_CALL, __VA_ARGS__)

/* A line for the daemon's log, for an instance (id) or the module (0). */
static void
child_vlog(uint32_t id, int priority, const char *fmt, va_list ap)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];
	char line[PLUGINPROTO_STRING_MAX];

	vsnprintf(line, sizeof line, fmt, ap);
	pluginproto_begin(&m, buf, sizeof buf, PP_LOG, id);
	pluginproto_put_i32(&m, priority);
	pluginproto_put_str(&m, line);
	child_send(&m);
}

static void
child_log(struct entropyd_instance *inst, int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	child_vlog(inst != NULL ? inst->id : 0, priority, fmt, ap);
	va_end(ap);
}

static void
child_module_log(struct entropyd_module *m, int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	child_vlog(0, priority, fmt, ap);
	va_end(ap);
}

/* Send the daemon a message carrying one formatted line. */
static void __attribute__((format(printf, 2, 0)))
child_send_line(uint16_t type, const char *fmt, va_list ap)
{
	struct pluginproto_msg msg;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];
	char line[PLUGINPROTO_STRING_MAX];

	vsnprintf(line, sizeof line, fmt, ap);
	pluginproto_begin(&msg, buf, sizeof buf, type, 0);
	pluginproto_put_str(&msg, line);
	child_send(&msg);
}

static void
child_unusable(struct entropyd_module *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	child_send_line(PP_UNUSABLE, fmt, ap);
	va_end(ap);
}

/* An option's value as given, or its default, or NULL. */
static const char *
child_option(struct entropyd_module *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_options && key != NULL; i++) {
		if (strcmp(m->src->options[i].key, key) != 0)
			continue;
		return m->values[i] != NULL ? m->values[i] : m->src->options[i].default_value;
	}
	return NULL;
}

/* Tell the daemon about an instance (again: a re-probe or replug opens it). */
static void
child_announce(struct entropyd_instance *inst, const char *device)
{
	struct pluginproto_msg m;
	uint8_t buf[2 * PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, PP_ADD, inst->id);
	pluginproto_put_str(&m, inst->name);
	pluginproto_put_str(&m, device != NULL ? device : "");
	child_send(&m);
}

static struct entropyd_instance *
child_add_instance(struct entropyd_module *m, const char *id, const char *device, void *cookie)
{
	struct entropyd_instance *inst;
	unsigned n = 0;

	if (id == NULL)
		id = "";
	pthread_mutex_lock(&child_lock);
	for (inst = child_instances; inst != NULL; inst = inst->next, n++)
		if (!inst->removed && strcmp(inst->name, id) == 0)
			break;
	if (inst != NULL) {
		if (inst->cookie != cookie && inst->cookie != NULL && m->cookie_release != NULL)
			m->cookie_release(inst->cookie);
		inst->cookie = cookie;
	} else if (n < PLUGINPROTO_MAX_INSTANCES &&
	    (inst = calloc(1, sizeof *inst)) != NULL && (inst->name = strdup(id)) != NULL) {
		inst->id = child_next_id++;
		inst->cookie = cookie;
		inst->estimate = m->estimate;
		inst->data = inst->fd = inst->wake = -1;
		inst->next = child_instances;
		child_instances = inst;
	} else {
		free(inst);
		inst = NULL;
	}
	pthread_mutex_unlock(&child_lock);
	if (inst != NULL)
		child_announce(inst, device);
	return inst;
}

/* Unlink and free a closed instance, releasing its cookie. */
static void
child_free_instance(struct entropyd_instance *inst)
{
	struct entropyd_instance **p;

	pthread_mutex_lock(&child_lock);
	for (p = &child_instances; *p != NULL; p = &(*p)->next)
		if (*p == inst) {
			*p = inst->next;
			break;
		}
	pthread_mutex_unlock(&child_lock);
	if (inst->cookie != NULL && child_module.cookie_release != NULL)
		child_module.cookie_release(inst->cookie);
	free(inst->name);
	free(inst);
}

/* Send a message about one instance: REMOVE or GONE. */
static void
child_send_about(uint16_t type, uint32_t id, const char *reason)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, type, id);
	if (reason != NULL)
		pluginproto_put_str(&m, reason);
	child_send(&m);
}

static void
child_remove_instance(struct entropyd_instance *inst)
{
	inst->removed = true;
	child_send_about(PP_REMOVE, inst->id, NULL);
	/* From its own reader thread it is closed (and freed) when the daemon says. */
	if (inst->threaded && pthread_equal(inst->thread, pthread_self()))
		return;
	child_close(inst);
	child_free_instance(inst);
}

static void *
child_instance_cookie(struct entropyd_instance *inst)
{
	return inst->cookie;
}

static struct entropyd_module *
child_instance_module(struct entropyd_instance *inst)
{
	return &child_module;
}

static void
child_set_cookie_release(struct entropyd_module *m, void (*release)(void *))
{
	m->cookie_release = release;
}

/* Lower an instance's estimate here, and have the daemon lower it too. */
static double
child_limit_entropy(struct entropyd_instance *inst, double bits)
{
	struct pluginproto_msg m;
	uint8_t buf[64];

	if (!(bits >= 0) || bits >= inst->estimate)
		return inst->estimate;
	inst->estimate = bits;
	pluginproto_begin(&m, buf, sizeof buf, PP_LIMIT, inst->id);
	pluginproto_put_f64(&m, bits);
	child_send(&m);
	return bits;
}

static void
child_defer(struct entropyd_module *m, void (*fn)(struct entropyd_module *, void *), void *arg)
{
	struct child_deferred *d = calloc(1, sizeof *d);
	uint64_t one = 1;

	if (d == NULL)
		return;
	d->fn = fn;
	d->arg = arg;
	pthread_mutex_lock(&child_defer_lock);
	*child_deferred_tail = d;
	child_deferred_tail = &d->next;
	if (write(child_defer_fd, &one, sizeof one) == -1 && errno != EAGAIN)
		d->fn = NULL;
	pthread_mutex_unlock(&child_defer_lock);
}

static void
child_instance_gone(struct entropyd_instance *inst, const char *reason)
{
	child_send_about(PP_GONE, inst->id, reason != NULL ? reason : "gone");
}

/* Run the deferred calls, in order, on the main thread. */
static void
child_run_deferred(void)
{
	struct child_deferred *d;
	uint64_t n;

	if (read(child_defer_fd, &n, sizeof n) == -1 && errno != EAGAIN)
		return;
	for (;;) {
		pthread_mutex_lock(&child_defer_lock);
		if ((d = child_deferred_head) != NULL) {
			child_deferred_head = d->next;
			if (child_deferred_head == NULL)
				child_deferred_tail = &child_deferred_head;
		}
		pthread_mutex_unlock(&child_defer_lock);
		if (d == NULL)
			return;
		if (d->fn != NULL)
			d->fn(&child_module, d->arg);
		free(d);
	}
}

/* The main thread enters a call into the plugin (the watchdog times it). */
static void
child_enter(const char *what)
{
	pthread_mutex_lock(&child_lock);
	child_busy_what = what;
	child_main_since_ns = clock_now_ns();
	child_busy++;
	pthread_cond_signal(&child_watch_cond);
	pthread_mutex_unlock(&child_lock);
}

static void
child_leave(void)
{
	pthread_mutex_lock(&child_lock);
	child_main_since_ns = 0;
	child_busy--;
	pthread_mutex_unlock(&child_lock);
}

/*
 * The watchdog: asleep while nothing calls into the plugin; while
 * something does, it looks every half timeout for a call older than the
 * timeout, and ends the host when it finds one.
 */
static void *
child_watchdog(void *unused)
{
	struct entropyd_instance *inst;
	struct timespec until;
	uint64_t now, limit = (uint64_t)PLUGINPROTO_CALL_TIMEOUT_MS * 1000000u;

	pthread_mutex_lock(&child_lock);
	for (;;) {
		while (child_busy == 0)
			pthread_cond_wait(&child_watch_cond, &child_lock);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += PLUGINPROTO_CALL_TIMEOUT_MS / 2000;
		until.tv_nsec += (long)(PLUGINPROTO_CALL_TIMEOUT_MS / 2 % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&child_watch_cond, &child_lock, &until);
		now = clock_now_ns();
		if (child_main_since_ns != 0 && now - child_main_since_ns > limit)
			child_fault("%s() did not return within %u s", child_busy_what,
			    PLUGINPROTO_CALL_TIMEOUT_MS / 1000);
		for (inst = child_instances; inst != NULL; inst = inst->next)
			if (inst->read_since_ns != 0 && now - inst->read_since_ns > limit)
				child_fault("%s() did not return within %u s", inst->call,
				    PLUGINPROTO_CALL_TIMEOUT_MS / 1000);
	}
	return NULL;
}

/* Call the plugin's read() for inst, timed by the watchdog. */
static ssize_t
child_call_read(struct entropyd_instance *inst, size_t len, int *err)
{
	ssize_t n;

	pthread_mutex_lock(&child_lock);
	inst->read_since_ns = clock_now_ns();
	inst->call = "read";
	child_busy++;
	pthread_cond_signal(&child_watch_cond);
	pthread_mutex_unlock(&child_lock);
	errno = 0;
	n = child_module.src->read(inst->state, inst->buf, len);
	*err = errno;
	pthread_mutex_lock(&child_lock);
	inst->read_since_ns = 0;
	child_busy--;
	pthread_mutex_unlock(&child_lock);
	if (n > (ssize_t)len)
		child_fault_kind(PLUGINPROTO_FAULT_PROTOCOL,
		    "read() returned %zd bytes for a read of %zu", n, len);
	return n;
}

/*
 * The VM generation changed: call the plugin's forget() for inst (if it
 * has one), timed by the watchdog, on the thread that reads it, between
 * reads; then tell the daemon on the data socket that what follows is
 * fresh. The lock is not held.
 */
static void
child_call_forget(struct entropyd_instance *inst, uint32_t seq)
{
	const struct entropyd_source *src = child_module.src;
	struct pluginproto_msg m;
	uint8_t head[64];

	if (ENTROPYD_SOURCE_HAS(src, forget) && src->forget != NULL) {
		pthread_mutex_lock(&child_lock);
		inst->read_since_ns = clock_now_ns();
		inst->call = "forget";
		child_busy++;
		pthread_cond_signal(&child_watch_cond);
		pthread_mutex_unlock(&child_lock);
		src->forget(inst->state);
		pthread_mutex_lock(&child_lock);
		inst->read_since_ns = 0;
		child_busy--;
		pthread_mutex_unlock(&child_lock);
	}
	pluginproto_begin(&m, head, sizeof head, PP_FORGOTTEN, inst->id);
	pluginproto_put_u32(&m, seq);
	pluginproto_send(inst->data, &m, -1, -1);
}

/*
 * Hand a read's outcome to the daemon: bytes, or the end; nothing for
 * AGAIN. Returns true when the want was answered.
 */
static bool
child_answer(struct entropyd_instance *inst, ssize_t n, int err)
{
	struct pluginproto_msg m;
	uint8_t head[64];
	struct pluginproto_header h = { .type = PP_DATA, .id = inst->id };
	struct iovec iov[2] = { { &h, sizeof h }, { inst->buf, n > 0 ? (size_t)n : 0 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (n == ENTROPYD_READ_AGAIN)
		return false;
	if (n > 0) {
		while (sendmsg(inst->data, &mh, MSG_NOSIGNAL) == -1 && errno == EINTR)
			continue;
		explicit_bzero(inst->buf, (size_t)n);
		return true;
	}
	pluginproto_begin(&m, head, sizeof head, PP_RESULT, inst->id);
	pluginproto_put_i32(&m, (int32_t)(n < INT32_MIN ? INT32_MIN : n));
	pluginproto_put_i32(&m, err);
	pluginproto_send(inst->data, &m, -1, -1);
	inst->ended = true;
	return true;
}

/* Take the oldest want off the queue (the lock is held). */
static void
child_pop_want(struct entropyd_instance *inst)
{
	if (inst->n_wants == 0)
		return;
	memmove(inst->wants, inst->wants + 1, --inst->n_wants * sizeof inst->wants[0]);
}

/* Does nothing: its delivery makes a blocked read() return EINTR. */
static void
child_interrupt(int sig)
{
}

/* A reader thread waits for the daemon's wants on the data socket itself; false at its end. */
static bool
child_reader_wait(struct entropyd_instance *inst)
{
	struct pollfd pfd[2] = {
		{ .fd = inst->data, .events = POLLIN },
		{ .fd = inst->wake, .events = POLLIN },
	};
	uint64_t n;

	if (poll(pfd, inst->wake >= 0 ? 2 : 1, -1) == -1)
		return errno == EINTR; /* the stop signal, or another: look again */
	if (pfd[1].revents & POLLIN && read(inst->wake, &n, sizeof n) == -1 && errno != EAGAIN)
		return false;
	return child_take_wants(inst) && !(pfd[0].revents & (POLLHUP | POLLERR));
}

/*
 * A reader thread: read while the daemon wants bytes, as the daemon's own
 * threads do. It takes the wants from the data socket itself, so a want
 * costs one wake-up, not two.
 */
static void *
child_reader(void *arg)
{
	struct entropyd_instance *inst = arg;
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	sigset_t set;
	ssize_t n;
	size_t len;
	int err;

	sigfillset(&set);
	sigdelset(&set, CHILD_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	pthread_mutex_lock(&child_lock);
	for (;;) {
		while (!inst->stop && (inst->n_wants == 0 || inst->ended) &&
		    inst->forget_seq == inst->forgotten_seq) {
			bool more;

			pthread_mutex_unlock(&child_lock);
			more = child_reader_wait(inst);
			pthread_mutex_lock(&child_lock);
			if (!more)
				inst->ended = true; /* the daemon closed it: wait to be stopped */
			if (!more && !inst->stop && inst->forget_seq == inst->forgotten_seq)
				pthread_cond_wait(&child_cond, &child_lock);
		}
		if (inst->stop)
			break;
		if (inst->forget_seq != inst->forgotten_seq) {
			uint32_t seq = inst->forget_seq;

			pthread_mutex_unlock(&child_lock);
			child_call_forget(inst, seq);
			pthread_mutex_lock(&child_lock);
			inst->forgotten_seq = seq;
			continue;
		}
		len = inst->wants[0];
		pthread_mutex_unlock(&child_lock);
		n = child_call_read(inst, len, &err);
		pthread_mutex_lock(&child_lock);
		if (inst->stop)
			break;
		pthread_mutex_unlock(&child_lock);
		if (!child_answer(inst, n, err)) {
			/* Interrupted, or nothing yet: pause so a source cannot spin us. */
			nanosleep(&pause, NULL);
			pthread_mutex_lock(&child_lock);
			continue;
		}
		pthread_mutex_lock(&child_lock);
		child_pop_want(inst);
	}
	inst->done = true;
	pthread_cond_broadcast(&child_cond);
	pthread_mutex_unlock(&child_lock);
	return NULL;
}

/* Stop a reader thread; false when it is stuck in read(). */
static bool
child_stop_reader(struct entropyd_instance *inst)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned waited_ms = 0;
	bool done;

	pthread_mutex_lock(&child_lock);
	inst->stop = true;
	pthread_cond_broadcast(&child_cond);
	pthread_mutex_unlock(&child_lock);
	for (;;) {
		pthread_mutex_lock(&child_lock);
		done = inst->done;
		pthread_mutex_unlock(&child_lock);
		if (done || waited_ms >= CHILD_STOP_TIMEOUT_MS)
			break;
		pthread_kill(inst->thread, CHILD_SIGNAL);
		nanosleep(&pause, NULL);
		waited_ms += 10;
	}
	if (done)
		pthread_join(inst->thread, NULL);
	return done;
}

/* Close an open instance: its reader, the plugin's state, its data socket. */
static void
child_close(struct entropyd_instance *inst)
{
	if (!inst->open)
		return;
	if (inst->threaded && !child_stop_reader(inst))
		child_fault("read() did not return when its instance was closed");
	inst->threaded = false;
	if (inst->wake >= 0)
		close(inst->wake);
	inst->wake = -1;
	child_enter("close");
	child_module.src->close(inst->state);
	child_leave();
	inst->open = false;
	inst->state = NULL;
	close(inst->data);
	inst->data = inst->fd = -1;
	free(inst->buf);
	inst->buf = NULL;
}

/* The instance of an id, or NULL. */
static struct entropyd_instance *
child_find(uint32_t id)
{
	struct entropyd_instance *inst;

	pthread_mutex_lock(&child_lock);
	for (inst = child_instances; inst != NULL && inst->id != id; inst = inst->next)
		continue;
	pthread_mutex_unlock(&child_lock);
	return inst;
}

/* PP_OPEN: open an instance for the daemon, its bytes to go out on data. */
static void
child_open(uint32_t id, int data)
{
	struct entropyd_instance *inst = child_find(id);
	struct pluginproto_msg m;
	uint8_t head[64];
	void *state = NULL;
	int rc, err = ENODEV;

	if (data < 0)
		return;
	if (inst == NULL || inst->removed)
		goto fail;
	child_close(inst);
	errno = 0;
	child_enter("open");
	rc = child_module.src->open(inst, &state);
	err = errno != 0 ? errno : EIO;
	child_leave();
	if (rc == -1)
		goto fail;
	inst->open = true;
	inst->state = state;
	inst->data = data;
	inst->ended = false;
	inst->n_wants = 0;
	inst->stop = inst->done = false;
	inst->forget_seq = inst->forgotten_seq = 0;
	if ((inst->buf = malloc(PLUGINPROTO_DATA_MAX)) == NULL)
		child_fault("out of memory");
	/* Blocking sends: at most PLUGINPROTO_WINDOW answers are ever queued. */
	child_enter("pollfd");
	inst->fd = child_module.src->pollfd(state);
	child_leave();
	if (inst->fd < 0) {
		inst->threaded = true;
		if ((inst->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
			child_fault("eventfd: %s", strerror(errno));
		if ((errno = pthread_create(&inst->thread, NULL, child_reader, inst)) != 0)
			child_fault("cannot start a reader thread: %s", strerror(errno));
	}
	return;
fail:
	/*
	 * The daemon's first wants wait in the socket: take them, for a
	 * socket closed with unread messages resets, and the daemon would
	 * see the reset instead of the reason.
	 */
	while (recv(data, head, sizeof head, MSG_DONTWAIT) > 0)
		continue;
	pluginproto_begin(&m, head, sizeof head, PP_RESULT, id);
	pluginproto_put_i32(&m, ENTROPYD_READ_ERROR);
	pluginproto_put_i32(&m, err);
	pluginproto_send(data, &m, -1, -1);
	close(data);
}

/* The data socket is readable: take the daemon's wants; false when it closed. */
static bool
child_take_wants(struct entropyd_instance *inst)
{
	struct pluginproto_header h;
	uint32_t want[2]; /* len, count */
	ssize_t n;

	for (;;) {
		n = pluginproto_recv_split(inst->data, &h, want, sizeof want);
		if (n == -1 && errno == EAGAIN)
			return true;
		if (n != (ssize_t)sizeof want || h.type != PP_WANT)
			return false;
		if (want[0] == 0 || want[0] > PLUGINPROTO_DATA_MAX)
			want[0] = PLUGINPROTO_DATA_MAX;
		pthread_mutex_lock(&child_lock);
		while (want[1]-- > 0 && inst->n_wants < PLUGINPROTO_WINDOW)
			inst->wants[inst->n_wants++] = want[0];
		pthread_cond_broadcast(&child_cond);
		pthread_mutex_unlock(&child_lock);
	}
}

/* The plugin's descriptor is readable and the daemon wants bytes: read once. */
static void
child_read_polled(struct entropyd_instance *inst)
{
	ssize_t n;
	int err;

	n = child_call_read(inst, inst->wants[0], &err);
	if (child_answer(inst, n, err)) {
		pthread_mutex_lock(&child_lock);
		child_pop_want(inst);
		pthread_mutex_unlock(&child_lock);
	}
}

/*
 * PP_FORGET: the VM generation changed. A polled instance forgets here,
 * between the main thread's reads; a reader thread is told, and woken from
 * a blocking read() or wait, to forget before its next read.
 */
static void
child_forget(uint32_t id, struct pluginproto_msg *m)
{
	struct entropyd_instance *inst = child_find(id);
	uint64_t one = 1;
	uint32_t seq;

	if (!pluginproto_get_u32(m, &seq) || !pluginproto_done(m) || inst == NULL || !inst->open)
		return;
	if (!inst->threaded) {
		child_call_forget(inst, seq);
		return;
	}
	pthread_mutex_lock(&child_lock);
	inst->forget_seq = seq;
	pthread_cond_broadcast(&child_cond);
	/* Woken from its wait for wants, or from a read() that blocks. */
	if (write(inst->wake, &one, sizeof one) == -1 && errno != EAGAIN)
		child_fault("cannot wake a reader thread: %s", strerror(errno));
	if (inst->read_since_ns != 0 && !inst->done)
		pthread_kill(inst->thread, CHILD_SIGNAL);
	pthread_mutex_unlock(&child_lock);
}

/* Send the descriptor, field by field (see pluginproto.h). */
static void
child_send_loaded(const struct entropyd_source *src)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	const struct entropyd_option *o;
	struct pluginproto_msg m;
	uint32_t n = 0;

	for (o = src->options; o != NULL && o->key != NULL; o++)
		n++;
	pluginproto_begin(&m, buf, sizeof buf, PP_LOADED, 0);
	pluginproto_put_u32(&m, src->abi_major);
	pluginproto_put_u32(&m, src->abi_minor);
	pluginproto_put_u32(&m, src->size);
	pluginproto_put_u32(&m, src->flags);
	pluginproto_put_f64(&m, src->entropy_bits);
	pluginproto_put_u32(&m, src->sample_bits);
	pluginproto_put_u32(&m, src->configure != NULL);
	pluginproto_put_str(&m, src->name);
	pluginproto_put_str(&m, src->description);
	pluginproto_put_u32(&m, n);
	for (o = src->options; o != NULL && o->key != NULL; o++) {
		pluginproto_put_str(&m, o->key);
		pluginproto_put_str(&m, o->default_value);
		pluginproto_put_str(&m, o->help);
	}
	child_send(&m);
}

/* Say why the plugin is refused; the host then ends. */
static int
child_refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	child_send_line(PP_REFUSED, fmt, ap);
	va_end(ap);
	return EX_OK;
}

/* dlerror() without the file name it starts with. */
static const char *
child_dlerror(const char *path)
{
	const char *e = dlerror();
	size_t len = strlen(path);

	if (e == NULL)
		return "unknown error";
	if (strncmp(e, path, len) == 0 && strncmp(e + len, ": ", 2) == 0)
		return e + len + 2;
	return e;
}

/* Load the plugin from its file descriptor and check its descriptor; -1 once refused. */
static int
child_load(int file)
{
	const struct entropyd_source *(*entry)(void);
	const struct entropyd_source *src;
	const struct entropyd_option *o;
	char path[64];

	snprintf(path, sizeof path, "/proc/self/fd/%d", file);
	if ((child_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return child_refuse("cannot load: %s (a plugin must use only the host table, "
		    "not the daemon's own symbols, and its libraries must be installed)",
		    child_dlerror(path)), -1;
	close(file);
	dlerror();
	*(void **)&entry = dlsym(child_handle, ENTROPYD_SOURCE_ENTRY);
	if (entry == NULL)
		return child_refuse("no %s symbol (is it exported?)", ENTROPYD_SOURCE_ENTRY), -1;
	if ((src = entry()) == NULL)
		return child_refuse("%s() returned no descriptor", ENTROPYD_SOURCE_ENTRY), -1;
	if (src->abi_major != ENTROPYD_SOURCE_ABI_MAJOR)
		return child_refuse("wrong ABI major: built for %u.%u, this daemon speaks %d.%d",
		    src->abi_major, src->abi_minor, ENTROPYD_SOURCE_ABI_MAJOR,
		    ENTROPYD_SOURCE_ABI_MINOR), -1;
	if (src->abi_minor > ENTROPYD_SOURCE_ABI_MINOR)
		return child_refuse("newer ABI minor: built for %u.%u, this daemon speaks %d.%d",
		    src->abi_major, src->abi_minor, ENTROPYD_SOURCE_ABI_MAJOR,
		    ENTROPYD_SOURCE_ABI_MINOR), -1;
	if (src->size < CHILD_MIN_SOURCE_SIZE)
		return child_refuse("descriptor too small: size %u, ABI %d.0 needs at least %zu",
		    src->size, ENTROPYD_SOURCE_ABI_MAJOR, CHILD_MIN_SOURCE_SIZE), -1;
	if (src->probe == NULL || src->open == NULL || src->read == NULL ||
	    src->pollfd == NULL || src->close == NULL)
		return child_refuse("descriptor lacks one of probe, open, read, pollfd, close"), -1;
	if (src->name == NULL)
		return child_refuse("invalid source name"), -1;
	child_module.src = src;
	for (o = src->options; o != NULL && o->key != NULL; o++)
		child_module.n_options++;
	if (child_module.n_options > PLUGINPROTO_MAX_OPTIONS)
		return child_refuse("more than %d options", PLUGINPROTO_MAX_OPTIONS), -1;
	child_module.values = calloc(child_module.n_options + 1, sizeof *child_module.values);
	child_module.estimate = src->entropy_bits;
	child_send_loaded(src);
	return 0;
}

/* PP_OPTIONS: the estimate in force and each option's value. */
static bool
child_set_options(struct pluginproto_msg *m)
{
	char value[PLUGINPROTO_STRING_MAX + 1];
	uint32_t n, i;
	bool present;

	if (!pluginproto_get_f64(m, &child_module.estimate) || !pluginproto_get_u32(m, &n) ||
	    n != child_module.n_options)
		return false;
	for (i = 0; i < n; i++) {
		if (!pluginproto_get_str(m, value, sizeof value, &present))
			return false;
		free(child_module.values[i]);
		child_module.values[i] = present ? strdup(value) : NULL;
	}
	return pluginproto_done(m);
}

/* Answer a call with an int (and for configure, a reason). */
static void
child_reply(uint16_t type, int rc, const char *err)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, type, 0);
	pluginproto_put_i32(&m, rc);
	if (type == PP_CONFIGURED)
		pluginproto_put_str(&m, err);
	child_send(&m);
}

/* Close every instance, let the module shut down, free everything, and unload. */
static void
child_shutdown(void)
{
	const struct entropyd_source *src = child_module.src;
	struct entropyd_instance *inst;
	size_t i;

	while ((inst = child_instances) != NULL) {
		child_close(inst);
		child_free_instance(inst);
	}
	if (src != NULL && src->size >= offsetof(struct entropyd_source, shutdown) +
	    sizeof src->shutdown && src->shutdown != NULL) {
		child_enter("shutdown");
		src->shutdown(&child_module);
		child_leave();
	}
	for (i = 0; i < child_module.n_options; i++)
		free(child_module.values[i]);
	free(child_module.values);
	child_module.values = NULL;
	while (child_deferred_head != NULL) {
		struct child_deferred *d = child_deferred_head;

		child_deferred_head = d->next;
		free(d);
	}
	if (child_handle != NULL)
		dlclose(child_handle);
}

/* One message from the daemon; false when the host should end. */
static bool
child_serve(void)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg m;
	char err[512];
	int fds[2], rc;
	ssize_t n;

	n = pluginproto_recv(child_control, buf, sizeof buf, MSG_DONTWAIT, fds);
	if (n == -1 && errno == EAGAIN)
		return true;
	if (n <= 0 || !pluginproto_open(&m, buf, (size_t)n)) {
		if (fds[0] >= 0)
			close(fds[0]);
		return false;
	}
	switch (pluginproto_header(&m)->type) {
	case PP_OPTIONS:
		if (!child_set_options(&m))
			return false;
		break;
	case PP_CONFIGURE:
		err[0] = '\0';
		rc = 0;
		if (child_module.src->configure != NULL) {
			child_enter("configure");
			rc = child_module.src->configure(&child_module, &child_host, err, sizeof err);
			child_leave();
		}
		child_reply(PP_CONFIGURED, rc, err);
		break;
	case PP_PROBE:
		child_enter("probe");
		rc = child_module.src->probe(&child_module, &child_host);
		child_leave();
		child_reply(PP_PROBED, rc, NULL);
		break;
	case PP_OPEN:
		child_open(pluginproto_header(&m)->id, fds[0]);
		fds[0] = -1;
		break;
	case PP_CLOSE: {
		struct entropyd_instance *inst = child_find(pluginproto_header(&m)->id);

		if (inst != NULL) {
			child_close(inst);
			if (inst->removed)
				child_free_instance(inst);
		}
		break;
	}
	case PP_FORGET:
		child_forget(pluginproto_header(&m)->id, &m);
		break;
	case PP_SHUTDOWN:
		return false;
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return true;
}

/* The main loop: the daemon's messages, deferred calls, polled instances. */
static void
child_loop(void)
{
	struct pollfd *pfd = NULL;
	struct entropyd_instance **who = NULL, *inst;
	size_t cap = 0, n, i;

	for (;;) {
		n = 0;
		pthread_mutex_lock(&child_lock);
		for (inst = child_instances; inst != NULL; inst = inst->next)
			n += inst->open && !inst->threaded ? 2 : 0;
		if (n + 2 > cap) {
			cap = n + 16;
			pfd = realloc(pfd, cap * sizeof *pfd);
			who = realloc(who, cap * sizeof *who);
			if (pfd == NULL || who == NULL)
				child_fault("out of memory");
		}
		pfd[0] = (struct pollfd){ .fd = child_control, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = child_defer_fd, .events = POLLIN };
		n = 2;
		for (inst = child_instances; inst != NULL; inst = inst->next) {
			if (!inst->open)
				continue;
			if (inst->threaded)
				continue; /* its reader thread takes its wants */
			who[n] = inst;
			pfd[n++] = (struct pollfd){ .fd = inst->data, .events = POLLIN };
			if (inst->fd >= 0 && inst->n_wants > 0 && !inst->ended) {
				who[n] = inst;
				pfd[n++] = (struct pollfd){ .fd = inst->fd, .events = POLLIN };
			}
		}
		pthread_mutex_unlock(&child_lock);
		if (poll(pfd, n, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN)
			child_run_deferred();
		for (i = 2; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			inst = who[i];
			if (pfd[i].fd == inst->data) {
				/* The daemon closed it: the instance is closing. */
				if (!child_take_wants(inst) || (pfd[i].revents & (POLLHUP | POLLERR)))
					child_close(inst);
			} else if (inst->open && inst->n_wants > 0 && !inst->ended)
				child_read_polled(inst);
			/* Anything above may have closed or freed instances: poll afresh. */
			break;
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && !child_serve())
			break;
	}
	free(pfd);
	free(who);
}

int
child_main(int control, int file, uid_t uid, gid_t gid)
{
	struct sigaction sa;
	pthread_t watchdog;
	char err[256];
	int confined;

	child_control = control;
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = child_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(CHILD_SIGNAL, &sa, NULL);
	if ((child_defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		return child_refuse("eventfd: %s", strerror(errno)), EX_OSERR;
	if ((confined = confine_apply(uid, gid, err, sizeof err)) == -1)
		return child_refuse("cannot confine the plugin host: %s", err), EX_OSERR;
	if (confined == 1)
		child_module_log(&child_module, ENTROPYD_LOG_WARNING,
		    "under valgrind: the plugin host runs without its seccomp filter");
	if (child_load(file) == -1)
		return EX_OK;
	if ((errno = pthread_create(&watchdog, NULL, child_watchdog, NULL)) != 0)
		child_fault("cannot start the watchdog: %s", strerror(errno));
	pthread_detach(watchdog);
	child_loop();
	child_shutdown();
	return EX_OK;
}
