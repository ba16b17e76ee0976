/* SPDX-License-Identifier: MIT */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "backoff.h"
#include "clock.h"
#include "engine.h"
#include "log.h"
#include "pluginproto.h"
#include "privdrop.h"
#include "proxy.h"
#include "registry.h"
#include "vmgenid.h"
#include "xmalloc.h"

#ifndef PLUGINHOSTPATH
#define PLUGINHOSTPATH "/usr/local/libexec/entropyd/entropyd-plugin"
#endif

/* How long the daemon waits for a host's answer: a little past the host's own watchdog. */
#define PLUGINHOST_WAIT_MS (PLUGINPROTO_CALL_TIMEOUT_MS + 1000u)
/* How long a host asked to stop may take before it is killed (under valgrind, longer). */
#define PLUGINHOST_STOP_MS 300u
#define PLUGINHOST_STOP_VALGRIND_MS 5000u
/* A host that ran this long before it ended is restarted after the first backoff again. */
#define PLUGINHOST_STABLE_NS (60ull * 1000000000u)
/* Log lines a host may send per second; more are counted and dropped. */
#define PLUGINHOST_LOG_PER_SECOND 100u
/* Messages handled per wake-up, so a flooding host cannot hold the loop. */
#define PLUGINHOST_BATCH 256
/* Messages kept for later at most (while waiting for an answer). */
#define PLUGINHOST_QUEUE_MAX 1024

/* A message that came while the daemon waited for an answer. */
struct pluginhost_queued {
	STAILQ_ENTRY(pluginhost_queued) entry;
	size_t len;
	uint8_t buf[];
};

/* A host's instance id and the daemon's instance. */
struct pluginhost_link {
	uint32_t child_id;
	struct entropyd_instance *inst;
};

struct pluginhost {
	TAILQ_ENTRY(pluginhost) entry;
	uint32_t id;            /* the launcher's name for the current process */
	char *path;
	int file;               /* the plugin file, kept for restarts */
	int control;            /* -1 while no host runs */
	bool running;           /* loaded and serving */
	bool ending;            /* killed or lost: the launcher's PP_EXITED is due */
	bool stopping;          /* asked to stop: not restarted */
	bool failed;            /* came back as another plugin: not restarted */
	uint64_t generation;    /* one per process: proxies of an old one are stale */
	char fault[512];        /* why this process is ending (its PP_FAULT, or ours) */
	char ended[512];        /* how the last process ended */
	struct entropyd_source desc;
	char *name, *description;
	struct entropyd_option *options;
	size_t n_options;
	struct pluginhost_link *links;
	size_t n_links;
	uint32_t adding;        /* the host instance being added (PP_ADD in progress) */
	STAILQ_HEAD(, pluginhost_queued) queue;
	unsigned n_queued;
	bool dispatching;
	struct event *ev_control, *ev_restart;
	unsigned backoff_ms;
	uint64_t started_ns;
	uint64_t restarts, protocol_errors;
	uint64_t log_window_ns, log_dropped;
	unsigned log_lines;
};

/* One open instance of a proxy: its data socket and the wants outstanding. */
struct pluginhost_proxy {
	struct pluginhost *host;
	struct entropyd_instance *inst;
	uint64_t generation;
	uint32_t child_id;
	int data;
	uint32_t wants[PLUGINPROTO_WINDOW]; /* the reads asked for and not yet answered */
	uint32_t n_wants;
	uint32_t forget_seq;    /* the last PP_FORGET sent; while the host has not */
	uint32_t forgotten_seq; /* answered it with PP_FORGOTTEN, its bytes are dropped */
	bool result_held;       /* a read's end taken while dropping, for the next read */
	int32_t result[2];
};

static TAILQ_HEAD(, pluginhost) pluginhosts = TAILQ_HEAD_INITIALIZER(pluginhosts);
static struct {
	int fd;
	pid_t pid;
	uint32_t next_id;
	struct event *ev;
	struct event_base *base;
} pluginhost_launcher = { .fd = -1, .pid = -1 };

static int pluginhost_probe(struct entropyd_module *, const struct entropyd_host *);
static int pluginhost_configure(struct entropyd_module *, const struct entropyd_host *, char *,
    size_t);
static int pluginhost_open(struct entropyd_instance *, void **);
static ssize_t pluginhost_read(void *, void *, size_t);
static int pluginhost_pollfd(void *);
static void pluginhost_close(void *);
static void pluginhost_shutdown(struct entropyd_module *);
static void pluginhost_kill(struct pluginhost *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void pluginhost_dispatch(struct pluginhost *);
static void pluginhost_watch(struct pluginhost *);
static int pluginhost_boot(struct pluginhost *, char *, size_t);
static void pluginhost_restart(int, short, void *);
static bool pluginhost_log_allowed(struct pluginhost *);
static size_t pluginhost_forget(void *);

/* The entropyd-plugin program: $ENTROPYD_PLUGIN_HOST, the installed one, or the daemon's neighbour. */
static const char *
pluginhost_program(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("ENTROPYD_PLUGIN_HOST");
	char self[PATH_MAX];
	ssize_t n;

	if (env != NULL && *env != '\0')
		return env;
	if (access(PLUGINHOSTPATH, X_OK) == 0)
		return PLUGINHOSTPATH;
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
		self[n] = '\0';
		snprintf(path, sizeof path, "%s/entropyd-plugin", dirname(self));
		if (access(path, X_OK) == 0)
			return path;
	}
	return PLUGINHOSTPATH;
}

/* The host of a proxy module. */
static struct pluginhost *
pluginhost_of(const struct entropyd_module *m)
{
	return (struct pluginhost *)(void *)((char *)(uintptr_t)m->src -
	    offsetof(struct pluginhost, desc));
}

/* A host by the launcher's id. */
static struct pluginhost *
pluginhost_by_id(uint32_t id)
{
	struct pluginhost *h;

	TAILQ_FOREACH(h, &pluginhosts, entry)
		if (h->id == id)
			return h;
	return NULL;
}

/* The daemon's module of a host, once registered. */
static struct entropyd_module *
pluginhost_module(struct pluginhost *h)
{
	struct entropyd_module *m = registry_find(h->name);

	return m != NULL && m->src == &h->desc ? m : NULL;
}

