/* SPDX-License-Identifier: MIT */
/*
 * The generation socket: accept, read one small request, route GET and HEAD
 * /generation to the long poll and answer everything else with an error.
 * Open to every local user, so it reads little, keeps little and trusts
 * nothing: a bounded buffer, a deadline, limits per user.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "control.h"
#include "gensock.h"
#include "log.h"
#include "longpoll.h"
#include "xmalloc.h"

/* One connection while its request comes. */
struct gensock_client {
	TAILQ_ENTRY(gensock_client) entry;
	int fd;
	uid_t uid;
	size_t len;
	struct event *ev;            /* readable */
	struct event *deadline;      /* the whole request by then */
	char buf[GENSOCK_REQUEST_BYTES];
};

TAILQ_HEAD(gensock_list, gensock_client);

static struct {
	struct event_base *base;
	int listen_fd;
	struct event *ev_accept;
	struct gensock_list clients;
	size_t n;
	unsigned deadline_s;
	unsigned long refused;
} gensock = { .listen_fd = -1 };

void
gensock_reply(int fd, int minor, bool head, int code, const char *reason, const char *body,
    size_t len)
{
	char hdr[256];
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	int n;

	n = snprintf(hdr, sizeof hdr, "HTTP/1.%d %d %s\r\n%sCache-Control: no-store\r\n"
	    "Connection: close\r\nContent-Length: %zu\r\n\r\n", minor, code, reason,
	    body != NULL ? "Content-Type: application/json\r\n" : "", body != NULL ? len : 0);
	iov[0].iov_base = hdr;
	iov[0].iov_len = (size_t)n;
	iov[1].iov_base = (void *)body;
	iov[1].iov_len = body != NULL && !head ? len : 0;
	/* A fresh connection's buffer takes a whole answer: one send, never waited for. */
	if (sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == -1)
		log_debug("control: generation socket: %s", strerror(errno));
	close(fd);
}

/* Forget a client; its socket is closed unless keep_fd (the long poll took it). */
static void
gensock_forget(struct gensock_client *cl, bool keep_fd)
{
	TAILQ_REMOVE(&gensock.clients, cl, entry);
	gensock.n--;
	event_free(cl->ev);
	event_free(cl->deadline);
	if (!keep_fd)
		close(cl->fd);
	free(cl);
}

/* An error answer with a JSON body, and the client forgotten. */
static void
gensock_error(struct gensock_client *cl, int minor, int code, const char *reason)
{
	char body[160];
	int n = snprintf(body, sizeof body, "{\n  \"error\": \"%s\",\n  \"status\": %d,\n"
	    "  \"path\": \"/generation\"\n}\n", reason, code);

	gensock_reply(cl->fd, minor, false, code, reason, body, (size_t)n);
	gensock_forget(cl, true);
}

/*
 * A whole request (its line ends the first line of buf): "METHOD TARGET
 * HTTP/1.x", printable ASCII, single spaces. Route it, or refuse it.
 */
static void
gensock_route(struct gensock_client *cl, size_t line_len)
{
	char *line = cl->buf, *target, *version, *query, copy[GENSOCK_REQUEST_BYTES];
	int minor = 1, fd;
	bool head;
	size_t i;
	uid_t uid;

	line[line_len] = '\0';
	for (i = 0; i < line_len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) {
			gensock_error(cl, minor, 400, "Bad Request");
			return;
		}
	if ((target = strchr(line, ' ')) == NULL ||
	    (version = strchr(target + 1, ' ')) == NULL || strchr(version + 1, ' ') != NULL) {
		gensock_error(cl, minor, 400, "Bad Request");
		return;
	}
	*target++ = '\0';
	*version++ = '\0';
	if (strcmp(version, "HTTP/1.0") == 0)
		minor = 0;
	else if (strcmp(version, "HTTP/1.1") != 0) {
		gensock_error(cl, minor, 400, "Bad Request");
		return;
	}
	if ((query = strchr(target, '?')) != NULL)
		*query++ = '\0';
	if (strcmp(target, "/generation") != 0) {
		gensock_error(cl, minor, 404, "Not Found");
		return;
	}
	head = strcmp(line, "HEAD") == 0;
	if (!head && strcmp(line, "GET") != 0) {
		gensock_error(cl, minor, 405, "Method Not Allowed");
		return;
	}
	/* The client goes first: the long poll watches the socket in its own way (edge-triggered). */
	fd = cl->fd;
	uid = cl->uid;
	snprintf(copy, sizeof copy, "%s", query != NULL ? query : "");
	gensock_forget(cl, true);
	longpoll_serve_fd(fd, uid, minor, head, copy);
}

