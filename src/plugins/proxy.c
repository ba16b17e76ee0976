/* SPDX-License-Identifier: MIT */
/*
 * A plugin as a source module of the worker: a struct entropyd_source built
 * from what its host reported, whose probe, configure, open, read, pollfd,
 * close and forget talk to the host. An open instance is read through a
 * data socket of its own, which the loop polls like any source's fd.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "hostproc_int.h"
#include "registry.h"
#include "vmgenid.h"
#include "xmalloc.h"

/* One open instance of a proxy: its data socket and the wants outstanding. */
struct proxy {
	struct hostproc *host;
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

static int proxy_probe(struct entropyd_module *, const struct entropyd_host *);
static int proxy_open(struct entropyd_instance *, void **);
static ssize_t proxy_read(void *, void *, size_t);
static int proxy_pollfd(void *);
static void proxy_close(void *);
static void proxy_shutdown(struct entropyd_module *);
static size_t proxy_forget(void *);

/* Send the options in force and the module's estimate. */
static int
proxy_send_options(struct hostproc *h, struct entropyd_module *m)
{
	static uint8_t buf[PLUGINPROTO_MAX_BYTES];
	struct pluginproto_msg msg;
	size_t i;

	pluginproto_begin(&msg, buf, sizeof buf, PP_OPTIONS, 0);
	pluginproto_put_f64(&msg, m->entropy_bits);
	pluginproto_put_u32(&msg, (uint32_t)m->n_options);
	for (i = 0; i < m->n_options; i++)
		pluginproto_put_str(&msg, m->options[i].value);
	return hostproc_send(h, &msg, -1);
}

/* Make a call (CONFIGURE or PROBE) and wait for its answer's int; -1 if the host ended. */
static int
proxy_call(struct hostproc *h, struct entropyd_module *m, uint16_t call, uint16_t answer,
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
	if (proxy_send_options(h, m) == -1 || hostproc_send(h, &msg, -1) == -1 ||
	    (n = hostproc_await(h, answer, what, buf, sizeof buf)) == -1) {
		snprintf(err, errlen, "plugin host ended during %s(): %s", what,
		    hostproc_absent_reason(h));
		return -2;
	}
	pluginproto_open(&msg, buf, (size_t)n);
	if (!pluginproto_get_i32(&msg, &rc) || (answer == PP_CONFIGURED &&
	    !pluginproto_get_str(&msg, text, sizeof text, &present)) || !pluginproto_done(&msg)) {
		hostproc_protocol_error(h, "a malformed answer");
		snprintf(err, errlen, "plugin host: protocol error: a malformed answer");
		return -2;
	}
	if (answer == PP_CONFIGURED && rc != 0)
		snprintf(err, errlen, "%s", present ? text : "configure() failed");
	return rc;
}

int
proxy_configure(struct entropyd_module *m, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	struct hostproc *h = hostproc_of(m);
	int rc;

	m->forget_held = proxy_forget;
	if (!h->running) {
		snprintf(err, errlen, "plugin host not running: %s", hostproc_absent_reason(h));
		return -1;
	}
	rc = proxy_call(h, m, PP_CONFIGURE, PP_CONFIGURED, "configure", err, errlen);
	hostproc_dispatch(h);
	return rc == 0 ? 0 : -1;
}

static int
proxy_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	struct hostproc *h = hostproc_of(m);
	char err[512];
	int rc;

	if (!h->running) {
		registry_host()->unusable(m, "plugin host not running: %s; restarting",
		    hostproc_absent_reason(h));
		return 0;
	}
	rc = proxy_call(h, m, PP_PROBE, PP_PROBED, "probe", err, sizeof err);
	hostproc_dispatch(h);
	if (rc == -2) {
		registry_host()->unusable(m, "%s", err);
		return 0;
	}
	if (!h->running) {
		/* Ended by what it sent during the probe. */
		registry_host()->unusable(m, "plugin host ended during probe(): %s",
		    h->fault[0] != '\0' ? h->fault : hostproc_absent_reason(h));
		return 0;
	}
	return rc;
}

