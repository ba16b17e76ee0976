/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOOKS_H
#define ENTROPYD_HOOKS_H

#include <sys/types.h>

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "feedproto.h"

/*
 * The generation hooks, run by the supervisor alone: the executables in
 * the hook directory, one after the other in lexical (byte) order, after a
 * worker published a new generation (HOOKS), each with ENTROPYD_GENERATION,
 * ENTROPYD_GENERATION_ID and ENTROPYD_TRIGGER in a clean environment, in a
 * process group of its own, killed with it (SIGKILL) at its timeout.
 *
 * As sshd's StrictModes: a hook runs only when it is a regular file (or a
 * link to one) owned by root and writable by no one else, and every
 * directory from / down to it (the hook directory, and a link's target's
 * directories) is owned by root and writable by no one else; a directory
 * others may write to is passed only when it is sticky (as /tmp is: no one
 * else may replace root's entries in it), and never as the hook directory
 * itself. Anything else is refused, logged and reported. Names that begin
 * with '.', end in '~' or are a package manager's leftovers (.dpkg-old,
 * .dpkg-dist, .dpkg-new, .dpkg-tmp, .ucf-*, .rpmnew, .rpmsave) are skipped,
 * and so are subdirectories and files their owner may not execute.
 *
 * The supervisor parses nothing but the fixed-size HOOKS frame: the name,
 * ID and counter handed to a hook are formatted here from its fields.
 * Hooks run once per generation ID: a second request for an ID already
 * run is refused. A request that comes while hooks run waits; a newer one
 * replaces it (the newer generation is what the hooks must see).
 */

/* The most hooks of a directory that are looked at; the rest are logged, never run. */
#define HOOKS_MAX 64
/* The PATH hooks get. */
#define HOOKS_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Where the outcomes go: the supervisor sends them to the worker. */
struct hooks_sink {
	void (*ran)(const struct feedproto_hook_ran *, void *arg);
	void (*done)(uint64_t generation, uint32_t ran, uint32_t refused, void *arg);
	void *arg;
};

/* One hook of a batch, checked. */
struct hooks_entry {
	char name[FEEDPROTO_MAX_HOOK_NAME + 1];
	char *path;                   /* what is executed (a link's target), NULL when refused */
	enum feedproto_hook_reason refused;    /* FEEDPROTO_HOOK_NONE when it may run */
};

/* The runner: the batch in hand, the one waiting, and the last ID run. */
struct hooks_run {
	const char *dir;
	unsigned timeout_s;
	struct hooks_sink sink;
	sigset_t child_mask;          /* the mask a hook starts with */
	bool active;
	struct feedproto_hooks req;   /* the batch in hand */
	struct hooks_entry entries[HOOKS_MAX];
	size_t n, next;
	uint32_t ran, refused;
	pid_t pid;                    /* the hook running, 0 when none */
	uint64_t started_ns, deadline_ns;
	bool killed;                  /* it passed its timeout and was killed */
	bool waiting;                 /* a request waits for this batch to end */
	struct feedproto_hooks waiting_req;
	bool have_last;
	uint8_t last_id[FEEDPROTO_ID_BYTES]; /* the last ID hooks were run for */
};

/* Set up a runner for dir (not copied) and a timeout; child_mask is what hooks start with. */
void hooks_init(struct hooks_run *, const char *dir, unsigned timeout_s,
    const struct hooks_sink *, const sigset_t *child_mask);
/*
 * A worker's HOOKS: start the batch, or keep it until the one running ends;
 * refused (logged) when hooks already ran for its ID or it names no trigger.
 */
void hooks_request(struct hooks_run *, const struct feedproto_hooks *);
/* Check every hook without running any: READY or REFUSED each, then done (generation 0). */
void hooks_check(struct hooks_run *);
/* A child was reaped: true when it was the running hook (the next one starts). */
bool hooks_reaped(struct hooks_run *, pid_t, int status);
/* Milliseconds until the running hook's timeout, -1 when none runs. */
int hooks_timeout_ms(const struct hooks_run *);
/* Kill the running hook's process group once its timeout passed. */
void hooks_tick(struct hooks_run *);
/* Stopping: kill the running hook's group, forget the rest. */
void hooks_abort(struct hooks_run *);
/*
 * Check one hook (dir/name): *path set to what to execute (a malloc'd
 * string) when it may run. FEEDPROTO_HOOK_NONE, or why not; *skip set for a
 * name or file that is no hook at all (then nothing is reported).
 */
enum feedproto_hook_reason hooks_check_one(const char *dir, const char *name, char **path, bool *skip);
/* Whether a directory is safe to run hooks from (FEEDPROTO_HOOK_NONE), or why not. */
enum feedproto_hook_reason hooks_check_dir(const char *dir);

#endif
