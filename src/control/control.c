/* SPDX-License-Identifier: MIT */
/*
 * The control server: HTTP (evhttp) on the Unix control socket, and on
 * loopback TCP when asked, answering /health, /metrics, /sources, /clients
 * and POST /vmgenid; per-peer limits and deadlines so no client can blind
 * the others. Never random bytes (the EGD broker serves those).
 */
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "control.h"
#include "gensock.h"
#include "log.h"
#include "longpoll.h"
#include "rates.h"
#include "report.h"
#include "unixsock.h"
#include "vmgenid.h"
#include "xmalloc.h"

/* Where a client holds its place: each has its own limit. */
enum control_place {
	CONTROL_PLACE_TCP,   /* the TCP listener's places */
	CONTROL_PLACE_UNIX,  /* the Unix socket's shared places */
	CONTROL_PLACE_ROOT,  /* the Unix socket's places kept for root */
	CONTROL_PLACE_GROUP, /* the Unix socket's places kept for the daemon's user and group */
	CONTROL_PLACE_WAIT,  /* long polls waiting */
	CONTROL_NPLACES
};

/* What becomes of a new connection. */
enum control_verdict {
	CONTROL_ADMITTED,
	CONTROL_PEER_FULL,    /* its peer holds CONTROL_PEER_MAX places already */
	CONTROL_ALL_FULL,     /* every place it could take is taken */
	CONTROL_UNIDENTIFIED, /* the socket cannot say who its peer is */
};

static const char *const control_place_names[CONTROL_NPLACES] = {
	[CONTROL_PLACE_TCP] = "tcp",
	[CONTROL_PLACE_UNIX] = "unix",
	[CONTROL_PLACE_ROOT] = "unix_root",
	[CONTROL_PLACE_GROUP] = "unix_group",
	[CONTROL_PLACE_WAIT] = "wait",
};

static const unsigned control_place_max[CONTROL_NPLACES] = {
	[CONTROL_PLACE_TCP] = CONTROL_TCP_MAX,
	[CONTROL_PLACE_UNIX] = CONTROL_UNIX_MAX,
	[CONTROL_PLACE_ROOT] = CONTROL_ROOT_RESERVED,
	[CONTROL_PLACE_GROUP] = CONTROL_GROUP_RESERVED,
	[CONTROL_PLACE_WAIT] = CONTROL_WAIT_MAX,
};

/* One client connection: who it is, the place it holds, its deadline. */
struct control_client {
	TAILQ_ENTRY(control_client) entry;
	struct evhttp_connection *evcon;
	struct event *ev_deadline;
	enum control_place place;
	bool tcp;
	uid_t uid;                    /* on the Unix socket: the peer's uid */
	char addr[INET6_ADDRSTRLEN];  /* on TCP: the peer's address */
};

/* The server: one evhttp on the engine's loop, bound to the Unix socket and maybe TCP. */
struct control {
	struct event_base *base;
	struct sink *sink;
	struct evhttp *http;
	char *path;               /* the Unix socket we created, to remove at exit */
	struct unixsock sock;     /* which it is; its owners: the daemon's user and group */
	char *gensock_path;       /* the generation socket (gensock.c), made here too */
	struct unixsock gensock;
	struct event *ev_adopt;   /* adopts new connections after evhttp made them */
	struct bufferevent **fresh; /* connections not yet adopted, each referenced */
	size_t nfresh;
	TAILQ_HEAD(, control_client) clients;
	unsigned held[CONTROL_NPLACES];
	unsigned deadline_s;
	uint64_t refused;         /* closed at once: over a limit */
	uint64_t expired;         /* closed at the deadline */
	bool warned_peer;         /* the first refusal of each kind is logged */
	bool warned_full;
};

static struct control *control;

static enum control_verdict control_wait_place(const struct control_client *);

