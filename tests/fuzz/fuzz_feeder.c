/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the feeder's side of the frames (src/proto/feedproto.c,
 * src/feeder/feeder.c). The input is taken once as a single frame and once
 * as a stream of frames (each behind a 2-byte little-endian length). The
 * kernel ops check the ceiling on everything that reaches them: 1 to
 * FEEDPROTO_MAX_SEGMENT_BYTES bytes a call (one segment of an ADD), at most
 * 8 bits of credit a byte, and only what the feeder counted as accepted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "feeder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fuzz_adds, fuzz_bits;
static uint8_t fuzz_answer[FEEDPROTO_MAX_FRAME];

/* The kernel as the fuzzer sees it: anything past the ceiling is a bug. */
static int
fuzz_add(struct feeder *f, const uint8_t *buf, size_t len, unsigned credit_bits)
{
	if (len == 0 || len > FEEDPROTO_MAX_SEGMENT_BYTES ||
	    (uint64_t)credit_bits > 8u * (uint64_t)len)
		abort();
	fuzz_adds++;
	fuzz_bits += credit_bits;
	return 0;
}

static int
fuzz_mix(struct feeder *f, const uint8_t *buf, size_t len)
{
	if (len > FEEDPROTO_MAX_PAYLOAD)
		abort();
	return 0;
}

static int
fuzz_reseed(struct feeder *f)
{
	return 0;
}

static int
fuzz_crng_ready(struct feeder *f)
{
	return 1;
}

static int
fuzz_entropy_avail(struct feeder *f)
{
	return 256;
}

static const struct feeder_kernel_ops fuzz_ops = {
	.add = fuzz_add, .mix = fuzz_mix, .reseed = fuzz_reseed,
	.crng_ready = fuzz_crng_ready, .entropy_avail = fuzz_entropy_avail,
};

/* One frame in a private buffer of exactly its length, so ASan sees overreads. */
static enum feedproto_refusal
fuzz_frame(struct feeder *f, const uint8_t *p, size_t len)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);
	struct feedproto_frame fr;
	enum feedproto_refusal r;
	size_t alen, n;

	memcpy(copy, p, len);
	/* What decodes re-encodes to the same bytes. */
	if (feedproto_decode(copy, len, false, &fr) == FEEDPROTO_OK) {
		uint8_t again[FEEDPROTO_MAX_FRAME];

		n = feedproto_encode(again, sizeof again, fr.type, fr.arg0, fr.arg1, fr.payload,
		    fr.len);
		if (n != len || memcmp(again, copy, len) != 0)
			abort();
	}
	r = feeder_handle(f, copy, len, false, fuzz_answer, &alen);
	if ((r == FEEDPROTO_OK) != (alen > 0))
		abort(); /* an answer exactly for what was accepted */
	free(copy);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feeder f;
	size_t off = 0;

	feeder_init(&f, &fuzz_ops);
	fuzz_adds = fuzz_bits = 0;
	(void)fuzz_frame(&f, data, size);
	while (size - off >= 2) {
		size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;

		off += 2;
		if (len > size - off)
			len = size - off;
		(void)fuzz_frame(&f, data + off, len);
		off += len;
	}
	/* The feeder's counters are exactly what reached the kernel. */
	if (f.state.adds != fuzz_adds || f.state.bits_credited != fuzz_bits)
		abort();
	return 0;
}
