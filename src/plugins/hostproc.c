/* SPDX-License-Identifier: MIT */
/*
 * Each drop-in plugin's host process as the worker sees it: its control
 * socket (calls and their answers, the messages a host sends on its own:
 * log lines within a budget, instances added and removed), how it ended,
 * and its restart after a backoff. A host that misbehaves costs only its
 * own plugin.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "backoff.h"
#include "clock.h"
#include "hostproc_int.h"
#include "log.h"
#include "msg.h"
#include "registry.h"
#include "xmalloc.h"

static TAILQ_HEAD(, hostproc) hostprocs = TAILQ_HEAD_INITIALIZER(hostprocs);
/* The worker's loop, once it runs (hostproc_attach). */
static struct event_base *hostproc_base;

static void hostproc_kill(struct hostproc *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void hostproc_watch(struct hostproc *);
static int hostproc_boot(struct hostproc *, char *, size_t);
static void hostproc_restart(int, short, void *);
static bool hostproc_log_allowed(struct hostproc *);
static void hostproc_await_exit(struct hostproc *);

/* The host of a proxy module. */
struct hostproc *
hostproc_of(const struct entropyd_module *m)
{
	return (struct hostproc *)(void *)((char *)(uintptr_t)m->src -
	    offsetof(struct hostproc, desc));
}

/* A host by the launcher's id. */
static struct hostproc *
hostproc_by_id(uint32_t id)
{
	struct hostproc *h;

	TAILQ_FOREACH(h, &hostprocs, entry)
		if (h->id == id)
			return h;
	return NULL;
}

/* The daemon's module of a host, once registered. */
static struct entropyd_module *
hostproc_module(struct hostproc *h)
{
	struct entropyd_module *m = registry_find(h->name);

	return m != NULL && m->src == &h->desc ? m : NULL;
}

/* How a process ended, for operators: the signal's name, or the exit status. */
static void
hostproc_status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status)) {
		const char *name = sigabbrev_np(WTERMSIG(status));

		if (name != NULL)
			snprintf(buf, len, "killed by SIG%s", name);
		else
			snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	} else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "ended (wait status %#x)", (unsigned)status);
}

/* The process is gone: its instances go absent with the reason, and it is restarted later. */
static void
hostproc_ended(struct hostproc *h)
{
	struct hostproc_queued *q;
	struct timeval tv;
	char why[sizeof h->ended + 32];
	size_t i;

	if (h->control != -1)
		close(h->control);
	h->control = -1;
	if (h->ev_control != NULL)
		event_free(h->ev_control);
	h->ev_control = NULL;
	h->running = h->ending = false;
	h->generation++;
	while ((q = STAILQ_FIRST(&h->queue)) != NULL) {
		STAILQ_REMOVE_HEAD(&h->queue, entry);
		free(q);
	}
	h->n_queued = 0;
	if (h->stopping)
		return;
	snprintf(why, sizeof why, "plugin host ended: %s", h->ended);
	log_warnx("plugin %s: host ended: %s", h->path, h->ended);
	for (i = 0; i < h->n_links; i++)
		registry_host()->instance_gone(h->links[i].inst, why);
	h->n_links = 0;
	if (h->failed)
		return;
	if (h->started_ns != 0 && clock_now_ns() - h->started_ns > HOSTPROC_STABLE_NS)
		h->backoff_ms = 0;
	h->backoff_ms = backoff_next(h->backoff_ms);
	if (h->ev_restart != NULL) {
		tv = clock_tv_ms(h->backoff_ms);
		evtimer_add(h->ev_restart, &tv);
		log_info("plugin %s: restarting its host in %u ms", h->path, h->backoff_ms);
	}
}

/*
 * A host's PP_FAULT (msg, past its header): its reason is why the host
 * ends, counted when it is a protocol error. False when malformed.
 */
static bool
hostproc_take_fault(struct hostproc *h, struct pluginproto_msg *msg)
{
	char text[PLUGINPROTO_STRING_MAX + 1];
	int32_t kind;
	bool present;

	if (!pluginproto_get_i32(msg, &kind) ||
	    !pluginproto_get_str(msg, text, sizeof text, &present) || !present)
		return false;
	if (kind == PLUGINPROTO_FAULT_PROTOCOL)
		h->protocol_errors++;
	snprintf(h->fault, sizeof h->fault, "%.*s", (int)sizeof h->fault - 1, text);
	return true;
}

