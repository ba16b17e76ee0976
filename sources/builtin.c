/* SPDX-License-Identifier: MIT */
/*
 * The table of built-in source modules, in the order the registry probes
 * them.
 */
#include <stddef.h>

#include "builtin.h"

/* The source modules compiled into the daemon, in probe order. */
const struct entropyd_source *const builtin_sources[] = {
	&hwrng_source,
	&file_source,
	&tpm_source,
	&rdseed_source,
	&rdrand_source,
	&jitter_source,
	&audio_source,
	&usb_source,
	&chaoskey_raw_source,
	NULL,
};
