/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SINK_H
#define ENTROPYD_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

struct event_base;
struct event;

/*
 * Where conditioned bytes go. The kernel sink credits them to the pool
 * with RNDADDENTROPY when it wants bits (at start, then every -R seconds);
 * a file, FIFO or stdout takes them continuously at its reader's pace;
 * the test-mode sink counts and discards them.
 */
enum sink_kind { SINK_KERNEL, SINK_FILE, SINK_DISCARD };

/* What the engine must do after a sink failed. */
enum sink_status { SINK_OK, SINK_CLOSED, SINK_FAILED };

struct sink {
	enum sink_kind kind;
	char *path;
	int fd;
	bool nonblocking;         /* a pipe, FIFO or socket: wait for POLLOUT */
	struct event *ev_write;
	unsigned step_bytes;      /* -s */
	unsigned credit_per_byte; /* -e */
	unsigned start_bits;      /* wanted at start: -W, at least 256 */
	int64_t want_bits;        /* kernel: credited bits still wanted */
	uint8_t pending[4096];    /* file: bytes taken but not yet written */
	size_t pending_off, pending_len;
	uint64_t bytes_written;
	uint64_t bits_credited;
	uint64_t feeds;
	enum sink_status status;
	int error;                /* errno of a failure */
};

/* Open the sink -o names (or the test-mode one): 0 or a sysexits code, err set. */
int sink_open(struct sink *, const struct config *, char *err, size_t errlen);
/* Arm the sink's write event in the loop. */
void sink_attach(struct sink *, struct event_base *, void (*kick)(int, short, void *));
/* Take from the instances' reserves as the sink wants; returns the status. */
enum sink_status sink_service(struct sink *);
/* The periodic top-up (every -R seconds): want at least 256 bits. */
void sink_topup(struct sink *);
/* Whether the sink takes bytes now (the kernel only while it wants bits). */
bool sink_hungry(const struct sink *);
void sink_close(struct sink *);
const char *sink_kind_name(enum sink_kind);

#endif