/*
 * A dead host's last words may still wait on its socket (the launcher's
 * news can come first): take the reason from its PP_FAULT.
 */
static void
hostproc_last_words(struct hostproc *h)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	int fds[2];
	ssize_t n;

	while (h->control != -1 && h->fault[0] == '\0' &&
	    (n = pluginproto_recv(h->control, buf, sizeof buf, MSG_DONTWAIT, fds)) > 0) {
		msg_close_fds(fds);
		if (pluginproto_open(&msg, buf, (size_t)n) &&
		    pluginproto_header(&msg)->type == PP_FAULT)
			hostproc_take_fault(h, &msg);
	}
}

void
hostproc_exited(uint32_t id, int status)
{
	struct hostproc *h = hostproc_by_id(id);

	if (h == NULL || !(h->running || h->ending))
		return;
	hostproc_last_words(h);
	if (h->fault[0] != '\0')
		snprintf(h->ended, sizeof h->ended, "%s", h->fault);
	else
		hostproc_status_text(status, h->ended, sizeof h->ended);
	h->fault[0] = '\0';
	hostproc_ended(h);
}

/* Wait for the launcher's word on a host that is ending (at most a second or two). */
static void
hostproc_await_exit(struct hostproc *h)
{
	uint64_t deadline = clock_now_ns() + 2000000000ull;

	while (h->ending && launch_wait(deadline))
		continue;
	if (h->ending) {
		snprintf(h->ended, sizeof h->ended, "%s", h->fault[0] ? h->fault : "ended");
		h->fault[0] = '\0';
		hostproc_ended(h);
	}
}

