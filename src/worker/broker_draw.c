/* SPDX-License-Identifier: MIT */
/*
 * The EGD broker's full-entropy outputs: SHA-256 of reserve bytes carrying
 * at least twice the output's bits of credited input, within the broker's
 * share of what the sources condition. No I/O: the broker (broker.c) and
 * the unit tests drive it with a supply of pipelines.
 */
#include <string.h>

#include <gcrypt.h>

#include "broker_draw.h"
#include "memlock.h"

/* One reserve an output's input comes from, and how much. */
struct broker_draw_part {
	struct pipeline *from;
	size_t bytes;
};

/* The allowance is kept in hundredths of a byte, so no share of a byte is lost. */
#define BROKER_DRAW_UNITS 100u

void
broker_draw_init(struct broker_draw *d, unsigned share_percent)
{
	memset(d, 0, sizeof *d);
	condition_global_init();
	d->share_percent = share_percent == 0 ? 1 : share_percent > 100 ? 100 : share_percent;
	reserve_init(&d->stock);
	d->output = memlock_alloc(CONDITION_OUTPUT_BYTES);
	d->input = memlock_alloc(BROKER_DRAW_INPUT_MAX_BYTES);
}

void
broker_draw_free(struct broker_draw *d)
{
	if (d->stock.ring != NULL)
		reserve_free(&d->stock);
	if (d->output != NULL)
		memlock_free(d->output, CONDITION_OUTPUT_BYTES);
	if (d->input != NULL)
		memlock_free(d->input, BROKER_DRAW_INPUT_MAX_BYTES);
	d->output = d->input = NULL;
}

/* Whether the broker takes every byte it finds (a share of 100). */
static bool
broker_draw_unlimited(const struct broker_draw *d)
{
	return d->share_percent >= 100;
}

/* The reserves the broker may take from, up to max of them: those the kernel may. */
static size_t
broker_draw_sources(const struct sink_supply *supply, struct pipeline **list, size_t max)
{
	struct pipeline *p = NULL;
	size_t n = 0;
	bool ok;

	while ((p = supply->next(supply->ctx, p, &ok)) != NULL && n < max)
		if (ok)
			list[n++] = p;
	return n;
}

void
broker_draw_accrue(struct broker_draw *d, const struct sink_supply *supply)
{
	struct pipeline *list[BROKER_DRAW_MAX_SOURCES];
	size_t n = broker_draw_sources(supply, list, BROKER_DRAW_MAX_SOURCES), i;
	uint64_t sum = 0, signature = n * UINT64_C(0x9e3779b97f4a7c15), bank;

	for (i = 0; i < n; i++) {
		sum += list[i]->count.bytes_conditioned;
		signature ^= (uint64_t)(uintptr_t)list[i] * (i + 1);
	}
	/* Another set of sources (one suspended, one back): count from here on. */
	if (!d->seen || signature != d->seen_signature || sum < d->seen_conditioned) {
		d->seen = true;
		d->seen_signature = signature;
		d->seen_conditioned = sum;
		return;
	}
	if (!broker_draw_unlimited(d)) {
		bank = (uint64_t)BROKER_DRAW_BANK_BYTES * d->share_percent;
		d->allowance_hundredths += (sum - d->seen_conditioned) * d->share_percent;
		if (d->allowance_hundredths > bank)
			d->allowance_hundredths = bank;
	}
	d->seen_conditioned = sum;
}

/* Bytes of a reserve that carry want bits, as reserve_take() shares the credit out. */
static size_t
broker_draw_bytes_for(const struct reserve *r, uint64_t want_bits)
{
	return (size_t)((want_bits * r->len + r->credit_bits - 1) / r->credit_bits);
}

/*
 * Plan one output's input: bytes from the reserves in turn until they
 * carry BROKER_DRAW_INPUT_BITS, within the allowance. The parts, and how
 * many; 0 when the reserves cannot make an output now.
 */
static size_t
broker_draw_plan(struct broker_draw *d, const struct sink_supply *supply,
    struct broker_draw_part *parts)
{
	struct pipeline *list[BROKER_DRAW_MAX_SOURCES];
	size_t n = broker_draw_sources(supply, list, BROKER_DRAW_MAX_SOURCES), i, nparts = 0;
	size_t bytes = 0, take;
	uint64_t bits = 0, budget = broker_draw_unlimited(d) ? UINT64_MAX :
	    d->allowance_hundredths / BROKER_DRAW_UNITS;

