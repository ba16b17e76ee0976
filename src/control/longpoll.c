/* SPDX-License-Identifier: MIT */
/*
 * GET /generation and its long poll: the waiting requests, from the control
 * server (evhttp) or from the generation socket (a bare descriptor), each
 * with its timer, answered together when the worker publishes a new
 * generation ID (generation_listen), or 304 at their timeout, or forgotten
 * when their client goes away.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "control.h"
#include "generation.h"
#include "gensock.h"
#include "log.h"
#include "longpoll.h"
#include "report.h"
#include "xmalloc.h"

/*
 * One waiting request: an evhttp request (req) or a bare socket (fd, the
 * generation socket's). Its two events live in the same allocation, after
 * it: a waiter of the generation socket costs this and nothing else.
 */
struct longpoll_waiter {
	TAILQ_ENTRY(longpoll_waiter) entry;
	struct evhttp_request *req;       /* NULL for a bare socket */
	struct evhttp_connection *evcon;
	int fd;                           /* the bare socket, or -1 */
	uid_t uid;                        /* its peer */
	int minor;                        /* its HTTP/1.minor */
	bool head;                        /* HEAD: headers alone */
	bool watched;                     /* the hangup event is added */
	struct event *timer;
	struct event *hangup;             /* the client's end closed */
};

TAILQ_HEAD(longpoll_list, longpoll_waiter);

static struct {
	struct event_base *base;
	struct longpoll_list waiters;
	size_t n;
	size_t nfd;                       /* of them bare sockets */
} longpoll;