/* Send an answer; to HEAD its headers alone, with the length the body would have. */
void
control_send(struct evhttp_request *req, int code, const char *reason, struct evbuffer *body)
{
	char len[32];

	if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_send_reply(req, code, reason, body);
		return;
	}
	snprintf(len, sizeof len, "%zu", evbuffer_get_length(body));
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Length", len);
	evhttp_send_reply(req, code, reason, NULL);
}

/* Send a JSON document with a status code; the document is released. */
static void
control_reply_json(struct evhttp_request *req, int code, const char *reason,
    const char *type, json_t *doc)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf = evbuffer_new();
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(doc);
	if (text == NULL) {
		/* No document (json_pack refused its input): a client's problem, not fatal. */
		evbuffer_free(buf);
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	evbuffer_add(buf, text, strlen(text));
	evbuffer_add(buf, "\n", 1);
	free(text);
	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	control_send(req, code, reason, buf);
	evbuffer_free(buf);
}

/*
 * A JSON error: {"error": message, "path": path}. The path is the client's,
 * len bytes of it: anything but printable ASCII (a NUL too) becomes '?'
 * (JSON strings must be UTF-8) and it is cut to 256 bytes.
 */
static void
control_error(struct evhttp_request *req, int code, const char *reason, const char *path,
    size_t len)
{
	char shown[257];
	size_t i;

	for (i = 0; i < len && i < sizeof shown - 1; i++)
		shown[i] = path[i] >= 0x20 && path[i] < 0x7f ? path[i] : '?';
	shown[i] = '\0';
	control_reply_json(req, code, reason, "application/json",
	    json_pack("{s:s, s:i, s:s}", "error", reason, "status", code, "path", shown));
}

static void
control_health(struct evhttp_request *req)
{
	struct report_clock c = report_now();
	enum report_status st;
	json_t *doc = report_health(control->sink, &c, &st);

	if (st == REPORT_FAIL)
		control_reply_json(req, 503, "Service Unavailable", "application/health+json", doc);
	else
		control_reply_json(req, 200, "OK", "application/health+json", doc);
}

static void
control_metrics(struct evhttp_request *req)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf = evbuffer_new();
	unsigned connections = 0;
	int i;

	for (i = 0; i < CONTROL_NPLACES; i++)
		connections += control->held[i];
	report_metrics(buf, control->sink);
	evbuffer_add_printf(buf,
	    "# HELP entropyd_control_connections Open connections to the control server.\n"
	    "# TYPE entropyd_control_connections gauge\n"
	    "entropyd_control_connections %u\n"
	    "# HELP entropyd_control_refused_total Connections closed at once: over a limit.\n"
	    "# TYPE entropyd_control_refused_total counter\n"
	    "entropyd_control_refused_total %llu\n"
	    "# HELP entropyd_control_expired_total Connections closed at the request deadline.\n"
	    "# TYPE entropyd_control_expired_total counter\n"
	    "entropyd_control_expired_total %llu\n",
	    connections, (unsigned long long)control->refused,
	    (unsigned long long)control->expired);
	evbuffer_add_printf(buf,
	    "# HELP entropyd_control_place_connections Open connections by the places they "
	    "hold: TCP, the Unix socket's shared ones, those kept for root and for the "
	    "daemon's user and group.\n"
	    "# TYPE entropyd_control_place_connections gauge\n");
	for (i = 0; i < CONTROL_NPLACES; i++)
		evbuffer_add_printf(buf, "entropyd_control_place_connections{place=\"%s\"} %u\n",
		    control_place_names[i], control->held[i]);
	evhttp_add_header(h, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_add_header(h, "Cache-Control", "no-store");
	control_send(req, 200, "OK", buf);
	evbuffer_free(buf);
}

/* The client on a connection, or NULL. */
static struct control_client *
control_client_of(const struct evhttp_connection *evcon)
{
	struct control_client *cl;

	TAILQ_FOREACH(cl, &control->clients, entry)
		if (cl->evcon == evcon)
			return cl;
	return NULL;
}

/* (Re)start a client's deadline: a whole request and its answer within it. */
static void
control_arm(struct control_client *cl)
{
	struct timeval tv = { (time_t)control->deadline_s, 0 };

	evtimer_add(cl->ev_deadline, &tv);
}

