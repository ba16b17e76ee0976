/* SPDX-License-Identifier: MIT */
/*
 * The EGD broker's sockets: the Unix sockets of --egd-socket (one per
 * guest, named or not) and the TCP listeners of --egd-listen, made before
 * the worker drops its privileges; new connections are named, capped at
 * --egd-max-clients and handed to broker.c.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker.h"
#include "log.h"
#include "unixsock.h"
#include "xmalloc.h"

/* Connections the kernel queues on a socket until the loop takes them. */
#define BROKER_LISTEN_BACKLOG 128
/* Half-open TCP: a peer silent this long is probed, and dropped after the probes. */
#define BROKER_LISTEN_KEEPIDLE_S 30
#define BROKER_LISTEN_KEEPINTVL_S 10
#define BROKER_LISTEN_KEEPCNT 3
/* Unacknowledged data this long ends a TCP connection. */
#define BROKER_LISTEN_USER_TIMEOUT_MS 60000u
/* Out of descriptors: accept again after this long. */
#define BROKER_LISTEN_PAUSE_MS 1000
/* Descriptors kept for everything but the clients. */
#define BROKER_LISTEN_SPARE_FDS 256

/* One socket. */
struct broker_listener {
	struct broker_listeners *all;
	char name[OPTIONS_EGD_NAME_MAX + 1]; /* NAME= of --egd-socket, or "" */
	char *label;              /* its path or ADDR:PORT, as given */
	bool tcp;
	bool made;                /* a Unix socket made here: removed at stop */
	struct unixsock sock;
	int fd;
	struct event *ev;
};

struct broker_listeners {
	struct broker *broker;
	struct broker_listener *v;
	size_t n;
	struct event *ev_resume;  /* accept again after running out of descriptors */
};

/* A Unix socket's client: its NAME, else its peer's uid and pid. */
static void
broker_listen_unix_name(const struct broker_listener *l, int fd, char *name, size_t len)
{
	struct ucred cred;
	socklen_t credlen = sizeof cred;

	if (l->name[0] != '\0')
		snprintf(name, len, "%s", l->name);
	else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0)
		snprintf(name, len, "uid=%lu,pid=%ld", (unsigned long)cred.uid, (long)cred.pid);
	else
		snprintf(name, len, "%s", l->label);
}

/* A TCP client: ADDR:PORT ([ADDR]:PORT for IPv6); and probes for a peer gone silent. */
static void
broker_listen_tcp_name(const struct sockaddr_storage *ss, int fd, char *name, size_t len)
{
	static const int on = 1, idle = BROKER_LISTEN_KEEPIDLE_S,
	    intvl = BROKER_LISTEN_KEEPINTVL_S, cnt = BROKER_LISTEN_KEEPCNT;
	static const unsigned user_timeout = BROKER_LISTEN_USER_TIMEOUT_MS;
	char addr[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
		snprintf(name, len, "[%s]:%u", addr, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
		snprintf(name, len, "%s:%u", addr, ntohs(s4->sin_port));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout,
	    sizeof user_timeout) == -1)
		log_debug("egd: %s: keepalive: %s", name, strerror(errno));
}

/* Out of descriptors: stop accepting for a while, instead of spinning on a readable socket. */
static void
broker_listen_pause(struct broker_listeners *ls)
{
	struct timeval tv = { BROKER_LISTEN_PAUSE_MS / 1000, BROKER_LISTEN_PAUSE_MS % 1000 * 1000 };
	size_t i;

	for (i = 0; i < ls->n; i++)
		event_del(ls->v[i].ev);
	evtimer_add(ls->ev_resume, &tv);
}

/* Accept again. */
static void
broker_listen_resume(int fd, short what, void *arg)
{
	struct broker_listeners *ls = arg;
	size_t i;

	for (i = 0; i < ls->n; i++)
		event_add(ls->v[i].ev, NULL);
}

/* New connections: named and handed over, or refused at the cap. */
static void
broker_listen_accept(int lfd, short what, void *arg)
{
	struct broker_listener *l = arg;
	struct broker *b = l->all->broker;
	struct sockaddr_storage ss;
	socklen_t sslen;
	char name[BROKER_NAME_MAX];
	int i, fd;

	for (i = 0; i < BROKER_ACCEPT_BURST; i++) {
		sslen = sizeof ss;
		fd = accept4(lfd, (struct sockaddr *)&ss, &sslen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE) {
				log_warn("egd: %s: accepting; pausing for %d ms", l->label,
				    BROKER_LISTEN_PAUSE_MS);
				broker_listen_pause(l->all);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("egd: %s: accepting", l->label);
			return;
		}
		if (l->tcp)
			broker_listen_tcp_name(&ss, fd, name, sizeof name);
		else
			broker_listen_unix_name(l, fd, name, sizeof name);
		if (b->nclients >= b->max_clients) {
			broker_refuse(BROKER_REFUSED_FULL, "%s: refusing %s: %u clients are connected, "
			    "as many as --egd-max-clients allows", l->label, name, b->nclients);
			close(fd);
			continue;
		}
		broker_client_add(fd, name, l->label, l->name[0] != '\0');
	}
}

