/* SPDX-License-Identifier: MIT */
/*
 * The repeated-output test: keyed hashes of recent output windows, looked up
 * as new output arrives, so a source handing back a stale buffer or a
 * stuck block is caught where FIPS 140-2's continuous test is blind.
 */
#include <sys/random.h>

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "repeat.h"
#include "xmalloc.h"

static void repeat_setup(struct repeat *, size_t, size_t, size_t);

/* A random key: never blocks (the daemon may run before the kernel's CRNG is ready). */
static void
repeat_keygen(struct repeat *r)
{
	uint8_t *k = (uint8_t *)r->key;
	size_t len = sizeof r->key, got = 0;
	ssize_t n;
	size_t i;

#ifdef GRND_INSECURE
	while (got < len && (n = getrandom(k + got, len - got, GRND_INSECURE)) > 0)
		got += (size_t)n;
#endif
	while (got < len && (n = getrandom(k + got, len - got, GRND_NONBLOCK)) > 0)
		got += (size_t)n;
	/*
	 * No random bytes: the key only keeps inputs from being chosen to
	 * collide, so a clock-derived one still works (it is no secret).
	 */
	for (i = 0; got < len && i < sizeof r->key / sizeof r->key[0]; i++)
		r->key[i] ^= (clock_now_ns() + i) * UINT64_C(0x9e3779b97f4a7c15);
}

/* Set the geometry; the tables come with the first input. */
static void
repeat_setup(struct repeat *r, size_t window, size_t insert_stride, size_t lookup_stride)
{
	memset(r, 0, sizeof *r);
	r->window = window;
	r->insert_stride = insert_stride;
	r->lookup_stride = lookup_stride;
	r->lookahead = insert_stride * lookup_stride + window - 1;
	/* Entries are numbered from REPEAT_HISTORY, so an empty bucket's 0 is out of the history. */
	r->entries = r->filter_since = REPEAT_HISTORY;
	repeat_keygen(r);
	r->key[0] |= 1; /* the multiplier of the 8-byte hash: odd, so the hash is a bijection */
}

/* The byte sources' geometry (REPEAT_BYTE_*). */
void
repeat_init_bytes(struct repeat *r)
{
	repeat_setup(r, REPEAT_BYTE_WINDOW, REPEAT_BYTE_INSERT, REPEAT_BYTE_LOOKUP);
}

/* Raw samples: windows holding REPEAT_WINDOW_BITS of assessed entropy. */
void
repeat_init_samples(struct repeat *r, size_t sample_bytes, double bits_per_sample)
{
	double samples;
	size_t window, lookup = 3;

	if (!(bits_per_sample > 0))
		bits_per_sample = 1;
	samples = (double)REPEAT_WINDOW_BITS / bits_per_sample;
	if (samples * (double)sample_bytes >= REPEAT_WINDOW_MAX)
		window = REPEAT_WINDOW_MAX;
	else {
		window = (size_t)samples;
		if ((double)window < samples)
			window++;
		window *= sample_bytes;
	}
	window = (window + 15) / 16 * 16; /* whole pairs of 64-bit words (NH) */
	if (window > REPEAT_WINDOW_MAX)
		window = REPEAT_WINDOW_MAX;
	/* One window remembered per window length; look-ups at a coprime stride. */
	while (window % lookup == 0)
		lookup += 2;
	repeat_setup(r, window, window, lookup);
}

/* Free the tables and wipe what is held back. */
void
repeat_free(struct repeat *r)
{
	if (r->hold != NULL)
		explicit_bzero(r->hold, r->lookahead);
	free(r->hold);
	free(r->tables);
	r->hold = NULL;
	r->tables = NULL;
}

/* Allocate the tables on first use, so a source never read costs nothing. */
static void
repeat_tables(struct repeat *r)
{
	if (r->tables != NULL)
		return;
	r->tables = xcalloc(1, sizeof *r->tables);
	r->hold = xcalloc(1, r->lookahead);
}

/* An unaligned little-endian-agnostic 64-bit load. */
static inline uint64_t
repeat_load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

/* The high and low halves of a 64 x 64 bit product, added to acc. */
static inline void
repeat_mul_add(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 p = (unsigned __int128)a * b;
	uint64_t plo = (uint64_t)p;

	*lo += plo;
	*hi += (uint64_t)(p >> 64) + (*lo < plo);
#else
	uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
	uint64_t m0 = a0 * b0, m1 = a0 * b1, m2 = a1 * b0, m3 = a1 * b1;
	uint64_t mid = (m0 >> 32) + (m1 & 0xffffffffu) + (m2 & 0xffffffffu);
	uint64_t plo = (mid << 32) | (m0 & 0xffffffffu);

	*lo += plo;
	*hi += m3 + (m1 >> 32) + (m2 >> 32) + (mid >> 32) + (*lo < plo);
#endif
}