/* End a host now (the launcher kills it) for reason; its PP_EXITED finishes the job. */
static void
hostproc_kill(struct hostproc *h, const char *fmt, ...)
{
	va_list ap;

	if (!h->running)
		return;
	if (fmt != NULL && h->fault[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(h->fault, sizeof h->fault, fmt, ap);
		va_end(ap);
	}
	h->running = false;
	h->ending = true;
	if (h->ev_control != NULL)
		event_del(h->ev_control);
	launch_kill(h->id);
	/* Before the loop runs, nothing else would hear the launcher: wait here. */
	if (hostproc_base == NULL)
		hostproc_await_exit(h);
}

/* A malformed or unasked-for message: count it and end the host. */
void
hostproc_protocol_error(struct hostproc *h, const char *what)
{
	h->protocol_errors++;
	hostproc_kill(h, "protocol error: %s", what);
}

/* Send a message on a host's control socket; a failure ends the host. */
int
hostproc_send(struct hostproc *h, struct pluginproto_msg *m, int fd)
{
	if (!h->running)
		return -1;
	if (pluginproto_send(h->control, m, fd, -1) == -1) {
		hostproc_kill(h, NULL);
		return -1;
	}
	return 0;
}

/* Receive one message from a host into buf: its length, 0 when none now, -1 when it ended. */
static ssize_t
hostproc_recv(struct hostproc *h, uint8_t *buf, size_t cap)
{
	int fds[2];
	ssize_t n;

	n = pluginproto_recv(h->control, buf, cap, MSG_DONTWAIT, fds);
	if (fds[0] >= 0 || fds[1] >= 0) {
		msg_close_fds(fds);
		hostproc_protocol_error(h, "a descriptor was sent to the daemon");
		return -1;
	}
	if (n == -1 && errno == EAGAIN)
		return 0;
	if (n == -1 && errno == EMSGSIZE) {
		hostproc_protocol_error(h, "a message too large");
		return -1;
	}
	if (n < (ssize_t)sizeof(struct pluginproto_header)) {
		/* The socket closed: the process ended, or closed it. */
		hostproc_kill(h, NULL);
		return -1;
	}
	return n;
}

/*
 * Keep a message for later (it came while the daemon waited for another, or
 * in a batch): a log line over the host's budget is dropped here, and a
 * host that sends more than HOSTPROC_QUEUE_MAX messages at once is ended,
 * so a flood never grows the daemon's memory.
 */
static void
hostproc_enqueue(struct hostproc *h, const uint8_t *buf, size_t len)
{
	const struct pluginproto_header *hd = (const struct pluginproto_header *)(const void *)buf;
	struct hostproc_queued *q;

	if (hd->type == PP_LOG && !hostproc_log_allowed(h))
		return;
	if (h->n_queued >= HOSTPROC_QUEUE_MAX) {
		hostproc_protocol_error(h, "too many messages at once");
		return;
	}
	q = xmalloc(sizeof *q + len);
	q->len = len;
	memcpy(q->buf, buf, len);
	STAILQ_INSERT_TAIL(&h->queue, q, entry);
	h->n_queued++;
}

/*
 * Wait for the answer of type to a call (what, for the reason if it never
 * comes); other messages are queued. The answer is left in buf; its length,
 * or -1 when the host ended or was ended.
 */
ssize_t
hostproc_await(struct hostproc *h, uint16_t type, const char *what, uint8_t *buf,
    size_t cap)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)HOSTPROC_WAIT_MS * 1000000u;
	ssize_t n;

	while (h->running) {
		if (!launch_poll(h->control, deadline)) {
			if (launch_stopping())
				hostproc_kill(h, "the daemon is stopping during %s()", what);
			else
				hostproc_kill(h, "%s() did not return within %u s", what,
				    HOSTPROC_WAIT_MS / 1000);
			break;
		}
		while ((n = hostproc_recv(h, buf, cap)) > 0) {
			uint16_t got = ((const struct pluginproto_header *)(const void *)buf)->type;
			struct pluginproto_msg msg;

			/* A plugin that refuses to load answers PP_LOADED with PP_REFUSED. */
			if (got == type || (type == PP_LOADED && got == PP_REFUSED))
				return n;
			/* The host's last words (its watchdog's, say): why it ends, at once. */
			if (got == PP_FAULT && pluginproto_open(&msg, buf, (size_t)n) &&
			    hostproc_take_fault(h, &msg))
				continue;
			hostproc_enqueue(h, buf, (size_t)n);
		}
	}
	if (h->ending && hostproc_base != NULL) {
		/* Hear how it ended before the caller says why it failed. */
		hostproc_await_exit(h);
	}
	return -1;
}

/* Why a host is not there, for messages. */
const char *
hostproc_absent_reason(struct hostproc *h)
{
	return h->ended[0] != '\0' ? h->ended : "not running";
}

/* Find the daemon's instance of a host instance id, or NULL. */
static struct hostproc_link *
hostproc_link(struct hostproc *h, uint32_t child_id)
{
	size_t i;

	for (i = 0; i < h->n_links; i++)
		if (h->links[i].child_id == child_id)
			return &h->links[i];
	return NULL;
}

/* Link a host instance id to the daemon's instance. */
static void
hostproc_add_link(struct hostproc *h, uint32_t child_id, struct entropyd_instance *inst)
{
	size_t i;

	for (i = 0; i < h->n_links; i++)
		if (h->links[i].inst == inst || h->links[i].child_id == child_id) {
			h->links[i].child_id = child_id;
			h->links[i].inst = inst;
			return;
		}
	h->links = xreallocarray(h->links, h->n_links + 1, sizeof *h->links);
	h->links[h->n_links].child_id = child_id;
	h->links[h->n_links++].inst = inst;
}

/* Forget a link. */
static void
hostproc_drop_link(struct hostproc *h, struct hostproc_link *l)
{
	*l = h->links[--h->n_links];
}

