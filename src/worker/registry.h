/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_REGISTRY_H
#define ENTROPYD_REGISTRY_H

#include <sys/queue.h>

#include <stdbool.h>
#include <stdint.h>

#include "options.h"
#include "pipeline.h"
#include <entropyd/source.h>

/*
 * The modules the daemon knows (built in, and later drop-ins), their
 * options, and the instances they added. It also provides the host table
 * handed to modules.
 */

enum instance_state {
	INSTANCE_ABSENT,    /* not open: device gone or failed; retried with backoff */
	INSTANCE_STARTING,  /* open, start-up tests not yet passed */
	INSTANCE_RUNNING,   /* open and delivering */
	INSTANCE_SUSPENDED, /* too many failed tests; retried with backoff */
	INSTANCE_DRAINED,   /* a finite input ended; SIGHUP retries it */
	INSTANCE_STALLED,   /* open, asked for data, none for its stall timeout */
	INSTANCE_NSTATES
};

/* How the engine reads an instance: its own fd, or a reader thread (shown by reports). */
enum instance_drive {
	INSTANCE_DRIVE_NONE,   /* not open */
	INSTANCE_DRIVE_POLL,   /* the module's fd, polled by the loop */
	INSTANCE_DRIVE_THREAD, /* a core-owned reader thread */
};

struct engine_slot; /* the engine's machinery for one instance: opaque here */

/*
 * One device of a module: who it is, its state, its data path. How it is
 * opened, polled and retried is the engine's, behind slot.
 */
struct entropyd_instance {
	TAILQ_ENTRY(entropyd_instance) entry;  /* in its module */
	TAILQ_ENTRY(entropyd_instance) all;    /* in the registry */
	struct entropyd_module *module;
	char *name;          /* "module" or "module:id" */
	char *device;
	void *cookie;
	enum instance_state state;
	uint64_t state_since_ns;
	uint64_t last_delivery_ns; /* when it last delivered bytes (monotonic), 0 before */
	enum instance_drive driven_by;
	unsigned backoff_ms; /* the engine's delay before the next try */
	bool removed;        /* unplugged: freed once closed */
	bool quiet;          /* in an open a restart capture asked for: its info lines are debug */
	char last_error[512];
	struct pipeline pipe;
	struct engine_slot *slot;
};

struct module_option {
	const char *key;
	char *value;
};

struct entropyd_module {
	TAILQ_ENTRY(entropyd_module) entry;
	const struct entropyd_source *src;
	char *path;          /* the .so, NULL when built in */
	bool enabled;
	double entropy_bits; /* effective estimate after -O NAME:entropy */
	unsigned stall_timeout_ms; /* -O NAME:stall_timeout (0: never stalls) */
	char *unusable;      /* why probe found nothing */
	void (*cookie_release)(void *); /* host->set_cookie_release */
	/*
	 * A module whose open instances hold bytes out of the daemon's sight
	 * (a plugin's host): on a VM generation change, have them forgotten
	 * there; returns how many bytes were dropped now. NULL for the rest.
	 */
	size_t (*forget_held)(void *state);
	struct module_option *options; /* one per declared key, in order */
	size_t n_options;
	TAILQ_HEAD(, entropyd_instance) instances;
};

TAILQ_HEAD(module_list, entropyd_module);
TAILQ_HEAD(instance_list, entropyd_instance);
extern struct module_list registry_modules;
extern struct instance_list registry_instances;

/* The host table the worker hands its modules (its side bound to it). */
const struct entropyd_host *registry_host(void);

/* Called when modules add or remove instances (set by the engine). */
struct registry_hooks {
	void (*added)(struct entropyd_instance *);
	void (*removed)(struct entropyd_instance *);
	void (*gone)(struct entropyd_instance *, const char *reason); /* host->instance_gone */
};
void registry_set_hooks(const struct registry_hooks *);

/*
 * Check what a descriptor claims (built-ins and plugins alike): entropy_bits
 * finite and in (0, 8] per byte, or (0, sample_bits] per raw sample, with
 * sample_bits 1..16. 0, or -1 with the reason in err.
 */
int registry_check_claims(const struct entropyd_source *, char *err, size_t errlen);
/* Register a module descriptor (its claims checked); path NULL for built-ins. 0, or -1 with err set. */
int registry_add(const struct entropyd_source *, const char *path, char *err, size_t errlen);
void registry_add_builtins(void);
struct entropyd_module *registry_find(const char *name);
/* Called for a drop-in whose configure() failed: it must remove the module. */
typedef void (*registry_refuse_fn)(struct entropyd_module *, const char *why);
/*
 * Apply the command line: unknown names in -n and -O, keys and values are
 * usage errors (EX_USAGE with one line in err), an unknown -x name a logged
 * warning; then each enabled module's configure():
 * a built-in failing is EX_USAGE, a drop-in failing is handed to refuse
 * (the plugin loader's loader_init_failed; NULL: a usage error too).
 */
int registry_configure(const struct config *, registry_refuse_fn refuse, char *err,
    size_t errlen);
/*
 * Select one module by -x/-n and run its configure() when enabled (also for
 * plugins loaded on SIGHUP). 0, or -1 with err set.
 */
int registry_enable(struct entropyd_module *, const struct config *, char *err, size_t errlen);
/* Unregister a module and free it with its instances. */
void registry_remove_module(struct entropyd_module *);
/* Print a module's options with their help (-O NAME). */
void registry_print_options(const struct entropyd_module *, FILE *);
/* Probe one module: clears its old reason; returns instances added, or -1. */
int registry_probe(struct entropyd_module *);
/* Print every module: enabled or not, usable here or why not (-l). */
void registry_print_list(FILE *);
/* The option value (as given, or default), or NULL. */
const char *registry_option(struct entropyd_module *, const char *key);
/* An instance's last error: set from any thread (modules log from reader threads). */
void registry_set_error(struct entropyd_instance *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Set the last error without logging it. */
void registry_note_error(struct entropyd_instance *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void registry_copy_error(struct entropyd_instance *, char *buf, size_t len);
bool registry_has_error(struct entropyd_instance *);
void registry_clear_error(struct entropyd_instance *);
const char *registry_state_name(enum instance_state);
void registry_set_state(struct entropyd_instance *, enum instance_state);
/* "sample" or "byte": what an instance's credit is counted per. */
const char *registry_unit_name(const struct entropyd_instance *);
/* --min-credit: the credit per unit below which a source's health warns (0: none). */
double registry_min_credit(void);
/*
 * The online estimate lowered an instance's credit (in pipeline_input) from
 * before: log it as a warning, with the figures that did it.
 */
void registry_credit_moved(struct entropyd_instance *, double before);
/* Forget an instance that is closed (after remove_instance). */
void registry_free_instance(struct entropyd_instance *);
void registry_free(void);

#endif