/* An answer was written whole: the next request on the connection has a deadline of its own. */
static void
control_answered(struct evhttp_request *req, void *arg)
{
	struct control_client *cl = control_client_of(evhttp_request_get_connection(req));

	if (cl != NULL)
		control_arm(cl);
}

int
control_hold(struct evhttp_request *req, unsigned timeout_s)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct control_client *cl = evcon != NULL ? control_client_of(evcon) : NULL;
	struct timeval tv;

	if (cl == NULL)
		return -1;
	if (cl->place != CONTROL_PLACE_WAIT) {
		if (control_wait_place(cl) != CONTROL_ADMITTED)
			return -1;
		control->held[cl->place]--;
		cl->place = CONTROL_PLACE_WAIT;
		control->held[CONTROL_PLACE_WAIT]++;
	}
	/* The wait, then the usual deadline for the answer; evhttp's own timeouts likewise. */
	tv.tv_sec = (time_t)(timeout_s + control->deadline_s);
	tv.tv_usec = 0;
	evtimer_add(cl->ev_deadline, &tv);
	evhttp_connection_set_timeout(evcon, (int)(timeout_s + control->deadline_s));
	return 0;
}

/* Whether a path holds a control character (a decoded %00 among them). */
static bool
control_unprintable(const char *path, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
			return true;
	return false;
}

/* The uid of the peer of a request's Unix socket; -1 for TCP or when unknown. */
static long
control_peer_uid(struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon != NULL ? evhttp_connection_get_bufferevent(evcon) : NULL;
	struct ucred cred;
	socklen_t len = sizeof cred;

	if (bev == NULL || getsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) == -1 || len != sizeof cred)
		return -1;
	return (long)cred.uid;
}

/*
 * POST /vmgenid: a restore hook says the VM generation changed. Only root
 * (by the socket's peer credentials; never over TCP) may ask: it makes the
 * daemon wipe what it holds and refill.
 */
static void
control_vmgenid(struct evhttp_request *req)
{
	const struct vmgenid_stats *v = vmgenid_stats();
	uint64_t discarded = v->discarded_bytes;
	long uid = control_peer_uid(req);
	int t;
	uint64_t changes = 0;

	if (uid != 0) {
		log_warnx("control: POST /vmgenid refused: peer uid %ld is not root", uid);
		control_error(req, 403, "Forbidden", "/vmgenid", strlen("/vmgenid"));
		return;
	}
	log_info("control: POST /vmgenid: the VM generation changed (a restore hook says so)");
	vmgenid_trigger(VMGENID_TRIGGER_CONTROL);
	for (t = 0; t < VMGENID_NTRIGGERS; t++)
		changes += v->changes[t];
	control_reply_json(req, 200, "OK", "application/json", json_pack("{s:I, s:I}",
	    "discarded_bytes", (json_int_t)(v->discarded_bytes - discarded),
	    "changes", (json_int_t)changes));
}

/*
 * Route a request: GET (or HEAD) /health, /metrics, /sources, /sources/NAME,
 * /clients, /generation; POST /vmgenid.
 */