/* Whether a host may log one more line this second; says so once when it may not. */
static bool
hostproc_log_allowed(struct hostproc *h)
{
	uint64_t now = clock_now_ns();

	if (now - h->log_window_ns >= 1000000000u) {
		if (h->log_dropped > 0)
			log_warnx("plugin %s: %" PRIu64 " log lines dropped (more than %u a second)",
			    h->name != NULL ? h->name : h->path, h->log_dropped,
			    HOSTPROC_LOG_PER_SECOND);
		h->log_window_ns = now;
		h->log_lines = 0;
		h->log_dropped = 0;
	}
	if (++h->log_lines <= HOSTPROC_LOG_PER_SECOND)
		return true;
	if (h->log_dropped++ == 0)
		log_warnx("plugin %s: more than %u log lines in a second; dropping the rest "
		    "of this second's", h->name != NULL ? h->name : h->path,
		    HOSTPROC_LOG_PER_SECOND);
	return false;
}

/* A log line from a host (within its budget, checked as it came). */
static void
hostproc_log_line(struct hostproc *h, struct entropyd_instance *inst, int priority,
    const char *line)
{
	if (priority < LOG_ERR)
		priority = LOG_ERR;
	if (priority > LOG_DEBUG)
		priority = LOG_DEBUG;
	if (inst != NULL)
		registry_host()->log(inst, priority, "%s", line);
	else
		log_printf(priority, "%s: %s", h->name, line);
}

/* One message a host sent on its own (not an answer). */
static void
hostproc_handle(struct hostproc *h, uint8_t *buf, size_t len)
{
	struct entropyd_module *m = hostproc_module(h);
	struct pluginproto_msg msg;
	struct hostproc_link *l;
	char text[PLUGINPROTO_STRING_MAX + 1], device[PLUGINPROTO_STRING_MAX + 1];
	struct entropyd_instance *inst;
	uint32_t id;
	int32_t priority;
	double bits;
	bool present, present2;

	pluginproto_open(&msg, buf, len);
	id = pluginproto_header(&msg)->id;
	l = id != 0 ? hostproc_link(h, id) : NULL;
	switch (pluginproto_header(&msg)->type) {
	case PP_LOG:
		if (!pluginproto_get_i32(&msg, &priority) ||
		    !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present || (id != 0 && l == NULL))
			break;
		hostproc_log_line(h, l != NULL ? l->inst : NULL, priority, text);
		return;
	case PP_UNUSABLE:
		if (!pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present)
			break;
		if (m != NULL)
			registry_host()->unusable(m, "%s", text);
		return;
	case PP_ADD:
		if (id == 0 || !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_get_str(&msg, device, sizeof device, &present2) ||
		    !pluginproto_done(&msg) || !present || !present2)
			break;
		if (l == NULL && h->n_links >= PLUGINPROTO_MAX_INSTANCES) {
			hostproc_protocol_error(h, "too many instances");
			return;
		}
		if (m == NULL)
			return;
		h->adding = id;
		inst = registry_host()->add_instance(m, text, device, NULL);
		h->adding = 0;
		if (inst != NULL && h->running)
			hostproc_add_link(h, id, inst);
		return;
	case PP_REMOVE:
		if (l == NULL || !pluginproto_done(&msg))
			break;
		inst = l->inst;
		hostproc_drop_link(h, l);
		registry_host()->remove_instance(inst);
		return;
	case PP_GONE:
		if (l == NULL || !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present)
			break;
		registry_host()->instance_gone(l->inst, text);
		return;
	case PP_LIMIT:
		if (l == NULL || !pluginproto_get_f64(&msg, &bits) || !pluginproto_done(&msg) ||
		    !isfinite(bits))
			break;
		registry_host()->limit_entropy(l->inst, bits);
		return;
	case PP_FAULT:
		if (!hostproc_take_fault(h, &msg))
			break;
		return;
	}
	snprintf(text, sizeof text, "unexpected or malformed message (type %u, id %u)",
	    pluginproto_header(&msg)->type, id);
	hostproc_protocol_error(h, text);
}

/* Handle the queued messages in order (not re-entered: a nested call only queues). */
void
hostproc_dispatch(struct hostproc *h)
{
	struct hostproc_queued *q;

	if (h->dispatching)
		return;
	h->dispatching = true;
	while ((q = STAILQ_FIRST(&h->queue)) != NULL) {
		const struct pluginproto_header *hd =
		    (const struct pluginproto_header *)(const void *)q->buf;

		STAILQ_REMOVE_HEAD(&h->queue, entry);
		h->n_queued--;
		/* Once it is ending, only its last words: why, and its log lines. */
		if (h->running || hd->type == PP_FAULT || hd->type == PP_LOG)
			hostproc_handle(h, q->buf, q->len);
		free(q);
	}
	h->dispatching = false;
}

