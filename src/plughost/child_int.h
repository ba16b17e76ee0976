/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CHILD_INT_H
#define ENTROPYD_CHILD_INT_H

/*
 * What the files of a plugin host share: child.c runs the host (load,
 * serve the daemon's calls, the watchdog), table.c is the host table's
 * side (the module and its instances as the plugin adds them, deferred
 * calls), instance.c opens, reads, forgets and closes instances.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <entropyd/source.h>

#include "hosttable.h"
#include "pluginproto.h"

/* The signal that interrupts a reader thread's blocked read(). */
#define CHILD_SIGNAL SIGUSR2
/* How long closing waits for a reader thread to leave read(). */
#define CHILD_STOP_TIMEOUT_MS 300u

/* The one module of this host, as the plugin sees it. */
struct entropyd_module {
	const struct entropyd_source *src;
	void (*cookie_release)(void *);
	char **values;       /* -O values in the order of src->options; NULL: unset */
	size_t n_options;
	double estimate;     /* the module's estimate in force (after -O NAME:entropy) */
};

/* One instance the plugin added. */
struct entropyd_instance {
	struct entropyd_instance *next;
	uint32_t id;
	char *name;          /* the plugin's id ("" for the module's own name) */
	void *cookie;
	double estimate;
	bool removed;
	/* While open: */
	bool open;
	void *state;
	int data;            /* the data socket to the daemon */
	int fd;              /* the plugin's descriptor, or -1 (a reader thread) */
	bool ended;          /* read() said EOF, ERROR or REOPEN: nothing more until closed */
	uint32_t wants[PLUGINPROTO_WINDOW];
	unsigned n_wants;
	uint8_t *buf;
	uint64_t read_since_ns; /* nonzero while in read() or forget() (the watchdog's) */
	const char *call;       /* which of the two, for the fault */
	uint32_t forget_seq;    /* the last PP_FORGET's; forget() is due while it differs from: */
	uint32_t forgotten_seq; /* the last answered with PP_FORGOTTEN */
	int wake;               /* a reader thread's eventfd: look at forget_seq, or -1 */
	pthread_t thread;
	bool threaded, stop, done;
};

/* child.c: the host's state, shared with the other files. */
extern struct entropyd_module child_module;
extern struct entropyd_instance *child_instances;
/* One lock for the instance list, the wants and the watchdog's view. */
extern pthread_mutex_t child_lock;
extern pthread_cond_t child_watch_cond;
extern unsigned child_busy;      /* calls into the plugin in progress */
/* Send a message on the control socket (any thread: one message is one send). */
void child_send(struct pluginproto_msg *);
/* Say why the host ends because of its plugin (a PLUGINPROTO_FAULT_* kind), and end it. */
void child_fault_kind(int kind, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
#define child_fault(...) child_fault_kind(PLUGINPROTO_FAULT_CALL, __VA_ARGS__)
/* The main thread enters and leaves a call into the plugin (the watchdog times it). */
void child_enter(const char *what);
void child_leave(void);

/* table.c: the host table's side. */
extern const struct hosttable_ops table_ops;
/* host->defer's wake-up: readable while deferred calls wait. */
extern int table_defer_fd;
/* Make the defer queue's eventfd. 0, or -1 with errno. */
int table_start(void);
/* Run the deferred calls, in order, on the main thread; drop those left at the end. */
void table_run_deferred(void);
void table_drop_deferred(void);
/* Unlink and free a closed instance, releasing its cookie. */
void table_free_instance(struct entropyd_instance *);
void table_module_log(struct entropyd_module *, int priority, const char *line);
/* Send the daemon a message carrying one line. */
void table_send_line(uint16_t type, const char *line);

/* instance.c: open instances. */
/* The instance of an id, or NULL. */
struct entropyd_instance *instance_find(uint32_t id);
/* PP_OPEN: open the instance id with its data socket. */
void instance_open(uint32_t id, int data);
/* Close an open instance (its reader thread stopped first). */
void instance_close(struct entropyd_instance *);
/* PP_FORGET for id. */
void instance_forget(uint32_t id, struct pluginproto_msg *);
/* A polled instance is readable: answer its wants. */
void instance_read_polled(struct entropyd_instance *);
/* Take the wants queued on its data socket; false when it closed. */
bool instance_take_wants(struct entropyd_instance *);
/* The signal handler that interrupts a reader thread's read(). */
void instance_interrupt(int sig);

#endif
