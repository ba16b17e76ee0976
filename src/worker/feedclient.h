/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FEEDCLIENT_H
#define ENTROPYD_FEEDCLIENT_H

#include "feedproto.h"
#include "sink.h"

/*
 * The worker's end of its socket to the feeder. Each call is one request,
 * answered before it returns (the feeder refuses a second request sent
 * before the first was answered); the kernel sink's ops go through it, so
 * the worker feeds the kernel without holding /dev/random or a capability.
 */
struct feedclient {
	int fd;
};

/* The kernel sink's ops in a worker; the sink's ops_arg is the feedclient. */
extern const struct sink_kernel_ops feedclient_ops;

struct feedclient *feedclient_new(int fd);
void feedclient_free(struct feedclient *);
/*
 * Send one request and wait for its answer: 0, or -1 with errno (the
 * feeder's errno for what it did, EPIPE when it is gone). st, when not
 * NULL, receives the state a QUERY or HELLO answer carries.
 */
int feedclient_request(struct feedclient *, enum feedproto_type, uint32_t arg0,
    const void *payload, size_t len, struct feedproto_state *st);
/* The feeder's counters and the pool's state (QUERY). 0 or -1 with errno. */
int feedclient_query(struct feedclient *, struct feedproto_state *);
/* The relay notify_relay() takes: a STATUS= line for the feeder to send. */
void feedclient_status(const char *status, void *arg);

#endif
