/* SPDX-License-Identifier: MIT */
/*
 * The frames between the worker, the feeder and the supervisor: encoding,
 * and decoding that checks every field before anything acts on it.
 */
#include <string.h>

#include "feedproto.h"

static const char *const feedproto_refusal_names[FEEDPROTO_NREFUSALS] = {
	[FEEDPROTO_OK] = "ok",
	[FEEDPROTO_MALFORMED] = "malformed",
	[FEEDPROTO_UNKNOWN_TYPE] = "unknown_type",
	[FEEDPROTO_OVERSIZED] = "oversized",
	[FEEDPROTO_CREDIT] = "credit",
	[FEEDPROTO_FLOOD] = "flood",
};

static const char *const feedproto_hook_result_names[FEEDPROTO_HOOK_NRESULTS] = {
	[FEEDPROTO_HOOK_OK] = "ok",
	[FEEDPROTO_HOOK_FAILED] = "failed",
	[FEEDPROTO_HOOK_TIMEOUT] = "timeout",
	[FEEDPROTO_HOOK_REFUSED] = "refused",
	[FEEDPROTO_HOOK_READY] = "ready",
};

static const char *const feedproto_hook_reason_texts[FEEDPROTO_HOOK_NREASONS] = {
	[FEEDPROTO_HOOK_NONE] = "",
	[FEEDPROTO_HOOK_OWNER] = "not owned by root",
	[FEEDPROTO_HOOK_WRITABLE] = "writable by group or others",
	[FEEDPROTO_HOOK_DIRECTORY] = "in a directory that is not root's alone",
	[FEEDPROTO_HOOK_NOT_FILE] = "not a regular file",
	[FEEDPROTO_HOOK_LINK] = "a link that leads nowhere",
	[FEEDPROTO_HOOK_NAME] = "a name longer than 64 bytes",
	[FEEDPROTO_HOOK_EXEC] = "cannot be started",
	[FEEDPROTO_HOOK_SIGNAL] = "killed by a signal",
};

_Static_assert(FEEDPROTO_STATE_BYTES == 12 + 4 * (FEEDPROTO_NREFUSALS - 1) + 24,
    "the state's layout below");

/* The state's flags word. */
#define FEEDPROTO_STATE_CRNG_READY 1u

/* Little-endian loads and stores. */
static uint32_t
feedproto_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
feedproto_get64(const uint8_t *p)
{
	return (uint64_t)feedproto_get32(p) | (uint64_t)feedproto_get32(p + 4) << 32;
}

static void
feedproto_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
feedproto_put64(uint8_t *p, uint64_t v)
{
	feedproto_put32(p, (uint32_t)v);
	feedproto_put32(p + 4, (uint32_t)(v >> 32));
}

const char *
feedproto_refusal_name(enum feedproto_refusal r)
{
	return r > FEEDPROTO_OK && r < FEEDPROTO_NREFUSALS ? feedproto_refusal_names[r] : "ok";
}

const char *
feedproto_hook_result_name(enum feedproto_hook_result r)
{
	return r < FEEDPROTO_HOOK_NRESULTS ? feedproto_hook_result_names[r] : "unknown";
}

const char *
feedproto_hook_reason_text(enum feedproto_hook_reason r)
{
	return r < FEEDPROTO_HOOK_NREASONS ? feedproto_hook_reason_texts[r] : "unknown";
}

bool
feedproto_from_worker(enum feedproto_type t)
{
	return t >= FEEDPROTO_HELLO && t <= FEEDPROTO_STATUS;
}

/* Whether a STATUS text is printable ASCII, nothing systemd would read as a new field. */
static bool
feedproto_printable(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return true;
}

/*
 * The segment at *off of an ADD's payload, if one is there whole; its
 * credit is not checked here.
 */
static bool
feedproto_segment_at(const struct feedproto_frame *f, size_t *off, struct feedproto_segment *seg)
{
	size_t left;
	uint32_t len;

	if (*off >= f->len || (left = f->len - *off) < FEEDPROTO_SEGMENT_HEADER_BYTES)
		return false;
	len = feedproto_get32(f->payload + *off);
	if (len == 0 || len > left - FEEDPROTO_SEGMENT_HEADER_BYTES)
		return false;
	seg->len = len;
	seg->credit = feedproto_get32(f->payload + *off + 4);
	seg->bytes = f->payload + *off + FEEDPROTO_SEGMENT_HEADER_BYTES;
	*off += FEEDPROTO_SEGMENT_HEADER_BYTES + len;
	return true;
}

