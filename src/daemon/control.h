/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CONTROL_H
#define ENTROPYD_CONTROL_H

#include "options.h"
#include "sink.h"

struct event_base;

/*
 * The control socket: HTTP (libevent's evhttp) on a Unix socket, and on TCP
 * when --health-listen asks for it, serving /health, /metrics and /sources
 * from the registry and the sink. Never random bytes.
 */

/* Limits: a client that misbehaves affects only itself. */
#define CONTROL_MAX_CONNECTIONS 64
#define CONTROL_MAX_HEADERS_BYTES 8192
#define CONTROL_MAX_BODY_BYTES 1024
#define CONTROL_TIMEOUT_S 10
/* For tests only: the idle timeout in seconds, instead of CONTROL_TIMEOUT_S. */
#define CONTROL_TIMEOUT_ENV "ENTROPYD_CONTROL_TIMEOUT"

/* Serve on the loop; 0, or a sysexits code after logging why not. */
int control_start(struct event_base *, const struct config *, struct sink *);
/* Close every connection and the sockets (before the loop is freed). */
void control_stop(void);

#endif