/* The control socket is readable: take a batch of messages and handle them. */
static void
hostproc_control_readable(int fd, short what, void *arg)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct hostproc *h = arg;
	ssize_t n;
	int i;

	for (i = 0; i < HOSTPROC_BATCH && h->running; i++) {
		if ((n = hostproc_recv(h, buf, sizeof buf)) <= 0)
			break;
		hostproc_enqueue(h, buf, (size_t)n);
	}
	hostproc_dispatch(h);
}

/* Watch a running host's control socket from the loop. */
static void
hostproc_watch(struct hostproc *h)
{
	if (hostproc_base == NULL || !h->running || h->ev_control != NULL)
		return;
	h->ev_control = event_new(hostproc_base, h->control, EV_READ | EV_PERSIST,
	    hostproc_control_readable, h);
	event_add(h->ev_control, NULL);
}

/* Take a string field into a new string; false when malformed or absent. */
static bool
hostproc_get_string(struct pluginproto_msg *msg, char **out, bool null_ok)
{
	char text[PLUGINPROTO_STRING_MAX + 1];
	bool present;

	if (!pluginproto_get_str(msg, text, sizeof text, &present) || (!present && !null_ok))
		return false;
	*out = present ? xstrdup(text) : NULL;
	return true;
}

/* Free the descriptor's strings. */
static void
hostproc_free_desc(struct hostproc *h)
{
	size_t i;

	for (i = 0; i < h->n_options; i++) {
		free((char *)(uintptr_t)h->options[i].key);
		free((char *)(uintptr_t)h->options[i].default_value);
		free((char *)(uintptr_t)h->options[i].help);
	}
	free(h->options);
	free(h->name);
	free(h->description);
	h->options = NULL;
	h->name = h->description = NULL;
	h->n_options = 0;
}

/* Build the proxy descriptor from PP_LOADED; false when malformed. */
static bool
hostproc_read_desc(struct hostproc *h, struct pluginproto_msg *msg)
{
	uint32_t abi_major, abi_minor, size, flags, sample_bits, has_configure, n, i;
	struct entropyd_source *d = &h->desc;
	double bits;

	if (!pluginproto_get_u32(msg, &abi_major) || !pluginproto_get_u32(msg, &abi_minor) ||
	    !pluginproto_get_u32(msg, &size) || !pluginproto_get_u32(msg, &flags) ||
	    !pluginproto_get_f64(msg, &bits) || !pluginproto_get_u32(msg, &sample_bits) ||
	    !pluginproto_get_u32(msg, &has_configure) ||
	    !hostproc_get_string(msg, &h->name, false) ||
	    !hostproc_get_string(msg, &h->description, true) ||
	    !pluginproto_get_u32(msg, &n) || n > PLUGINPROTO_MAX_OPTIONS ||
	    abi_major != ENTROPYD_SOURCE_ABI_MAJOR || abi_minor > ENTROPYD_SOURCE_ABI_MINOR)
		return false;
	h->options = xcalloc(n + 1, sizeof *h->options);
	for (i = 0; i < n; i++) {
		h->n_options++;
		if (!hostproc_get_string(msg, (char **)(uintptr_t)&h->options[i].key, false) ||
		    !hostproc_get_string(msg, (char **)(uintptr_t)&h->options[i].default_value,
		    true) ||
		    !hostproc_get_string(msg, (char **)(uintptr_t)&h->options[i].help, true))
			return false;
	}
	if (!pluginproto_done(msg))
		return false;
	memset(d, 0, sizeof *d);
	d->abi_major = ENTROPYD_SOURCE_ABI_MAJOR;
	d->abi_minor = (uint16_t)abi_minor;
	d->size = sizeof *d;
	d->name = h->name;
	d->description = h->description != NULL ? h->description : "";
	d->flags = flags & (ENTROPYD_SOURCE_DEFAULT_ON | ENTROPYD_SOURCE_RAW_SAMPLES |
	    ENTROPYD_SOURCE_CREDIT_ON_REQUEST | ENTROPYD_SOURCE_SLOW_START);
	d->entropy_bits = bits;
	d->sample_bits = sample_bits;
	d->options = h->options;
	proxy_install(d);
	return true;
}