/* Take a waiter off the list and free it; a bare socket stays open (the caller's). */
static void
longpoll_unlist(struct longpoll_waiter *w)
{
	TAILQ_REMOVE(&longpoll.waiters, w, entry);
	longpoll.n--;
	if (w->req == NULL)
		longpoll.nfd--;
	event_del(w->timer);
	if (w->watched)
		event_del(w->hangup);
	free(w);
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

/* Answer a waiter with the document, and forget it. */
static void
longpoll_answer(struct longpoll_waiter *w, const char *text, size_t len)
{
	struct evhttp_request *req = w->req;
	int fd = w->fd, minor = w->minor;
	bool head = w->head;

	longpoll_unlist(w);
	if (req != NULL)
		longpoll_send(req, text, len, true);
	else
		gensock_reply(fd, minor, head, 200, "OK", text, len);
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
		longpoll_answer(w, text, len);
	free(text);
}

/* A waiter's time is up: 304, nothing changed. */
static void
longpoll_expired(int fd, short what, void *arg)
{
	struct longpoll_waiter *w = arg;
	struct evhttp_request *req = w->req;
	int sock = w->fd, minor = w->minor;

	longpoll_unlist(w);
	if (req == NULL) {
		gensock_reply(sock, minor, true, 304, "Not Modified", NULL, 0);
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	evhttp_send_reply(req, 304, "Not Modified", NULL);
}

/*
 * The client's end of a waiter's connection closed: forget the waiter, and
 * close the connection (evhttp reads nothing while a request waits, so it
 * would not know). A client that only stopped sending (a half close) is
 * still waiting for its answer: it keeps it, and its full close is the next
 * edge of the event (where the loop has no edge-triggered events, it is no
 * longer watched). A bare socket's client that sends anything more is done
 * with too.
 */
static void
longpoll_hangup(int fd, short what, void *arg)
{
	struct longpoll_waiter *w = arg;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	struct evhttp_connection *evcon = w->evcon;
	char c;
	ssize_t n = 0;

	if (w->req == NULL && (n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK)) == -1 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n == 0 && poll(&pfd, 1, 0) == 1 && !(pfd.revents & (POLLHUP | POLLERR))) {
		if (!(event_get_events(w->hangup) & EV_ET)) {
			event_del(w->hangup);
			w->watched = false;
		}
		return;
	}
	longpoll_unlist(w);
	if (evcon != NULL)
		evhttp_connection_free(evcon);
	else
		close(fd);
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

/* The JSON error of a bad query, or of no place left to wait. */
static char *
longpoll_error(int code, const char *reason, const char *detail)
{
	json_t *doc = json_pack("{s:s, s:i, s:s, s:s}", "error", reason, "status", code,
	    "path", "/generation", "detail", detail);
	char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	json_decref(doc);
	return text;
}

/*
 * What a request comes to: 200 now (*text set), 304 now, an error (*text
 * its JSON), or a wait of *timeout_s. The HTTP status, or 0 to wait.
 */
static int
longpoll_decide(const char *query, unsigned *timeout_s, char **text, size_t *len)
{
	const struct generation_stats *g = generation_stats();
	char after[GENFILE_ID_CHARS + 1];
	const char *err = NULL;
	bool has_after;

	*text = NULL;
	if (longpoll_query(query, &has_after, after, timeout_s, &err) == -1) {
		if ((*text = longpoll_error(400, "Bad Request", err)) != NULL)
			*len = strlen(*text);
		return 400;
	}
	/* Answered now: no ID to wait past, or the ID is another already. */
	if (!has_after || (g->id[0] != '\0' && strcmp(g->id, after) != 0)) {
		*text = longpoll_document(len);
		return *text != NULL ? 200 : 500;
	}
	return *timeout_s == 0 ? 304 : 0;
}

/* Put a waiter on the list with its timer, and its hangup watched on fd. */
static void
longpoll_wait(struct longpoll_waiter *w, int fd, unsigned timeout_s)
{
	int features = event_base_get_features(longpoll.base);
	struct timeval tv = { (time_t)timeout_s, 0 };

	evtimer_assign(w->timer, longpoll.base, longpoll_expired, w);
	evtimer_add(w->timer, &tv);
	if (fd != -1 && (w->req == NULL || (features & EV_FEATURE_EARLY_CLOSE))) {
		/*
		 * evhttp's socket: its end closing alone (level-triggered, as the
		 * bufferevent's own events on it are); a bare one: anything readable.
		 */
		event_assign(w->hangup, longpoll.base, fd, w->req != NULL ? EV_CLOSED :
		    EV_READ | EV_PERSIST | ((features & EV_FEATURE_ET) ? EV_ET : 0),
		    longpoll_hangup, w);
		w->watched = event_add(w->hangup, NULL) == 0;
	}
	TAILQ_INSERT_TAIL(&longpoll.waiters, w, entry);
	longpoll.n++;
	if (w->req == NULL)
		longpoll.nfd++;
}

/* A waiter with room for its two events after it. */
static struct longpoll_waiter *
longpoll_new(void)
{
	size_t size = event_get_struct_event_size();
	struct longpoll_waiter *w = xcalloc(1, sizeof *w + 2 * size);

	w->timer = (struct event *)(void *)(w + 1);
	w->hangup = (struct event *)(void *)((char *)(w + 1) + size);
	w->fd = -1;
	return w;
}

void
longpoll_request(struct evhttp_request *req, const char *query)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf;
	struct longpoll_waiter *w;
	struct bufferevent *bev;
	unsigned timeout_s;
	size_t len = 0;
	char *text;
	int code;

	switch ((code = longpoll_decide(query, &timeout_s, &text, &len))) {
	case 200:
		longpoll_send(req, text, len, false);
		break;
	case 304:
		evhttp_send_reply(req, 304, "Not Modified", NULL);
		break;
	case 0:
		if (control_hold(req, timeout_s) == 0)
			break;
		evhttp_add_header(h, "Retry-After", "1");
		code = 503;
		text = longpoll_error(503, "Service Unavailable", "too many requests wait already");
		len = text != NULL ? strlen(text) : 0;
		/* FALLTHROUGH */
	default:
		if (text == NULL) {
			evhttp_send_error(req, 500, "Internal Server Error");
			break;
		}
		buf = evbuffer_new();
		evbuffer_add(buf, text, len);
		evhttp_add_header(h, "Content-Type", "application/json");
		evhttp_add_header(h, "Cache-Control", "no-store");
		control_send(req, code, code == 400 ? "Bad Request" : "Service Unavailable", buf);
		evbuffer_free(buf);
		break;
	}
	free(text);
	if (code != 0)
		return;
	w = longpoll_new();
	w->req = req;
	w->evcon = evhttp_request_get_connection(req);
	bev = evhttp_connection_get_bufferevent(w->evcon);
	longpoll_wait(w, bev != NULL ? bufferevent_getfd(bev) : -1, timeout_s);
}

void
longpoll_serve_fd(int fd, uid_t uid, int minor, bool head, const char *query)
{
	struct longpoll_waiter *w;
	unsigned timeout_s;
	size_t len = 0;
	char *text;
	int code = longpoll_decide(query, &timeout_s, &text, &len);

	if (code != 0) {
		gensock_reply(fd, minor, head, code, code == 200 ? "OK" : code == 304 ?
		    "Not Modified" : code == 400 ? "Bad Request" : "Internal Server Error", text,
		    text != NULL ? len : 0);
		free(text);
		return;
	}
	w = longpoll_new();
	w->fd = fd;
	w->uid = uid;
	w->minor = minor;
	w->head = head;
	longpoll_wait(w, fd, timeout_s);
}

void
longpoll_forget(const struct evhttp_connection *evcon)
{
	struct longpoll_waiter *w;

	TAILQ_FOREACH(w, &longpoll.waiters, entry)
		if (w->req != NULL && w->evcon == evcon) {
			longpoll_unlist(w);
			return;
		}
}

void
longpoll_start(struct event_base *base)
{
	longpoll.base = base;
	TAILQ_INIT(&longpoll.waiters);
	longpoll.n = longpoll.nfd = 0;
	generation_listen(longpoll_published, NULL);
}

void
longpoll_stop(void)
{
	struct longpoll_waiter *w;
	int fd;

	generation_listen(NULL, NULL);
	/* evhttp's connections close with the server; bare sockets here: a client sees the daemon go. */
	while ((w = TAILQ_FIRST(&longpoll.waiters)) != NULL) {
		fd = w->req == NULL ? w->fd : -1;
		longpoll_unlist(w);
		if (fd != -1)
			close(fd);
	}
}

size_t
longpoll_waiters(void)
{
	return longpoll.n;
}

size_t
longpoll_fd_waiters(const uid_t *uid)
{
	const struct longpoll_waiter *w;
	size_t n = 0;

	if (uid == NULL)
		return longpoll.nfd;
	TAILQ_FOREACH(w, &longpoll.waiters, entry)
		if (w->req == NULL && w->uid == *uid)
			n++;
	return n;
}
