/* SPDX-License-Identifier: MIT */
/*
 * The source modules compiled into the daemon. Each is written against
 * <entropyd/source.h> exactly as a drop-in would be, but exports its
 * descriptor instead of the entry symbol.
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