	for (i = 0; i < n && bits < BROKER_DRAW_INPUT_BITS; i++) {
		struct pipeline *p = list[(d->next_source + i) % n];
		const struct reserve *r = &p->reserve;

		if (r->len == 0 || r->credit_bits == 0)
			continue;
		take = broker_draw_bytes_for(r, BROKER_DRAW_INPUT_BITS - bits);
		if (take > r->len)
			take = r->len;
		if (take > budget - bytes)
			take = (size_t)(budget - bytes);
		if (take > BROKER_DRAW_INPUT_MAX_BYTES - bytes)
			take = BROKER_DRAW_INPUT_MAX_BYTES - bytes;
		if (take == 0)
			break;
		parts[nparts++] = (struct broker_draw_part){ p, take };
		bytes += take;
		bits += r->credit_bits * take / r->len;
	}
	if (n > 0)
		d->next_source = (d->next_source + 1) % (unsigned)n;
	return bits >= BROKER_DRAW_INPUT_BITS ? nparts : 0;
}

/* Make the next output from the reserves; false when they cannot now. */
static bool
broker_draw_make(struct broker_draw *d, const struct sink_supply *supply)
{
	struct broker_draw_part parts[BROKER_DRAW_MAX_SOURCES];
	size_t nparts, i, len = 0, n;
	unsigned credit;

	broker_draw_accrue(d, supply);
	if ((nparts = broker_draw_plan(d, supply, parts)) == 0)
		return false;
	for (i = 0; i < nparts; i++) {
		bool wanted = reserve_wants(&parts[i].from->reserve);

		n = pipeline_take(parts[i].from, d->input + len, parts[i].bytes, &credit);
		len += n;
		d->bits_drawn += credit;
		/* Drawn below its low mark: its source should be read again. */
		if (!wanted && reserve_wants(&parts[i].from->reserve))
			d->reserve_low = true;
	}
	gcry_md_hash_buffer(GCRY_MD_SHA256, d->output, d->input, len);
	explicit_bzero(d->input, len);
	reserve_put(&d->stock, d->output, CONDITION_OUTPUT_BYTES, CONDITION_OUTPUT_BITS);
	explicit_bzero(d->output, CONDITION_OUTPUT_BYTES);
	d->outputs++;
	d->bytes_drawn += len;
	if (!broker_draw_unlimited(d))
		d->allowance_hundredths -= (uint64_t)len * BROKER_DRAW_UNITS;
	return true;
}

bool
broker_draw_fill(struct broker_draw *d, const struct sink_supply *supply)
{
	while (d->stock.len < BROKER_DRAW_STOCK_BYTES)
		if (!broker_draw_make(d, supply))
			return false;
	return true;
}

size_t
broker_draw_give(struct broker_draw *d, const struct sink_supply *supply, uint8_t *buf,
    size_t len)
{
	size_t n;

	while (d->stock.len < len)
		if (!broker_draw_make(d, supply))
			break;
	n = reserve_take(&d->stock, buf, len, NULL);
	d->bytes_given += n;
	return n;
}

uint64_t
broker_draw_ready(struct broker_draw *d, const struct sink_supply *supply)
{
	struct pipeline *list[BROKER_DRAW_MAX_SOURCES];
	size_t n, i;
	uint64_t bits = 0, bytes = 0, budget;

	broker_draw_accrue(d, supply);
	n = broker_draw_sources(supply, list, BROKER_DRAW_MAX_SOURCES);
	for (i = 0; i < n; i++) {
		bits += list[i]->reserve.credit_bits;
		bytes += list[i]->reserve.len;
	}
	budget = d->allowance_hundredths / BROKER_DRAW_UNITS;
	if (!broker_draw_unlimited(d) && bytes > budget)
		bits = bits * budget / bytes;
	return d->stock.len + bits / BROKER_DRAW_INPUT_BITS * CONDITION_OUTPUT_BYTES;
}

size_t
broker_draw_forget(struct broker_draw *d)
{
	size_t held = d->stock.len;

	reserve_clear(&d->stock);
	return held;
}