/* Ask for count more reads of up to len bytes on an open proxy (within the window). */
static void
proxy_want(struct proxy *p, uint32_t len, uint32_t count)
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
proxy_open(struct entropyd_instance *inst, void **state)
{
	struct hostproc *h = hostproc_of(inst->module);
	struct hostproc_link *l = NULL;
	struct proxy *p;
	struct pluginproto_msg msg;
	uint8_t buf[32];
	uint32_t child_id;
	size_t i;
	int sv[2];

	if (!h->running) {
		registry_note_error(inst, "plugin host ended: %s; restarting",
		    hostproc_absent_reason(h));
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
	proxy_want(p, ENGINE_POLL_READ_BYTES, PLUGINPROTO_WINDOW);
	pluginproto_begin(&msg, buf, sizeof buf, PP_OPEN, child_id);
	if (hostproc_send(h, &msg, sv[1]) == -1) {
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
proxy_expected(const struct proxy *p, const struct pluginproto_header *hd,
    ssize_t n)
{
	if (hd->type == PP_DATA)
		return p->n_wants > 0 && n > 0;
	return hd->type == PP_RESULT && n == (ssize_t)sizeof p->result;
}

/* A message answered the oldest read asked for, if one was. */
static void
proxy_answered(struct proxy *p)
{
	if (p->n_wants > 0)
		memmove(p->wants, p->wants + 1, --p->n_wants * sizeof p->wants[0]);
}

/* A host broke the data protocol: note it on the instance and end the host. */
static ssize_t
proxy_data_error(struct proxy *p, const char *what)
{
	registry_note_error(p->inst, "plugin host: protocol error: %s", what);
	if (p->generation == p->host->generation)
		hostproc_protocol_error(p->host, what);
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
proxy_drop_stale(struct proxy *p, void *buf, size_t len, uint64_t *dropped)
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
			proxy_data_error(p, "a message larger than asked, or another "
			    "instance's, while forgetting");
			return -1;
		}
		if (hd.type == PP_FORGOTTEN) {
			if (n != (ssize_t)sizeof seq) {
				proxy_data_error(p, "a malformed end of forgetting");
				return -1;
			}
			memcpy(&seq, buf, sizeof seq);
			if (seq == p->forgotten_seq ||
			    seq - p->forgotten_seq > p->forget_seq - p->forgotten_seq) {
				proxy_data_error(p, "an unasked-for end of forgetting");
				return -1;
			}
			p->forgotten_seq = seq;
			continue;
		}
		if (!proxy_expected(p, &hd, n)) {
			explicit_bzero(buf, cap);
			proxy_data_error(p, "an unexpected message on a data socket");
			return -1;
		}
		proxy_answered(p);
		if (hd.type == PP_RESULT) {
			/* No bytes: the end of the instance's input stands. */
			memcpy(p->result, buf, sizeof p->result);
			explicit_bzero(buf, sizeof p->result);
			if (p->result[0] > 0) {
				proxy_data_error(p, "a read result that is not an end or an error");
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
proxy_forget(void *state)
{
	static uint8_t buf[ENGINE_POLL_READ_BYTES]; /* the engine's reads: the wants' size */
	struct proxy *p = state;
	struct pluginproto_msg msg;
	uint8_t req[32];
	uint64_t dropped = 0;

	if (p->generation != p->host->generation || !p->host->running)
		return 0; /* its host is gone: nothing more comes, its reads fail */
	pluginproto_begin(&msg, req, sizeof req, PP_FORGET, p->child_id);
	pluginproto_put_u32(&msg, ++p->forget_seq);
	if (hostproc_send(p->host, &msg, -1) == -1) {
		p->forgotten_seq = p->forget_seq;
		return 0;
	}
	/*
	 * What it sent before is dropped now. Nothing more is asked for until
	 * it says FORGOTTEN (then the next read asks again), so what it reads
	 * in between is only what it was already asked for. When that came
	 * already, ask now: no read would come to ask.
	 */
	if (proxy_drop_stale(p, buf, sizeof buf, &dropped) == 1 &&
	    p->n_wants <= PLUGINPROTO_WINDOW / 2)
		proxy_want(p, sizeof buf, PLUGINPROTO_WINDOW - p->n_wants);
	return (size_t)dropped;
}

static ssize_t
proxy_read(void *state, void *buf, size_t len)
{
	struct proxy *p = state;
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
		int rc = proxy_drop_stale(p, buf, len, &dropped);

		vmgenid_note_discarded(dropped);
		if (rc != 0 || p->result_held)
			return rc >= 0 ? proxy_read(state, buf, len) : ENTROPYD_READ_ERROR;
		return ENTROPYD_READ_AGAIN;
	}
	if (p->n_wants == 0) {
		/*
		 * Only when asking failed: ask again. A queue that was full
		 * drains; a host that closed the socket left its last word in
		 * it (an open that failed), which is read below.
		 */
		proxy_want(p, (uint32_t)len, PLUGINPROTO_WINDOW);
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
		return proxy_data_error(p, what);
	}
	if (hd.type == PP_FORGOTTEN)
		return proxy_data_error(p, "an unasked-for end of forgetting");
	if (!proxy_expected(p, &hd, n)) {
		explicit_bzero(buf, cap);
		return proxy_data_error(p, "an unexpected message on a data socket");
	}
	proxy_answered(p);
	if (hd.type == PP_DATA) {
		if (p->n_wants <= PLUGINPROTO_WINDOW / 2)
			proxy_want(p, (uint32_t)len, PLUGINPROTO_WINDOW - p->n_wants);
		return n;
	}
	memcpy(result, buf, sizeof result);
	explicit_bzero(buf, sizeof result);
	if (result[0] > 0)
		return proxy_data_error(p, "a read result that is not an end or an error");
	errno = result[1];
	return result[0];
}

static int
proxy_pollfd(void *state)
{
	return ((struct proxy *)state)->data;
}

static void
proxy_close(void *state)
{
	struct proxy *p = state;
	struct pluginproto_msg msg;
	uint8_t buf[32];

	if (p->generation == p->host->generation && p->host->running) {
		pluginproto_begin(&msg, buf, sizeof buf, PP_CLOSE, p->child_id);
		hostproc_send(p->host, &msg, -1);
	}
	close(p->data);
	free(p);
}

/* The module is being unloaded: ask the host to stop. */
static void
proxy_shutdown(struct entropyd_module *m)
{
	struct hostproc *h = hostproc_of(m);
	struct pluginproto_msg msg;
	uint8_t buf[32];

	h->stopping = true;
	pluginproto_begin(&msg, buf, sizeof buf, PP_SHUTDOWN, 0);
	hostproc_send(h, &msg, -1);
}

void
proxy_install(struct entropyd_source *d)
{
	d->probe = proxy_probe;
	d->open = proxy_open;
	d->read = proxy_read;
	d->pollfd = proxy_pollfd;
	d->close = proxy_close;
	d->configure = proxy_configure;
	d->shutdown = proxy_shutdown;
}