static void
control_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *raw = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	struct report_clock c;
	char *path;
	size_t len;
	json_t *doc;
	bool known;

	evhttp_request_set_on_complete_cb(req, control_answered, NULL);
	if (raw == NULL || (path = evhttp_uridecode(raw, 0, &len)) == NULL) {
		control_error(req, 400, "Bad Request", "", 0);
		return;
	}
	known = strcmp(path, "/health") == 0 || strcmp(path, "/metrics") == 0 ||
	    strcmp(path, "/clients") == 0 ||
	    strcmp(path, "/sources") == 0 || strncmp(path, "/sources/", 9) == 0 ||
	    strcmp(path, "/generation") == 0;
	if (control_unprintable(path, len))
		control_error(req, 400, "Bad Request", path, len);
	else if (strcmp(path, "/vmgenid") == 0) {
		if (cmd == EVHTTP_REQ_POST)
			control_vmgenid(req);
		else {
			evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
			control_error(req, 405, "Method Not Allowed", path, len);
		}
	} else if (!known)
		control_error(req, 404, "Not Found", path, len);
	else if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		control_error(req, 405, "Method Not Allowed", path, len);
	} else if (strcmp(path, "/generation") == 0)
		longpoll_request(req, evhttp_uri_get_query(uri));
	else if (strcmp(path, "/health") == 0)
		control_health(req);
	else if (strcmp(path, "/metrics") == 0)
		control_metrics(req);
	else if (strcmp(path, "/clients") == 0) {
		c = report_now();
		control_reply_json(req, 200, "OK", "application/json", report_egd_clients(&c));
	} else {
		c = report_now();
		if (strcmp(path, "/sources") == 0)
			doc = report_sources(&c);
		else
			doc = report_source(path + 9, &c);
		if (doc == NULL)
			control_error(req, 404, "Not Found", path, len);
		else
			control_reply_json(req, 200, "OK", "application/json", doc);
	}
	free(path);
}

/* Forget a client: free its place and its deadline, and a long poll it waits in. */
static void
control_forget(struct control_client *cl)
{
	longpoll_forget(cl->evcon);
	TAILQ_REMOVE(&control->clients, cl, entry);
	control->held[cl->place]--;
	event_free(cl->ev_deadline);
	free(cl);
}

/* A connection went away. */
static void
control_closed(struct evhttp_connection *evcon, void *arg)
{
	if (control != NULL)
		control_forget(arg);
}

/* A client's deadline passed before its request was whole and answered: close it. */
static void
control_expired(int fd, short what, void *arg)
{
	struct control_client *cl = arg;
	struct evhttp_connection *evcon = cl->evcon;

	control->expired++;
	if (cl->tcp)
		log_debug("control: closing a connection from %s: no whole request and answer "
		    "within %u s", cl->addr, control->deadline_s);
	else
		log_debug("control: closing a connection from uid %lu: no whole request and "
		    "answer within %u s", (unsigned long)cl->uid, control->deadline_s);
	control_forget(cl);
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	evhttp_connection_free(evcon);
}

/*
 * evhttp makes a connection's bufferevent here, before the connection
 * exists (and before it has its descriptor); it is adopted just after. The
 * reference taken keeps it valid even if evhttp frees it first.
 */
static struct bufferevent *
control_new_bev(struct event_base *base, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);

	if (bev == NULL)
		return NULL;
	bufferevent_incref(bev);
	control->fresh = xreallocarray(control->fresh, control->nfresh + 1,
	    sizeof *control->fresh);
	control->fresh[control->nfresh++] = bev;
	event_active(control->ev_adopt, EV_TIMEOUT, 0);
	return bev;
}

/* Whether a Unix-socket peer is the daemon's user or in its group (any of its groups). */
static bool
control_in_daemon_group(int fd, const struct ucred *cred)
{
#ifdef SO_PEERGROUPS
	gid_t groups[256];
	socklen_t len = sizeof groups;
	size_t i;
#endif

	if (cred->uid == control->sock.uid || cred->gid == control->sock.gid)
		return true;
#ifdef SO_PEERGROUPS
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1)
		return false;
	for (i = 0; i < len / sizeof groups[0]; i++)
		if (groups[i] == control->sock.gid)
			return true;
#endif
	return false;
}

/*
 * Who is at the other end: a uid on the Unix socket (SO_PEERCRED), an
 * address on TCP. 0, or -1 when the socket cannot say.
 */
