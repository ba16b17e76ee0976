/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_FEEDPROTO_H
#define ENTROPYD_FEEDPROTO_H
/*
 * The frames the daemon's processes exchange over SOCK_SEQPACKET sockets:
 * one frame per message, so a frame arrives whole or not at all, even when
 * its sender dies while writing.
 *
 *   worker -> feeder      HELLO, ADD {credit, bytes}, MIX {bytes}, RESEED,
 *                         QUERY, STATUS {text}; each answered by one ANSWER
 *   supervisor -> feeder  STARTED {pid} (with the worker's socket), EXITED
 *                         {pid, wait status}
 *   feeder -> supervisor  SPAWN, KILL {pid}, SIGNAL {signo}, STOP
 *   worker -> supervisor  HOOKS {trigger, generation, id}, on a socket of
 *                         their own (the feeder refuses HOOKS)
 *   supervisor -> worker  HOOK_RAN {outcome, ms, generation, name} per hook,
 *                         then HOOKS_DONE {ran, refused, generation}; at the
 *                         worker's start the same for a check of the hooks
 *                         (generation 0: none run)
 *
 * A frame is a 16-byte header, all fields little-endian, then its payload:
 *   u16 type, u16 zero, u32 payload length, u32 arg0, u32 arg1
 * An ADD carries arg0 segments (1 to FEEDPROTO_MAX_SEGMENTS), one after
 * the other, each a u32 length (at least 1), a u32 credit in bits, then that
 * many bytes; the feeder issues one RNDADDENTROPY per segment, in order, so
 * a worker sends many steps in one round trip and the kernel sees each step
 * as it would alone. STARTED, EXITED and KILL carry a pid in
 * arg0 (EXITED's is 0 for a worker that could not be forked); EXITED's arg1 is
 * the wait status; SIGNAL's arg0 the signal; an
 * ANSWER's arg0 is 0 or the errno of what the feeder did. HOOKS carries
 * the trigger in arg0 (below 256) and 24 bytes: the u64 generation and the
 * 16-byte ID. HOOK_RAN carries the
 * outcome in arg0 (result, reason << 8, exit status << 16), the
 * milliseconds the hook took in arg1, and the u64 generation then the
 * hook's name (1 to FEEDPROTO_MAX_HOOK_NAME printable bytes, no '/').
 * HOOKS_DONE carries the hooks run in arg0, those refused in arg1 and the
 * u64 generation. Every other argument is 0.
 *
 * feedproto_decode() is the whole of the validation: a frame it accepts is
 * well formed, at most FEEDPROTO_MAX_PAYLOAD bytes, and each segment of an
 * ADD credits at most 8 bits per byte it carries.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FEEDPROTO_HEADER_BYTES 16
/* The most bytes one ADD or MIX carries (RNDADDENTROPY's buffer here). */
#define FEEDPROTO_MAX_PAYLOAD 4096
#define FEEDPROTO_MAX_FRAME (FEEDPROTO_HEADER_BYTES + FEEDPROTO_MAX_PAYLOAD)
/* The most credit a byte may carry. */
#define FEEDPROTO_MAX_BITS_PER_BYTE 8
/* The longest STATUS text (printable ASCII). */
#define FEEDPROTO_MAX_STATUS 256
/* An ADD segment's header (length, credit), and the most segments an ADD holds. */
#define FEEDPROTO_SEGMENT_HEADER_BYTES 8
#define FEEDPROTO_MAX_SEGMENTS 64
/* The most bytes one segment carries: an ADD of that segment alone. */
#define FEEDPROTO_MAX_SEGMENT_BYTES (FEEDPROTO_MAX_PAYLOAD - FEEDPROTO_SEGMENT_HEADER_BYTES)

enum feedproto_type {
	FEEDPROTO_HELLO = 1,     /* the worker is up (privileges dropped) */
	FEEDPROTO_ADD = 2,       /* RNDADDENTROPY for each of arg0 segments */
	FEEDPROTO_MIX = 3,       /* a plain write: the bytes, uncredited */
	FEEDPROTO_RESEED = 4,    /* RNDRESEEDCRNG */
	FEEDPROTO_QUERY = 5,     /* the pool's state and the feeder's counters */
	FEEDPROTO_STATUS = 6,    /* a systemd STATUS= line for the feeder to send */
	FEEDPROTO_ANSWER = 16,   /* to each worker request */
	FEEDPROTO_STARTED = 32,  /* a worker was forked; its socket comes along */
	FEEDPROTO_EXITED = 33,   /* the worker ended */
	FEEDPROTO_SPAWN = 48,    /* start a worker */
	FEEDPROTO_KILL = 49,     /* kill this worker (SIGKILL) */
	FEEDPROTO_SIGNAL = 50,   /* pass this signal on to the worker */
	FEEDPROTO_STOP = 51,     /* stop the worker, then exit */
	FEEDPROTO_HOOKS = 64,    /* run the generation hooks for this generation */
	FEEDPROTO_HOOK_RAN = 65, /* one hook's outcome */
	FEEDPROTO_HOOKS_DONE = 66, /* the hooks of a HOOKS are done */
};

