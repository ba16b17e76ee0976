/* SPDX-License-Identifier: MIT */
/*
 * Bit strings packed 8 bits a byte, most significant first, as the
 * estimators of SP 800-90B read them.
 */
#ifndef ENTROPYD_PACKED_H
#define ENTROPYD_PACKED_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* The 64 bits from bit offset `bit` on, the first at the top (9 bytes
 * from bit / 8 must be readable). */
static inline uint64_t
packed_load(const uint8_t *packed, uint64_t bit)
{
	uint64_t x;
	unsigned shift = (unsigned)(bit & 7);

	memcpy(&x, packed + (bit >> 3), sizeof x);
	x = be64toh(x);
	if (shift != 0)
		x = x << shift | packed[(bit >> 3) + 8] >> (8 - shift);
	return x;
}

#endif
