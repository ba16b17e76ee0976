/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PLUGINPROTO_H
#define ENTROPYD_PLUGINPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <entropyd/source.h>

/*
 * The messages between the daemon, the plugin launcher and the plugin
 * hosts (entropyd-plugin), over SOCK_SEQPACKET socketpairs: one message per
 * send, never split nor merged, so a receiver sees each whole or knows it
 * was cut (MSG_TRUNC). A message is a header and a payload of fields, each
 * field read back with bounds checks: a malformed one is a protocol error,
 * never an over-read. The daemon trusts nothing a host sends.
 *
 * Channels:
 *   launcher  daemon <-> launcher: SPAWN (with the host's socket and the
 *             plugin file), SPAWNED, KILL, EXITED.
 *   control   daemon <-> one host: the descriptor, configure, probe,
 *             open/close, and the host calls the plugin makes.
 *   data      daemon <-> one instance in a host: WANT len count, then a
 *             DATA or RESULT per read; up to PLUGINPROTO_WINDOW reads
 *             outstanding, asked for again once half are answered (one
 *             wake-up of the host per half window, not per read).
 *
 * The VM generation changed: the daemon sends FORGET seq for an open
 * instance on the control socket and from then on drops every DATA on its
 * data socket (each still answers its WANT) until FORGOTTEN seq comes
 * there. The host calls the plugin's forget() between reads, on the thread
 * that reads, then sends FORGOTTEN on the data socket: whatever follows it
 * was read after forget() returned.
 */

/* The largest message, header included. */
#define PLUGINPROTO_MAX_BYTES (64 * 1024)
/* The most bytes one WANT may ask for (fits a DATA message). */
#define PLUGINPROTO_DATA_MAX 32768
/* A string field: at most this long (log lines, names, reasons). */
#define PLUGINPROTO_STRING_MAX 1024
/* WANTs the daemon keeps outstanding per instance (read-ahead in the host). */
#define PLUGINPROTO_WINDOW 8
/* A plugin's read() (or configure, probe, open) must return within this. */
#define PLUGINPROTO_CALL_TIMEOUT_MS 5000u
/* Kinds of PP_FAULT: a call that hung or failed, or a broken protocol (a read over-long). */
#define PLUGINPROTO_FAULT_CALL 0
#define PLUGINPROTO_FAULT_PROTOCOL 1
/* The most options and instances a plugin may have. */
#define PLUGINPROTO_MAX_OPTIONS 64
/*
 * The smallest descriptor a host accepts: the ABI 1.0 struct
 * entropyd_source, ending with configure. Members added by later minors go
 * after it, and are looked at only when a descriptor's size covers them.
 */
#define PLUGINPROTO_MIN_SOURCE_SIZE \
	(offsetof(struct entropyd_source, configure) + sizeof(void (*)(void)))
#define PLUGINPROTO_MAX_INSTANCES 256

enum pluginproto_type {
	/* launcher */
	PP_SPAWN = 1,   /* D->L id; u32 uid, gid; fds: control socket, plugin file */
	PP_SPAWNED,     /* L->D id; i32 pid (or -errno) */
	PP_KILL,        /* D->L id */
	PP_EXITED,      /* L->D id; i32 wait status */
	/* control: daemon to host */
	PP_OPTIONS = 16, /* f64 estimate; u32 n; n x string-or-null */
	PP_CONFIGURE,   /* (reply CONFIGURED) */
	PP_PROBE,       /* (reply PROBED) */
	PP_OPEN,        /* id; fd: the instance's data socket */
	PP_CLOSE,       /* id */
	PP_SHUTDOWN,
	PP_FORGET,      /* id; u32 seq: call the instance's forget(), then FORGOTTEN seq */
	/* control: host to daemon */
	PP_LOADED = 32, /* the descriptor: see pluginproto_put_source */
	PP_REFUSED,     /* string reason */
	PP_CONFIGURED,  /* i32 rc; string err */
	PP_PROBED,      /* i32 rc */
	PP_LOG,         /* id (0: the module); i32 priority; string line */
	PP_UNUSABLE,    /* string reason */
	PP_ADD,         /* id; string name-id; string device */
	PP_REMOVE,      /* id */
	PP_GONE,        /* id; string reason */
	PP_LIMIT,       /* id; f64 bits */
	PP_FAULT,       /* i32 kind (PLUGINPROTO_FAULT_*); string reason: the host ends because of its plugin */
	/* data */
	PP_WANT = 64,   /* D->H u32 len; u32 count: count reads of up to len bytes */
	PP_DATA,        /* H->D the bytes */
	PP_RESULT,      /* H->D i32 read() result (EOF, ERROR, REOPEN); i32 errno */
	PP_FORGOTTEN,   /* H->D u32 seq: forget() done; everything after it is fresh */
};