/*
 * An ADD: arg0 segments that fill the payload exactly, none empty, each
 * crediting at most 8 bits per byte it carries.
 */
static enum feedproto_refusal
feedproto_check_add(const struct feedproto_frame *f)
{
	struct feedproto_segment seg;
	size_t off = 0;
	uint32_t n = 0;

	if (f->arg1 != 0 || f->arg0 == 0 || f->arg0 > FEEDPROTO_MAX_SEGMENTS)
		return FEEDPROTO_MALFORMED;
	while (n < f->arg0 && feedproto_segment_at(f, &off, &seg)) {
		if ((uint64_t)seg.credit > (uint64_t)seg.len * FEEDPROTO_MAX_BITS_PER_BYTE)
			return FEEDPROTO_CREDIT;
		n++;
	}
	return n == f->arg0 && off == f->len ? FEEDPROTO_OK : FEEDPROTO_MALFORMED;
}

/* The rules of each type, on a frame whose sizes already agree. */
static enum feedproto_refusal
feedproto_check(const struct feedproto_frame *f)
{
	switch (f->type) {
	case FEEDPROTO_ADD:
		return feedproto_check_add(f);
	case FEEDPROTO_MIX:
		/* Uncredited by definition: a credit here is an attempt at one. */
		if (f->arg0 != 0)
			return FEEDPROTO_CREDIT;
		return f->arg1 == 0 ? FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_STATUS:
		if (f->len > FEEDPROTO_MAX_STATUS)
			return FEEDPROTO_OVERSIZED;
		return f->arg0 == 0 && f->arg1 == 0 && feedproto_printable(f->payload, f->len) ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_ANSWER:
		return f->arg1 == 0 && (f->len == 0 || f->len == FEEDPROTO_STATE_BYTES) ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_STARTED:
	case FEEDPROTO_KILL:
		return f->len == 0 && f->arg0 > 0 && f->arg0 <= INT32_MAX && f->arg1 == 0 ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_EXITED:
		/* pid 0: a worker that could not be forked. */
		return f->len == 0 && f->arg0 <= INT32_MAX ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_SIGNAL:
		return f->len == 0 && f->arg0 >= 1 && f->arg0 <= 64 && f->arg1 == 0 ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_HOOKS:
		return f->len == FEEDPROTO_HOOKS_BYTES && f->arg0 < 256 && f->arg1 == 0 ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_HOOK_RAN:
		return f->len > 8 && f->len <= 8 + FEEDPROTO_MAX_HOOK_NAME &&
		    feedproto_printable(f->payload + 8, f->len - 8) &&
		    memchr(f->payload + 8, '/', f->len - 8) == NULL ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_HOOKS_DONE:
		return f->len == 8 ? FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	case FEEDPROTO_HELLO:
	case FEEDPROTO_RESEED:
	case FEEDPROTO_QUERY:
	case FEEDPROTO_SPAWN:
	case FEEDPROTO_STOP:
		return f->len == 0 && f->arg0 == 0 && f->arg1 == 0 ?
		    FEEDPROTO_OK : FEEDPROTO_MALFORMED;
	}
	return FEEDPROTO_UNKNOWN_TYPE;
}

enum feedproto_refusal
feedproto_decode(const uint8_t *buf, size_t len, bool truncated, struct feedproto_frame *f)
{
	uint32_t type, payload;

	memset(f, 0, sizeof *f);
	if (truncated)
		return FEEDPROTO_OVERSIZED;
	if (len < FEEDPROTO_HEADER_BYTES)
		return FEEDPROTO_MALFORMED;
	type = (uint32_t)buf[0] | (uint32_t)buf[1] << 8;
	payload = feedproto_get32(buf + 4);
	if (buf[2] != 0 || buf[3] != 0)
		return FEEDPROTO_MALFORMED;
	if (payload > FEEDPROTO_MAX_PAYLOAD || len > FEEDPROTO_MAX_FRAME)
		return FEEDPROTO_OVERSIZED;
	if ((size_t)payload != len - FEEDPROTO_HEADER_BYTES)
		return FEEDPROTO_MALFORMED;
	f->type = (enum feedproto_type)type;
	f->arg0 = feedproto_get32(buf + 8);
	f->arg1 = feedproto_get32(buf + 12);
	f->payload = buf + FEEDPROTO_HEADER_BYTES;
	f->len = payload;
	return feedproto_check(f);
}

