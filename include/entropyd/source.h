/* SPDX-License-Identifier: MIT */
/*
 * <entropyd/source.h>: the ABI between entropyd and its source modules.
 *
 * A module (built in, or a drop-in .so) exports one symbol,
 * entropyd_source_entry(), returning a const descriptor. The daemon accepts
 * it only when abi_major equals its own and abi_minor is not newer. Modules
 * never call the daemon's symbols: everything they need comes through the
 * host table handed to probe().
 */
#ifndef ENTROPYD_SOURCE_H
#define ENTROPYD_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENTROPYD_SOURCE_ABI_MAJOR 1
#define ENTROPYD_SOURCE_ABI_MINOR 2

/* The name of the one symbol a drop-in exports. */
#define ENTROPYD_SOURCE_ENTRY "entropyd_source_entry"

struct entropyd_module;   /* opaque: a loaded module as the daemon sees it */
struct entropyd_instance; /* opaque: one device of a module */

/* Descriptor flags. */
#define ENTROPYD_SOURCE_DEFAULT_ON 0x0001u  /* used unless excluded */
#define ENTROPYD_SOURCE_RAW_SAMPLES 0x0002u /* read() yields raw noise samples */
#define ENTROPYD_SOURCE_CREDIT_ON_REQUEST 0x0004u /* credit nothing unless NAME:entropy is given */
/* probe and open run a start-up assessment that takes a while: probed after
 * the daemon's first feed (older daemons ignore it) */
#define ENTROPYD_SOURCE_SLOW_START 0x0008u

/* Return values of read() other than a byte count. */
#define ENTROPYD_READ_EOF 0       /* drained for good (a regular file's end) */
#define ENTROPYD_READ_AGAIN (-1)  /* nothing now: wait for the fd, or call again */
#define ENTROPYD_READ_ERROR (-2)  /* device error, errno set: re-probed with backoff */
#define ENTROPYD_READ_REOPEN (-3) /* stream ended (FIFO writer gone): close, open again */

/* Priorities for host->log, as in <syslog.h>. */
#define ENTROPYD_LOG_ERR 3
#define ENTROPYD_LOG_WARNING 4
#define ENTROPYD_LOG_INFO 6
#define ENTROPYD_LOG_DEBUG 7

/* One per-source option, set with -O SOURCE:KEY:VALUE; a NULL key ends the list. */
struct entropyd_option {
	const char *key;
	const char *default_value; /* NULL: unset unless given */
	const char *help;
};

