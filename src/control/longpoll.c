/* SPDX-License-Identifier: MIT */
/*
 * GET /generation and its long poll: the waiting requests, each with its
 * timer, answered together when the worker publishes a new generation ID
 * (generation_listen), or 304 at their timeout, or forgotten when their
 * client goes away.
 */
#include <sys/queue.h>

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "control.h"
#include "generation.h"
#include "log.h"
#include "longpoll.h"
#include "report.h"
#include "xmalloc.h"

/* One waiting request. */
struct longpoll_waiter {
	TAILQ_ENTRY(longpoll_waiter) entry;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	struct event *timer;
	struct event *hangup;     /* the client's end closed (NULL where the loop cannot say) */
};

TAILQ_HEAD(longpoll_list, longpoll_waiter);

static struct {
	struct event_base *base;
	struct longpoll_list waiters;
	size_t n;
} longpoll;

/* Take a waiter off the list and free it; its request is the caller's to answer. */
static struct evhttp_request *
longpoll_unlist(struct longpoll_waiter *w)
{
	struct evhttp_request *req = w->req;

	TAILQ_REMOVE(&longpoll.waiters, w, entry);
	longpoll.n--;
	event_free(w->timer);
	if (w->hangup != NULL)
		event_free(w->hangup);
	free(w);
	return req;
}

/* Answer with the generation document (text, len bytes); a waiter's connection closes after it. */
static void
longpoll_send(struct evhttp_request *req, const char *text, size_t len, bool waited)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf = evbuffer_new();

	evbuffer_add(buf, text, len);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "Cache-Control", "no-store");
	if (waited)
		evhttp_add_header(h, "Connection", "close");
	control_send(req, 200, "OK", buf);
	evbuffer_free(buf);
}

/* The document as text, with its newline; NULL when it cannot be made. */
static char *
longpoll_document(size_t *len)
{
	struct report_clock c = report_now();
	json_t *doc = report_generation(&c);
	char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(6)) : NULL;
	char *out;

	json_decref(doc);
	if (text == NULL)
		return NULL;
	*len = strlen(text) + 1;
	out = xmalloc(*len + 1);
	memcpy(out, text, *len - 1);
	out[*len - 1] = '\n';
	out[*len] = '\0';
	free(text);
	return out;
}

/* A new ID is out: answer every waiter with it, in this turn of the loop. */
static void
longpoll_published(void *arg)
{
	struct longpoll_waiter *w;
	size_t len = 0;
	char *text;

	if (longpoll.n == 0)
		return;
	if ((text = longpoll_document(&len)) == NULL) {
		log_warnx("control: the generation document could not be made");
		return;
	}
	while ((w = TAILQ_FIRST(&longpoll.waiters)) != NULL)
		longpoll_send(longpoll_unlist(w), text, len, true);
	free(text);
}

/* A waiter's time is up: 304, nothing changed. */
static void
longpoll_expired(int fd, short what, void *arg)
{
	struct evhttp_request *req = longpoll_unlist(arg);

	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	evhttp_send_reply(req, 304, "Not Modified", NULL);
}

/*
 * The client's end of a waiter's connection closed (evhttp reads nothing
 * while a request waits, so it would not know): close ours, which forgets
 * the waiter. A client that only stopped sending (a half close) is still
 * waiting for its answer: it keeps it, and is no longer watched.
 */
static void
longpoll_hangup(int fd, short what, void *arg)
{
	struct longpoll_waiter *w = arg;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	struct evhttp_connection *evcon = w->evcon;

	if (poll(&pfd, 1, 0) == 1 && !(pfd.revents & (POLLHUP | POLLERR))) {
		event_free(w->hangup);
		w->hangup = NULL;
		return;
	}
	(void)longpoll_unlist(w);
	evhttp_connection_free(evcon);
}

