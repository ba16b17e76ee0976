/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RESERVE_H
#define ENTROPYD_RESERVE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A bounded ring of conditioned bytes per source instance. The source is
 * read while the reserve holds less than its low mark; a sink takes from
 * it. Bytes taken out are wiped from the ring.
 */
#define RESERVE_CAPACITY 16384
#define RESERVE_LOW_MARK 8192

struct reserve {
	uint8_t *ring;
	size_t head; /* next byte to take */
	size_t len;  /* bytes held */
	uint64_t dropped; /* bytes lost to overflow (oldest first) */
};

void reserve_init(struct reserve *);
void reserve_free(struct reserve *);
/* Append; on overflow the oldest bytes are dropped and counted. */
void reserve_put(struct reserve *, const uint8_t *, size_t);
/* Take up to len bytes; returns how many. */
size_t reserve_take(struct reserve *, uint8_t *, size_t len);
/* Wipe and empty. */
void reserve_clear(struct reserve *);
/* Whether the source should be read to fill it. */
int reserve_wants(const struct reserve *);

#endif
