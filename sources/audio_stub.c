/* SPDX-License-Identifier: MIT */
/*
 * audio, in a build without ALSA: the module is listed, takes its options,
 * and says why it cannot be used, instead of being missing without a word.
 */
#include <stddef.h>

#include "audio_extract.h"
#include "builtin.h"
#include <entropyd/source.h>

/* There is no device to find: say why. */
static int
audio_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	host->unusable(module, "entropyd was built without ALSA (libasound)");
	return 0;
}

/* Never called: probe adds no instance. */
static int
audio_open(struct entropyd_instance *inst, void **state)
{
	return -1;
}

/* Never called either. */
static ssize_t
audio_read(void *state, void *buf, size_t len)
{
	return ENTROPYD_READ_ERROR;
}

/* Never called either. */
static int
audio_pollfd(void *state)
{
	return -1;
}

/* Never called either. */
static void
audio_close(void *state)
{
}

const struct entropyd_source audio_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "audio",
	.description = "ALSA capture noise (not built: no ALSA)",
	.flags = ENTROPYD_SOURCE_RAW_SAMPLES,
	.entropy_bits = 0.5,
	.sample_bits = AUDIO_BITS_MAX,
	.options = audio_options,
	.probe = audio_probe,
	.open = audio_open,
	.read = audio_read,
	.pollfd = audio_pollfd,
	.close = audio_close,
};