/* HOOKS: its payload's length. */
#define FEEDPROTO_HOOKS_BYTES 24
/* HOOK_RAN: the longest hook name it carries. */
#define FEEDPROTO_MAX_HOOK_NAME 64
/* A generation ID, as HOOKS carries it. */
#define FEEDPROTO_ID_BYTES 16

/* A hook's outcome (HOOK_RAN's result); the names are the metrics' result labels. */
enum feedproto_hook_result {
	FEEDPROTO_HOOK_OK,       /* exited 0 */
	FEEDPROTO_HOOK_FAILED,   /* exited non-zero, was killed by a signal, or could not start */
	FEEDPROTO_HOOK_TIMEOUT,  /* killed at its timeout */
	FEEDPROTO_HOOK_REFUSED,  /* not run: not safe (the reason says why) */
	FEEDPROTO_HOOK_READY,    /* the start-up check: it would run */
	FEEDPROTO_HOOK_NRESULTS
};

/* Why a hook was refused or failed (HOOK_RAN's reason). */
enum feedproto_hook_reason {
	FEEDPROTO_HOOK_NONE,
	FEEDPROTO_HOOK_OWNER,      /* not owned by root */
	FEEDPROTO_HOOK_WRITABLE,   /* writable by group or others */
	FEEDPROTO_HOOK_DIRECTORY,  /* a directory on its path is not root's alone */
	FEEDPROTO_HOOK_NOT_FILE,   /* not a regular file */
	FEEDPROTO_HOOK_LINK,       /* a link that leads nowhere */
	FEEDPROTO_HOOK_NAME,       /* a name longer than FEEDPROTO_MAX_HOOK_NAME */
	FEEDPROTO_HOOK_EXEC,       /* could not be started */
	FEEDPROTO_HOOK_SIGNAL,     /* killed by a signal (exit_status holds it) */
	FEEDPROTO_HOOK_NREASONS
};

/* Why a frame was refused; the names are the metrics' reason labels. */
enum feedproto_refusal {
	FEEDPROTO_OK = 0,
	FEEDPROTO_MALFORMED,     /* short, sizes that disagree, nonzero reserved fields */
	FEEDPROTO_UNKNOWN_TYPE,  /* not a type, or not one the sender may send */
	FEEDPROTO_OVERSIZED,     /* a payload above FEEDPROTO_MAX_PAYLOAD */
	FEEDPROTO_CREDIT,        /* more than 8 bits of credit per byte */
	FEEDPROTO_FLOOD,         /* a request sent before the last one was answered */
	FEEDPROTO_NREFUSALS
};

/* One decoded frame; payload points into the buffer it was decoded from. */
struct feedproto_frame {
	enum feedproto_type type;
	uint32_t arg0, arg1;
	const uint8_t *payload;
	size_t len;
};

/* One segment of an accepted ADD: len bytes (at least 1), credited credit bits. */
struct feedproto_segment {
	const uint8_t *bytes;
	size_t len;
	uint32_t credit;
};

/* An ADD's payload as a worker builds it, segment by segment. */
struct feedproto_batch {
	uint8_t payload[FEEDPROTO_MAX_PAYLOAD];
	size_t len;            /* bytes of payload used */
	uint32_t segments;     /* the ADD's arg0 */
};

/* The feeder's state, as an ANSWER to QUERY or HELLO carries it. */
struct feedproto_state {
	bool crng_ready;
	uint32_t entropy_avail;      /* bits in the input pool */
	uint32_t worker_restarts;    /* workers started after the first */
	uint32_t refused[FEEDPROTO_NREFUSALS]; /* frames refused, by reason ([0] unused) */
	uint64_t bits_credited;      /* credited to the kernel, every worker together */
	uint64_t adds;               /* RNDADDENTROPY calls that succeeded */
	uint32_t last_exit;          /* wait status of the last worker that ended */
	uint32_t worker_exits;       /* workers that ended */
};
#define FEEDPROTO_STATE_BYTES 56

