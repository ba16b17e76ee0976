/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SINK_H
#define ENTROPYD_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feedproto.h"
#include "options.h"
#include "pipeline.h"

struct event_base;
struct event;
struct feedclient;
struct sink;

/*
 * What a sink takes from: the sources' pipelines, offered by the engine in
 * its order. A sink takes bytes with the credit their conditioner decided
 * (pipeline_take) and knows nothing of instances or the registry.
 */
struct sink_supply {
	/*
	 * The pipeline after prev (NULL: the first), or NULL past the last;
	 * *kernel_ok says whether the kernel may be fed from it now (its source
	 * is healthy and credited).
	 */
	struct pipeline *(*next)(void *ctx, struct pipeline *prev, bool *kernel_ok);
	void *ctx;
};

/*
 * Where conditioned bytes go. The kernel sink credits them to the pool
 * with RNDADDENTROPY when it wants bits; a file, FIFO or stdout takes them
 * continuously at its reader's pace; the test-mode sink counts and
 * discards them.
 *
 * The kernel's policy (see FEEDING in entropyd.8):
 *   boot:   until the CRNG is ready, every step of credited data at once;
 *   burst:  then SINK_BURST_BITS more;
 *   steady: every -R seconds a top-up of at least 256 bits taking a step
 *           from every healthy credited source, then RNDRESEEDCRNG;
 *           on kernels before 5.18 also -s steps whenever the pool is
 *           writable and holds less than -W bits.
 * When the CRNG was ready before anything was fed, the start-up burst ends
 * with RNDRESEEDCRNG too (else it would wait in the pool for the first
 * top-up). After a VM generation change (sink_forget) a refill of
 * --refill-bits fresh credited bits is fed at once, then RNDRESEEDCRNG.
 */
#define SINK_BURST_BITS 2048
#define SINK_TOPUP_BITS 256

enum sink_kind { SINK_KERNEL, SINK_FILE, SINK_DISCARD };
enum sink_phase { SINK_BOOT, SINK_BURST, SINK_STEADY };

/* What the engine must do after a sink failed. */
enum sink_status { SINK_OK, SINK_CLOSED, SINK_FAILED };

/*
 * The kernel's interfaces, replaceable so tests can record the policy. In
 * the daemon they are requests to the feeder (feedclient_ops), which holds
 * /dev/random and enforces the credit ceiling.
 */
struct sink_kernel_ops {
	/*
	 * RNDADDENTROPY for each segment of the batch, in order: mix and
	 * credit. 0 when every one was done, or -1 with errno.
	 */
	int (*add)(struct sink *, const struct feedproto_batch *);
	/* A plain write: mixed in, never credited. */
	int (*mix)(struct sink *, const uint8_t *, size_t);
	/* RNDRESEEDCRNG. */
	int (*reseed)(struct sink *);
	/* 1 when the kernel's CRNG is initialised, else 0. */
	int (*crng_ready)(struct sink *);
	/* The pool's entropy count in bits (older kernels' watermark). */
	int (*entropy_avail)(struct sink *);
};

struct sink {
	enum sink_kind kind;
	char *path;
	int fd;
	bool nonblocking;         /* a pipe, FIFO or socket: wait for POLLOUT */
	struct event *ev_write;
	unsigned step_bytes;      /* -s */
	unsigned credit_per_byte; /* -e: the pipelines cap credit by it; here only to size a step */
	unsigned watermark_bits;  /* -W */
	/* kernel */
	const struct sink_kernel_ops *ops;
	void *ops_arg;            /* the feedclient, or a recorder in tests */
	struct feedclient *feeder; /* a worker's link to the feeder (the split owns it) */
	enum sink_phase phase;
	bool modern;              /* Linux >= 5.18: no POLLOUT, 256-bit pool */
	bool reseed;              /* RNDRESEEDCRNG after each top-up */
	bool topup_pending;
	int64_t want_bits;        /* credited bits still wanted */
	bool crng_ready_at_start; /* the CRNG was ready before anything was credited */
	unsigned refill_bits;     /* --refill-bits: fed after a VM generation change */
	bool refill_pending;      /* a refill is being fed; RNDRESEEDCRNG once it is */
	uint64_t refills;         /* refills that ended in a reseed */
	uint64_t refill_reseed_ns; /* when the last refill's RNDRESEEDCRNG returned */
	/* Steps taken, to go to the kernel in one ADD, and whose they are. */
	struct feedproto_batch batch;
	struct sink_step {
		struct pipeline *from;
		unsigned credit;
	} batch_steps[FEEDPROTO_MAX_SEGMENTS];
	/* file */
	uint8_t pending[16384];   /* taken, not yet written: a whole reserve per write */
	size_t pending_off, pending_len;
	unsigned next_source;     /* stream sinks: where the next take starts */
	/* counters */
	uint64_t bytes_written;
	uint64_t bits_credited;
	uint64_t feeds;
	uint64_t reseeds;
	uint64_t topups;
	uint64_t last_credit_ns;  /* the last feed that credited bits (monotonic), 0 before */
	unsigned reseed_interval_s; /* -R: the top-up interval (reported for alerts) */
	enum sink_status status;
	int error;                /* errno of a failure */
};

/*
 * Open the sink -o names (or the test-mode one): 0 or a sysexits code, err
 * set. The kernel sink's ops are set by privsep_split() in the worker.
 */
int sink_open(struct sink *, const struct config *, char *err, size_t errlen);
/* Set up the kernel policy's state (sink_open does; tests call it directly). */
void sink_kernel_init(struct sink *, const struct config *, bool modern);
/* Arm the sink's write event in the loop. */
void sink_attach(struct sink *, struct event_base *, void (*kick)(int, short, void *));
/* Mix host-unique data into the kernel's pool, uncredited. */
int sink_mix_host(struct sink *, const uint8_t *, size_t);
/* Take from the supply's reserves as the sink wants; returns the status. */
enum sink_status sink_service(struct sink *, const struct sink_supply *);
/* The periodic top-up (every -R seconds). */
void sink_topup(struct sink *);
/* Older kernels: the pool is writable; want a step if it is below -W. */
void sink_pool_writable(struct sink *);
/*
 * The VM generation changed: wipe the bytes taken but not yet written
 * (returns how many), and have the kernel sink feed a refill of
 * refill_bits credited bits at once and then reseed its CRNG.
 */
size_t sink_forget(struct sink *);
/* Whether the kernel is Linux 5.18 or newer (release string as uname gives it). */
bool sink_kernel_is_modern(const char *release);
void sink_close(struct sink *);
const char *sink_kind_name(enum sink_kind);
const char *sink_phase_name(enum sink_phase);

#endif