size_t
feedproto_encode(uint8_t *out, size_t cap, enum feedproto_type type, uint32_t arg0,
    uint32_t arg1, const void *payload, size_t len)
{
	struct feedproto_frame f;

	if (len > FEEDPROTO_MAX_PAYLOAD || cap < FEEDPROTO_HEADER_BYTES + len)
		return 0;
	out[0] = (uint8_t)type;
	out[1] = (uint8_t)((unsigned)type >> 8);
	out[2] = out[3] = 0;
	feedproto_put32(out + 4, (uint32_t)len);
	feedproto_put32(out + 8, arg0);
	feedproto_put32(out + 12, arg1);
	if (len > 0)
		memcpy(out + FEEDPROTO_HEADER_BYTES, payload, len);
	/* Never send what the other side would refuse. */
	if (feedproto_decode(out, FEEDPROTO_HEADER_BYTES + len, false, &f) != FEEDPROTO_OK)
		return 0;
	return FEEDPROTO_HEADER_BYTES + len;
}

bool
feedproto_next_segment(const struct feedproto_frame *f, size_t *off,
    struct feedproto_segment *seg)
{
	return f->type == FEEDPROTO_ADD && feedproto_segment_at(f, off, seg);
}

bool
feedproto_batch_fits(const struct feedproto_batch *b, size_t len)
{
	size_t left = sizeof b->payload - b->len;

	return b->segments < FEEDPROTO_MAX_SEGMENTS && len > 0 &&
	    left >= FEEDPROTO_SEGMENT_HEADER_BYTES && len <= left - FEEDPROTO_SEGMENT_HEADER_BYTES;
}

uint8_t *
feedproto_batch_space(struct feedproto_batch *b, size_t len)
{
	return feedproto_batch_fits(b, len) ? b->payload + b->len + FEEDPROTO_SEGMENT_HEADER_BYTES :
	    NULL;
}

int
feedproto_batch_commit(struct feedproto_batch *b, size_t len, uint32_t credit)
{
	uint8_t *p = b->payload + b->len;

	if (!feedproto_batch_fits(b, len) ||
	    (uint64_t)credit > (uint64_t)len * FEEDPROTO_MAX_BITS_PER_BYTE) {
		explicit_bzero(p, sizeof b->payload - b->len);
		return -1;
	}
	feedproto_put32(p, (uint32_t)len);
	feedproto_put32(p + 4, credit);
	b->len += FEEDPROTO_SEGMENT_HEADER_BYTES + len;
	b->segments++;
	return 0;
}

int
feedproto_batch_add(struct feedproto_batch *b, const void *bytes, size_t len, uint32_t credit)
{
	uint8_t *at = feedproto_batch_space(b, len);

	if (at == NULL)
		return -1;
	memcpy(at, bytes, len);
	return feedproto_batch_commit(b, len, credit);
}

size_t
feedproto_batch_bytes(const struct feedproto_batch *b)
{
	return b->len - (size_t)b->segments * FEEDPROTO_SEGMENT_HEADER_BYTES;
}

void
feedproto_batch_clear(struct feedproto_batch *b)
{
	explicit_bzero(b->payload, b->len);
	b->len = 0;
	b->segments = 0;
}

size_t
feedproto_encode_answer(uint8_t *out, size_t cap, int status, const struct feedproto_state *st)
{
	uint8_t p[FEEDPROTO_STATE_BYTES];
	int r;

	if (st == NULL)
		return feedproto_encode(out, cap, FEEDPROTO_ANSWER, (uint32_t)status, 0, NULL, 0);
	feedproto_put32(p, st->crng_ready ? FEEDPROTO_STATE_CRNG_READY : 0);
	feedproto_put32(p + 4, st->entropy_avail);
	feedproto_put32(p + 8, st->worker_restarts);
	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		feedproto_put32(p + 12 + 4 * (r - FEEDPROTO_MALFORMED), st->refused[r]);
	feedproto_put64(p + 32, st->bits_credited);
	feedproto_put64(p + 40, st->adds);
	feedproto_put32(p + 48, st->last_exit);
	feedproto_put32(p + 52, st->worker_exits);
	return feedproto_encode(out, cap, FEEDPROTO_ANSWER, (uint32_t)status, 0, p, sizeof p);
}

