/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CONTROL_H
#define ENTROPYD_CONTROL_H

#include "options.h"
#include "sink.h"

struct event_base;

/*
 * The control socket: HTTP (libevent's evhttp) on a Unix socket, and on TCP
 * when --health-listen asks for it, serving /health, /metrics, /sources and
 * /generation from the registry, the sink and the worker's generation.
 * Never random bytes.
 */

/*
 * Limits: a client that misbehaves affects only itself. The Unix socket and
 * the TCP listener each have their own places, and one peer (a uid on the
 * Unix socket, from SO_PEERCRED; an address on TCP) holds at most
 * CONTROL_PEER_MAX of them; over a limit a new connection is closed at
 * once. When the Unix socket's shared places are taken, root still has
 * CONTROL_ROOT_RESERVED of its own, and the daemon's user and group (the
 * socket's owners) CONTROL_GROUP_RESERVED. A connection has
 * CONTROL_DEADLINE_S from its accept (or from its last answer) to send a
 * whole request, headers and body, and take the whole answer; then it is
 * closed, however slowly it keeps sending.
 */
#define CONTROL_UNIX_MAX 64
#define CONTROL_TCP_MAX 64
#define CONTROL_PEER_MAX 8
#define CONTROL_ROOT_RESERVED 4
#define CONTROL_GROUP_RESERVED 4
#define CONTROL_MAX_HEADERS_BYTES 8192
#define CONTROL_MAX_BODY_BYTES 1024
#define CONTROL_DEADLINE_S 10
/* Connections the kernel queues on the Unix socket until the loop takes them. */
#define CONTROL_BACKLOG 128
/* For tests only: the deadline in seconds, instead of CONTROL_DEADLINE_S. */
#define CONTROL_TIMEOUT_ENV "ENTROPYD_CONTROL_TIMEOUT"

/*
 * The generation socket: the generation file's path and this suffix, mode
 * 0666, serving GET /generation (and its long poll) alone, to any local
 * user, by a small server of its own (gensock.c) with CONTROL_WAIT_MAX
 * connections in all and CONTROL_WAIT_PEER_MAX for one user (root
 * excepted). The long polls of the control socket and TCP wait in places of
 * their own, as many, not counted in the places above; one waits at most
 * its own timeout, then has the deadline for its answer.
 */
#define CONTROL_GENERATION_SUFFIX ".sock"
#define CONTROL_WAIT_MAX 4096
#define CONTROL_WAIT_PEER_MAX 64

/* Serve on the loop; 0, or a sysexits code after logging why not. */
int control_start(struct event_base *, const struct config *, struct sink *);
/* Close every connection and the sockets (before the loop is freed). */
void control_stop(void);

/* For the routes in other files (longpoll.c). */
struct evbuffer;
struct evhttp_request;
/* Send an answer; to HEAD its headers alone. */
void control_send(struct evhttp_request *, int code, const char *reason, struct evbuffer *);
/*
 * The request waits up to timeout_s for its answer: its client moves to a
 * waiting place, its deadline grows by timeout_s. 0, or -1 when the
 * waiting places (all, or its peer's) are taken.
 */
int control_hold(struct evhttp_request *, unsigned timeout_s);

#endif