static int
control_identify(struct control_client *cl, int fd, bool *in_group)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	struct ucred cred;
	socklen_t credlen = sizeof cred;
	const void *addr;

	*in_group = false;
	if (fd == -1 || getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_UNIX) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == -1)
			return -1;
		cl->uid = cred.uid;
		*in_group = control_in_daemon_group(fd, &cred);
		return 0;
	}
	cl->tcp = true;
	len = sizeof ss;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET)
		addr = &((struct sockaddr_in *)&ss)->sin_addr;
	else if (ss.ss_family == AF_INET6)
		addr = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	else
		return -1;
	if (inet_ntop(ss.ss_family, addr, cl->addr, sizeof cl->addr) == NULL)
		return -1;
	return 0;
}

/* Whether two clients are the same peer: one uid on the Unix socket, one address on TCP. */
static bool
control_same_peer(const struct control_client *a, const struct control_client *b)
{
	return a->tcp == b->tcp && (a->tcp ? strcmp(a->addr, b->addr) == 0 : a->uid == b->uid);
}

/*
 * Whether a client may take a waiting place: CONTROL_WAIT_MAX in all, and
 * CONTROL_WAIT_PEER_MAX for one peer but root.
 */
static enum control_verdict
control_wait_place(const struct control_client *cl)
{
	const struct control_client *o;
	unsigned same = 0;

	TAILQ_FOREACH(o, &control->clients, entry)
		if (o->place == CONTROL_PLACE_WAIT && control_same_peer(o, cl))
			same++;
	if (same >= CONTROL_WAIT_PEER_MAX && (cl->tcp || cl->uid != 0))
		return CONTROL_PEER_FULL;
	return control->held[CONTROL_PLACE_WAIT] < CONTROL_WAIT_MAX ? CONTROL_ADMITTED :
	    CONTROL_ALL_FULL;
}

/*
 * Whether a new client may take a place, and which. One peer holds at most
 * CONTROL_PEER_MAX places; the Unix socket's reserves are used only once its
 * shared places are all taken.
 */
static enum control_verdict
control_place_for(const struct control_client *cl, bool in_group, enum control_place *place)
{
	const struct control_client *o;
	unsigned same = 0;

	TAILQ_FOREACH(o, &control->clients, entry)
		if (o->place != CONTROL_PLACE_WAIT && control_same_peer(o, cl))
			same++;
	if (same >= CONTROL_PEER_MAX)
		return CONTROL_PEER_FULL;
	*place = cl->tcp ? CONTROL_PLACE_TCP : CONTROL_PLACE_UNIX;
	if (control->held[*place] < control_place_max[*place])
		return CONTROL_ADMITTED;
	if (cl->tcp)
		return CONTROL_ALL_FULL;
	if (cl->uid == 0 && control->held[CONTROL_PLACE_ROOT] < CONTROL_ROOT_RESERVED) {
		*place = CONTROL_PLACE_ROOT;
		return CONTROL_ADMITTED;
	}
	if (in_group && control->held[CONTROL_PLACE_GROUP] < CONTROL_GROUP_RESERVED) {
		*place = CONTROL_PLACE_GROUP;
		return CONTROL_ADMITTED;
	}
	return CONTROL_ALL_FULL;
}

/* Log the first refusal of each kind; the count is in the metrics. */
static void
control_log_refusal(const struct control_client *cl, enum control_verdict verdict)
{
	char peer[64];

	if (cl->tcp)
		snprintf(peer, sizeof peer, "%s", cl->addr);
	else
		snprintf(peer, sizeof peer, "uid %lu", (unsigned long)cl->uid);
	switch (verdict) {
	case CONTROL_PEER_FULL:
		if (!control->warned_peer)
			log_warnx("control: %s holds %d connections; closing its new ones (logged "
			    "once)", peer, CONTROL_PEER_MAX);
		control->warned_peer = true;
		break;
	case CONTROL_ALL_FULL:
		if (!control->warned_full)
			log_warnx("control: the %s places are all taken; closing new connections "
			    "(logged once)", cl->tcp ? "TCP listener's" : "Unix socket's");
		control->warned_full = true;
		break;
	default:
		log_debug("control: closing a connection whose peer cannot be identified");
		break;
	}
}

