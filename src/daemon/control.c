/* SPDX-License-Identifier: MIT */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <errno.h>
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
#include "log.h"
#include "privdrop.h"
#include "report.h"
#include "xmalloc.h"

/* The server: one evhttp on the engine's loop, bound to the Unix socket and maybe TCP. */
struct control {
	struct event_base *base;
	struct sink *sink;
	struct evhttp *http;
	char *path;               /* the Unix socket we created, to remove at exit */
	dev_t dev;
	ino_t ino;
	struct event *ev_adopt;   /* adopts new connections after evhttp made them */
	struct bufferevent **fresh; /* connections not yet adopted */
	size_t nfresh;
	unsigned connections;
	uint64_t refused;
};

static struct control *control;

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
	evhttp_send_reply(req, code, reason, buf);
	evbuffer_free(buf);
}

/*
 * A JSON error: {"error": message, "path": path}. The path is the client's:
 * anything but printable ASCII becomes '?' (JSON strings must be UTF-8) and
 * it is cut to 256 bytes.
 */
static void
control_error(struct evhttp_request *req, int code, const char *reason, const char *path)
{
	char shown[257];
	size_t i;

	for (i = 0; path[i] != '\0' && i < sizeof shown - 1; i++)
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

	report_metrics(buf, control->sink);
	evbuffer_add_printf(buf,
	    "# HELP entropyd_control_connections Open connections to the control server.\n"
	    "# TYPE entropyd_control_connections gauge\n"
	    "entropyd_control_connections %u\n"
	    "# HELP entropyd_control_refused_total Connections closed at once: over the cap.\n"
	    "# TYPE entropyd_control_refused_total counter\n"
	    "entropyd_control_refused_total %llu\n",
	    control->connections, (unsigned long long)control->refused);
	evhttp_add_header(h, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

/* Route a request: GET (or HEAD) /health, /metrics, /sources, /sources/NAME. */
static void
control_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *raw = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	struct report_clock c;
	char *path;
	json_t *doc;
	bool known;

	if (raw == NULL || (path = evhttp_uridecode(raw, 0, NULL)) == NULL) {
		control_error(req, 400, "Bad Request", "");
		return;
	}
	known = strcmp(path, "/health") == 0 || strcmp(path, "/metrics") == 0 ||
	    strcmp(path, "/sources") == 0 || strncmp(path, "/sources/", 9) == 0;
	if (!known)
		control_error(req, 404, "Not Found", path);
	else if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		control_error(req, 405, "Method Not Allowed", path);
	} else if (strcmp(path, "/health") == 0)
		control_health(req);
	else if (strcmp(path, "/metrics") == 0)
		control_metrics(req);
	else {
		c = report_now();
		if (strcmp(path, "/sources") == 0)
			doc = report_sources(&c);
		else
			doc = report_source(path + 9, &c);
		if (doc == NULL)
			control_error(req, 404, "Not Found", path);
		else
			control_reply_json(req, 200, "OK", "application/json", doc);
	}
	free(path);
}

/* A connection went away: free its place. */
static void
control_closed(struct evhttp_connection *evcon, void *arg)
{
	if (control != NULL && control->connections > 0)
		control->connections--;
}

/*
 * evhttp makes a connection's bufferevent here, before the connection
 * exists; it is adopted (counted, or refused over the cap) just after.
 */
static struct bufferevent *
control_new_bev(struct event_base *base, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);

	if (bev == NULL)
		return NULL;
	control->fresh = xreallocarray(control->fresh, control->nfresh + 1,
	    sizeof *control->fresh);
	control->fresh[control->nfresh++] = bev;
	event_active(control->ev_adopt, EV_TIMEOUT, 0);
	return bev;
}

/* Count new connections and watch them close; close those over the cap. */
static void
control_adopt(int fd, short what, void *arg)
{
	struct evhttp_connection *evcon;
	void *cbarg;
	size_t i;

	for (i = 0; i < control->nfresh; i++) {
		cbarg = NULL;
		bufferevent_getcb(control->fresh[i], NULL, NULL, NULL, &cbarg);
		evcon = cbarg;
		if (evcon == NULL || evhttp_connection_get_bufferevent(evcon) != control->fresh[i])
			continue;
		if (control->connections >= CONTROL_MAX_CONNECTIONS) {
			if (control->refused++ == 0)
				log_warnx("control: more than %d connections; closing new ones",
				    CONTROL_MAX_CONNECTIONS);
			evhttp_connection_free(evcon);
			continue;
		}
		control->connections++;
		evhttp_connection_set_closecb(evcon, control_closed, NULL);
	}
	control->nfresh = 0;
}