void
feedproto_answer_state(const struct feedproto_frame *f, struct feedproto_state *st)
{
	const uint8_t *p = f->payload;
	int r;

	memset(st, 0, sizeof *st);
	if (f->type != FEEDPROTO_ANSWER || f->len != FEEDPROTO_STATE_BYTES)
		return;
	st->crng_ready = (feedproto_get32(p) & FEEDPROTO_STATE_CRNG_READY) != 0;
	st->entropy_avail = feedproto_get32(p + 4);
	st->worker_restarts = feedproto_get32(p + 8);
	for (r = FEEDPROTO_MALFORMED; r < FEEDPROTO_NREFUSALS; r++)
		st->refused[r] = feedproto_get32(p + 12 + 4 * (r - FEEDPROTO_MALFORMED));
	st->bits_credited = feedproto_get64(p + 32);
	st->adds = feedproto_get64(p + 40);
	st->last_exit = feedproto_get32(p + 48);
	st->worker_exits = feedproto_get32(p + 52);
}

size_t
feedproto_encode_hooks(uint8_t *out, size_t cap, const struct feedproto_hooks *h)
{
	uint8_t p[FEEDPROTO_HOOKS_BYTES];

	feedproto_put64(p, h->generation);
	memcpy(p + 8, h->id, FEEDPROTO_ID_BYTES);
	return feedproto_encode(out, cap, FEEDPROTO_HOOKS, h->trigger, 0, p, sizeof p);
}

void
feedproto_hooks_of(const struct feedproto_frame *f, struct feedproto_hooks *h)
{
	memset(h, 0, sizeof *h);
	if (f->type != FEEDPROTO_HOOKS || f->len != FEEDPROTO_HOOKS_BYTES)
		return;
	h->generation = feedproto_get64(f->payload);
	memcpy(h->id, f->payload + 8, FEEDPROTO_ID_BYTES);
	h->trigger = f->arg0;
}

size_t
feedproto_encode_hook_ran(uint8_t *out, size_t cap, const struct feedproto_hook_ran *r)
{
	uint8_t p[8 + FEEDPROTO_MAX_HOOK_NAME];
	size_t len = strnlen(r->name, sizeof r->name);

	if (len > FEEDPROTO_MAX_HOOK_NAME)
		return 0;
	feedproto_put64(p, r->generation);
	memcpy(p + 8, r->name, len);
	return feedproto_encode(out, cap, FEEDPROTO_HOOK_RAN, (uint32_t)r->result |
	    (uint32_t)r->reason << 8 | (uint32_t)r->exit_status << 16, r->duration_ms, p, 8 + len);
}

void
feedproto_hook_ran_of(const struct feedproto_frame *f, struct feedproto_hook_ran *r)
{
	memset(r, 0, sizeof *r);
	if (f->type != FEEDPROTO_HOOK_RAN || f->len <= 8 || f->len > 8 + FEEDPROTO_MAX_HOOK_NAME)
		return;
	r->generation = feedproto_get64(f->payload);
	memcpy(r->name, f->payload + 8, f->len - 8);
	r->result = (uint8_t)f->arg0;
	r->reason = (uint8_t)(f->arg0 >> 8);
	r->exit_status = (uint8_t)(f->arg0 >> 16);
	r->duration_ms = f->arg1;
}

size_t
feedproto_encode_hooks_done(uint8_t *out, size_t cap, uint64_t generation, uint32_t ran,
    uint32_t refused)
{
	uint8_t p[8];

	feedproto_put64(p, generation);
	return feedproto_encode(out, cap, FEEDPROTO_HOOKS_DONE, ran, refused, p, sizeof p);
}

uint64_t
feedproto_hooks_done_generation(const struct feedproto_frame *f)
{
	return f->type == FEEDPROTO_HOOKS_DONE && f->len == 8 ? feedproto_get64(f->payload) : 0;
}
