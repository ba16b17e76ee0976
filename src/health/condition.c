/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 conditioning through libgcrypt, with SP 800-90B 3.1.5 accounting:
 * an output only once its input carried 320 assessed bits, so each output is
 * credited in full (or nothing, for an uncredited source).
 */
#include <stdbool.h>
#include <string.h>

#include <gcrypt.h>

#include "condition.h"
#include "log.h"

/* Initialise libgcrypt: version check, no secure memory pool (buffers are wiped by hand). */
void
condition_global_init(void)
{
	static int done;

	if (done)
		return;
	if (gcry_check_version(GCRYPT_VERSION) == NULL)
		fatalx("libgcrypt is older than %s", GCRYPT_VERSION);
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	done = 1;
}

/* ceil(320 / unit_bits) units for a full-entropy output; a fixed count when uncredited. */
size_t
condition_units_per_output(double unit_bits, size_t unit_bytes)
{
	double units;
	size_t whole;

	if (unit_bits <= 0)
		return CONDITION_UNCREDITED_BYTES / unit_bytes;
	/* Rounded up by hand: the daemon links no libm. */
	units = CONDITION_INPUT_BITS / unit_bits - 1e-9;
	whole = (size_t)units;
	return (double)whole < units ? whole + 1 : whole;
}

void
condition_init(struct conditioner *c, double unit_bits, size_t unit_bytes)
{
	gcry_error_t err;

	condition_global_init();
	memset(c, 0, sizeof *c);
	err = gcry_md_open(&c->md, GCRY_MD_SHA256, 0);
	if (err)
		fatalx("SHA-256: %s", gcry_strerror(err));
	c->unit_bits = unit_bits;
	c->unit_bytes = unit_bytes;
	c->units_per_output = condition_units_per_output(unit_bits, unit_bytes);
}

void
condition_free(struct conditioner *c)
{
	if (c->md != NULL)
		gcry_md_close(c->md);
	c->md = NULL;
}

void
condition_discard(struct conditioner *c)
{
	gcry_md_reset(c->md);
	c->units = 0;
}

/*
 * Absorb whole units; take an output each time enough have been absorbed.
 * A whole output's worth from a fresh hash is hashed in one call, without
 * the handle's write/read/reset round trip: the same digest, much faster.
 */
void
condition_input(struct conditioner *c, const uint8_t *buf, size_t len,
    condition_output_fn fn, void *arg)
{
	size_t units = len / c->unit_bytes, whole = c->units_per_output;
	unsigned credit = c->unit_bits > 0 ? CONDITION_OUTPUT_BITS : 0;
	uint8_t out[CONDITION_OUTPUT_BYTES];
	bool used_out = false;

	while (units > 0) {
		size_t take = whole - c->units;

		if (c->units == 0 && units >= whole) {
			gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf,
			    whole * c->unit_bytes);
			fn(arg, out, CONDITION_OUTPUT_BYTES, credit);
			used_out = true;
		} else {
			if (take > units)
				take = units;
			gcry_md_write(c->md, buf, take * c->unit_bytes);
			c->units += take;
			if (c->units < whole)
				break;
			fn(arg, gcry_md_read(c->md, GCRY_MD_SHA256),
			    CONDITION_OUTPUT_BYTES, credit);
			gcry_md_reset(c->md);
			c->units = 0;
		}
		buf += take * c->unit_bytes;
		units -= take;
		c->outputs++;
	}
	if (used_out)
		explicit_bzero(out, sizeof out);
}