/* How a process ended, for operators: the signal's name, or the exit status. */
static void
pluginhost_status_text(int status, char *buf, size_t len)
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
pluginhost_ended(struct pluginhost *h)
{
	struct pluginhost_queued *q;
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
		registry_host.instance_gone(h->links[i].inst, why);
	h->n_links = 0;
	if (h->failed)
		return;
	if (h->started_ns != 0 && clock_now_ns() - h->started_ns > PLUGINHOST_STABLE_NS)
		h->backoff_ms = 0;
	h->backoff_ms = backoff_next(h->backoff_ms);
	if (h->ev_restart != NULL) {
		tv.tv_sec = h->backoff_ms / 1000;
		tv.tv_usec = (suseconds_t)(h->backoff_ms % 1000) * 1000;
		evtimer_add(h->ev_restart, &tv);
		log_info("plugin %s: restarting its host in %u ms", h->path, h->backoff_ms);
	}
}

/*
 * A dead host's last words may still wait on its socket (the launcher's
 * news can come first): take the reason from its PP_FAULT.
 */
static void
pluginhost_last_words(struct pluginhost *h)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	char text[PLUGINPROTO_STRING_MAX + 1];
	struct pluginproto_msg msg;
	int32_t kind;
	bool present;
	int fds[2];
	ssize_t n;

	while (h->control != -1 && h->fault[0] == '\0' &&
	    (n = pluginproto_recv(h->control, buf, sizeof buf, MSG_DONTWAIT, fds)) > 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		if (!pluginproto_open(&msg, buf, (size_t)n) ||
		    pluginproto_header(&msg)->type != PP_FAULT ||
		    !pluginproto_get_i32(&msg, &kind) ||
		    !pluginproto_get_str(&msg, text, sizeof text, &present) || !present)
			continue;
		if (kind == PLUGINPROTO_FAULT_PROTOCOL)
			h->protocol_errors++;
		snprintf(h->fault, sizeof h->fault, "%.*s", (int)sizeof h->fault - 1, text);
	}
}

/* The launcher says a host process ended, with its wait status. */
static void
pluginhost_exited(struct pluginhost *h, int status)
{
	pluginhost_last_words(h);
	if (h->fault[0] != '\0')
		snprintf(h->ended, sizeof h->ended, "%s", h->fault);
	else
		pluginhost_status_text(status, h->ended, sizeof h->ended);
	h->fault[0] = '\0';
	pluginhost_ended(h);
}

/* Handle what the launcher sent; spawned_id/pid: an awaited PP_SPAWNED. */
static bool
pluginhost_launcher_drain(uint32_t spawned_id, int32_t *pid)
{
	uint8_t buf[64];
	struct pluginproto_msg m;
	struct pluginhost *h;
	int32_t v;
	int fds[2];
	bool got = false;
	ssize_t n;

	while ((n = pluginproto_recv(pluginhost_launcher.fd, buf, sizeof buf, MSG_DONTWAIT,
	    fds)) > 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		if (!pluginproto_open(&m, buf, (size_t)n) || !pluginproto_get_i32(&m, &v))
			continue;
		if (pluginproto_header(&m)->type == PP_SPAWNED &&
		    pluginproto_header(&m)->id == spawned_id) {
			*pid = v;
			got = true;
		} else if (pluginproto_header(&m)->type == PP_EXITED &&
		    (h = pluginhost_by_id(pluginproto_header(&m)->id)) != NULL &&
		    (h->running || h->ending))
			pluginhost_exited(h, v);
	}
	if (n == 0 || (n == -1 && errno != EAGAIN)) {
		log_warnx("plugin launcher: gone; plugins cannot be (re)started");
		if (pluginhost_launcher.ev != NULL)
			event_free(pluginhost_launcher.ev);
		pluginhost_launcher.ev = NULL;
		close(pluginhost_launcher.fd);
		pluginhost_launcher.fd = -1;
	}
	return got;
}

static void
pluginhost_launcher_readable(int fd, short what, void *arg)
{
	int32_t pid;

	pluginhost_launcher_drain(0, &pid);
}

/* Start the launcher, once: entropyd-plugin --launcher with its socket on fd 3. */
static int
pluginhost_launcher_start(char *err, size_t errlen)
{
	const char *program = pluginhost_program();
	int sv[2];
	pid_t pid;

	if (pluginhost_launcher.fd != -1)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		int fd;

		if (dup2(sv[1], 3) == -1)
			_exit(127);
		for (fd = 4; fd < 1024; fd++)
			close(fd);
		execl(program, program, "--launcher", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	pluginhost_launcher.fd = sv[0];
	pluginhost_launcher.pid = pid;
	if (pluginhost_launcher.base != NULL) {
		pluginhost_launcher.ev = event_new(pluginhost_launcher.base, sv[0],
		    EV_READ | EV_PERSIST, pluginhost_launcher_readable, NULL);
		event_add(pluginhost_launcher.ev, NULL);
	}
	log_debug("plugin launcher %s started (pid %d)", program, (int)pid);
	return 0;
}

/* Wait up to ms for fd to be readable; false on timeout. */
static bool
pluginhost_poll(int fd, uint64_t deadline_ns)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t now;
	int rc;

	for (;;) {
		now = clock_now_ns();
		if (now >= deadline_ns)
			return false;
		rc = poll(&pfd, 1, (int)((deadline_ns - now) / 1000000u) + 1);
		if (rc > 0)
			return true;
		if (rc == -1 && errno != EINTR)
			return false;
	}
}

