/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOSTPROC_H
#define ENTROPYD_HOSTPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <entropyd/source.h>

struct event_base;

/*
 * Drop-in plugins run each in a process of its own (entropyd-plugin, see
 * src/plughost/), started through the plugin launcher (launch.c). In the
 * worker a plugin is a proxy module (proxy.c): a struct entropyd_source
 * built from what its host reported (name, description, flags, claims,
 * options) whose probe, configure, open, read, pollfd and close talk to
 * the host. The engine drives a proxy instance like any polled source (its
 * fd is the instance's data socket), so the plugin's bytes pass the same
 * health tests, conditioning and credit as a built-in's.
 *
 * A host that crashes, aborts, exits, hangs in a call past
 * PLUGINPROTO_CALL_TIMEOUT_MS, sends a malformed or unasked-for message,
 * or answers a read with more than was asked for costs only its plugin:
 * its instances go absent with the reason (the signal, the timeout, the
 * protocol error), it is started again after a backoff (1 s doubling to
 * 300 s; reset once a host ran for a minute), and the restart is counted
 * (entropyd_plugin_restarts_total).
 */

struct hostproc;

/*
 * Start a host for the plugin file (path, and fd open on it, which the host
 * keeps for restarts) and read its descriptor. Returns the host, or NULL
 * with the reason the plugin is refused in err (fd is closed either way).
 */
struct hostproc *hostproc_start(const char *path, int fd, char *err, size_t errlen);
/* The proxy descriptor to register (valid until hostproc_free). */
const struct entropyd_source *hostproc_source(struct hostproc *);
/* Stop the host (asked politely, then killed) and free it. */
void hostproc_free(struct hostproc *);
/* Every host freed: stop the launcher too (end it, unless launch_inherited()). */
void hostproc_free_all(void);

/*
 * The plugin launcher (launch.c). A worker the supervisor forked calls
 * launch_inherited(): the launcher started before the split is the
 * supervisor's, kept for the next worker, and the worker's end only closes
 * its socket. launch_end() ends the launcher and waits (at most 2 s) until
 * it has, which it does only after its hosts: so no plugin host outlives
 * the process that calls it (the supervisor, or the daemon that started it).
 */
void launch_inherited(void);
void launch_end(void);
/* The engine's loop is running (base): watch the hosts and the launcher there, restart ended hosts. */
void hostproc_attach(struct event_base *);
/* The loop is ending. */
void hostproc_detach(void);

/* One host's figures, for /metrics. */
struct hostproc_stats {
	const char *name;
	bool up;                  /* its process runs */
	uint64_t restarts;        /* started again after it crashed, hung or broke the protocol */
	uint64_t protocol_errors; /* malformed or unasked-for messages (each ended it) */
};
/* Call fn for each host, in load order. */
void hostproc_each(void (*fn)(const struct hostproc_stats *, void *), void *arg);

#endif