/* What HOOKS asks: the generation published, its ID, how it came. */
struct feedproto_hooks {
	uint64_t generation;
	uint8_t id[FEEDPROTO_ID_BYTES];
	uint32_t trigger;
};

/* What HOOK_RAN says about one hook. */
struct feedproto_hook_ran {
	uint64_t generation;
	uint8_t result, reason, exit_status; /* the supervisor's hooks.h values */
	uint32_t duration_ms;
	char name[FEEDPROTO_MAX_HOOK_NAME + 1];
};

/*
 * Check and decode one received frame. truncated says the socket cut the
 * message short (it was longer than the buffer). FEEDPROTO_OK, or why not.
 */
enum feedproto_refusal feedproto_decode(const uint8_t *buf, size_t len, bool truncated,
    struct feedproto_frame *);
/*
 * Encode a frame into out (at least FEEDPROTO_HEADER_BYTES + len bytes).
 * Returns the frame's length, or 0 when it would not decode (the sender's
 * bug: nothing is sent).
 */
size_t feedproto_encode(uint8_t *out, size_t cap, enum feedproto_type, uint32_t arg0,
    uint32_t arg1, const void *payload, size_t len);
/*
 * Walk the segments of an ADD feedproto_decode() accepted: *off starts at 0;
 * false after the last.
 */
bool feedproto_next_segment(const struct feedproto_frame *, size_t *off,
    struct feedproto_segment *);
/* Whether a segment of len bytes (1 or more) still fits in the batch. */
bool feedproto_batch_fits(const struct feedproto_batch *, size_t len);
/*
 * Where the next segment's bytes go, room for len of them, so that they are
 * written there once (then feedproto_batch_commit()); NULL when a segment
 * of len bytes does not fit.
 */
uint8_t *feedproto_batch_space(struct feedproto_batch *, size_t len);
/*
 * Make the len bytes written at feedproto_batch_space() a segment credited
 * credit bits, at most 8 a byte. 0, or -1 when it does not fit or would be
 * refused: nothing added, and what was written there wiped.
 */
int feedproto_batch_commit(struct feedproto_batch *, size_t len, uint32_t credit);
/* Append a copy of len bytes as a segment: space, copy, commit. */
int feedproto_batch_add(struct feedproto_batch *, const void *bytes, size_t len,
    uint32_t credit);
/* The bytes the batch's segments carry, their headers not counted. */
size_t feedproto_batch_bytes(const struct feedproto_batch *);
/* Empty the batch, its bytes wiped. */
void feedproto_batch_clear(struct feedproto_batch *);
/* An ANSWER frame carrying status (0 or an errno) and, when st is not NULL, the state. */
size_t feedproto_encode_answer(uint8_t *out, size_t cap, int status,
    const struct feedproto_state *st);
/* The state an ANSWER carries (zeros when it carries none). */
void feedproto_answer_state(const struct feedproto_frame *, struct feedproto_state *);
/* A HOOKS frame into out (FEEDPROTO_HEADER_BYTES + FEEDPROTO_HOOKS_BYTES); its length or 0. */
size_t feedproto_encode_hooks(uint8_t *out, size_t cap, const struct feedproto_hooks *);
/* What an accepted HOOKS frame asks. */
void feedproto_hooks_of(const struct feedproto_frame *, struct feedproto_hooks *);
/* A HOOK_RAN frame into out; its length, or 0 (a name that would be refused). */
size_t feedproto_encode_hook_ran(uint8_t *out, size_t cap, const struct feedproto_hook_ran *);
/* What an accepted HOOK_RAN frame says. */
void feedproto_hook_ran_of(const struct feedproto_frame *, struct feedproto_hook_ran *);
/* A HOOKS_DONE frame: ran and refused hooks of generation; its length or 0. */
size_t feedproto_encode_hooks_done(uint8_t *out, size_t cap, uint64_t generation, uint32_t ran,
    uint32_t refused);
/* The generation an accepted HOOKS_DONE frame is about. */
uint64_t feedproto_hooks_done_generation(const struct feedproto_frame *);
/* The metric label of a hook's outcome ("ok", "failed", ...). */
const char *feedproto_hook_result_name(enum feedproto_hook_result);
/* Why a hook was refused or failed, in a few words ("" for none). */
const char *feedproto_hook_reason_text(enum feedproto_hook_reason);
/* Whether a worker may send frames of this type. */
bool feedproto_from_worker(enum feedproto_type);
/* The metric label of a refusal ("malformed", "credit", ...). */
const char *feedproto_refusal_name(enum feedproto_refusal);

#endif