/* Start a process for h through the launcher. 0, or -1 with err. */
static int
pluginhost_spawn(struct pluginhost *h, char *err, size_t errlen)
{
	struct pluginproto_msg m;
	uint8_t buf[64];
	uint64_t deadline;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int32_t pid = -ETIMEDOUT;
	int sv[2];

	if (pluginhost_launcher_start(err, errlen) == -1)
		return -1;
	if (pluginhost_launcher.fd == -1) {
		snprintf(err, errlen, "the plugin launcher is gone");
		return -1;
	}
	privdrop_ids(&uid, &gid);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	h->id = ++pluginhost_launcher.next_id;
	pluginproto_begin(&m, buf, sizeof buf, PP_SPAWN, h->id);
	pluginproto_put_u32(&m, uid);
	pluginproto_put_u32(&m, gid);
	if (pluginproto_send(pluginhost_launcher.fd, &m, sv[1], h->file) == -1) {
		snprintf(err, errlen, "the plugin launcher: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	deadline = clock_now_ns() + (uint64_t)PLUGINHOST_WAIT_MS * 1000000u;
	while (pluginhost_launcher.fd != -1 && pluginhost_poll(pluginhost_launcher.fd, deadline))
		if (pluginhost_launcher_drain(h->id, &pid))
			break;
	if (pid <= 0) {
		snprintf(err, errlen, "cannot start %s: %s", pluginhost_program(),
		    strerror(pid < 0 ? -pid : EIO));
		close(sv[0]);
		return -1;
	}
	h->control = sv[0];
	h->running = true;
	h->fault[0] = '\0';
	return 0;
}

/* Wait for the launcher's word on a host that is ending (at most a second or two). */
static void
pluginhost_await_exit(struct pluginhost *h)
{
	uint64_t deadline = clock_now_ns() + 2000000000ull;
	int32_t pid;

	while (h->ending && pluginhost_launcher.fd != -1 &&
	    pluginhost_poll(pluginhost_launcher.fd, deadline))
		pluginhost_launcher_drain(0, &pid);
	if (h->ending) {
		snprintf(h->ended, sizeof h->ended, "%s", h->fault[0] ? h->fault : "ended");
		h->fault[0] = '\0';
		pluginhost_ended(h);
	}
}

/* End a host now (the launcher kills it) for reason; its PP_EXITED finishes the job. */
static void
pluginhost_kill(struct pluginhost *h, const char *fmt, ...)
{
	struct pluginproto_msg m;
	uint8_t buf[64];
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
	if (pluginhost_launcher.fd != -1) {
		pluginproto_begin(&m, buf, sizeof buf, PP_KILL, h->id);
		pluginproto_send(pluginhost_launcher.fd, &m, -1, -1);
	}
	/* Before the loop runs, nothing else would hear the launcher: wait here. */
	if (pluginhost_launcher.base == NULL)
		pluginhost_await_exit(h);
}

/* A malformed or unasked-for message: count it and end the host. */
static void
pluginhost_protocol_error(struct pluginhost *h, const char *what)
{
	h->protocol_errors++;
	pluginhost_kill(h, "protocol error: %s", what);
}

/* Send a message on a host's control socket; a failure ends the host. */
static int
pluginhost_send(struct pluginhost *h, struct pluginproto_msg *m, int fd)
{
	if (!h->running)
		return -1;
	if (pluginproto_send(h->control, m, fd, -1) == -1) {
		pluginhost_kill(h, NULL);
		return -1;
	}
	return 0;
}

/* Receive one message from a host into buf: its length, 0 when none now, -1 when it ended. */
static ssize_t
pluginhost_recv(struct pluginhost *h, uint8_t *buf, size_t cap)
{
	int fds[2];
	ssize_t n;

	n = pluginproto_recv(h->control, buf, cap, MSG_DONTWAIT, fds);
	if (fds[0] >= 0 || fds[1] >= 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		pluginhost_protocol_error(h, "a descriptor was sent to the daemon");
		return -1;
	}
	if (n == -1 && errno == EAGAIN)
		return 0;
	if (n == -1 && errno == EMSGSIZE) {
		pluginhost_protocol_error(h, "a message too large");
		return -1;
	}
	if (n < (ssize_t)sizeof(struct pluginproto_header)) {
		/* The socket closed: the process ended, or closed it. */
		pluginhost_kill(h, NULL);
		return -1;
	}
	return n;
}

/*
 * Keep a message for later (it came while the daemon waited for another, or
 * in a batch): a log line over the host's budget is dropped here, and a
 * host that sends more than PLUGINHOST_QUEUE_MAX messages at once is ended,
 * so a flood never grows the daemon's memory.
 */
static void
pluginhost_enqueue(struct pluginhost *h, const uint8_t *buf, size_t len)
{
	const struct pluginproto_header *hd = (const struct pluginproto_header *)(const void *)buf;
	struct pluginhost_queued *q;

	if (hd->type == PP_LOG && !pluginhost_log_allowed(h))
		return;
	if (h->n_queued >= PLUGINHOST_QUEUE_MAX) {
		pluginhost_protocol_error(h, "too many messages at once");
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
static ssize_t
pluginhost_await(struct pluginhost *h, uint16_t type, const char *what, uint8_t *buf,
    size_t cap)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)PLUGINHOST_WAIT_MS * 1000000u;
	ssize_t n;

	while (h->running) {
		if (!pluginhost_poll(h->control, deadline)) {
			pluginhost_kill(h, "%s() did not return within %u s", what,
			    PLUGINHOST_WAIT_MS / 1000);
			break;
		}
		while ((n = pluginhost_recv(h, buf, cap)) > 0) {
			uint16_t got = ((const struct pluginproto_header *)(const void *)buf)->type;

			/* A plugin that refuses to load answers PP_LOADED with PP_REFUSED. */
			if (got == type || (type == PP_LOADED && got == PP_REFUSED))
				return n;
			pluginhost_enqueue(h, buf, (size_t)n);
		}
	}
	if (h->ending && pluginhost_launcher.base != NULL) {
		/* Hear how it ended before the caller says why it failed. */
		pluginhost_await_exit(h);
	}
	return -1;
}

/* Why a host is not there, for messages. */
static const char *
pluginhost_absent_reason(struct pluginhost *h)
{
	return h->ended[0] != '\0' ? h->ended : "not running";
}

/* Find the daemon's instance of a host instance id, or NULL. */
static struct pluginhost_link *
pluginhost_link(struct pluginhost *h, uint32_t child_id)
{
	size_t i;

	for (i = 0; i < h->n_links; i++)
		if (h->links[i].child_id == child_id)
			return &h->links[i];
	return NULL;
}

/* Link a host instance id to the daemon's instance. */
static void
pluginhost_add_link(struct pluginhost *h, uint32_t child_id, struct entropyd_instance *inst)
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
pluginhost_drop_link(struct pluginhost *h, struct pluginhost_link *l)
{
	*l = h->links[--h->n_links];
}

/* Whether a host may log one more line this second; says so once when it may not. */
static bool
pluginhost_log_allowed(struct pluginhost *h)
{
	uint64_t now = clock_now_ns();

	if (now - h->log_window_ns >= 1000000000u) {
		if (h->log_dropped > 0)
			log_warnx("plugin %s: %" PRIu64 " log lines dropped (more than %u a second)",
			    h->name != NULL ? h->name : h->path, h->log_dropped,
			    PLUGINHOST_LOG_PER_SECOND);
		h->log_window_ns = now;
		h->log_lines = 0;
		h->log_dropped = 0;
	}
	if (++h->log_lines <= PLUGINHOST_LOG_PER_SECOND)
		return true;
	if (h->log_dropped++ == 0)
		log_warnx("plugin %s: more than %u log lines in a second; dropping the rest "
		    "of this second's", h->name != NULL ? h->name : h->path,
		    PLUGINHOST_LOG_PER_SECOND);
	return false;
}

/* A log line from a host (within its budget, checked as it came). */
static void
pluginhost_log_line(struct pluginhost *h, struct entropyd_instance *inst, int priority,
    const char *line)
{
	if (priority < LOG_ERR)
		priority = LOG_ERR;
	if (priority > LOG_DEBUG)
		priority = LOG_DEBUG;
	if (inst != NULL)
		registry_host.log(inst, priority, "%s", line);
	else
		log_printf(priority, "%s: %s", h->name, line);
}

/* One message a host sent on its own (not an answer). */
static void
pluginhost_handle(struct pluginhost *h, uint8_t *buf, size_t len)
{
	struct entropyd_module *m = pluginhost_module(h);
	struct pluginproto_msg msg;
	struct pluginhost_link *l;
	char text[PLUGINPROTO_STRING_MAX + 1], device[PLUGINPROTO_STRING_MAX + 1];
	struct entropyd_instance *inst;
	uint32_t id;
	int32_t priority;
	double bits;
	bool present, present2;

	pluginproto_open(&msg, buf, len);
	id = pluginproto_header(&msg)->id;
	l = id != 0 ? pluginhost_link(h, id) : NULL;
	switch (pluginproto_header(&msg)->type) {
	case PP_LOG:
		if (!pluginproto_get_i32(&msg, &priority) ||
		    !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present || (id != 0 && l == NULL))
			break;
		pluginhost_log_line(h, l != NULL ? l->inst : NULL, priority, text);
		return;
	case PP_UNUSABLE:
		if (!pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present)
			break;
		if (m != NULL)
			registry_host.unusable(m, "%s", text);
		return;
	case PP_ADD:
		if (id == 0 || !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_get_str(&msg, device, sizeof device, &present2) ||
		    !pluginproto_done(&msg) || !present || !present2)
			break;
		if (l == NULL && h->n_links >= PLUGINPROTO_MAX_INSTANCES) {
			pluginhost_protocol_error(h, "too many instances");
			return;
		}
		if (m == NULL)
			return;
		h->adding = id;
		inst = registry_host.add_instance(m, text, device, NULL);
		h->adding = 0;
		if (inst != NULL && h->running)
			pluginhost_add_link(h, id, inst);
		return;
	case PP_REMOVE:
		if (l == NULL || !pluginproto_done(&msg))
			break;
		inst = l->inst;
		pluginhost_drop_link(h, l);
		registry_host.remove_instance(inst);
		return;
	case PP_GONE:
		if (l == NULL || !pluginproto_get_str(&msg, text, sizeof text, &present) ||
		    !pluginproto_done(&msg) || !present)
			break;
		registry_host.instance_gone(l->inst, text);
		return;
	case PP_LIMIT:
		if (l == NULL || !pluginproto_get_f64(&msg, &bits) || !pluginproto_done(&msg) ||
		    !isfinite(bits))
			break;
		registry_host.limit_entropy(l->inst, bits);
		return;
	case PP_FAULT:
		if (!pluginproto_get_i32(&msg, &priority) ||
		    !pluginproto_get_str(&msg, text, sizeof text, &present) || !present)
			break;
		if (priority == PLUGINPROTO_FAULT_PROTOCOL)
			h->protocol_errors++;
		snprintf(h->fault, sizeof h->fault, "%.*s", (int)sizeof h->fault - 1, text);
		return;
	}
	snprintf(text, sizeof text, "unexpected or malformed message (type %u, id %u)",
	    pluginproto_header(&msg)->type, id);
	pluginhost_protocol_error(h, text);
}

/* Handle the queued messages in order (not re-entered: a nested call only queues). */
static void
pluginhost_dispatch(struct pluginhost *h)
{
	struct pluginhost_queued *q;

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
			pluginhost_handle(h, q->buf, q->len);
		free(q);
	}
	h->dispatching = false;
}

/* The control socket is readable: take a batch of messages and handle them. */
static void
pluginhost_control_readable(int fd, short what, void *arg)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginhost *h = arg;
	ssize_t n;
	int i;

	for (i = 0; i < PLUGINHOST_BATCH && h->running; i++) {
		if ((n = pluginhost_recv(h, buf, sizeof buf)) <= 0)
			break;
		pluginhost_enqueue(h, buf, (size_t)n);
	}
	pluginhost_dispatch(h);
}