/* Give a new connection its place and deadline, or close it at once. */
static void
control_admit(struct evhttp_connection *evcon, int fd)
{
	struct control_client *cl = xcalloc(1, sizeof *cl);
	enum control_place place = CONTROL_PLACE_UNIX;
	enum control_verdict verdict = CONTROL_UNIDENTIFIED;
	bool in_group;

	if (control_identify(cl, fd, &in_group) == 0)
		verdict = control_place_for(cl, in_group, &place);
	if (verdict != CONTROL_ADMITTED) {
		control->refused++;
		control_log_refusal(cl, verdict);
		free(cl);
		evhttp_connection_free(evcon);
		return;
	}
	cl->evcon = evcon;
	cl->place = place;
	cl->ev_deadline = evtimer_new(control->base, control_expired, cl);
	control->held[place]++;
	TAILQ_INSERT_TAIL(&control->clients, cl, entry);
	control_arm(cl);
	evhttp_connection_set_closecb(evcon, control_closed, cl);
}

/* Adopt the connections evhttp made since the last turn of the loop. */
static void
control_adopt(int fd, short what, void *arg)
{
	struct evhttp_connection *evcon;
	struct bufferevent *bev;
	void *cbarg;
	size_t i;

	for (i = 0; i < control->nfresh; i++) {
		bev = control->fresh[i];
		cbarg = NULL;
		/* A bufferevent evhttp already freed has no callbacks left. */
		bufferevent_getcb(bev, NULL, NULL, NULL, &cbarg);
		evcon = cbarg;
		if (evcon != NULL && evhttp_connection_get_bufferevent(evcon) == bev)
			control_admit(evcon, bufferevent_getfd(bev));
		bufferevent_decref(bev);
	}
	control->nfresh = 0;
}

/* The request deadline: CONTROL_DEADLINE_S, or the test override. */
static unsigned
control_deadline(void)
{
	const char *s = getenv(CONTROL_TIMEOUT_ENV);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return CONTROL_DEADLINE_S;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 1 || v > 3600) {
		log_warnx("%s: '%s' is not a number of seconds from 1 to 3600; using %d",
		    CONTROL_TIMEOUT_ENV, s, CONTROL_DEADLINE_S);
		return CONTROL_DEADLINE_S;
	}
	return (unsigned)v;
}

/*
 * The generation socket, beside the generation file: mode 0666, any local
 * user may wait there for a new ID. Without it (logged) the file serves.
 */
static void
control_listen_generation(const struct config *cfg)
{
	char path[sizeof ((struct sockaddr_un *)0)->sun_path + 8], err[512];
	int fd;

	if (cfg->generation_file == NULL)
		return; /* a server without a worker's generation (the fuzzer's) */
	if (snprintf(path, sizeof path, "%s" CONTROL_GENERATION_SUFFIX, cfg->generation_file) >=
	    (int)sizeof path) {
		log_warnx("control: %s" CONTROL_GENERATION_SUFFIX ": path too long for a Unix "
		    "socket; no generation socket", cfg->generation_file);
		return;
	}
	if ((fd = unixsock_listen("control", path, 0666, (gid_t)-1, CONTROL_BACKLOG,
	    &control->gensock, err, sizeof err)) == -1) {
		log_warnx("control: %s; no generation socket (the generation file is there)", err);
		return;
	}
	control->gensock_path = xstrdup(path);
	gensock_start(control->base, fd, control->deadline_s);
	log_info("control: listening on %s for GET /generation, from any user", path);
}

/*
 * Room for every place: the soft limit on descriptors (often 1024) is
 * raised towards the hard one, so that the waiting places can all be taken.
 */
static void
control_room(void)
{
	rlim_t want = CONTROL_WAIT_MAX + CONTROL_UNIX_MAX + CONTROL_TCP_MAX + CONTROL_ROOT_RESERVED +
	    CONTROL_GROUP_RESERVED + 256;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_debug("control: RLIMIT_NOFILE: %s", strerror(errno));
}

