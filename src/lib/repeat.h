/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_REPEAT_H
#define ENTROPYD_REPEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The repeated-output test: does a source hand back output it gave
 * recently (a driver returning a stale buffer, a device stuck on one
 * block)? FIPS 140-2's continuous test only compares neighbouring words, so
 * a random block repeated forever passes it.
 *
 * The stream is cut into windows of `window` bytes. A keyed hash of the
 * window starting at every insert_stride-th byte is remembered, for the
 * last REPEAT_HISTORY such windows; the window starting at every
 * lookup_stride-th byte is looked up among them. The two strides are
 * coprime, so a stretch of at least window + insert_stride * lookup_stride
 * - 1 bytes that equals earlier output within the history always holds a
 * looked-up window that matches a remembered one: a "hit".
 *
 * Byte sources use 8-byte windows hashed by a keyed bijection (XOR with a
 * random per-source key, multiply by a random odd one), so two windows
 * hash alike only if they are equal; random windows are equal by chance
 * with probability 2^-64. A remembered window keeps 43 bits of its hash (an
 * 11-bit bucket and a 32-bit tag): a different window matches one with
 * probability about 2^-32 per look-up, one good block in about 5 million
 * (FIPS 140-2 fails one in 1300). Raw samples carry little entropy each:
 * their windows hold at least REPEAT_WINDOW_BITS of assessed entropy,
 * hashed with NH over 64-bit words and the same keyed mixing.
 *
 * Most look-ups find nothing: a bitmap of the hashes remembered in the
 * last two stretches of REPEAT_HISTORY windows (1 bit in 32 set) answers
 * them from the first-level cache, and only its hits walk the bucket.
 *
 * Every byte of a repeated stretch lies within insert_stride *
 * lookup_stride - 1 bytes before a hit, or before the end of a hit's
 * window plus as much after it (else the stretch would hold another hit),
 * so each hit marks that range as repeated. Bytes are released to the
 * caller only once no later hit can mark them: the test holds back the
 * last `lookahead` bytes. Released bytes come with the mark, and the
 * caller fails whatever holds a marked byte: no byte of a repeat reaches
 * the conditioner.
 */

/* Windows remembered (a power of two): 34 KiB of output for byte sources. */
#define REPEAT_HISTORY 2048u
/* Hash buckets (a power of two). */
#define REPEAT_BUCKETS 2048u
/* Byte sources: 8-byte windows, every 17th remembered, every 3rd looked up. */
#define REPEAT_BYTE_WINDOW 8u
#define REPEAT_BYTE_INSERT 17u
#define REPEAT_BYTE_LOOKUP 3u
/* The widest window (raw samples of little entropy each). */
#define REPEAT_WINDOW_MAX 512u
/* The look-up filter: bits per stretch of REPEAT_HISTORY windows (a power of two). */
#define REPEAT_FILTER_BITS 65536u
/* Assessed entropy a raw window carries at least. */
#define REPEAT_WINDOW_BITS 128u
/* Marked ranges waiting to be released; more are merged (marking more). */
#define REPEAT_MAX_RANGES 32u

/* One remembered window: its tag, and entries back to its bucket's previous one (0: none). */
struct repeat_slot {
	uint32_t tag;
	uint32_t back;
};

/* A marked range of the stream [from, until), by stream position. */
struct repeat_range {
	uint64_t from, until;
};

struct repeat {
	size_t window;            /* bytes per window, a multiple of 8 */
	size_t insert_stride;     /* every this many bytes a window is remembered */
	size_t lookup_stride;     /* every this many bytes a window is looked up */
	size_t lookahead;         /* bytes held back: insert * lookup + window - 1 */
	uint64_t key[REPEAT_WINDOW_MAX / 8 + 2];
	uint64_t pos;             /* stream bytes taken in */
	uint64_t released;        /* stream bytes handed on */
	uint64_t next_insert, next_lookup; /* the next window start of each kind */
	uint32_t entries;         /* windows remembered so far (wrapping) */
	uint32_t *head;           /* per bucket: the latest entry's number + 1, 0 for none */
	struct repeat_slot *slots; /* per history slot */
	uint64_t *filter;         /* two bitmaps of REPEAT_FILTER_BITS, interleaved word by word */
	uint8_t *hold;            /* stream bytes [released, pos) */
	struct repeat_range ranges[REPEAT_MAX_RANGES];
	size_t nranges;
	uint64_t hits;            /* windows that matched */
	uint64_t marked_bytes;    /* bytes released marked as repeated */
};

/* Receives released bytes in stream order, marked when they are a repeat. */
typedef void (*repeat_release_fn)(void *arg, const uint8_t *buf, size_t len, bool repeated);

/*
 * Byte sources: 8-byte windows (REPEAT_BYTE_*): a repeat of 58 bytes or
 * more of the last 34 KiB (34799 bytes) is always caught; 58 bytes are
 * held back.
 */
void repeat_init_bytes(struct repeat *);
/*
 * Raw samples of sample_bytes each carrying bits_per_sample (0: as 1 bit):
 * windows of enough samples for REPEAT_WINDOW_BITS (at most
 * REPEAT_WINDOW_MAX bytes), one remembered per window length.
 */
void repeat_init_samples(struct repeat *, size_t sample_bytes, double bits_per_sample);
void repeat_free(struct repeat *);
/* Take in len bytes; hand on, through fn, every byte no later hit can mark. */
void repeat_input(struct repeat *, const uint8_t *buf, size_t len, repeat_release_fn fn,
    void *arg);
/* The input ended: hand on what is held back (nothing later can mark it). */
void repeat_flush(struct repeat *, repeat_release_fn fn, void *arg);
/* Forget what is held back (the source was reopened); the history stays. */
void repeat_discard(struct repeat *);
/* Bytes to take in before the next byte is handed on (0 once warm). */
size_t repeat_lag(const struct repeat *);
/* The shortest repeat that is always caught, in bytes. */
size_t repeat_min_caught(const struct repeat *);
/* How far back repeats are caught, in bytes. */
size_t repeat_reach(const struct repeat *);

#endif