/* Watch a running host's control socket from the loop. */
static void
pluginhost_watch(struct pluginhost *h)
{
	if (pluginhost_launcher.base == NULL || !h->running || h->ev_control != NULL)
		return;
	h->ev_control = event_new(pluginhost_launcher.base, h->control, EV_READ | EV_PERSIST,
	    pluginhost_control_readable, h);
	event_add(h->ev_control, NULL);
}

/* Send the options in force and the module's estimate. */
static int
pluginhost_send_options(struct pluginhost *h, struct entropyd_module *m)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	size_t i;

	pluginproto_begin(&msg, buf, sizeof buf, PP_OPTIONS, 0);
	pluginproto_put_f64(&msg, m->entropy_bits);
	pluginproto_put_u32(&msg, (uint32_t)m->n_options);
	for (i = 0; i < m->n_options; i++)
		pluginproto_put_str(&msg, m->options[i].value);
	return pluginhost_send(h, &msg, -1);
}

/* Make a call (CONFIGURE or PROBE) and wait for its answer's int; -1 if the host ended. */
static int
pluginhost_call(struct pluginhost *h, struct entropyd_module *m, uint16_t call, uint16_t answer,
    const char *what, char *err, size_t errlen)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	uint8_t req[32];
	char text[PLUGINPROTO_STRING_MAX + 1];
	int32_t rc;
	bool present;
	ssize_t n;

	pluginproto_begin(&msg, req, sizeof req, call, 0);
	if (pluginhost_send_options(h, m) == -1 || pluginhost_send(h, &msg, -1) == -1 ||
	    (n = pluginhost_await(h, answer, what, buf, sizeof buf)) == -1) {
		snprintf(err, errlen, "plugin host ended during %s(): %s", what,
		    pluginhost_absent_reason(h));
		return -2;
	}
	pluginproto_open(&msg, buf, (size_t)n);
	if (!pluginproto_get_i32(&msg, &rc) || (answer == PP_CONFIGURED &&
	    !pluginproto_get_str(&msg, text, sizeof text, &present)) || !pluginproto_done(&msg)) {
		pluginhost_protocol_error(h, "a malformed answer");
		snprintf(err, errlen, "plugin host: protocol error: a malformed answer");
		return -2;
	}
	if (answer == PP_CONFIGURED && rc != 0)
		snprintf(err, errlen, "%s", present ? text : "configure() failed");
	return rc;
}

