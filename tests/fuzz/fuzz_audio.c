/* SPDX-License-Identifier: MIT */
/* libFuzzer: audio decoding, signal checks and low-bit extraction (sources/audio_extract.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "audio_extract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bytes 0-1 choose the format and extraction; the rest is PCM. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct audio_format formats[] = {
		{ .bytes = 2, .sbits = 16, .width = 16 },
		{ .bytes = 2, .sbits = 16, .width = 16, .big_endian = true },
		{ .bytes = 3, .sbits = 24, .width = 24 },
		{ .bytes = 4, .sbits = 24, .width = 24 },
		{ .bytes = 4, .sbits = 32, .width = 32 },
		{ .bytes = 4, .sbits = 32, .width = 32, .big_endian = true },
	};
	const struct audio_format *f;
	struct audio_check check;
	struct audio_extract x;
	unsigned channels, bits;
	size_t n, frames, got;
	int32_t *samples;
	uint8_t *out;
	char why[256];

	if (size < 2 || size > 65536)
		return 0;
	f = &formats[data[0] % (sizeof formats / sizeof formats[0])];
	channels = 1 + (data[0] >> 4) % AUDIO_MAX_CHANNELS;
	bits = 1 + data[1] % 8;
	data += 2;
	size -= 2;
	n = size / f->bytes;
	frames = n / channels;
	n = frames * channels;
	samples = malloc((n + 1) * sizeof *samples);
	out = malloc(n * 2 + 16);
	audio_decode(f, data, n, samples);
	audio_check_init(&check, channels, f->sbits);
	audio_check_frames(&check, samples, frames);
	(void)audio_check_verdict(&check, 48000, why, sizeof why);
	audio_extract_init(&x, bits, (data[-1] & 0x80) != 0, channels);
	got = audio_extract_frames(&x, samples, frames, out);
	if (got > n * 2 + 16)
		abort();
	free(samples);
	free(out);
	return 0;
}
