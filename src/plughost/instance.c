/* SPDX-License-Identifier: MIT */
/*
 * The plugin's open instances in its host: each answers the daemon's wants
 * on its data socket from read(), polled on the main thread when the
 * plugin gives a descriptor, else from a reader thread of the host's; a
 * read that returns more than asked, or hangs, ends the host. forget()
 * runs between reads, on the thread that reads.
 */
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "child_int.h"
#include "clock.h"

static pthread_cond_t instance_cond = PTHREAD_COND_INITIALIZER;

/* Call the plugin's read() for inst, timed by the watchdog. */
static ssize_t
instance_call_read(struct entropyd_instance *inst, size_t len, int *err)
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
instance_call_forget(struct entropyd_instance *inst, uint32_t seq)
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
instance_answer(struct entropyd_instance *inst, ssize_t n, int err)
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
instance_pop_want(struct entropyd_instance *inst)
{
	if (inst->n_wants == 0)
		return;
	memmove(inst->wants, inst->wants + 1, --inst->n_wants * sizeof inst->wants[0]);
}

/* Does nothing: its delivery makes a blocked read() return EINTR. */
void
instance_interrupt(int sig)
{
}

/* A reader thread waits for the daemon's wants on the data socket itself; false at its end. */
static bool
instance_reader_wait(struct entropyd_instance *inst)
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
	return instance_take_wants(inst) && !(pfd[0].revents & (POLLHUP | POLLERR));
}

/*
 * A reader thread: read while the daemon wants bytes, as the daemon's own
 * threads do. It takes the wants from the data socket itself, so a want
 * costs one wake-up, not two.
 */
static void *
instance_reader(void *arg)
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
			more = instance_reader_wait(inst);
			pthread_mutex_lock(&child_lock);
			if (!more)
				inst->ended = true; /* the daemon closed it: wait to be stopped */
			if (!more && !inst->stop && inst->forget_seq == inst->forgotten_seq)
				pthread_cond_wait(&instance_cond, &child_lock);
		}
		if (inst->stop)
			break;
		if (inst->forget_seq != inst->forgotten_seq) {
			uint32_t seq = inst->forget_seq;

			pthread_mutex_unlock(&child_lock);
			instance_call_forget(inst, seq);
			pthread_mutex_lock(&child_lock);
			inst->forgotten_seq = seq;
			continue;
		}
		len = inst->wants[0];
		pthread_mutex_unlock(&child_lock);
		n = instance_call_read(inst, len, &err);
		pthread_mutex_lock(&child_lock);
		if (inst->stop)
			break;
		pthread_mutex_unlock(&child_lock);
		if (!instance_answer(inst, n, err)) {
			/* Interrupted, or nothing yet: pause so a source cannot spin us. */
			nanosleep(&pause, NULL);
			pthread_mutex_lock(&child_lock);
			continue;
		}
		pthread_mutex_lock(&child_lock);
		instance_pop_want(inst);
	}
	inst->done = true;
	pthread_cond_broadcast(&instance_cond);
	pthread_mutex_unlock(&child_lock);
	return NULL;
}

/* Stop a reader thread; false when it is stuck in read(). */
static bool
instance_stop_reader(struct entropyd_instance *inst)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned waited_ms = 0;
	bool done;

	pthread_mutex_lock(&child_lock);
	inst->stop = true;
	pthread_cond_broadcast(&instance_cond);
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
void
instance_close(struct entropyd_instance *inst)
{
	if (!inst->open)
		return;
	if (inst->threaded && !instance_stop_reader(inst))
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
struct entropyd_instance *
instance_find(uint32_t id)
{
	struct entropyd_instance *inst;

	pthread_mutex_lock(&child_lock);
	for (inst = child_instances; inst != NULL && inst->id != id; inst = inst->next)
		continue;
	pthread_mutex_unlock(&child_lock);
	return inst;
}

/* PP_OPEN: open an instance for the daemon, its bytes to go out on data. */
void
instance_open(uint32_t id, int data)
{
	struct entropyd_instance *inst = instance_find(id);
	struct pluginproto_msg m;
	uint8_t head[64];
	void *state = NULL;
	int rc, err = ENODEV;

	if (data < 0)
		return;
	if (inst == NULL || inst->removed)
		goto fail;
	instance_close(inst);
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
		if ((errno = pthread_create(&inst->thread, NULL, instance_reader, inst)) != 0)
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
bool
instance_take_wants(struct entropyd_instance *inst)
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
		pthread_cond_broadcast(&instance_cond);
		pthread_mutex_unlock(&child_lock);
	}
}

/* The plugin's descriptor is readable and the daemon wants bytes: read once. */
void
instance_read_polled(struct entropyd_instance *inst)
{
	ssize_t n;
	int err;

	n = instance_call_read(inst, inst->wants[0], &err);
	if (instance_answer(inst, n, err)) {
		pthread_mutex_lock(&child_lock);
		instance_pop_want(inst);
		pthread_mutex_unlock(&child_lock);
	}
}

/*
 * PP_FORGET: the VM generation changed. A polled instance forgets here,
 * between the main thread's reads; a reader thread is told, and woken from
 * a blocking read() or wait, to forget before its next read.
 */
void
instance_forget(uint32_t id, struct pluginproto_msg *m)
{
	struct entropyd_instance *inst = instance_find(id);
	uint64_t one = 1;
	uint32_t seq;

	if (!pluginproto_get_u32(m, &seq) || !pluginproto_done(m) || inst == NULL || !inst->open)
		return;
	if (!inst->threaded) {
		instance_call_forget(inst, seq);
		return;
	}
	pthread_mutex_lock(&child_lock);
	inst->forget_seq = seq;
	pthread_cond_broadcast(&instance_cond);
	/* Woken from its wait for wants, or from a read() that blocks. */
	if (write(inst->wake, &one, sizeof one) == -1 && errno != EAGAIN)
		child_fault("cannot wake a reader thread: %s", strerror(errno));
	if (inst->read_since_ns != 0 && !inst->done)
		pthread_kill(inst->thread, CHILD_SIGNAL);
	pthread_mutex_unlock(&child_lock);
}