static int
pluginhost_configure(struct entropyd_module *m, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	struct pluginhost *h = pluginhost_of(m);
	int rc;

	m->forget_held = pluginhost_forget;
	if (!h->running) {
		snprintf(err, errlen, "plugin host not running: %s", pluginhost_absent_reason(h));
		return -1;
	}
	rc = pluginhost_call(h, m, PP_CONFIGURE, PP_CONFIGURED, "configure", err, errlen);
	pluginhost_dispatch(h);
	return rc == 0 ? 0 : -1;
}

static int
pluginhost_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	struct pluginhost *h = pluginhost_of(m);
	char err[512];
	int rc;

	if (!h->running) {
		registry_host.unusable(m, "plugin host not running: %s; restarting",
		    pluginhost_absent_reason(h));
		return 0;
	}
	rc = pluginhost_call(h, m, PP_PROBE, PP_PROBED, "probe", err, sizeof err);
	pluginhost_dispatch(h);
	if (rc == -2) {
		registry_host.unusable(m, "%s", err);
		return 0;
	}
	if (!h->running) {
		/* Ended by what it sent during the probe. */
		registry_host.unusable(m, "plugin host ended during probe(): %s",
		    h->fault[0] != '\0' ? h->fault : pluginhost_absent_reason(h));
		return 0;
	}
	return rc;
}

