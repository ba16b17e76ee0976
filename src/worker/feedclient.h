/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FEEDCLIENT_H
#define ENTROPYD_FEEDCLIENT_H

#include <stdbool.h>

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
	/* The feeder's state as its last answer carrying one said (HELLO, QUERY, ADD). */
	struct feedproto_state state;
	bool have_state;
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
/* The feeder's counters and the pool's state (QUERY), into st unless NULL. 0 or -1 with errno. */
int feedclient_query(struct feedclient *, struct feedproto_state *);
/*
 * The copy of the feeder's state kept from its answers, without asking
 * (NULL before the first): what the reports read, so that a report never
 * waits on the feeder. The engine refreshes it on its top-up timer; each
 * feed refreshes the counters.
 */
const struct feedproto_state *feedclient_state(const struct feedclient *);
/* The relay notify_relay() takes: a STATUS= line for the feeder to send. */
void feedclient_status(const char *status, void *arg);

#endif