/* What the daemon offers a module. Check size before using a newer member. */
struct entropyd_host {
	uint32_t size;
	uint16_t abi_major, abi_minor;
	/* Log a line prefixed with the instance's name. */
	void (*log)(struct entropyd_instance *, int priority, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	/* Log a line prefixed with the module's name. */
	void (*module_log)(struct entropyd_module *, int priority, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	/* The value of an option (as given, or its default), NULL if unset. */
	const char *(*option)(struct entropyd_module *, const char *key);
	/* probe(): say why the module has no usable device here (shown by -l). */
	void (*unusable)(struct entropyd_module *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
	/*
	 * Add an instance (from probe, or later from a hotplug callback). id
	 * names it within the module ("" or NULL: the module's own name);
	 * device is shown to operators; cookie is handed back to open().
	 */
	struct entropyd_instance *(*add_instance)(struct entropyd_module *, const char *id,
	    const char *device, void *cookie);
	/* The device went away (unplug): close it and forget it. */
	void (*remove_instance)(struct entropyd_instance *);
	/* The cookie given to add_instance. */
	void *(*instance_cookie)(struct entropyd_instance *);
	/* The module an instance belongs to. */
	struct entropyd_module *(*instance_module)(struct entropyd_instance *);
	/* CLOCK_MONOTONIC in nanoseconds. */
	uint64_t (*now_ns)(void);
	/*
	 * Cookies stay the module's: the daemon never looks inside one. With
	 * a release function set here (from configure() or probe()), the
	 * daemon calls it for a cookie it no longer holds: when its instance
	 * is freed (after remove_instance, or at exit), or when add_instance
	 * for the same name hands a different cookie. Without one, a module
	 * frees its cookies itself, after remove_instance at the earliest.
	 */
	void (*set_cookie_release)(struct entropyd_module *, void (*release)(void *cookie));
	/*
	 * Lower one instance's assessed entropy (bits per byte, or per sample
	 * with RAW_SAMPLES), e.g. when the device reports itself degraded;
	 * it never raises it. Returns the estimate in force. Call it from
	 * probe(), open() or another callback of the daemon's loop, never from
	 * read(): output conditioned at the old estimate and not yet taken is
	 * discarded, and the health tests start afresh.
	 */
	double (*limit_entropy)(struct entropyd_instance *, double bits);
	/*
	 * ABI 1.1. Have fn(module, arg) called on the daemon's loop thread,
	 * soon, in the order asked. Safe from any thread (a hotplug thread of
	 * the module's own): the host calls above, add_instance and
	 * instance_gone among them, are the loop's and may be made only from
	 * there. Calls still queued when the daemon stops or the module is
	 * unloaded are dropped without being made, so arg must not be the
	 * only reference to memory.
	 */
	void (*defer)(struct entropyd_module *, void (*fn)(struct entropyd_module *, void *arg),
	    void *arg);
	/*
	 * ABI 1.1. The device went away for now (unplugged): close the
	 * instance at once and report it absent with reason. It is tried again
	 * with backoff; add_instance of its name opens it at once (replugged).
	 */
	void (*instance_gone)(struct entropyd_instance *, const char *reason);
	/* New members go here; test them with ENTROPYD_HOST_HAS() first. */
};

/* Whether a host table is recent enough to have a member. */
#define ENTROPYD_HOST_HAS(host, member) \
	((host)->size >= offsetof(struct entropyd_host, member) + sizeof((host)->member))

/* A source module. */
struct entropyd_source {
	uint16_t abi_major, abi_minor; /* ENTROPYD_SOURCE_ABI_MAJOR, _MINOR */
	uint32_t size;                 /* sizeof(struct entropyd_source) */
	const char *name;              /* [a-z0-9_]+, unique */
	const char *description;
	uint32_t flags; /* ENTROPYD_SOURCE_* */
	/*
	 * Assessed min-entropy: bits per byte read, or with RAW_SAMPLES bits
	 * per sample. Operators may lower it (-O NAME:entropy:H), never raise
	 * it; with CREDIT_ON_REQUEST it is the ceiling of what they may give.
	 * The option key "entropy" is the daemon's: modules must not declare it.
	 */
	double entropy_bits;
	/* RAW_SAMPLES: width of a sample, 1..16 bits; one byte per sample up
	 * to 8 bits, two bytes little-endian above. */
	unsigned sample_bits;
	const struct entropyd_option *options; /* may be NULL */

	/* Find devices and add an instance for each; return how many, or -1. */
	int (*probe)(struct entropyd_module *, const struct entropyd_host *);
	/* Open an instance; *state is handed to the calls below. 0 or -1.
	 * Runs on the daemon's loop: it must not block (open FIFOs and
	 * ttys with O_NONBLOCK). */
	int (*open)(struct entropyd_instance *, void **state);
	/* Read up to len bytes: a count, or an ENTROPYD_READ_* value. May
	 * block when pollfd() is -1 (the daemon then reads from a thread and
	 * stops it with SIGRTMIN: return ENTROPYD_READ_AGAIN on EINTR). */
	ssize_t (*read)(void *state, void *buf, size_t len);
	/* An fd to poll for input, or -1: read() blocks or computes. */
	int (*pollfd)(void *state);
	void (*close)(void *state);
	/* Optional: check the options given before anything is probed; on a
	 * bad or missing value write why into err and return -1. */
	int (*configure)(struct entropyd_module *, const struct entropyd_host *, char *err,
	    size_t errlen);
	/* ABI 1.1, optional: the module is being unloaded (its instances are
	 * closed and gone): stop its threads, free what it holds. */
	void (*shutdown)(struct entropyd_module *);
	/*
	 * ABI 1.2, optional: the VM generation changed (this machine was
	 * restored from a snapshot, or is one of its clones). Wipe whatever
	 * the open instance keeps from before: buffered output, pools,
	 * accumulators, anything a clone would share; later reads must
	 * depend only on what the device delivers from now on. Called on the
	 * thread that calls read(), between reads, never alongside one; the
	 * daemon has already dropped every byte it held.
	 */
	void (*forget)(void *state);
	/* New members go here; test them with ENTROPYD_SOURCE_HAS() first. */
};

/* Whether a descriptor is recent enough to have a member (it may still be NULL). */
#define ENTROPYD_SOURCE_HAS(src, member) \
	((src)->size >= offsetof(struct entropyd_source, member) + sizeof((src)->member))

/*
 * The one symbol a drop-in exports. Declared with default visibility, so a
 * plugin built with -fvisibility=hidden still exports it (and nothing else).
 */
__attribute__((visibility("default"))) const struct entropyd_source *entropyd_source_entry(void);

#ifdef __cplusplus
}
#endif
#endif /* ENTROPYD_SOURCE_H */