/* Ask for count more reads of up to len bytes on an open proxy (within the window). */
static void
pluginhost_want(struct pluginhost_proxy *p, uint32_t len, uint32_t count)
{
	struct pluginproto_header hd = { .type = PP_WANT, .id = p->child_id };
	uint32_t want[2] = { len, count };
	uint8_t buf[sizeof hd + sizeof want];

	if (count > PLUGINPROTO_WINDOW - p->n_wants)
		count = want[1] = PLUGINPROTO_WINDOW - p->n_wants;
	if (count == 0)
		return;
	memcpy(buf, &hd, sizeof hd);
	memcpy(buf + sizeof hd, want, sizeof want);
	if (send(p->data, buf, sizeof buf, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof buf)
		while (count-- > 0)
			p->wants[p->n_wants++] = len;
}

static int
pluginhost_open(struct entropyd_instance *inst, void **state)
{
	struct pluginhost *h = pluginhost_of(inst->module);
	struct pluginhost_link *l = NULL;
	struct pluginhost_proxy *p;
	struct pluginproto_msg msg;
	uint8_t buf[32];
	uint32_t child_id;
	size_t i;
	int sv[2];

	if (!h->running) {
		registry_note_error(inst, "plugin host ended: %s; restarting",
		    pluginhost_absent_reason(h));
		return -1;
	}
	for (i = 0; i < h->n_links; i++)
		if (h->links[i].inst == inst)
			l = &h->links[i];
	if (l != NULL)
		child_id = l->child_id;
	else if (h->adding != 0)
		child_id = h->adding;
	else {
		registry_note_error(inst, "its plugin has not added it since its host started");
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == -1) {
		registry_set_error(inst, "socketpair: %s", strerror(errno));
		return -1;
	}
	p = xcalloc(1, sizeof *p);
	p->host = h;
	p->inst = inst;
	p->generation = h->generation;
	p->child_id = child_id;
	p->data = sv[0];
	/*
	 * The first wants wait in the socket before the host holds it: a host
	 * that fails the open answers and closes its end at once, and asking
	 * after that would find no one to ask.
	 */
	pluginhost_want(p, ENGINE_POLL_READ_BYTES, PLUGINPROTO_WINDOW);
	pluginproto_begin(&msg, buf, sizeof buf, PP_OPEN, child_id);
	if (pluginhost_send(h, &msg, sv[1]) == -1) {
		close(sv[0]);
		close(sv[1]);
		free(p);
		registry_note_error(inst, "plugin host ended");
		return -1;
	}
	close(sv[1]);
	*state = p;
	return 0;
}

/*
 * Whether a message on a data socket is one the host may send: the
 * answer to a read asked for (bytes, or a read's end), or an end unasked
 * for (an open that failed is answered before any read).
 */
static bool
pluginhost_expected(const struct pluginhost_proxy *p, const struct pluginproto_header *hd,
    ssize_t n)
{
	if (hd->type == PP_DATA)
		return p->n_wants > 0 && n > 0;
	return hd->type == PP_RESULT && n == (ssize_t)sizeof p->result;
}

/* A message answered the oldest read asked for, if one was. */
static void
pluginhost_answered(struct pluginhost_proxy *p)
{
	if (p->n_wants > 0)
		memmove(p->wants, p->wants + 1, --p->n_wants * sizeof p->wants[0]);
}

/* A host broke the data protocol: note it on the instance and end the host. */
static ssize_t
pluginhost_data_error(struct pluginhost_proxy *p, const char *what)
{
	registry_note_error(p->inst, "plugin host: protocol error: %s", what);
	if (p->generation == p->host->generation)
		pluginhost_protocol_error(p->host, what);
	errno = EPROTO;
	return ENTROPYD_READ_ERROR;
}

/*
 * While the host has not said FORGOTTEN: take what it sent before, dropping
 * its bytes (wiped, counted into *dropped) and keeping a read's end for the
 * next read. Stops at EAGAIN (0), at the FORGOTTEN awaited (1: what follows
 * is fresh), or at a broken host (-1, the instance's error noted). buf:
 * len bytes of room.
 */
static int
pluginhost_drop_stale(struct pluginhost_proxy *p, void *buf, size_t len, uint64_t *dropped)
{
	struct pluginproto_header hd;
	uint32_t seq;
	size_t cap;
	ssize_t n;

	while (p->forget_seq != p->forgotten_seq) {
		cap = p->n_wants > 0 && p->wants[0] < len ? p->wants[0] : len;
		n = pluginproto_recv_split(p->data, &hd, buf, cap);
		if (n == -1 && errno == EAGAIN)
			return 0;
		if (n == -2 || (n == -1 && errno != EMSGSIZE)) {
			registry_note_error(p->inst, "plugin host ended");
			errno = EPIPE;
			return -1;
		}
		if (n == -1 || hd.id != p->child_id) {
			explicit_bzero(buf, cap);
			pluginhost_data_error(p, "a message larger than asked, or another "
			    "instance's, while forgetting");
			return -1;
		}
		if (hd.type == PP_FORGOTTEN) {
			if (n != (ssize_t)sizeof seq) {
				pluginhost_data_error(p, "a malformed end of forgetting");
				return -1;
			}
			memcpy(&seq, buf, sizeof seq);
			if (seq == p->forgotten_seq ||
			    seq - p->forgotten_seq > p->forget_seq - p->forgotten_seq) {
				pluginhost_data_error(p, "an unasked-for end of forgetting");
				return -1;
			}
			p->forgotten_seq = seq;
			continue;
		}
		if (!pluginhost_expected(p, &hd, n)) {
			explicit_bzero(buf, cap);
			pluginhost_data_error(p, "an unexpected message on a data socket");
			return -1;
		}
		pluginhost_answered(p);
		if (hd.type == PP_RESULT) {
			/* No bytes: the end of the instance's input stands. */
			memcpy(p->result, buf, sizeof p->result);
			explicit_bzero(buf, sizeof p->result);
			if (p->result[0] > 0) {
				pluginhost_data_error(p, "a read result that is not an end or an error");
				return -1;
			}
			p->result_held = true;
			return 0;
		}
		explicit_bzero(buf, (size_t)n);
		*dropped += (uint64_t)n;
	}
	return 1;
}

/*
 * The VM generation changed (the module's forget_held): an open proxy
 * instance has its host call the plugin's forget() and drops every byte
 * the host sent before that (the reads in flight), now and as they come;
 * returns how many it dropped now. Nothing read before the change is fed
 * after it.
 */
static size_t
pluginhost_forget(void *state)
{
	static uint8_t buf[ENGINE_POLL_READ_BYTES]; /* the engine's reads: the wants' size */
	struct pluginhost_proxy *p = state;
	struct pluginproto_msg msg;
	uint8_t req[32];
	uint64_t dropped = 0;

	if (p->generation != p->host->generation || !p->host->running)
		return 0; /* its host is gone: nothing more comes, its reads fail */
	pluginproto_begin(&msg, req, sizeof req, PP_FORGET, p->child_id);
	pluginproto_put_u32(&msg, ++p->forget_seq);
	if (pluginhost_send(p->host, &msg, -1) == -1) {
		p->forgotten_seq = p->forget_seq;
		return 0;
	}
	/*
	 * What it sent before is dropped now. Nothing more is asked for until
	 * it says FORGOTTEN (then the next read asks again), so what it reads
	 * in between is only what it was already asked for. When that came
	 * already, ask now: no read would come to ask.
	 */
	if (pluginhost_drop_stale(p, buf, sizeof buf, &dropped) == 1 &&
	    p->n_wants <= PLUGINPROTO_WINDOW / 2)
		pluginhost_want(p, sizeof buf, PLUGINPROTO_WINDOW - p->n_wants);
	return (size_t)dropped;
}

static ssize_t
pluginhost_read(void *state, void *buf, size_t len)
{
	struct pluginhost_proxy *p = state;
	struct pluginproto_header hd;
	int32_t result[2];
	size_t cap;
	ssize_t n;

	if (p->result_held) {
		p->result_held = false;
		errno = p->result[1];
		return p->result[0];
	}
	if (p->forget_seq != p->forgotten_seq) {
		uint64_t dropped = 0;
		int rc = pluginhost_drop_stale(p, buf, len, &dropped);

		vmgenid_note_discarded(dropped);
		if (rc != 0 || p->result_held)
			return rc >= 0 ? pluginhost_read(state, buf, len) : ENTROPYD_READ_ERROR;
		return ENTROPYD_READ_AGAIN;
	}
	if (p->n_wants == 0) {
		/*
		 * Only when asking failed: ask again. A queue that was full
		 * drains; a host that closed the socket left its last word in
		 * it (an open that failed), which is read below.
		 */
		pluginhost_want(p, (uint32_t)len, PLUGINPROTO_WINDOW);
	}
	cap = p->n_wants > 0 && p->wants[0] < len ? p->wants[0] : len;
	n = pluginproto_recv_split(p->data, &hd, buf, cap);
	if (n == -1 && errno == EAGAIN)
		return ENTROPYD_READ_AGAIN;
	if (n == -2 || (n == -1 && errno != EMSGSIZE)) {
		registry_note_error(p->inst, "plugin host ended");
		errno = EPIPE;
		return ENTROPYD_READ_ERROR;
	}
	if (n == -1 || hd.id != p->child_id) {
		char what[96];

		snprintf(what, sizeof what, "a read of %zu bytes answered with more, or with "
		    "another instance's message", cap);
		explicit_bzero(buf, cap);
		return pluginhost_data_error(p, what);
	}
	if (hd.type == PP_FORGOTTEN)
		return pluginhost_data_error(p, "an unasked-for end of forgetting");
	if (!pluginhost_expected(p, &hd, n)) {
		explicit_bzero(buf, cap);
		return pluginhost_data_error(p, "an unexpected message on a data socket");
	}
	pluginhost_answered(p);
	if (hd.type == PP_DATA) {
		if (p->n_wants <= PLUGINPROTO_WINDOW / 2)
			pluginhost_want(p, (uint32_t)len, PLUGINPROTO_WINDOW - p->n_wants);
		return n;
	}
	memcpy(result, buf, sizeof result);
	explicit_bzero(buf, sizeof result);
	if (result[0] > 0)
		return pluginhost_data_error(p, "a read result that is not an end or an error");
	errno = result[1];
	return result[0];
}

static int
pluginhost_pollfd(void *state)
{
	return ((struct pluginhost_proxy *)state)->data;
}

static void
pluginhost_close(void *state)
{
	struct pluginhost_proxy *p = state;
	struct pluginproto_msg msg;
	uint8_t buf[32];

	if (p->generation == p->host->generation && p->host->running) {
		pluginproto_begin(&msg, buf, sizeof buf, PP_CLOSE, p->child_id);
		pluginhost_send(p->host, &msg, -1);
	}
	close(p->data);
	free(p);
}

/* The module is being unloaded: ask the host to stop. */
static void
pluginhost_shutdown(struct entropyd_module *m)
{
	struct pluginhost *h = pluginhost_of(m);
	struct pluginproto_msg msg;
	uint8_t buf[32];

	h->stopping = true;
	pluginproto_begin(&msg, buf, sizeof buf, PP_SHUTDOWN, 0);
	pluginhost_send(h, &msg, -1);
}

/* Take a string field into a new string; false when malformed or absent. */
static bool
pluginhost_get_string(struct pluginproto_msg *msg, char **out, bool null_ok)
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
pluginhost_free_desc(struct pluginhost *h)
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
pluginhost_read_desc(struct pluginhost *h, struct pluginproto_msg *msg)
{
	uint32_t abi_major, abi_minor, size, flags, sample_bits, has_configure, n, i;
	struct entropyd_source *d = &h->desc;
	double bits;

	if (!pluginproto_get_u32(msg, &abi_major) || !pluginproto_get_u32(msg, &abi_minor) ||
	    !pluginproto_get_u32(msg, &size) || !pluginproto_get_u32(msg, &flags) ||
	    !pluginproto_get_f64(msg, &bits) || !pluginproto_get_u32(msg, &sample_bits) ||
	    !pluginproto_get_u32(msg, &has_configure) ||
	    !pluginhost_get_string(msg, &h->name, false) ||
	    !pluginhost_get_string(msg, &h->description, true) ||
	    !pluginproto_get_u32(msg, &n) || n > PLUGINPROTO_MAX_OPTIONS ||
	    abi_major != ENTROPYD_SOURCE_ABI_MAJOR || abi_minor > ENTROPYD_SOURCE_ABI_MINOR)
		return false;
	h->options = xcalloc(n + 1, sizeof *h->options);
	for (i = 0; i < n; i++) {
		h->n_options++;
		if (!pluginhost_get_string(msg, (char **)(uintptr_t)&h->options[i].key, false) ||
		    !pluginhost_get_string(msg, (char **)(uintptr_t)&h->options[i].default_value,
		    true) ||
		    !pluginhost_get_string(msg, (char **)(uintptr_t)&h->options[i].help, true))
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
	    ENTROPYD_SOURCE_CREDIT_ON_REQUEST);
	d->entropy_bits = bits;
	d->sample_bits = sample_bits;
	d->options = h->options;
	d->probe = pluginhost_probe;
	d->open = pluginhost_open;
	d->read = pluginhost_read;
	d->pollfd = pluginhost_pollfd;
	d->close = pluginhost_close;
	d->configure = pluginhost_configure;
	d->shutdown = pluginhost_shutdown;
	return true;
}

/*
 * Start a process for h and read its descriptor: 0; 1 when the plugin
 * refused to load (the reason in err); -1 when the host failed.
 */
static int
pluginhost_load(struct pluginhost *h, char *err, size_t errlen)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	char text[PLUGINPROTO_STRING_MAX + 1];
	bool present;
	ssize_t n;

	if (pluginhost_spawn(h, err, errlen) == -1)
		return -1;
	if ((n = pluginhost_await(h, PP_LOADED, "load", buf, sizeof buf)) == -1) {
		if (h->ending)
			pluginhost_await_exit(h);
		snprintf(err, errlen, "the plugin host ended before loading it: %s",
		    pluginhost_absent_reason(h));
		return -1;
	}
	pluginproto_open(&msg, buf, (size_t)n);
	if (pluginproto_header(&msg)->type == PP_REFUSED) {
		if (!pluginproto_get_str(&msg, text, sizeof text, &present) || !present)
			snprintf(text, sizeof text, "refused by its host");
		snprintf(err, errlen, "%s", text);
		h->stopping = true;
		pluginhost_kill(h, "refused");
		return 1;
	}
	if (!pluginhost_read_desc(h, &msg)) {
		pluginhost_protocol_error(h, "a malformed descriptor");
		snprintf(err, errlen, "the plugin host sent a malformed descriptor");
		return -1;
	}
	h->started_ns = clock_now_ns();
	return 0;
}