struct pluginproto_header {
	uint16_t type;
	uint16_t reserved;
	uint32_t id; /* host or instance, per type */
};

/* A message being built or read. */
struct pluginproto_msg {
	uint8_t *buf;     /* header, then payload */
	size_t len;       /* bytes in buf */
	size_t cap;       /* room in buf */
	size_t pos;       /* read position in the payload */
	bool bad;         /* a field did not fit: malformed */
};

/* Start a message of type and id in buf (cap bytes, at least the header). */
void pluginproto_begin(struct pluginproto_msg *, void *buf, size_t cap, uint16_t type,
    uint32_t id);
void pluginproto_put_u32(struct pluginproto_msg *, uint32_t);
void pluginproto_put_i32(struct pluginproto_msg *, int32_t);
void pluginproto_put_f64(struct pluginproto_msg *, double);
/* A string, or NULL (told apart from ""); cut at PLUGINPROTO_STRING_MAX. */
void pluginproto_put_str(struct pluginproto_msg *, const char *);
void pluginproto_put_bytes(struct pluginproto_msg *, const void *, size_t);

/* Read a received message of len bytes: false when shorter than a header. */
bool pluginproto_open(struct pluginproto_msg *, void *buf, size_t len);
const struct pluginproto_header *pluginproto_header(const struct pluginproto_msg *);
bool pluginproto_get_u32(struct pluginproto_msg *, uint32_t *);
bool pluginproto_get_i32(struct pluginproto_msg *, int32_t *);
bool pluginproto_get_f64(struct pluginproto_msg *, double *);
/*
 * A string into out (outlen bytes, NUL-terminated), *present false for
 * NULL; control characters become '?'. False when malformed or too long.
 */
bool pluginproto_get_str(struct pluginproto_msg *, char *out, size_t outlen, bool *present);
/* The rest of the payload. */
const uint8_t *pluginproto_rest(struct pluginproto_msg *, size_t *len);
/* Whether every field was read and nothing was left over or malformed. */
bool pluginproto_done(const struct pluginproto_msg *);

/* Send a message with up to two descriptors (-1: none). 0, or -1 with errno. */
int pluginproto_send(int sock, const struct pluginproto_msg *, int fd1, int fd2);
/*
 * Receive one message into buf (cap bytes) without blocking unless asked
 * (flags: MSG_DONTWAIT or 0), with up to two descriptors into fds (set to
 * -1 when none came; extra ones are closed). Returns its length, 0 at end
 * of stream, -1 with errno (EAGAIN: none now; EMSGSIZE: it was larger than
 * cap, and is discarded).
 */
ssize_t pluginproto_recv(int sock, void *buf, size_t cap, int flags, int fds[2]);
/*
 * Receive one message without blocking, its header into *h and its payload
 * straight into payload (cap bytes): the payload's length, -1 with errno
 * (EAGAIN; EMSGSIZE when it was cut, or shorter than a header), or -2 at
 * end of stream. No descriptors are accepted.
 */
ssize_t pluginproto_recv_split(int sock, struct pluginproto_header *h, void *payload,
    size_t cap);

#endif