/* Create the directory a socket goes in, and its parents (mode 0755). */
static int
control_mkdirs(const char *path)
{
	char *dir = xstrdup(path), *p, c;
	int rc = 0;

	if ((p = strrchr(dir, '/')) == NULL || p == dir) {
		free(dir);
		return 0;
	}
	*p = '\0';
	for (p = dir + 1; rc == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) == -1 && errno != EEXIST)
			rc = -1;
		*p = c;
		if (c == '\0')
			break;
	}
	free(dir);
	return rc;
}

/* Whether a daemon answers on a Unix socket (connect succeeds). */
static int
control_live(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd == -1)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof *sun);
	close(fd);
	if (rc == 0)
		return 1;
	return errno == ECONNREFUSED || errno == ENOENT ? 0 : -1;
}

/*
 * Listen on the Unix socket: mode 0660, its directory created; a stale
 * socket is replaced, a live one (another daemon) or any other file is not.
 */
static int
control_listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t mask;
	int fd;

	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "%s: path too long for a Unix socket", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (control_mkdirs(path) == -1) {
		snprintf(err, errlen, "%s: creating its directory: %s", path, strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s: exists and is not a socket", path);
			return -1;
		}
		switch (control_live(&sun)) {
		case 1:
			snprintf(err, errlen, "%s: another daemon answers on it", path);
			return -1;
		case 0:
			log_info("control: removing stale socket %s", path);
			if (unlink(path) == -1 && errno != ENOENT) {
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				return -1;
			}
			break;
		default:
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	mask = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		umask(mask);
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(mask);
	/* With -D, the daemon's user and group own it (before the drop). */
	if (chmod(path, 0660) == -1 || privdrop_socket_owner(path) == -1 ||
	    listen(fd, 64) == -1 || stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	control->dev = st.st_dev;
	control->ino = st.st_ino;
	return fd;
}

/* Whether a numeric address is loopback (127.0.0.0/8 or ::1). */
static bool
control_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

/* The idle timeout: CONTROL_TIMEOUT_S, or the test override. */
static int
control_timeout(void)
{
	const char *s = getenv(CONTROL_TIMEOUT_ENV);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return CONTROL_TIMEOUT_S;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < 1 || v > 3600) {
		log_warnx("%s: '%s' is not a number of seconds from 1 to 3600; using %d",
		    CONTROL_TIMEOUT_ENV, s, CONTROL_TIMEOUT_S);
		return CONTROL_TIMEOUT_S;
	}
	return (int)v;
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
	if (!control_loopback(addr))
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

	control = xcalloc(1, sizeof *control);
	control->base = base;
	control->sink = sink;
	if ((control->http = evhttp_new(base)) == NULL)
		fatalx("evhttp_new failed");
	evhttp_set_max_headers_size(control->http, CONTROL_MAX_HEADERS_BYTES);
	evhttp_set_max_body_size(control->http, CONTROL_MAX_BODY_BYTES);
	evhttp_set_timeout(control->http, control_timeout());
	/* Every method evhttp knows reaches control_request, which answers 405. */
	evhttp_set_allowed_methods(control->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT);
	evhttp_set_gencb(control->http, control_request, NULL);
	evhttp_set_bevcb(control->http, control_new_bev, NULL);
	control->ev_adopt = event_new(base, -1, 0, control_adopt, NULL);
	report_sample(&c);

	if ((fd = control_listen_unix(cfg->control_socket, err, sizeof err)) == -1) {
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
	struct stat st;

	if (control == NULL)
		return;
	if (control->http != NULL)
		evhttp_free(control->http);
	if (control->path != NULL && stat(control->path, &st) == 0 &&
	    st.st_dev == control->dev && st.st_ino == control->ino)
		unlink(control->path);
	if (control->ev_adopt != NULL)
		event_free(control->ev_adopt);
	free(control->fresh);
	free(control->path);
	free(control);
	control = NULL;
	report_reset();
}