/* The keyed hash of an 8-byte window: times an odd key, a bijection with universal top bits. */
static inline uint64_t
repeat_hash8(uint64_t key, const uint8_t *w)
{
	return repeat_load64(w) * key;
}

/* The keyed hash of the window at w; wider ones: NH over 64-bit word pairs, folded, mixed. */
static inline uint64_t
repeat_hash(const struct repeat *r, const uint8_t *w)
{
	uint64_t hi = 0, lo = 0;
	size_t i, words = r->window / 8;

	if (words == 1)
		return repeat_hash8(r->key[0], w);
	for (i = 0; i < words; i += 2)
		repeat_mul_add(repeat_load64(w + 8 * i) + r->key[i + 1],
		    repeat_load64(w + 8 * i + 8) + r->key[i + 2], &hi, &lo);
	return ((hi ^ lo) + r->key[words + 1]) * UINT64_C(0x9e3779b97f4a7c15);
}

/* A hash's bucket and filter word (its top bits), and its tag (the 32 bits below). */
static inline uint32_t
repeat_bucket(uint64_t h)
{
	return (uint32_t)(h >> (64 - REPEAT_BUCKET_BITS));
}

static inline uint32_t
repeat_tag(uint64_t h)
{
	return (uint32_t)(h >> (32 - REPEAT_BUCKET_BITS));
}

/* The two bits of its filter word a hash sets. */
static inline uint64_t
repeat_filter_mask(uint64_t h)
{
	return UINT64_C(1) << (h >> 47 & 63) | UINT64_C(1) << (h >> 41 & 63);
}

/* Whether the filter may hold the hash: in either generation. */
static inline bool
repeat_filter_has(const struct repeat_tables *t, uint64_t h)
{
	uint32_t w = repeat_bucket(h);
	uint64_t m = repeat_filter_mask(h);

	return ((t->filter[0][w] | t->filter[1][w]) & m) == m;
}

/*
 * After REPEAT_HISTORY entries or a few more, a new generation of the
 * filter: it takes the bitmap of the one before last, whose windows have
 * all left the history.
 */
static inline void
repeat_filter_age(struct repeat *r, uint32_t entries)
{
	if (entries - r->filter_since < REPEAT_HISTORY)
		return;
	r->filter_since = entries;
	r->filter_gen ^= 1;
	memset(r->tables->filter[r->filter_gen], 0, sizeof r->tables->filter[0]);
}

/*
 * Remember a window's hash as entry number `entries` (the caller counts
 * them) in the filter's current generation, linked to its bucket's
 * previous entry; the oldest falls out of the history.
 */
static inline void
repeat_remember(struct repeat_tables *t, uint64_t *filter, uint32_t entries, uint64_t h)
{
	uint32_t *head = &t->head[repeat_bucket(h)], slot = entries & (REPEAT_HISTORY - 1);

	filter[repeat_bucket(h)] |= repeat_filter_mask(h);
	t->tag[slot] = repeat_tag(h);
	/* A link cut to 16 bits reaches out of the history anyway: at worst more comparisons. */
	t->back[slot] = (uint16_t)(entries - *head);
	*head = entries;
}

/* Whether a remembered window has this hash: its bucket's chain, newest first. */
static bool
repeat_find(const struct repeat_tables *t, uint32_t entries, uint64_t h)
{
	uint32_t tag = repeat_tag(h), dist, back, slot;

	/* Entry numbers wrap: distances are taken modulo 2^32. */
	for (dist = entries - t->head[repeat_bucket(h)]; dist - 1 < REPEAT_HISTORY; dist += back) {
		slot = (entries - dist) & (REPEAT_HISTORY - 1);
		if (t->tag[slot] == tag)
			return true;
		if ((back = t->back[slot]) == 0)
			return false;
	}
	return false;
}

/* A hit at stream position n: mark every byte a repeat around it can hold. */
static void
repeat_mark(struct repeat *r, uint64_t n)
{
	uint64_t span = (uint64_t)r->insert_stride * r->lookup_stride;
	uint64_t from = n + 1 >= span ? n + 1 - span : 0, until = n + span + r->window - 1;
	struct repeat_range *last = r->nranges ? &r->ranges[r->nranges - 1] : NULL;

	r->hits++;
	if (from < r->released)
		from = r->released;
	if (last != NULL && (from <= last->until || r->nranges == REPEAT_MAX_RANGES)) {
		/* Overlapping, or no room: extend the last range (marking more, never less). */
		if (until > last->until)
			last->until = until;
		return;
	}
	r->ranges[r->nranges++] = (struct repeat_range){ from, until };
}

