/* SPDX-License-Identifier: MIT */
/*
 * The built-in rdrand source (sources/x86rng.c, compiled unchanged) as a
 * drop-in named "rdrandplug", so make bench can put the same module's
 * read() through a plugin host and compare it with the module alone, as
 * its pipeline line does for the built-in.
 */
#include "x86rng.c"

static struct entropyd_source rdrandplug_source;

const struct entropyd_source *
entropyd_source_entry(void)
{
	rdrandplug_source = rdrand_source;
	rdrandplug_source.name = "rdrandplug";
	rdrandplug_source.description = "the rdrand source, as a drop-in (make bench)";
	return &rdrandplug_source;
}