struct pluginhost *
pluginhost_start(const char *path, int fd, char *err, size_t errlen)
{
	struct pluginhost *h = xcalloc(1, sizeof *h);

	h->path = xstrdup(path);
	h->file = fd;
	h->control = -1;
	STAILQ_INIT(&h->queue);
	TAILQ_INSERT_TAIL(&pluginhosts, h, entry);
	if (pluginhost_launcher.base != NULL)
		h->ev_restart = evtimer_new(pluginhost_launcher.base, pluginhost_restart, h);
	if (pluginhost_load(h, err, errlen) != 0) {
		h->stopping = true;
		pluginhost_free(h);
		return NULL;
	}
	pluginhost_watch(h);
	return h;
}

const struct entropyd_source *
pluginhost_source(struct pluginhost *h)
{
	return &h->desc;
}

/* Start an ended host again: load, check it is the same plugin, configure and probe. */
static int
pluginhost_boot(struct pluginhost *h, char *err, size_t errlen)
{
	struct entropyd_source old = h->desc;
	char *old_name = h->name, *old_description = h->description;
	struct entropyd_option *old_options = h->options;
	size_t old_n = h->n_options;
	struct entropyd_module *m;
	bool same;

	h->name = h->description = NULL;
	h->options = NULL;
	h->n_options = 0;
	if (pluginhost_load(h, err, errlen) != 0) {
		pluginhost_free_desc(h);
		h->desc = old;
		h->name = old_name;
		h->description = old_description;
		h->options = old_options;
		h->n_options = old_n;
		return -1;
	}
	same = strcmp(h->name, old_name) == 0 && h->desc.flags == old.flags &&
	    h->desc.entropy_bits == old.entropy_bits && h->desc.sample_bits == old.sample_bits &&
	    h->n_options == old_n;
	pluginhost_free_desc(h);
	h->desc = old;
	h->name = old_name;
	h->description = old_description;
	h->options = old_options;
	h->n_options = old_n;
	if (!same) {
		h->failed = true;
		pluginhost_kill(h, "came back with another descriptor; not restarted again");
		snprintf(err, errlen, "its descriptor changed");
		return -1;
	}
	pluginhost_watch(h);
	if ((m = pluginhost_module(h)) == NULL || !m->enabled)
		return 0;
	if (pluginhost_configure(m, &registry_host, err, errlen) == -1) {
		pluginhost_kill(h, "configure() failed after a restart: %s", err);
		return -1;
	}
	registry_probe(m);
	return h->running ? 0 : -1;
}

