/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PLUGINHOST_H
#define ENTROPYD_PLUGINHOST_H

#include <stddef.h>

#include <entropyd/source.h>

struct event_base;
struct evbuffer;

/*
 * Drop-in plugins run each in a process of its own (entropyd-plugin, see
 * src/plughost/), started through the plugin launcher. In the daemon a
 * plugin is a proxy module: a struct entropyd_source built from what its
 * host reported (name, description, flags, claims, options) whose probe,
 * configure, open, read, pollfd and close talk to the host. The engine
 * drives a proxy instance like any polled source (its fd is the instance's
 * data socket), so the plugin's bytes pass the same health tests,
 * conditioning and credit as a built-in's.
 *
 * A host that crashes, aborts, exits, hangs in a call past
 * PLUGINPROTO_CALL_TIMEOUT_MS, sends a malformed or unasked-for message,
 * or answers a read with more than was asked for costs only its plugin:
 * its instances go absent with the reason (the signal, the timeout, the
 * protocol error), it is started again after a backoff (1 s doubling to
 * 300 s; reset once a host ran for a minute), and the restart is counted
 * (entropyd_plugin_restarts_total).
 */

struct pluginhost;

/*
 * Start a host for the plugin file (path, and fd open on it, which the host
 * keeps for restarts) and read its descriptor. Returns the host, or NULL
 * with the reason the plugin is refused in err (fd is closed either way).
 */
struct pluginhost *pluginhost_start(const char *path, int fd, char *err, size_t errlen);
/* The proxy descriptor to register (valid until pluginhost_free). */
const struct entropyd_source *pluginhost_source(struct pluginhost *);
/* Stop the host (asked politely, then killed) and free it. */
void pluginhost_free(struct pluginhost *);
/* Every host freed: stop the launcher too. */
void pluginhost_free_all(void);
/* -l: one line on a plugin's host (running, or how it ended), into buf. */
void pluginhost_describe(struct pluginhost *, char *buf, size_t len);

/*
 * With -D (prepared), start the launcher now, while the daemon still has
 * the capabilities and the exec its hosts need: before it narrows its
 * bounding set and confines itself. The plugin loader calls it when the
 * plugin directory exists, so plugins dropped in later can still run.
 */
void pluginhost_prepare(void);
/* The engine's loop is running (base): watch the hosts and the launcher there, restart ended hosts. */
void pluginhost_attach(struct event_base *);
/* The loop is ending. */
void pluginhost_detach(void);
/* /metrics: the plugin families (restarts, up, protocol errors). */
void pluginhost_metrics(struct evbuffer *);

#endif
