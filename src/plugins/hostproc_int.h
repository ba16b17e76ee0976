/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOSTPROC_INT_H
#define ENTROPYD_HOSTPROC_INT_H

/*
 * What the files of src/plugins share about a plugin's host process:
 * launch.c starts them, hostproc.c runs each one's control socket and
 * restarts, proxy.c is the source module the registry sees for it.
 */

#include <sys/queue.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <entropyd/source.h>

#include "hostproc.h"
#include "pluginproto.h"

struct event_base;

/* How long the daemon waits for a host's answer: a little past the host's own watchdog. */
#define HOSTPROC_WAIT_MS (PLUGINPROTO_CALL_TIMEOUT_MS + 1000u)
/* How long a host asked to stop may take before it is killed (under valgrind, longer). */
#define HOSTPROC_STOP_MS 300u
#define HOSTPROC_STOP_VALGRIND_MS 5000u
/* A host that ran this long before it ended is restarted after the first backoff again. */
#define HOSTPROC_STABLE_NS (60ull * 1000000000u)
/* Log lines a host may send per second; more are counted and dropped. */
#define HOSTPROC_LOG_PER_SECOND 100u
/* Messages handled per wake-up, so a flooding host cannot hold the loop. */
#define HOSTPROC_BATCH 256
/* Messages kept for later at most (while waiting for an answer). */
#define HOSTPROC_QUEUE_MAX 1024

/* A message that came while the daemon waited for an answer. */
struct hostproc_queued {
	STAILQ_ENTRY(hostproc_queued) entry;
	size_t len;
	uint8_t buf[];
};

/* A host's instance id and the daemon's instance. */
struct hostproc_link {
	uint32_t child_id;
	struct entropyd_instance *inst;
};

/* One plugin's host process, as the worker sees it (restarted as it ends). */
struct hostproc {
	TAILQ_ENTRY(hostproc) entry;
	uint32_t id;            /* the launcher's name for the current process */
	char *path;
	int file;               /* the plugin file, kept for restarts */
	int control;            /* -1 while no host runs */
	bool running;           /* loaded and serving */
	bool ending;            /* killed or lost: the launcher's PP_EXITED is due */
	bool stopping;          /* asked to stop: not restarted */
	bool failed;            /* came back as another plugin: not restarted */
	uint64_t generation;    /* one per process: proxies of an old one are stale */
	char fault[512];        /* why this process is ending (its PP_FAULT, or ours) */
	char ended[512];        /* how the last process ended */
	struct entropyd_source desc;
	char *name, *description;
	struct entropyd_option *options;
	size_t n_options;
	struct hostproc_link *links;
	size_t n_links;
	uint32_t adding;        /* the host instance being added (PP_ADD in progress) */
	STAILQ_HEAD(, hostproc_queued) queue;
	unsigned n_queued;
	bool dispatching;
	struct event *ev_control, *ev_restart;
	unsigned backoff_ms;
	uint64_t started_ns;
	uint64_t restarts, protocol_errors;
	uint64_t log_window_ns, log_dropped;
	unsigned log_lines;
};


/* launch.c: the launcher process. */
/* Start the launcher if need be and a host process on the plugin file: its id and control socket. 0, or -1 with err. */
int launch_spawn(int file, uint32_t *id, int *control, char *err, size_t errlen);
/* Have the launcher kill a host process (its PP_EXITED follows). */
void launch_kill(uint32_t id);
/* Wait until deadline for the launcher's news and handle it; false on timeout or no launcher. */
bool launch_wait(uint64_t deadline_ns);
/*
 * Wait until deadline for fd to be readable; false on timeout, or at once
 * when a stop signal is pending (stopsig.c): the daemon is ending, and no
 * plugin's call may hold that up.
 */
bool launch_poll(int fd, uint64_t deadline_ns);
/* Whether a stop signal is pending (why a launch_poll() gave up early). */
bool launch_stopping(void);
/* With -D (prepared), start the launcher now, while the daemon may still exec. */
void launch_prepare(void);
void launch_attach(struct event_base *);
void launch_detach(void);
/* The worker's end: launch_end(), or only close the socket when the launcher is inherited. */
void launch_stop(void);

/* hostproc.c: one host process's control socket. */
/* The launcher says process id ended with a wait status. */
void hostproc_exited(uint32_t id, int status);
/* The host of a proxy module. */
struct hostproc *hostproc_of(const struct entropyd_module *);
/* Why a host is not there, for messages. */
const char *hostproc_absent_reason(struct hostproc *);
/* Send a message on a host's control socket (with fd unless -1); a failure ends the host. */
int hostproc_send(struct hostproc *, struct pluginproto_msg *, int fd);
/* Wait for the answer of type to a call (what); other messages are queued. Its length, or -1. */
ssize_t hostproc_await(struct hostproc *, uint16_t type, const char *what, uint8_t *buf,
    size_t cap);
/* Handle the messages queued while waiting. */
void hostproc_dispatch(struct hostproc *);
/* A malformed or unasked-for message: count it and end the host. */
void hostproc_protocol_error(struct hostproc *, const char *what);

/* proxy.c: the proxy source module. */
/* Fill a proxy descriptor's calls (probe, configure, open, read, pollfd, close, shutdown). */
void proxy_install(struct entropyd_source *);
/* configure(): send the options in force and call the plugin's configure(). */
int proxy_configure(struct entropyd_module *, const struct entropyd_host *, char *err,
    size_t errlen);

#endif
