/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_GENSOCK_H
#define ENTROPYD_GENSOCK_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

struct event_base;

/*
 * The generation socket's own small HTTP server. Any local user may
 * connect and wait there, so a connection costs little: no evhttp, a
 * request read into a buffer of GENSOCK_REQUEST_BYTES that is freed once
 * the request is whole, and then only a waiter (longpoll.c). It answers
 * GET and HEAD /generation (with its query) and nothing else: HTTP/1.0 or
 * 1.1, headers read and ignored, every answer closes the connection.
 *
 * Limits: CONTROL_WAIT_MAX connections in all, reading or waiting, and
 * CONTROL_WAIT_PEER_MAX for one user (root excepted); over a limit a new
 * connection is closed at once. A request must be whole within the
 * control server's deadline (10 s) of the accept.
 */
#define GENSOCK_REQUEST_BYTES 1024

/* Serve on listen_fd (a listening Unix socket, taken over) on the loop. */
void gensock_start(struct event_base *, int listen_fd, unsigned deadline_s);
/* Close every connection and the listening socket. */
void gensock_stop(void);
/*
 * Answer on fd and close it: status line (HTTP/1.minor), headers, and the
 * body unless head (a HEAD request: its Content-Length alone).
 */
void gensock_reply(int fd, int minor, bool head, int code, const char *reason,
    const char *body, size_t len);
/* Connections refused at once (over a limit), for /metrics. */
unsigned long gensock_refused(void);

#endif
