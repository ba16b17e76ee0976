/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_LONGPOLL_H
#define ENTROPYD_LONGPOLL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct evhttp_connection;
struct evhttp_request;

/*
 * GET /generation, and its long poll: GET /generation?after=ID&timeout=S
 * is answered as soon as the generation ID is not ID (at once when it is
 * not already), or with 304 Not Modified after S seconds (0 to
 * LONGPOLL_MAX_TIMEOUT_S; LONGPOLL_DEFAULT_TIMEOUT_S when not given). On
 * the control socket a waiting request holds one of the control server's
 * waiting places (control_hold) instead of the places and deadline of the
 * others; on the generation socket (gensock.c) it is a bare socket and a
 * small record. Either connection closes after the answer. All waiters are
 * answered in one turn of the loop after the new ID was written to the
 * generation file.
 */
#define LONGPOLL_DEFAULT_TIMEOUT_S 60
#define LONGPOLL_MAX_TIMEOUT_S 3600

/* Hear of each new generation. */
void longpoll_start(struct event_base *);
/* Forget every waiter, unanswered: its connection closes with the daemon. */
void longpoll_stop(void);
/* GET or HEAD /generation with its query (NULL: none), on the control server. */
void longpoll_request(struct evhttp_request *, const char *query);
/*
 * The same on the generation socket: fd (taken over) is answered and
 * closed, now or once it waited; minor is the request's HTTP/1.minor, uid
 * its peer's.
 */
void longpoll_serve_fd(int fd, uid_t uid, int minor, bool head, const char *query);
/* A connection closed or was closed: forget its waiter, never answering it. */
void longpoll_forget(const struct evhttp_connection *);
/* Requests waiting. */
size_t longpoll_waiters(void);
/* Of them the generation socket's: all (uid NULL), or one user's. */
size_t longpoll_fd_waiters(const uid_t *uid);

#endif
