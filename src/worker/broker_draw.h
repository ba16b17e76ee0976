/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_BROKER_DRAW_H
#define ENTROPYD_BROKER_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "condition.h"
#include "sink.h"

/*
 * What the EGD broker hands its clients: full entropy, made from the
 * reserves the kernel may take from (running, credited sources; a
 * suspended or failing source holds nothing there).
 *
 * One output is SHA-256 of conditioned bytes that carry at least
 * BROKER_DRAW_INPUT_BITS credited bits, twice the output's 256 bits (SP
 * 800-90C's rule for full entropy out of a vetted conditioner): 64 bytes
 * at the usual 8 bits a byte, more when -e caps the credit. Each byte of
 * an output is given once and wiped where it was held; the bytes it was
 * made from were taken out of their reserve (so no sink gets them) and
 * wiped after hashing. Outputs wait in a stock of BROKER_DRAW_STOCK_BYTES,
 * made ahead, so a client is answered without waiting for a source.
 *
 * The share: of what the sources condition into those reserves, at most
 * share_percent goes to the broker. It accrues an allowance of reserve
 * bytes as the sources' conditioned counts grow (at most
 * BROKER_DRAW_BANK_BYTES of it kept in hand, scaled by the share); the
 * rest stays in the reserves for the host's sink. At 100 the broker takes
 * whatever is in the reserves when it asks.
 */
#define BROKER_DRAW_INPUT_BITS (2 * CONDITION_OUTPUT_BITS)
/* The most input one output takes: 512 bits at the lowest credit, 1 bit a byte. */
#define BROKER_DRAW_INPUT_MAX_BYTES (BROKER_DRAW_INPUT_BITS + 64)
/* The most reserves the broker draws on (the first, in the supply's order). */
#define BROKER_DRAW_MAX_SOURCES 16
/* The most allowance kept in hand, in bytes, scaled by the share. */
#define BROKER_DRAW_BANK_BYTES RESERVE_CAPACITY
/* The outputs made ahead. */
#define BROKER_DRAW_STOCK_BYTES 1024

struct broker_draw {
	unsigned share_percent;       /* 1..100 */
	uint64_t allowance_hundredths; /* reserve bytes it may still take, in hundredths */
	uint64_t seen_conditioned;    /* the sources' conditioned bytes at the last look */
	uint64_t seen_signature;      /* which sources those were */
	bool seen;
	unsigned next_source;         /* round robin over the reserves */
	bool reserve_low;             /* a reserve was drawn below its low mark (reset by the caller) */
	struct reserve stock;         /* outputs made and not yet given */
	uint8_t *output;              /* memory-locked: an output while it is made */
	uint8_t *input;               /* memory-locked: one output's input while hashed */
	/* counters */
	uint64_t outputs;             /* outputs made */
	uint64_t bytes_drawn;         /* reserve bytes taken */
	uint64_t bits_drawn;          /* their credit */
	uint64_t bytes_given;         /* output bytes handed out */
};

void broker_draw_init(struct broker_draw *, unsigned share_percent);
void broker_draw_free(struct broker_draw *);
/* Add the share of what the sources conditioned since the last call to the allowance. */
void broker_draw_accrue(struct broker_draw *, const struct sink_supply *);
/* Make outputs until the stock is full or the reserves cannot; whether it is full. */
bool broker_draw_fill(struct broker_draw *, const struct sink_supply *);
/* Give up to len bytes of full entropy into buf: how many (0: none can be made now). */
size_t broker_draw_give(struct broker_draw *, const struct sink_supply *, uint8_t *buf,
    size_t len);
/* About how many bytes could be given now without waiting (EGD's "available"). */
uint64_t broker_draw_ready(struct broker_draw *, const struct sink_supply *);
/* The VM generation changed: wipe what is held; returns how many bytes. */
size_t broker_draw_forget(struct broker_draw *);

#endif
