/* SPDX-License-Identifier: MIT */
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
	repeat_keygen(r);
	r->key[1] |= 1; /* the multiplier of the 8-byte hash: odd, so the hash is a bijection */
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
	free(r->head);
	free(r->slots);
	free(r->filter);
	r->filter = NULL;
	r->hold = NULL;
	r->head = NULL;
	r->slots = NULL;
}

/* Allocate the tables on first use, so a source never read costs nothing. */
static void
repeat_tables(struct repeat *r)
{
	if (r->head != NULL)
		return;
	r->head = xcalloc(REPEAT_BUCKETS, sizeof *r->head);
	r->slots = xcalloc(REPEAT_HISTORY, sizeof *r->slots);
	r->filter = xcalloc(2 * REPEAT_FILTER_BITS / 64, sizeof *r->filter);
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

/*
 * The keyed hash of the window at w. 8 bytes: a bijection (XOR a key,
 * multiply by an odd one). Wider: NH over 64-bit word pairs, folded, mixed.
 */
static inline uint64_t
repeat_hash(const struct repeat *r, const uint8_t *w)
{
	uint64_t hi = 0, lo = 0;
	size_t i, words = r->window / 8;

	if (words == 1)
		return (repeat_load64(w) ^ r->key[0]) * r->key[1];
	for (i = 0; i < words; i += 2)
		repeat_mul_add(repeat_load64(w + 8 * i) + r->key[i],
		    repeat_load64(w + 8 * i + 8) + r->key[i + 1], &hi, &lo);
	return ((hi ^ lo) + r->key[words]) * UINT64_C(0x9e3779b97f4a7c15);
}

/* A hash's bucket (its top bits) and tag (bits below them). */
static inline uint32_t
repeat_bucket(uint64_t h)
{
	return (uint32_t)(h >> 53) & (REPEAT_BUCKETS - 1);
}

static inline uint32_t
repeat_tag(uint64_t h)
{
	return (uint32_t)(h >> 21);
}

/* The filter bit of a hash: its top bits (a bucket's, and 4 more). */
static inline uint32_t
repeat_filter_bit(uint64_t h)
{
	return (uint32_t)(h >> 48) & (REPEAT_FILTER_BITS - 1);
}

/* Whether a remembered window has this hash. */
static bool
repeat_lookup(const struct repeat *r, uint64_t h)
{
	uint32_t bit = repeat_filter_bit(h), e, t, dist, slot;
	const uint64_t *f = r->filter;

	if (!(((f[bit / 64 * 2] | f[bit / 64 * 2 + 1]) >> (bit % 64)) & 1))
		return false; /* the usual case: nothing like it was remembered */
	e = r->head[repeat_bucket(h)];
	t = repeat_tag(h);
	if (e == 0)
		return false;
	/* Entry numbers wrap: distances are taken modulo 2^32. */
	dist = r->entries - (e - 1);
	while (dist >= 1 && dist <= REPEAT_HISTORY) {
		slot = (r->entries - dist) & (REPEAT_HISTORY - 1);
		if (r->slots[slot].tag == t)
			return true;
		if (r->slots[slot].back == 0)
			return false;
		dist += r->slots[slot].back;
	}
	return false;
}

/* Remember a window's hash, the oldest falling out of the history. */
static inline void
repeat_insert(struct repeat *r, uint64_t h)
{
	uint32_t entries = r->entries, slot = entries & (REPEAT_HISTORY - 1);
	uint32_t *head = &r->head[repeat_bucket(h)], prev = *head, bit = repeat_filter_bit(h);
	uint32_t dist = entries - (prev - 1);
	uint64_t *f = r->filter + entries / REPEAT_HISTORY % 2;
	size_t w;

	/* A new stretch reuses the bitmap of the one before last: its windows are all gone. */
	if (slot == 0)
		for (w = 0; w < REPEAT_FILTER_BITS / 64; w++)
			f[2 * w] = 0;
	f[bit / 64 * 2] |= UINT64_C(1) << (bit % 64);
	r->slots[slot].tag = repeat_tag(h);
	/* No branch on the (random) distance: 0 for none, or out of the history. */
	r->slots[slot].back = dist & -(uint32_t)(prev != 0 && dist < REPEAT_HISTORY);
	*head = entries + 1;
	r->entries = entries + 1;
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

/*
 * Look up and remember every window lying wholly in buf = stream [base,
 * end), in stream order: a window is looked up before it is remembered,
 * and after every window before it was.
 */
static void
repeat_scan(struct repeat *r, const uint8_t *buf, uint64_t base, uint64_t end)
{
	uint64_t look = r->next_lookup, ins = r->next_insert, last;
	const size_t lookup_stride = r->lookup_stride, insert_stride = r->insert_stride;

	if (end < base + r->window)
		return;
	last = end - r->window; /* the last window that fits */
	for (; ins <= last; ins += insert_stride) {
		for (; look <= ins; look += lookup_stride)
			if (repeat_lookup(r, repeat_hash(r, buf + (look - base))))
				repeat_mark(r, look);
		repeat_insert(r, repeat_hash(r, buf + (ins - base)));
	}
	for (; look <= last; look += lookup_stride)
		if (repeat_lookup(r, repeat_hash(r, buf + (look - base))))
			repeat_mark(r, look);
	r->next_lookup = look;
	r->next_insert = ins;
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
		memcpy(r->hold + (start - to), buf, len);
	} else {
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
	if (r->head != NULL && r->pos > r->released)
		repeat_take(r, NULL, 0, true, fn, arg);
}

/* The next position at or after pos on a grid of this stride. */
static uint64_t
repeat_grid_after(uint64_t pos, size_t stride)
{
	return (pos + stride - 1) / stride * stride;
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

/* How far back a repeat is caught. */
size_t
repeat_reach(const struct repeat *r)
{
	return (REPEAT_HISTORY - 1) * r->insert_stride;
}