/*
 * Start a process for h and read its descriptor: 0; 1 when the plugin
 * refused to load (the reason in err); -1 when the host failed.
 */
static int
hostproc_load(struct hostproc *h, char *err, size_t errlen)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	char text[PLUGINPROTO_STRING_MAX + 1];
	bool present;
	ssize_t n;

	if (launch_spawn(h->file, &h->id, &h->control, err, errlen) == -1)
		return -1;
	h->running = true;
	h->fault[0] = '\0';
	if ((n = hostproc_await(h, PP_LOADED, "load", buf, sizeof buf)) == -1) {
		if (h->ending)
			hostproc_await_exit(h);
		snprintf(err, errlen, "the plugin host ended before loading it: %s",
		    hostproc_absent_reason(h));
		return -1;
	}
	pluginproto_open(&msg, buf, (size_t)n);
	if (pluginproto_header(&msg)->type == PP_REFUSED) {
		if (!pluginproto_get_str(&msg, text, sizeof text, &present) || !present)
			snprintf(text, sizeof text, "refused by its host");
		snprintf(err, errlen, "%s", text);
		h->stopping = true;
		hostproc_kill(h, "refused");
		return 1;
	}
	if (!hostproc_read_desc(h, &msg)) {
		hostproc_protocol_error(h, "a malformed descriptor");
		snprintf(err, errlen, "the plugin host sent a malformed descriptor");
		return -1;
	}
	h->started_ns = clock_now_ns();
	return 0;
}

struct hostproc *
hostproc_start(const char *path, int fd, char *err, size_t errlen)
{
	struct hostproc *h = xcalloc(1, sizeof *h);

	h->path = xstrdup(path);
	h->file = fd;
	h->control = -1;
	STAILQ_INIT(&h->queue);
	TAILQ_INSERT_TAIL(&hostprocs, h, entry);
	if (hostproc_base != NULL)
		h->ev_restart = evtimer_new(hostproc_base, hostproc_restart, h);
	if (hostproc_load(h, err, errlen) != 0) {
		h->stopping = true;
		hostproc_free(h);
		return NULL;
	}
	hostproc_watch(h);
	return h;
}

const struct entropyd_source *
hostproc_source(struct hostproc *h)
{
	return &h->desc;
}

/* A host's descriptor and the strings it points into, set aside while it reloads. */
struct hostproc_desc {
	struct entropyd_source desc;
	char *name, *description;
	struct entropyd_option *options;
	size_t n_options;
};

/* Free the descriptor read now and put back the one set aside. */
static void
hostproc_restore_desc(struct hostproc *h, const struct hostproc_desc *old)
{
	hostproc_free_desc(h);
	h->desc = old->desc;
	h->name = old->name;
	h->description = old->description;
	h->options = old->options;
	h->n_options = old->n_options;
}

/* Start an ended host again: load, check it is the same plugin, configure and probe. */
static int
hostproc_boot(struct hostproc *h, char *err, size_t errlen)
{
	const struct hostproc_desc old = { h->desc, h->name, h->description, h->options,
	    h->n_options };
	struct entropyd_module *m;
	bool same;

	h->name = h->description = NULL;
	h->options = NULL;
	h->n_options = 0;
	if (hostproc_load(h, err, errlen) != 0) {
		hostproc_restore_desc(h, &old);
		return -1;
	}
	same = strcmp(h->name, old.name) == 0 && h->desc.flags == old.desc.flags &&
	    h->desc.entropy_bits == old.desc.entropy_bits &&
	    h->desc.sample_bits == old.desc.sample_bits && h->n_options == old.n_options;
	hostproc_restore_desc(h, &old);
	if (!same) {
		h->failed = true;
		hostproc_kill(h, "came back with another descriptor; not restarted again");
		snprintf(err, errlen, "its descriptor changed");
		return -1;
	}
	hostproc_watch(h);
	if ((m = hostproc_module(h)) == NULL || !m->enabled)
		return 0;
	if (proxy_configure(m, registry_host(), err, errlen) == -1) {
		hostproc_kill(h, "configure() failed after a restart: %s", err);
		return -1;
	}
	registry_probe(m);
	return h->running ? 0 : -1;
}

