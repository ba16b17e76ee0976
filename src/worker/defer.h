/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_DEFER_H
#define ENTROPYD_DEFER_H

#include <entropyd/source.h>

struct event_base;

/*
 * host->defer: calls asked for from any thread, made on the loop's thread.
 * A call queued while no loop is attached waits for one (or is dropped).
 */

/* Make queued and future calls from base's loop. 0, or -1 with errno. */
int defer_attach(struct event_base *);
/* Stop making calls (the loop is ending); queued ones stay until dropped. */
void defer_detach(void);
/* Queue fn(module, arg); the host table's defer. Any thread. */
void defer_add(struct entropyd_module *, void (*fn)(struct entropyd_module *, void *),
    void *arg);
/* Drop the queued calls of a module being unloaded (NULL: every call). */
void defer_drop(struct entropyd_module *);

#endif