/* Bind the TCP listener of --health-listen; 0 or -1 with err set. */
static int
control_listen_tcp(const char *spec, char *err, size_t errlen)
{
	char addr[64];
	unsigned port;

	if (options_listen_addr(spec, addr, sizeof addr, &port) == -1) {
		snprintf(err, errlen, "--health-listen: '%s' is not ADDR:PORT", spec);
		return -1;
	}
	if (!options_listen_loopback(spec))
		log_warnx("control: --health-listen %s is not a loopback address: anyone who "
		    "can reach it can read the health and metrics", spec);
	if (evhttp_bind_socket_with_handle(control->http, addr, (ev_uint16_t)port) == NULL) {
		snprintf(err, errlen, "--health-listen %s: cannot listen: %s", spec,
		    strerror(errno));
		return -1;
	}
	log_info("control: listening on %s", spec);
	return 0;
}

int
control_start(struct event_base *base, const struct config *cfg, struct sink *sink)
{
	bool explicit = strcmp(cfg->control_socket, RUNDIR "/entropyd.sock") != 0;
	struct report_clock c = report_now();
	char err[512];
	int fd;

	control_room();
	control = xcalloc(1, sizeof *control);
	control->base = base;
	control->sink = sink;
	control->deadline_s = control_deadline();
	TAILQ_INIT(&control->clients);
	if ((control->http = evhttp_new(base)) == NULL)
		fatalx("evhttp_new failed");
	evhttp_set_max_headers_size(control->http, CONTROL_MAX_HEADERS_BYTES);
	evhttp_set_max_body_size(control->http, CONTROL_MAX_BODY_BYTES);
	/* evhttp's own timeouts are per read and write; the deadline bounds the whole. */
	evhttp_set_timeout(control->http, (int)control->deadline_s);
	/* Every method evhttp knows reaches control_request, which answers 405. */
	evhttp_set_allowed_methods(control->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT);
	evhttp_set_gencb(control->http, control_request, NULL);
	evhttp_set_bevcb(control->http, control_new_bev, NULL);
	control->ev_adopt = event_new(base, -1, 0, control_adopt, NULL);
	longpoll_start(base);
	rates_sample(c.now_ns);

	if ((fd = unixsock_listen("control", cfg->control_socket, 0660, (gid_t)-1, CONTROL_BACKLOG,
	    &control->sock, err, sizeof err)) == -1) {
		if (explicit) {
			log_warnx("control: %s", err);
			control_stop();
			return EX_CANTCREAT;
		}
		log_warnx("control: %s; serving no control socket", err);
	} else if (evhttp_accept_socket_with_handle(control->http, fd) == NULL) {
		log_warnx("control: %s: cannot accept", cfg->control_socket);
		close(fd);
		unlink(cfg->control_socket);
		control_stop();
		return EX_OSERR;
	} else {
		control->path = xstrdup(cfg->control_socket);
		log_info("control: listening on %s", control->path);
	}
	control_listen_generation(cfg);
	if (cfg->health_listen != NULL &&
	    control_listen_tcp(cfg->health_listen, err, sizeof err) == -1) {
		log_warnx("control: %s", err);
		control_stop();
		return EX_UNAVAILABLE;
	}
	return 0;
}

void
control_stop(void)
{
	struct control_client *cl;
	size_t i;

	if (control == NULL)
		return;
	longpoll_stop();
	/* Closing each connection forgets its client. */
	if (control->http != NULL)
		evhttp_free(control->http);
	while ((cl = TAILQ_FIRST(&control->clients)) != NULL)
		control_forget(cl);
	for (i = 0; i < control->nfresh; i++)
		bufferevent_decref(control->fresh[i]);
	gensock_stop();
	if (control->path != NULL)
		unixsock_remove(control->path, &control->sock);
	if (control->gensock_path != NULL)
		unixsock_remove(control->gensock_path, &control->gensock);
	if (control->ev_adopt != NULL)
		event_free(control->ev_adopt);
	free(control->fresh);
	free(control->path);
	free(control->gensock_path);
	free(control);
	control = NULL;
	rates_reset();
}
