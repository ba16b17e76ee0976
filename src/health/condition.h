/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CONDITION_H
#define ENTROPYD_CONDITION_H

#include <stddef.h>
#include <stdint.h>

#include <gcrypt.h>

/*
 * SHA-256 conditioning with SP 800-90B 3.1.5 accounting: an output is taken
 * only once the hash has absorbed CONDITION_INPUT_BITS of assessed
 * min-entropy, so every output is full entropy (256 bits credited). With no
 * assessed entropy (an uncredited source) an output is taken per
 * CONDITION_UNCREDITED_BYTES of input and credited nothing.
 */
#define CONDITION_OUTPUT_BYTES 32
#define CONDITION_OUTPUT_BITS 256
#define CONDITION_INPUT_BITS (CONDITION_OUTPUT_BITS + 64)
#define CONDITION_UNCREDITED_BYTES 64

struct conditioner {
	gcry_md_hd_t md;
	double unit_bits;      /* assessed min-entropy per input unit */
	size_t unit_bytes;     /* 1 for bytes; 1 or 2 for raw samples */
	size_t units_per_output; /* input units needed for one output */
	size_t units;          /* units absorbed since the last output */
	uint64_t outputs;      /* outputs taken */
};

/* Receives each output and the bits it may be credited with. */
typedef void (*condition_output_fn)(void *arg, const uint8_t *out, size_t len,
    unsigned credit_bits);

/* Initialise libgcrypt once per process. */
void condition_global_init(void);
/* Units needed for one full-entropy output at unit_bits each (0: uncredited). */
size_t condition_units_per_output(double unit_bits, size_t unit_bytes);
void condition_init(struct conditioner *, double unit_bits, size_t unit_bytes);
void condition_free(struct conditioner *);
/* Forget what was absorbed but not yet output (after a health failure). */
void condition_discard(struct conditioner *);
/* Absorb len bytes (whole units), handing each finished output to fn. */
void condition_input(struct conditioner *, const uint8_t *buf, size_t len,
    condition_output_fn fn, void *arg);

#endif
