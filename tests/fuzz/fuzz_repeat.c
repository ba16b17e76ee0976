/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the repeated-output test over hostile input, fed in pieces
 * whose sizes the input chooses. Every byte comes out once, unchanged and
 * in order, and every byte of a stretch that repeats earlier input for at
 * least repeat_min_caught() bytes comes out marked.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "repeat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX 1024

static uint8_t fuzz_out[FUZZ_MAX];
static uint8_t fuzz_marked[FUZZ_MAX];
static size_t fuzz_len;

/* Collect what the test hands on. */
static void
fuzz_release(void *arg, const uint8_t *buf, size_t len, bool repeated)
{
	if (fuzz_len + len > FUZZ_MAX)
		abort();
	memcpy(fuzz_out + fuzz_len, buf, len);
	memset(fuzz_marked + fuzz_len, repeated, len);
	fuzz_len += len;
}

/* Input: a mode byte (bytes, or raw samples of 1 or 2 bytes), a piece-size seed, the data. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct repeat r;
	const uint8_t *in;
	size_t len, off = 0, i, j, need;
	unsigned seed;

	if (size < 2 || size - 2 > FUZZ_MAX)
		return 0;
	if (data[0] % 3 == 0)
		repeat_init_bytes(&r);
	else
		repeat_init_samples(&r, data[0] % 3, (double)(data[0] / 3 % 17) / 2);
	seed = data[1];
	in = data + 2;
	len = size - 2;
	fuzz_len = 0;
	while (off < len) {
		size_t n = 1 + (seed = seed * 1103515245u + 12345u) % 97;

		if (n > len - off)
			n = len - off;
		repeat_input(&r, in + off, n, fuzz_release, NULL);
		off += n;
	}
	repeat_flush(&r, fuzz_release, NULL);
	if (fuzz_len != len || memcmp(fuzz_out, in, len) != 0)
		abort();
	need = repeat_min_caught(&r);
	for (i = 1; i + need <= len; i++)
		for (j = 0; j < i; j++)
			if (memcmp(in + i, in + j, need) == 0) {
				if (memchr(fuzz_marked + i, 0, need) != NULL)
					abort(); /* a repeat the test promises to catch got through */
				break;
			}
	repeat_free(&r);
	return 0;
}
