/* SPDX-License-Identifier: MIT */
/*
 * The hwrng source's credit policy, a pure function exposed for its tests:
 * what the kernel's current hwrng (rng_current) is credited per byte.
 */
#ifndef ENTROPYD_HWRNG_H
#define ENTROPYD_HWRNG_H

/* rng_current of a TPM (drivers/char/tpm names it tpm-rng-N) and of virtio-rng. */
#define HWRNG_TPM_PREFIX "tpm-rng"
#define HWRNG_VIRTIO_PREFIX "virtio_rng"
/* The TPM's figure: what the tpm source credits a TPM unless vouched for. */
#define HWRNG_TPM_BITS 0.0

/*
 * Bits per byte for the current hwrng named current, whose driver declares
 * quality (0..1024, or -1 when the kernel does not say); *why says why.
 */
double hwrng_policy_bits(const char *current, long quality, const char **why);

#endif