/* The --egd-group's id, or (gid_t)-1 when none is given. */
static int
broker_listen_group(const struct config *cfg, gid_t *gid, char *err, size_t errlen)
{
	struct group *gr;
	char *end;
	unsigned long v;

	*gid = (gid_t)-1;
	if (cfg->egd_group == NULL)
		return 0;
	if ((gr = getgrnam(cfg->egd_group)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	errno = 0;
	v = strtoul(cfg->egd_group, &end, 10);
	if (cfg->egd_group[0] >= '0' && cfg->egd_group[0] <= '9' && *end == '\0' && errno == 0 &&
	    v < (gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	snprintf(err, errlen, "--egd-group: no group '%s'", cfg->egd_group);
	return EX_NOUSER;
}

/* Bind and listen on ADDR:PORT (checked by the options: a loopback one unless allowed). */
static int
broker_listen_tcp(struct broker_listener *l, char *err, size_t errlen)
{
	static const int on = 1;
	struct sockaddr_storage ss;
	socklen_t sslen;
	char addr[64];
	unsigned port;

	memset(&ss, 0, sizeof ss);
	if (options_listen_addr(l->label, addr, sizeof addr, &port) != 0) {
		snprintf(err, errlen, "--egd-listen: '%s' is not ADDR:PORT", l->label);
		return -1;
	}
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		sslen = sizeof(struct sockaddr_in);
	} else {
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr);
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		sslen = sizeof(struct sockaddr_in6);
	}
	if ((l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == -1 ||
	    bind(l->fd, (struct sockaddr *)&ss, sslen) == -1 ||
	    listen(l->fd, BROKER_LISTEN_BACKLOG) == -1) {
		snprintf(err, errlen, "--egd-listen %s: cannot listen: %s", l->label,
		    strerror(errno));
		return -1;
	}
	if (!options_listen_loopback(l->label))
		log_warnx("egd: listening on %s, not a loopback address (--egd-listen-any): "
		    "anyone who reaches it can take entropy", l->label);
	return 0;
}

/* Room for every client's descriptor: raise the soft limit toward the hard one. */
static void
broker_listen_fds(unsigned max_clients)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_clients + BROKER_LISTEN_SPARE_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur < want)
		log_warnx("egd: room for %lu descriptors only; fewer than --egd-max-clients %u "
		    "clients may connect", (unsigned long)rl.rlim_cur, max_clients);
}

int
broker_listen_start(struct broker *b, const struct config *cfg, char *err, size_t errlen)
{
	struct broker_listeners *ls = xcalloc(1, sizeof *ls);
	struct broker_listener *l;
	const char *path;
	gid_t gid;
	size_t i;
	int rc;

	b->listeners = ls;
	ls->broker = b;
	ls->ev_resume = evtimer_new(b->base, broker_listen_resume, ls);
	if ((rc = broker_listen_group(cfg, &gid, err, errlen)) != 0)
		return rc;
	ls->v = xcalloc(cfg->n_egd_sockets + cfg->n_egd_listen, sizeof *ls->v);
	for (i = 0; i < cfg->n_egd_sockets + cfg->n_egd_listen; i++) {
		l = &ls->v[ls->n];
		l->all = ls;
		l->fd = -1;
		if (i < cfg->n_egd_sockets) {
			options_egd_socket(cfg->egd_sockets[i], l->name, &path);
			l->label = xstrdup(path);
			ls->n++;
			l->fd = unixsock_listen("egd", path, 0660, gid, BROKER_LISTEN_BACKLOG, &l->sock, err,
			    errlen);
			if (l->fd == -1)
				return EX_CANTCREAT;
			l->made = true;
		} else {
			l->tcp = true;
			l->label = xstrdup(cfg->egd_listen[i - cfg->n_egd_sockets]);
			ls->n++;
			if (broker_listen_tcp(l, err, errlen) == -1)
				return EX_UNAVAILABLE;
		}
		l->ev = event_new(b->base, l->fd, EV_READ | EV_PERSIST, broker_listen_accept, l);
		event_add(l->ev, NULL);
		log_info("egd: listening on %s%s%s", l->label, l->name[0] != '\0' ? " as " : "",
		    l->name);
	}
	broker_listen_fds(cfg->egd_max_clients);
	return 0;
}

void
broker_listen_stop(struct broker *b)
{
	struct broker_listeners *ls = b->listeners;
	size_t i;

	if (ls == NULL)
		return;
	for (i = 0; i < ls->n; i++) {
		struct broker_listener *l = &ls->v[i];

		if (l->ev != NULL)
			event_free(l->ev);
		if (l->fd != -1)
			close(l->fd);
		if (l->made)
			unixsock_remove(l->label, &l->sock);
		free(l->label);
	}
	event_free(ls->ev_resume);
	free(ls->v);
	free(ls);
	b->listeners = NULL;
}
