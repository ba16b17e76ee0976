/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOOKCLIENT_H
#define ENTROPYD_HOOKCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "feedproto.h"

struct event_base;

/*
 * The worker's end of its socket to the supervisor, for the generation
 * hooks: it asks (HOOKS, never waiting for the supervisor) and keeps what
 * comes back (HOOK_RAN per hook, HOOKS_DONE per batch; the check the
 * supervisor sends as the worker starts) for /health, /metrics and the
 * log. Without the privilege split there is no supervisor and no socket:
 * hooks are not run, and the report says so.
 */

/* The most hook names whose counts are kept; others count under HOOKCLIENT_OTHER. */
#define HOOKCLIENT_MAX_HOOKS 64
#define HOOKCLIENT_OTHER "(other)"

/* One hook as the worker knows it: its last outcome and its counts. */
struct hookclient_hook {
	char name[FEEDPROTO_MAX_HOOK_NAME + 1];
	struct feedproto_hook_ran last;
	uint64_t runs[FEEDPROTO_HOOK_NRESULTS]; /* for changes, not the start-up check */
};

struct hookclient_stats {
	bool supervised;              /* a supervisor runs the hooks */
	uint64_t requests;            /* HOOKS sent */
	uint64_t request_failures;    /* HOOKS that could not be sent */
	bool checked;                 /* the start-up check arrived */
	uint32_t check_ready, check_refused;
	bool batch_done;              /* a batch for a change ended */
	uint64_t batch_generation;    /* the last batch's generation */
	uint32_t batch_ran, batch_refused;
	uint32_t batch_failed;        /* of those run: failed or timed out */
	size_t nhooks;
	struct hookclient_hook hooks[HOOKCLIENT_MAX_HOOKS + 1]; /* + HOOKCLIENT_OTHER */
};

/* Take the worker's end of the hooks' socket (the privilege split's, before the loop). */
void hookclient_attach(int fd);
/* Read the supervisor's reports on the loop. */
void hookclient_start(struct event_base *);
void hookclient_stop(void);
/* Ask for the hooks of a generation: 0, or -1 (no supervisor, or the send failed; logged). */
int hookclient_request(uint64_t generation, const uint8_t id[FEEDPROTO_ID_BYTES],
    uint32_t trigger);
/* Take one frame the supervisor sent (tests feed it directly); false when it is refused. */
bool hookclient_take(const uint8_t *frame, size_t len);
const struct hookclient_stats *hookclient_stats(void);

#endif
