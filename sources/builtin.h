/* SPDX-License-Identifier: MIT */
/*
 * The source modules compiled into the daemon. Each is written against
 * <entropyd/source.h> as a drop-in would be and exports its descriptor
 * instead of the entry symbol; hwrng, file, tpm and x86rng need nothing
 * else. Three are internal and use a little of the daemon's own code,
 * which a drop-in could not: jitter (its start-up estimate, from
 * src/health/estimate.h), audio (numeric.h, and libasound loaded on first
 * use through lazylib.h), usb (libusb loaded on first use through
 * lazylib.h).
 */
#ifndef ENTROPYD_BUILTIN_H
#define ENTROPYD_BUILTIN_H

#include <entropyd/source.h>

extern const struct entropyd_source hwrng_source, file_source;
extern const struct entropyd_source tpm_source;
extern const struct entropyd_source rdseed_source, rdrand_source, jitter_source;
extern const struct entropyd_source audio_source;
/* sources/usb.c */
extern const struct entropyd_source usb_source, chaoskey_raw_source;
/* Every built-in, NULL-terminated (src/builtin.c). */
extern const struct entropyd_source *const builtin_sources[];

#endif