/* The restart timer. */
static void
pluginhost_restart(int fd, short what, void *arg)
{
	struct pluginhost *h = arg;
	char err[512];

	if (h->running || h->ending || h->stopping || h->failed)
		return;
	h->restarts++;
	log_info("plugin %s: restarting its host (restart %" PRIu64 ")", h->path, h->restarts);
	if (pluginhost_boot(h, err, sizeof err) == 0 || h->running || h->ending ||
	    evtimer_pending(h->ev_restart, NULL))
		return;
	/* It never ran (no launcher, say): try again later. */
	snprintf(h->ended, sizeof h->ended, "%s", err);
	h->started_ns = 0;
	pluginhost_ended(h);
}

void
pluginhost_free(struct pluginhost *h)
{
	struct pluginhost_queued *q;
	struct pluginproto_msg msg;
	uint8_t buf[256];
	const char *preload = getenv("LD_PRELOAD");
	uint64_t deadline = clock_now_ns() + (uint64_t)(preload != NULL &&
	    strstr(preload, "vgpreload") != NULL ? PLUGINHOST_STOP_VALGRIND_MS :
	    PLUGINHOST_STOP_MS) * 1000000u;

	h->stopping = true;
	if (h->running) {
		pluginproto_begin(&msg, buf, sizeof buf, PP_SHUTDOWN, 0);
		pluginproto_send(h->control, &msg, -1, -1);
		/* Its socket closes when it is done. */
		while (pluginhost_poll(h->control, deadline) &&
		    recv(h->control, buf, sizeof buf, MSG_DONTWAIT) > 0)
			continue;
	}
	if ((h->running || h->ending) && pluginhost_launcher.fd != -1) {
		pluginproto_begin(&msg, buf, sizeof buf, PP_KILL, h->id);
		pluginproto_send(pluginhost_launcher.fd, &msg, -1, -1);
	}
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
	TAILQ_REMOVE(&pluginhosts, h, entry);
	if (h->file != -1)
		close(h->file);
	pluginhost_free_desc(h);
	free(h->links);
	free(h->path);
	free(h);
}

void
pluginhost_free_all(void)
{
	while (!TAILQ_EMPTY(&pluginhosts))
		pluginhost_free(TAILQ_FIRST(&pluginhosts));
	if (pluginhost_launcher.fd != -1) {
		/* Its socket closing ends it; reap it if it is ours. */
		close(pluginhost_launcher.fd);
		pluginhost_launcher.fd = -1;
		if (pluginhost_launcher.pid > 0)
			waitpid(pluginhost_launcher.pid, NULL, WNOHANG);
	}
}

void
pluginhost_prepare(void)
{
	char err[256];

	if (privdrop_prepared() && pluginhost_launcher_start(err, sizeof err) == -1)
		log_warnx("plugin launcher: %s", err);
}

void
pluginhost_attach(struct event_base *base)
{
	struct pluginhost *h;

	pluginhost_launcher.base = base;
	if (pluginhost_launcher.fd != -1) {
		pluginhost_launcher.ev = event_new(base, pluginhost_launcher.fd,
		    EV_READ | EV_PERSIST, pluginhost_launcher_readable, NULL);
		event_add(pluginhost_launcher.ev, NULL);
	}
	TAILQ_FOREACH(h, &pluginhosts, entry) {
		h->ev_restart = evtimer_new(base, pluginhost_restart, h);
		pluginhost_watch(h);
		if (!h->running && !h->stopping && !h->failed) {
			struct timeval tv = { 1, 0 };

			evtimer_add(h->ev_restart, &tv);
		}
	}
}

void
pluginhost_detach(void)
{
	struct pluginhost *h;

	TAILQ_FOREACH(h, &pluginhosts, entry) {
		if (h->ev_control != NULL)
			event_free(h->ev_control);
		if (h->ev_restart != NULL)
			event_free(h->ev_restart);
		h->ev_control = h->ev_restart = NULL;
	}
	if (pluginhost_launcher.ev != NULL)
		event_free(pluginhost_launcher.ev);
	pluginhost_launcher.ev = NULL;
	pluginhost_launcher.base = NULL;
}

void
pluginhost_metrics(struct evbuffer *buf)
{
	struct pluginhost *h;

	if (TAILQ_EMPTY(&pluginhosts))
		return;
	evbuffer_add_printf(buf, "# HELP entropyd_plugin_up 1 while the plugin's host process "
	    "runs.\n# TYPE entropyd_plugin_up gauge\n");
	TAILQ_FOREACH(h, &pluginhosts, entry)
		evbuffer_add_printf(buf, "entropyd_plugin_up{plugin=\"%s\"} %d\n", h->name,
		    h->running);
	evbuffer_add_printf(buf, "# HELP entropyd_plugin_restarts_total Restarts of the plugin's "
	    "host after it crashed, hung, or broke the protocol.\n"
	    "# TYPE entropyd_plugin_restarts_total counter\n");
	TAILQ_FOREACH(h, &pluginhosts, entry)
		evbuffer_add_printf(buf, "entropyd_plugin_restarts_total{plugin=\"%s\"} %" PRIu64 "\n",
		    h->name, h->restarts);
	evbuffer_add_printf(buf, "# HELP entropyd_plugin_protocol_errors_total Malformed or "
	    "unasked-for messages from the plugin's host (each ends it).\n"
	    "# TYPE entropyd_plugin_protocol_errors_total counter\n");
	TAILQ_FOREACH(h, &pluginhosts, entry)
		evbuffer_add_printf(buf, "entropyd_plugin_protocol_errors_total{plugin=\"%s\"} %"
		    PRIu64 "\n", h->name, h->protocol_errors);
}