/* A look-up the filter let through, at stream position n: mark around it if it is a hit. */
static void
repeat_probe(struct repeat *r, uint32_t entries, uint64_t h, uint64_t n)
{
	if (repeat_find(r->tables, entries, h))
		repeat_mark(r, n);
}

/*
 * Look up and remember every window lying wholly in buf = stream [base,
 * end), in stream order: a window is looked up before it is remembered,
 * and after every window before it was.
 */
static void
repeat_scan_windows(struct repeat *r, const uint8_t *buf, uint64_t base, uint64_t end)
{
	uint64_t look = r->next_lookup, ins = r->next_insert, last, h;
	const size_t lookup_stride = r->lookup_stride, insert_stride = r->insert_stride;

	if (end < base + r->window)
		return;
	last = end - r->window; /* the last window that fits */
	for (;; look += lookup_stride) {
		for (; ins < look && ins <= last; ins += insert_stride) {
			repeat_filter_age(r, r->entries);
			repeat_remember(r->tables, r->tables->filter[r->filter_gen], r->entries++,
			    repeat_hash(r, buf + (ins - base)));
		}
		if (look > last)
			break;
		h = repeat_hash(r, buf + (look - base));
		if (repeat_filter_has(r->tables, h))
			repeat_probe(r, r->entries, h, look);
	}
	r->next_lookup = look;
	r->next_insert = ins;
}

/*
 * Byte sources, the bulk of the input: whole periods of both grids
 * (REPEAT_BYTE_PERIOD bytes from where they meet) in straight-line code,
 * the key and the entry count in registers; the filter ages between
 * periods.
 */
static void
repeat_scan_periods(struct repeat *r, const uint8_t *buf, uint64_t base, uint64_t end)
{
	struct repeat_tables *t = r->tables;
	const uint64_t key = r->key[0];
	uint64_t n = r->next_insert, h, *filter;
	uint32_t entries = r->entries;
	const uint8_t *p;
	size_t i;

	if (n % REPEAT_BYTE_PERIOD != 0 || r->next_lookup != n)
		return;
	/* The period's last look-up window ends a byte past the period. */
	for (; n + REPEAT_BYTE_PERIOD + 1 <= end; n += REPEAT_BYTE_PERIOD) {
		repeat_filter_age(r, entries);
		filter = t->filter[r->filter_gen];
		p = buf + (n - base);
#pragma GCC unroll 8
		for (i = 0; i < REPEAT_BYTE_INSERT - 1; i++) {
			h = repeat_hash8(key, p + i * REPEAT_BYTE_LOOKUP);
			if (repeat_filter_has(t, h))
				repeat_probe(r, entries, h, n + i * REPEAT_BYTE_LOOKUP);
			h = repeat_hash8(key, p + i * REPEAT_BYTE_INSERT);
			repeat_remember(t, filter, entries++, h);
		}
		h = repeat_hash8(key, p + i * REPEAT_BYTE_LOOKUP);
		if (repeat_filter_has(t, h))
			repeat_probe(r, entries, h, n + i * REPEAT_BYTE_LOOKUP);
	}
	r->entries = entries;
	r->next_lookup = r->next_insert = n;
}

/* The next position at or after pos on a grid of this stride. */
static uint64_t
repeat_grid_after(uint64_t pos, size_t stride)
{
	return (pos + stride - 1) / stride * stride;
}

/* Every window lying wholly in buf = stream [base, end), in stream order. */
static void
repeat_scan(struct repeat *r, const uint8_t *buf, uint64_t base, uint64_t end)
{
	uint64_t upto;

	if (r->window != REPEAT_BYTE_WINDOW) {
		repeat_scan_windows(r, buf, base, end);
		return;
	}
	/* The windows starting before both grids next meet, the periods, then the rest. */
	upto = repeat_grid_after(r->next_insert, REPEAT_BYTE_PERIOD) + REPEAT_BYTE_WINDOW - 1;
	repeat_scan_windows(r, buf, base, upto < end ? upto : end);
	repeat_scan_periods(r, buf, base, end);
	repeat_scan_windows(r, buf, base, end);
}

