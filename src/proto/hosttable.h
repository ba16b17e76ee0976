/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOSTTABLE_H
#define ENTROPYD_HOSTTABLE_H

#include <entropyd/source.h>

/*
 * The host table a source module is handed (struct entropyd_host), written
 * once for every process that hosts modules: the worker (its registry), a
 * plugin host (entropyd-plugin), and the unit tests' fake host. The table's
 * fixed fields and its printf-style calls are here; each host supplies what
 * it does with a formatted line and the calls that touch its own module
 * and instance structures, as hosttable_ops. A process has one host.
 */

/* Lines are cut at this length, terminator included. */
#define HOSTTABLE_LINE_MAX 1024

struct hosttable_ops {
	/* One formatted line for an instance's log (host->log). */
	void (*log)(struct entropyd_instance *, int priority, const char *line);
	/* One formatted line for the module's log (host->module_log). */
	void (*module_log)(struct entropyd_module *, int priority, const char *line);
	/* Why probe found nothing (host->unusable), formatted. */
	void (*unusable)(struct entropyd_module *, const char *why);
	/* The rest, as struct entropyd_host declares them. */
	const char *(*option)(struct entropyd_module *, const char *key);
	struct entropyd_instance *(*add_instance)(struct entropyd_module *, const char *id,
	    const char *device, void *cookie);
	void (*remove_instance)(struct entropyd_instance *);
	void *(*instance_cookie)(struct entropyd_instance *);
	struct entropyd_module *(*instance_module)(struct entropyd_instance *);
	void (*set_cookie_release)(struct entropyd_module *, void (*release)(void *cookie));
	double (*limit_entropy)(struct entropyd_instance *, double bits);
	void (*defer)(struct entropyd_module *, void (*fn)(struct entropyd_module *, void *),
	    void *arg);
	void (*instance_gone)(struct entropyd_instance *, const char *reason);
};

/* The table handed to modules: calls go to the ops bound last. */
extern const struct entropyd_host hosttable;
/* This process's side of the table (the ops must outlive their use). */
void hosttable_bind(const struct hosttable_ops *);

#endif