/* Bytes came: once the headers are whole, route the request. */
static void
gensock_readable(int fd, short what, void *arg)
{
	struct gensock_client *cl = arg;
	char *end, *eol;
	ssize_t n;

	n = recv(fd, cl->buf + cl->len, sizeof cl->buf - 1 - cl->len, MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		gensock_forget(cl, false);
		return;
	}
	cl->len += (size_t)n;
	cl->buf[cl->len] = '\0';
	/* A NUL anywhere is no request; the headers end at an empty line. */
	if (memchr(cl->buf, '\0', cl->len) != NULL) {
		gensock_error(cl, 1, 400, "Bad Request");
		return;
	}
	if ((end = strstr(cl->buf, "\r\n\r\n")) == NULL && (end = strstr(cl->buf, "\n\n")) == NULL) {
		if (cl->len == sizeof cl->buf - 1)
			gensock_error(cl, 1, 431, "Request Header Fields Too Large");
		return;
	}
	/* The request line, without its CR LF (or LF). */
	eol = strchr(cl->buf, '\n');
	if (eol > cl->buf && eol[-1] == '\r')
		eol--;
	gensock_route(cl, (size_t)(eol - cl->buf));
}

/* No whole request within the deadline: closed. */
static void
gensock_expired(int fd, short what, void *arg)
{
	gensock_forget(arg, false);
}

/* Whether a user may have one more connection: reading or waiting, in all and its own. */
static bool
gensock_room_for(uid_t uid)
{
	const struct gensock_client *cl;
	size_t same = 0;

	if (gensock.n + longpoll_fd_waiters(NULL) >= CONTROL_WAIT_MAX)
		return false;
	if (uid == 0)
		return true;
	TAILQ_FOREACH(cl, &gensock.clients, entry)
		if (cl->uid == uid)
			same++;
	return same + longpoll_fd_waiters(&uid) < CONTROL_WAIT_PEER_MAX;
}

/* New connections: each takes a place and its deadline, or is closed at once. */
static void
gensock_accept(int lfd, short what, void *arg)
{
	struct timeval tv = { (time_t)gensock.deadline_s, 0 };
	struct gensock_client *cl;
	struct ucred cred;
	socklen_t len;
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1) {
		len = sizeof cred;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
		    !gensock_room_for(cred.uid)) {
			gensock.refused++;
			close(fd);
			continue;
		}
		cl = xcalloc(1, sizeof *cl);
		cl->fd = fd;
		cl->uid = cred.uid;
		cl->ev = event_new(gensock.base, fd, EV_READ | EV_PERSIST, gensock_readable, cl);
		cl->deadline = evtimer_new(gensock.base, gensock_expired, cl);
		event_add(cl->ev, NULL);
		evtimer_add(cl->deadline, &tv);
		TAILQ_INSERT_TAIL(&gensock.clients, cl, entry);
		gensock.n++;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
		log_debug("control: generation socket: accept: %s", strerror(errno));
}

void
gensock_start(struct event_base *base, int listen_fd, unsigned deadline_s)
{
	gensock.base = base;
	gensock.listen_fd = listen_fd;
	gensock.deadline_s = deadline_s;
	gensock.refused = 0;
	TAILQ_INIT(&gensock.clients);
	gensock.n = 0;
	gensock.ev_accept = event_new(base, listen_fd, EV_READ | EV_PERSIST, gensock_accept, NULL);
	if (gensock.ev_accept == NULL || event_add(gensock.ev_accept, NULL) == -1)
		log_warnx("control: the generation socket cannot be watched");
}

void
gensock_stop(void)
{
	struct gensock_client *cl;

	if (gensock.listen_fd == -1)
		return;
	while ((cl = TAILQ_FIRST(&gensock.clients)) != NULL)
		gensock_forget(cl, false);
	if (gensock.ev_accept != NULL)
		event_free(gensock.ev_accept);
	gensock.ev_accept = NULL;
	close(gensock.listen_fd);
	gensock.listen_fd = -1;
}

unsigned long
gensock_refused(void)
{
	return gensock.refused;
}