/* Parse ?after=ID&timeout=S: 0, or -1 with why in *err. */
static int
longpoll_query(const char *query, bool *has_after, char *after, unsigned *timeout_s,
    const char **err)
{
	struct evkeyvalq params;
	const char *a, *t;
	char *end;
	unsigned long v;
	int rc = 0;

	*has_after = false;
	*timeout_s = LONGPOLL_DEFAULT_TIMEOUT_S;
	if (query == NULL || *query == '\0')
		return 0;
	TAILQ_INIT(&params);
	if (evhttp_parse_query_str(query, &params) == -1) {
		*err = "the query cannot be parsed";
		return -1;
	}
	if ((a = evhttp_find_header(&params, "after")) != NULL) {
		*has_after = true;
		if (!genfile_parse(a, strlen(a), after)) {
			*err = "after: not a generation ID (a UUID)";
			rc = -1;
		}
	}
	if (rc == 0 && (t = evhttp_find_header(&params, "timeout")) != NULL) {
		v = strtoul(t, &end, 10);
		if (*t < '0' || *t > '9' || *end != '\0' || v > LONGPOLL_MAX_TIMEOUT_S) {
			*err = "timeout: not a number of seconds from 0 to 3600";
			rc = -1;
		} else
			*timeout_s = (unsigned)v;
	}
	evhttp_clear_headers(&params);
	return rc;
}

void
longpoll_request(struct evhttp_request *req, const char *query)
{
	const struct generation_stats *g = generation_stats();
	char after[GENFILE_ID_CHARS + 1], *text;
	struct longpoll_waiter *w;
	struct bufferevent *bev;
	struct timeval tv;
	const char *err = NULL;
	unsigned timeout_s;
	bool has_after;
	size_t len;

	if (longpoll_query(query, &has_after, after, &timeout_s, &err) == -1) {
		control_reply_json(req, 400, "Bad Request", "application/json",
		    json_pack("{s:s, s:i, s:s, s:s}", "error", "Bad Request", "status", 400,
		    "path", "/generation", "detail", err));
		return;
	}
	/* Answered now: no ID to wait past, or the ID is another already. */
	if (!has_after || (g->id[0] != '\0' && strcmp(g->id, after) != 0)) {
		if ((text = longpoll_document(&len)) == NULL) {
			evhttp_send_error(req, 500, "Internal Server Error");
			return;
		}
		longpoll_send(req, text, len, false);
		free(text);
		return;
	}
	if (timeout_s == 0) {
		evhttp_send_reply(req, 304, "Not Modified", NULL);
		return;
	}
	if (control_hold(req, timeout_s) == -1) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
		control_reply_json(req, 503, "Service Unavailable", "application/json",
		    json_pack("{s:s, s:i, s:s, s:s}", "error", "Service Unavailable", "status", 503,
		    "path", "/generation", "detail", "too many requests wait already"));
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->req = req;
	w->evcon = evhttp_request_get_connection(req);
	w->timer = evtimer_new(longpoll.base, longpoll_expired, w);
	tv.tv_sec = (time_t)timeout_s;
	tv.tv_usec = 0;
	evtimer_add(w->timer, &tv);
	bev = evhttp_connection_get_bufferevent(w->evcon);
	if (bev != NULL && (event_base_get_features(longpoll.base) & EV_FEATURE_EARLY_CLOSE) &&
	    (w->hangup = event_new(longpoll.base, bufferevent_getfd(bev), EV_CLOSED,
	    longpoll_hangup, w)) != NULL)
		event_add(w->hangup, NULL);
	TAILQ_INSERT_TAIL(&longpoll.waiters, w, entry);
	longpoll.n++;
}

void
longpoll_forget(const struct evhttp_connection *evcon)
{
	struct longpoll_waiter *w;

	TAILQ_FOREACH(w, &longpoll.waiters, entry)
		if (w->evcon == evcon) {
			(void)longpoll_unlist(w);
			return;
		}
}

void
longpoll_start(struct event_base *base)
{
	longpoll.base = base;
	TAILQ_INIT(&longpoll.waiters);
	longpoll.n = 0;
	generation_listen(longpoll_published, NULL);
}

void
longpoll_stop(void)
{
	struct longpoll_waiter *w;

	generation_listen(NULL, NULL);
	/* Their connections close with the server: a client sees the daemon go. */
	while ((w = TAILQ_FIRST(&longpoll.waiters)) != NULL)
		(void)longpoll_unlist(w);
}

size_t
longpoll_waiters(void)
{
	return longpoll.n;
}
