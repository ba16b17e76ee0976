/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RESERVE_H
#define ENTROPYD_RESERVE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A bounded ring of conditioned bytes per source instance, with the
 * entropy they carry: the conditioner decides the credit of each output and
 * the reserve hands it on with the bytes, spread evenly over them (every
 * output of one source carries the same density), so no sink computes a
 * credit of its own. The source is read while the reserve holds less than
 * its low mark; a sink takes from it. Bytes taken out are wiped from the
 * ring.
 */
#define RESERVE_CAPACITY 16384
#define RESERVE_LOW_MARK 8192

struct reserve {
	uint8_t *ring;
	size_t head;          /* next byte to take */
	size_t len;           /* bytes held */
	uint64_t credit_bits; /* assessed entropy of the bytes held */
	uint64_t dropped;     /* bytes lost to overflow (oldest first) */
};

void reserve_init(struct reserve *);
void reserve_free(struct reserve *);
/* Append len bytes carrying credit_bits; on overflow the oldest bytes are
 * dropped, with their share of the credit, and counted. */
void reserve_put(struct reserve *, const uint8_t *, size_t len, uint64_t credit_bits);
/* Take up to len bytes; returns how many, and their share of the credit
 * (rounded down) in *credit_bits unless it is NULL. */
size_t reserve_take(struct reserve *, uint8_t *, size_t len, uint64_t *credit_bits);
/* Wipe and empty. */
void reserve_clear(struct reserve *);
/* Whether the source should be read to fill it. */
int reserve_wants(const struct reserve *);

#endif
