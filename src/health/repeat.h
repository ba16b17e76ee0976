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
 * looked-up window that matches a remembered one: a "hit". One byte
 * shorter, one alignment of the two copies against the grids has none.
 *
 * What it costs is the windows touched per byte, 1/insert + 1/lookup, each
 * a hash and a random memory access. For byte sources to catch every
 * repeat under 64 bytes with 8-byte windows, insert * lookup <= 56, and
 * 1/insert + 1/lookup is smallest at 8 and 7: 0.27 windows a byte (17 and
 * 3 touched 0.39), a minimum of 63 bytes. Every 8th byte and 4096 windows
 * reach exactly 32 KiB back: a stale 32 KiB buffer is caught. A look-up
 * takes about 11 instructions and an insert 18, some 4 a byte: still about
 * a tenth of a pipeline crediting 8 bits a byte, which a grid of windows
 * cannot make much smaller.
 *
 * Byte windows are hashed by multiplying with a random odd per-source key:
 * a bijection, so two windows hash alike only if they are equal (random
 * windows are, by chance, with probability 2^-64), and multiply-shift, so
 * without the key no one can choose different windows whose top bits agree
 * more often than 2^-42. A remembered window keeps the top 43 bits of its
 * hash (an 11-bit bucket and a 32-bit tag): a different window matches one
 * of the 4096 with probability 2^-31 per look-up, failing one good block
 * in about 6 million (FIPS 140-2 fails one in 1300). Raw samples carry
 * little entropy each: their windows hold at least REPEAT_WINDOW_BITS of
 * assessed entropy, hashed with NH over 64-bit words and keyed mixing.
 * Assessed means credited now: when the online estimate lowers a raw
 * source's credit, its windows grow to match (pipeline_recredit), or
 * honest samples of little entropy would repeat by chance (384 samples of
 * 1/100 bit each carry 4 bits: among 4096 windows, hundreds of matches)
 * and a sound source would be failed and suspended for it. A stale buffer
 * repeated over and over still shows as repeats as long as any window; a
 * single stale stretch shorter than a window goes by, carrying less than
 * REPEAT_WINDOW_BITS of credit. Conditioned output is no place for the
 * test: it hashes a fixed number of samples at a time, so a stale raw
 * buffer shows there only once the chunk boundaries line up with it
 * again, after its copies were credited.
 *
 * Most look-ups find nothing, and are answered by a filter: per
 * generation, 2 bits a remembered window in the 64-bit word of its bucket.
 * A generation lasts REPEAT_HISTORY windows or a few more, and the filter
 * keeps the current and the last (which together hold the history), so a
 * look-up is two loads; about 1 in 100 gets past them and walks its
 * bucket's chain. Byte input is scanned in place, the windows of whole
 * 56-byte periods (where both grids meet) in straight-line code with the
 * key and the counters in registers; only windows across the boundary
 * with the previous input are stitched together, and the edges of each
 * input go window by window.
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

/* Windows remembered (a power of two): 32 KiB of output for byte sources. */
#define REPEAT_HISTORY 4096u
/* Hash buckets, and filter words per generation: 2^REPEAT_BUCKET_BITS. */
#define REPEAT_BUCKET_BITS 11
#define REPEAT_BUCKETS (1u << REPEAT_BUCKET_BITS)
/* Byte sources: 8-byte windows, every 8th remembered, every 7th looked up. */
#define REPEAT_BYTE_WINDOW 8u
#define REPEAT_BYTE_INSERT 8u
#define REPEAT_BYTE_LOOKUP 7u
/* Where both grids meet again. */
#define REPEAT_BYTE_PERIOD (REPEAT_BYTE_INSERT * REPEAT_BYTE_LOOKUP)
/* The widest window (raw samples of little entropy each): 128 bits down to
 * 1/32 bit per 8-bit sample. */
#define REPEAT_WINDOW_MAX 4096u
/* Assessed entropy a raw window carries at least. */
#define REPEAT_WINDOW_BITS 128u
/* Marked ranges waiting to be released; more are merged (marking more). */
#define REPEAT_MAX_RANGES 32u

/* A marked range of the stream [from, until), by stream position. */
struct repeat_range {
	uint64_t from, until;
};

/* The history (64 KiB); entry number e is remembered at e % REPEAT_HISTORY. */
struct repeat_tables {
	uint64_t filter[2][REPEAT_BUCKETS]; /* two generations, 2 bits a window */
	uint32_t head[REPEAT_BUCKETS];      /* per bucket: its newest entry's number */
	uint32_t tag[REPEAT_HISTORY];       /* per entry: its tag */
	uint16_t back[REPEAT_HISTORY];      /* entries back to its bucket's previous one */
};

struct repeat {
	size_t window;            /* bytes per window, a multiple of 8 */
	size_t insert_stride;     /* every this many bytes a window is remembered */
	size_t lookup_stride;     /* every this many bytes a window is looked up */
	size_t lookahead;         /* bytes held back: insert * lookup + window - 1 */
	uint64_t key[REPEAT_WINDOW_MAX / 8 + 2]; /* [0]: the 8-byte multiplier; [1...]: NH */
	uint64_t pos;             /* stream bytes taken in */
	uint64_t released;        /* stream bytes handed on */
	uint64_t next_insert, next_lookup; /* the next window start of each kind */
	uint32_t entries;         /* windows remembered so far (wrapping) */
	uint32_t filter_since;    /* entries when the filter's generation began */
	unsigned filter_gen;      /* the filter's current generation: 0 or 1 */
	struct repeat_tables *tables; /* the history, allocated on first use */
	uint8_t *hold;            /* stream bytes [released, pos) */
	struct repeat_range ranges[REPEAT_MAX_RANGES];
	size_t nranges;
	uint64_t hits;            /* windows that matched */
	uint64_t marked_bytes;    /* bytes released marked as repeated */
};

/* Receives released bytes in stream order, marked when they are a repeat. */
typedef void (*repeat_release_fn)(void *arg, const uint8_t *buf, size_t len, bool repeated);

/*
 * Byte sources: 8-byte windows (REPEAT_BYTE_*): a repeat of 63 bytes or
 * more of the last 32 KiB (32768 bytes) is always caught; 63 bytes are
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