/* Hand on buf = stream [base, ...) up to position `to`, split where the marks begin and end. */
static void
repeat_release(struct repeat *r, const uint8_t *buf, uint64_t base, uint64_t to,
    repeat_release_fn fn, void *arg)
{
	uint64_t at = r->released, seg;
	size_t i;
	bool marked;

	while (at < to) {
		while (r->nranges > 0 && r->ranges[0].until <= at) {
			memmove(r->ranges, r->ranges + 1, --r->nranges * sizeof r->ranges[0]);
		}
		marked = r->nranges > 0 && r->ranges[0].from <= at;
		seg = !r->nranges ? to : marked ? r->ranges[0].until : r->ranges[0].from;
		if (seg > to)
			seg = to;
		fn(arg, buf + (at - base), (size_t)(seg - at), marked);
		if (marked)
			r->marked_bytes += seg - at;
		at = seg;
	}
	r->released = to;
	for (i = 0; i < r->nranges && r->ranges[i].until <= to; i++)
		;
	if (i > 0) {
		r->nranges -= i;
		memmove(r->ranges, r->ranges + i, r->nranges * sizeof r->ranges[0]);
	}
}

/*
 * The windows that start in the held-back bytes and end in the new input:
 * scanned in a small buffer stitching the two together.
 */
static void
repeat_scan_seam(struct repeat *r, const uint8_t *buf, size_t len)
{
	uint8_t seam[2 * REPEAT_WINDOW_MAX];
	size_t held = (size_t)(r->pos - r->released), before = r->window - 1, after = r->window - 1;

	if (before > held)
		before = held;
	if (after > len)
		after = len;
	memcpy(seam, r->hold + held - before, before);
	memcpy(seam + before, buf, after);
	repeat_scan(r, seam, r->pos - before, r->pos + after);
	explicit_bzero(seam, before + after);
}

/*
 * Take in len bytes: the seam with what is held back, then the input in
 * place; release what no later hit can mark; hold back the rest.
 */
static void
repeat_take(struct repeat *r, const uint8_t *buf, size_t len, bool flush,
    repeat_release_fn fn, void *arg)
{
	uint64_t start = r->pos, to;
	size_t held = (size_t)(start - r->released), keep;

	if (len > 0) {
		repeat_scan_seam(r, buf, len);
		/* Windows wholly in the input, unless a short input left seam windows undone. */
		if (r->next_lookup >= start && r->next_insert >= start)
			repeat_scan(r, buf, start, start + len);
	}
	r->pos = start + len;
	to = flush ? r->pos : r->pos > r->released + r->lookahead ? r->pos - r->lookahead :
	    r->released;
	if (to > r->released && r->released < start)
		repeat_release(r, r->hold, start - held, to < start ? to : start, fn, arg);
	if (to > start)
		repeat_release(r, buf, start, to, fn, arg);
	/* Hold back [to, pos): the rest of the old hold, then the input's tail. */
	keep = (size_t)(r->pos - to);
	if (to < start) {
		memmove(r->hold, r->hold + (to - (start - held)), (size_t)(start - to));
		if (len > 0)
			memcpy(r->hold + (start - to), buf, len);
	} else if (keep > 0) {
		memcpy(r->hold, buf + (to - start), keep);
	}
	if (held > keep)
		explicit_bzero(r->hold + keep, held - keep);
}

/* Take in bytes from the source, handing on what is final. */
void
repeat_input(struct repeat *r, const uint8_t *buf, size_t len, repeat_release_fn fn, void *arg)
{
	repeat_tables(r);
	if (len > 0)
		repeat_take(r, buf, len, false, fn, arg);
}

/* The input ended: hand on everything held back. */
void
repeat_flush(struct repeat *r, repeat_release_fn fn, void *arg)
{
	if (r->tables != NULL && r->pos > r->released)
		repeat_take(r, NULL, 0, true, fn, arg);
}

/* A reopen: drop what is held back, keep the history. */
void
repeat_discard(struct repeat *r)
{
	if (r->hold != NULL)
		explicit_bzero(r->hold, r->lookahead);
	r->released = r->pos;
	/* Windows reaching back into the dropped bytes can no longer be hashed. */
	if (r->next_lookup < r->pos)
		r->next_lookup = repeat_grid_after(r->pos, r->lookup_stride);
	if (r->next_insert < r->pos)
		r->next_insert = repeat_grid_after(r->pos, r->insert_stride);
}

/* Bytes still to come before the next byte is handed on. */
size_t
repeat_lag(const struct repeat *r)
{
	size_t held = (size_t)(r->pos - r->released);

	return held < r->lookahead ? r->lookahead - held : 0;
}

/* The shortest repeat always caught. */
size_t
repeat_min_caught(const struct repeat *r)
{
	return r->lookahead;
}

/*
 * How far back a repeat is caught: a hit's remembered window is at most
 * REPEAT_HISTORY insert strides before it, counting from the last
 * remembered window that starts before the looked-up one.
 */
size_t
repeat_reach(const struct repeat *r)
{
	return REPEAT_HISTORY * r->insert_stride;
}