/* The restart timer. */
static void
hostproc_restart(int fd, short what, void *arg)
{
	struct hostproc *h = arg;
	char err[512];

	if (h->running || h->ending || h->stopping || h->failed)
		return;
	h->restarts++;
	log_info("plugin %s: restarting its host (restart %" PRIu64 ")", h->path, h->restarts);
	if (hostproc_boot(h, err, sizeof err) == 0 || h->running || h->ending ||
	    evtimer_pending(h->ev_restart, NULL))
		return;
	/* It never ran (no launcher, say): try again later. */
	snprintf(h->ended, sizeof h->ended, "%s", err);
	h->started_ns = 0;
	hostproc_ended(h);
}

void
hostproc_free(struct hostproc *h)
{
	struct hostproc_queued *q;
	struct pluginproto_msg msg;
	uint8_t buf[256];
	const char *preload = getenv("LD_PRELOAD");
	uint64_t deadline = clock_now_ns() + (uint64_t)(preload != NULL &&
	    strstr(preload, "vgpreload") != NULL ? HOSTPROC_STOP_VALGRIND_MS :
	    HOSTPROC_STOP_MS) * 1000000u;

	h->stopping = true;
	if (h->running) {
		pluginproto_begin(&msg, buf, sizeof buf, PP_SHUTDOWN, 0);
		pluginproto_send(h->control, &msg, -1, -1);
		/* Its socket closes when it is done. */
		while (launch_poll(h->control, deadline) &&
		    recv(h->control, buf, sizeof buf, MSG_DONTWAIT) > 0)
			continue;
	}
	if (h->running || h->ending)
		launch_kill(h->id);
	if (h->control != -1)
		close(h->control);
	if (h->ev_control != NULL)
		event_free(h->ev_control);
	if (h->ev_restart != NULL)
		event_free(h->ev_restart);
	while ((q = STAILQ_FIRST(&h->queue)) != NULL) {
		STAILQ_REMOVE_HEAD(&h->queue, entry);
		free(q);
	}
	h->n_queued = 0;
	TAILQ_REMOVE(&hostprocs, h, entry);
	if (h->file != -1)
		close(h->file);
	hostproc_free_desc(h);
	free(h->links);
	free(h->path);
	free(h);
}

void
hostproc_free_all(void)
{
	while (!TAILQ_EMPTY(&hostprocs))
		hostproc_free(TAILQ_FIRST(&hostprocs));
	launch_stop();
}

void
hostproc_attach(struct event_base *base)
{
	struct hostproc *h;

	hostproc_base = base;
	launch_attach(base);
	TAILQ_FOREACH(h, &hostprocs, entry) {
		h->ev_restart = evtimer_new(base, hostproc_restart, h);
		hostproc_watch(h);
		if (!h->running && !h->stopping && !h->failed) {
			struct timeval tv = { 1, 0 };

			evtimer_add(h->ev_restart, &tv);
		}
	}
}

void
hostproc_detach(void)
{
	struct hostproc *h;

	TAILQ_FOREACH(h, &hostprocs, entry) {
		if (h->ev_control != NULL)
			event_free(h->ev_control);
		if (h->ev_restart != NULL)
			event_free(h->ev_restart);
		h->ev_control = h->ev_restart = NULL;
	}
	launch_detach();
	hostproc_base = NULL;
}

void
hostproc_each(void (*fn)(const struct hostproc_stats *, void *), void *arg)
{
	struct hostproc *h;
	struct hostproc_stats st;

	TAILQ_FOREACH(h, &hostprocs, entry) {
		st = (struct hostproc_stats){ .name = h->name, .up = h->running,
		    .restarts = h->restarts, .protocol_errors = h->protocol_errors };
		fn(&st, arg);
	}
}
