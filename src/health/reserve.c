/* SPDX-License-Identifier: MIT */
/*
 * A bounded ring of conditioned bytes per source instance, carrying the
 * credit the conditioner gave them; bytes taken out are wiped.
 */
#include <stdlib.h>
#include <string.h>

#include "memlock.h"
#include "reserve.h"

void
reserve_init(struct reserve *r)
{
	memset(r, 0, sizeof *r);
	r->ring = memlock_alloc(RESERVE_CAPACITY);
}

void
reserve_free(struct reserve *r)
{
	memlock_free(r->ring, RESERVE_CAPACITY);
	r->ring = NULL;
	r->len = 0;
}

/* The share of the credit held that n of the bytes held carry, rounded down. */
static uint64_t
reserve_share(const struct reserve *r, size_t n)
{
	return r->len == 0 ? 0 : r->credit_bits * n / r->len;
}

/* Append bytes, dropping the oldest ones if the ring would overflow. */
void
reserve_put(struct reserve *r, const uint8_t *buf, size_t len, uint64_t credit_bits)
{
	if (len > RESERVE_CAPACITY) {
		size_t cut = len - RESERVE_CAPACITY;

		credit_bits -= credit_bits * cut / len;
		r->dropped += cut;
		buf += cut;
		len = RESERVE_CAPACITY;
	}
	if (r->len + len > RESERVE_CAPACITY) {
		size_t drop = r->len + len - RESERVE_CAPACITY;
		uint8_t sink[256];

		r->dropped += drop;
		while (drop > 0)
			drop -= reserve_take(r, sink, drop < sizeof sink ? drop : sizeof sink, NULL);
		explicit_bzero(sink, sizeof sink);
	}
	r->credit_bits += credit_bits;
	while (len > 0) {
		size_t tail = (r->head + r->len) % RESERVE_CAPACITY;
		size_t n = RESERVE_CAPACITY - tail;

		if (n > len)
			n = len;
		memcpy(r->ring + tail, buf, n);
		r->len += n;
		buf += n;
		len -= n;
	}
}

/* Take bytes from the front with their share of the credit, wiping them in the ring. */
size_t
reserve_take(struct reserve *r, uint8_t *buf, size_t len, uint64_t *credit_bits)
{
	uint64_t credit = reserve_share(r, len < r->len ? len : r->len);
	size_t done = 0;

	while (done < len && r->len > 0) {
		size_t n = RESERVE_CAPACITY - r->head;

		if (n > r->len)
			n = r->len;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, r->ring + r->head, n);
		explicit_bzero(r->ring + r->head, n);
		r->head = (r->head + n) % RESERVE_CAPACITY;
		r->len -= n;
		done += n;
	}
	r->credit_bits -= credit;
	if (r->len == 0) {
		/* What rounding left over belongs to no byte. */
		r->head = 0;
		r->credit_bits = 0;
	}
	if (credit_bits != NULL)
		*credit_bits = credit;
	return done;
}

void
reserve_clear(struct reserve *r)
{
	explicit_bzero(r->ring, RESERVE_CAPACITY);
	r->head = r->len = 0;
	r->credit_bits = 0;
}

int
reserve_wants(const struct reserve *r)
{
	return r->len < RESERVE_LOW_MARK;
}
