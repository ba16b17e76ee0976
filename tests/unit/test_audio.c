/* SPDX-License-Identifier: MIT */
/*
 * The audio source's signal path on synthetic buffers: decoding native
 * formats, the silence, clipping, repeat and tone checks, and low-order
 * bit extraction with von Neumann debiasing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "audio_extract.h"

#define RATE 48000
#define CHUNK 1024

static uint64_t seed;

/* A fixed-seed generator (splitmix64), so every run sees the same signal. */
static uint64_t
next(void)
{
	uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Roughly Gaussian, unit variance. */
static double
gauss(void)
{
	double sum = 0;
	int i;

	for (i = 0; i < 12; i++)
		sum += (double)(next() >> 11) / 9007199254740992.0;
	return sum - 6;
}

/* One second of a tone of amp at hz plus noise of sigma LSB, clipped to 16 bits. */
static void
signal16(int32_t *out, size_t n, double offset, double amp, double hz, double sigma)
{
	size_t i;

	seed = 42;
	for (i = 0; i < n; i++) {
		double v = offset + amp * sin(2 * M_PI * hz * (double)i / RATE) + sigma * gauss();
		long s = lround(v);

		out[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : (int32_t)s;
	}
}

/* Run a second of mono samples through the checks, a period at a time. */
static enum audio_cause
judge(const int32_t *s, size_t n, unsigned sbits, char *why, size_t whylen)
{
	struct audio_check c;
	size_t i;

	audio_check_init(&c, 1, sbits);
	for (i = 0; i < n; i += CHUNK)
		audio_check_frames(&c, s + i, n - i < CHUNK ? n - i : CHUNK);
	return audio_check_verdict(&c, RATE, why, whylen);
}

static int32_t sig[RATE * 2];
static char why[256];

Test(audio, options)
{
	unsigned bits = 0;
	bool debias = false;
	char err[128];

	cr_assert_eq(audio_parse_bits("3", &bits, err, sizeof err), 0);
	cr_assert_eq(bits, 3);
	cr_assert_eq(audio_parse_bits("0", &bits, err, sizeof err), -1);
	cr_assert_str_eq(err, "audio: bits: 0: not a number from 1 to 4");
	cr_assert_eq(audio_parse_bits("5", &bits, err, sizeof err), -1);
	cr_assert_eq(audio_parse_bits("2x", &bits, err, sizeof err), -1);
	cr_assert_eq(audio_parse_bits("", &bits, err, sizeof err), -1);
	cr_assert_eq(audio_parse_debias("vonneumann", &debias, err, sizeof err), 0);
	cr_assert(debias);
	cr_assert_eq(audio_parse_debias("none", &debias, err, sizeof err), 0);
	cr_assert_not(debias);
	cr_assert_eq(audio_parse_debias("xor", &debias, err, sizeof err), -1);
	cr_assert_str_eq(err, "audio: debias: xor: not vonneumann or none");
}

Test(audio, decode_native_formats)
{
	static const uint8_t s16le[] = { 0x34, 0x12, 0xff, 0xff, 0x00, 0x80 };
	static const uint8_t s16be[] = { 0x12, 0x34, 0xff, 0xfe };
	static const uint8_t s24_3le[] = { 0x01, 0x00, 0x80, 0xff, 0xff, 0x7f };
	static const uint8_t s24le[] = { 0xfe, 0xff, 0xff, 0x00 };
	static const uint8_t s32le_24[] = { 0x00, 0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff };
	struct audio_format f16 = { .bytes = 2, .sbits = 16, .width = 16 };
	struct audio_format f16be = { .bytes = 2, .sbits = 16, .width = 16, .big_endian = true };
	struct audio_format f24_3 = { .bytes = 3, .sbits = 24, .width = 24 };
	struct audio_format f24 = { .bytes = 4, .sbits = 24, .width = 24 };
	struct audio_format f32_24 = { .bytes = 4, .sbits = 24, .width = 32 };
	int32_t out[3];

	audio_decode(&f16, s16le, 3, out);
	cr_assert(out[0] == 0x1234 && out[1] == -1 && out[2] == -32768);
	audio_decode(&f16be, s16be, 2, out);
	cr_assert(out[0] == 0x1234 && out[1] == -2);
	audio_decode(&f24_3, s24_3le, 2, out);
	cr_assert(out[0] == -8388607 && out[1] == 8388607, "%d %d", out[0], out[1]);
	/* S24_LE: 24 bits in the low three bytes of four; the top byte is ignored. */
	audio_decode(&f24, s24le, 1, out);
	cr_assert_eq(out[0], -2);
	/* 24 significant bits in S32: the padding below them is dropped. */
	audio_decode(&f32_24, s32le_24, 2, out);
	cr_assert(out[0] == 1 && out[1] == -1, "%d %d", out[0], out[1]);
}

Test(audio, extract_without_debiasing_keeps_the_low_bits)
{
	static const int32_t s[] = { 0x1235, -1, 4, 7, -4 };
	struct audio_extract x;
	uint8_t out[8];

	audio_extract_init(&x, 2, false, 1);
	cr_assert_eq(audio_extract_frames(&x, s, 5, out), 5);
	cr_assert(out[0] == 1 && out[1] == 3 && out[2] == 0 && out[3] == 3 && out[4] == 0);
}

Test(audio, von_neumann_pairs)
{
	/* bit 0 pairs: (0,1) gives 0, (1,0) gives 1, (1,1) and (0,0) nothing. */
	static const int32_t s[] = { 0, 1, 1, 0, 1, 1, 0, 0, 3, 0, 5 };
	struct audio_extract x;
	uint8_t out[16];

	audio_extract_init(&x, 1, true, 1);
	cr_assert_eq(audio_extract_frames(&x, s, 11, out), 3, "the odd last frame is dropped");
	cr_assert(out[0] == 0 && out[1] == 1 && out[2] == 1);
	/* Two bit planes: (3,0) gives bits 1,1 = sample 3; (2,1) gives 0,1 = 1. */
	{
		static const int32_t t[] = { 3, 0, 2, 1, 2, 2 };

		audio_extract_init(&x, 2, true, 1);
		cr_assert_eq(audio_extract_frames(&x, t, 6, out), 2);
		cr_assert(out[0] == 3 && out[1] == 1, "%u %u", out[0], out[1]);
	}
}

Test(audio, von_neumann_removes_bias_and_yields_nothing_from_constants)
{
	static int32_t s[20000];
	static uint8_t out[20000];
	struct audio_extract x;
	size_t i, n, ones = 0;

	seed = 7;
	/* Bit 0 set four times in five. */
	for (i = 0; i < 20000; i++)
		s[i] = next() % 5 != 0;
	audio_extract_init(&x, 1, true, 1);
	n = audio_extract_frames(&x, s, 20000, out);
	for (i = 0; i < n; i++)
		ones += out[i];
	/* Expected 10000 * 2 * 0.8 * 0.2 = 3200 bits out, half of them ones. */
	cr_assert(n > 2900 && n < 3500, "%zu bits", n);
	cr_assert(ones * 100 > n * 46 && ones * 100 < n * 54, "%zu ones of %zu", ones, n);
	for (i = 0; i < 20000; i++)
		s[i] = 12345;
	cr_assert_eq(audio_extract_frames(&x, s, 20000, out), 0);
}

Test(audio, stereo_pairs_within_each_channel)
{
	/* Frames (L,R): (0,1) then (1,1): L gives 0, R nothing. */
	static const int32_t s[] = { 0, 1, 1, 1 };
	struct audio_extract x;
	uint8_t out[4];

	audio_extract_init(&x, 1, true, 2);
	cr_assert_eq(audio_extract_frames(&x, s, 2, out), 1);
	cr_assert_eq(out[0], 0);
}

Test(audio, a_channel_copying_a_lower_one_is_left_out)
{
	static int32_t mono[4000], stereo[8000], quad[16000];
	static uint8_t want[8000], out[16000];
	struct audio_extract x;
	size_t i, n;
	int debias;

	seed = 11;
	for (i = 0; i < 4000; i++)
		mono[i] = (int32_t)(next() % 4096) - 2048;
	for (debias = 0; debias <= 1; debias++) {
		audio_extract_init(&x, 2, debias, 1);
		n = audio_extract_frames(&x, mono, 4000, want);
		cr_assert_gt(n, 0);
		/* Mono duplicated into stereo gives exactly what the mono gives. */
		for (i = 0; i < 4000; i++)
			stereo[2 * i] = stereo[2 * i + 1] = mono[i];
		audio_extract_init(&x, 2, debias, 2);
		cr_assert_eq(audio_extract_frames(&x, stereo, 4000, out), n);
		cr_assert_eq(memcmp(out, want, n), 0);
		cr_assert_eq(x.copies, 4000);
		/* Four channels: two copies of 0 and one of 1 leave two channels. */
		for (i = 0; i < 4000; i++) {
			quad[4 * i] = quad[4 * i + 2] = mono[i];
			quad[4 * i + 1] = quad[4 * i + 3] = mono[(i + 1) % 4000] ^ 1;
		}
		audio_extract_init(&x, 2, debias, 4);
		n = audio_extract_frames(&x, quad, 4000, out);
		cr_assert_eq(x.copies, 8000);
		audio_extract_init(&x, 2, debias, 2);
		for (i = 0; i < 4000; i++) {
			stereo[2 * i] = quad[4 * i];
			stereo[2 * i + 1] = quad[4 * i + 1];
		}
		cr_assert_eq(audio_extract_frames(&x, stereo, 4000, want), n);
		cr_assert_eq(x.copies, 0, "distinct channels are both used");
		cr_assert_eq(memcmp(out, want, n), 0);
	}
	/* One differing frame in the chunk keeps the channel. */
	for (i = 0; i < 4000; i++)
		stereo[2 * i] = stereo[2 * i + 1] = mono[i];
	stereo[2 * 1234 + 1] ^= 1;
	audio_extract_init(&x, 2, false, 2);
	cr_assert_eq(audio_extract_frames(&x, stereo, 4000, out), 8000);
	cr_assert_eq(x.copies, 0);
}

Test(audio, noise_passes)
{
	signal16(sig, RATE, 0, 3000, 440, 4);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SIGNAL_OK, "%s", why);
	signal16(sig, RATE, -120, 0, 0, 1.5);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SIGNAL_OK, "%s", why);
}

Test(audio, digital_silence)
{
	memset(sig, 0, sizeof sig);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SILENCE);
	cr_assert_str_eq(why, "all samples zero for 1.0 s");
	cr_assert_str_eq(audio_cause_name(AUDIO_SILENCE), "silence");
}

Test(audio, constant_and_near_constant_are_silence)
{
	size_t i;

	for (i = 0; i < RATE; i++)
		sig[i] = -3;
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SILENCE);
	cr_assert_str_eq(why, "one constant value for 1.0 s");
	/* A sample in 200 flickers by one: 1% of samples change. */
	for (i = 0; i < RATE; i++)
		sig[i] = i % 400 == 0 ? 1 : 0;
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SILENCE);
	cr_assert_str_eq(why, "near-constant: 0.5% of samples change over 1.0 s");
}

Test(audio, clipping)
{
	signal16(sig, RATE, 0, 60000, 440, 4);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_CLIPPING);
	cr_assert(strstr(why, "% of samples at full scale over 1.0 s") != NULL, "%s", why);
	cr_assert_str_eq(audio_cause_name(AUDIO_CLIPPING), "clipping");
}

Test(audio, clipping_at_the_significant_bits_full_scale)
{
	size_t i;

	/* 24 significant bits: +-32767 is far from full scale, +-2^23 is at it. */
	signal16(sig, RATE, 0, 20000, 440, 4);
	cr_assert_eq(judge(sig, RATE, 24, why, sizeof why), AUDIO_SIGNAL_OK, "%s", why);
	for (i = 0; i < RATE; i += 50)
		sig[i] = i % 100 ? 8388607 : -8388608;
	cr_assert_eq(judge(sig, RATE, 24, why, sizeof why), AUDIO_CLIPPING, "%s", why);
}

Test(audio, pure_tone)
{
	signal16(sig, RATE, 0, 10000, 1000, 0);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_TONE);
	cr_assert(strncmp(why, "about 1000 Hz, predictable to 0.", 32) == 0, "%s", why);
	cr_assert_str_eq(audio_cause_name(AUDIO_TONE), "pure tone");
}

Test(audio, pure_tone_on_an_offset_and_at_any_pitch)
{
	static const double hz[] = { 50, 440, 3000.7, 15001.3 };
	size_t i;

	for (i = 0; i < sizeof hz / sizeof hz[0]; i++) {
		signal16(sig, RATE, 1234, 20000, hz[i], 0);
		cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_TONE, "%g Hz: %s",
		    hz[i], why);
	}
}

Test(audio, a_noisy_tone_is_not_a_pure_one)
{
	signal16(sig, RATE, 0, 10000, 1000, 1);
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_SIGNAL_OK, "%s", why);
}

Test(audio, a_repeated_period)
{
	size_t i;

	signal16(sig, CHUNK, 0, 0, 0, 50);
	for (i = CHUNK; i < RATE; i++)
		sig[i] = sig[i % CHUNK];
	cr_assert_eq(judge(sig, RATE, 16, why, sizeof why), AUDIO_REPEAT);
	cr_assert_str_eq(why, "the same 1024 frames over and over for 1.0 s");
	cr_assert_str_eq(audio_cause_name(AUDIO_REPEAT), "repeating signal");
}

Test(audio, the_worst_channel_is_named)
{
	struct audio_check c;
	size_t i;

	/* Left: noise; right: digital silence. */
	signal16(sig, RATE, 0, 0, 0, 8);
	for (i = 0; i < RATE; i++) {
		sig[RATE + 2 * (i % (RATE / 2))] = sig[i];
		sig[RATE + 2 * (i % (RATE / 2)) + 1] = 0;
	}
	audio_check_init(&c, 2, 16);
	for (i = 0; i < RATE / 2; i += CHUNK / 2)
		audio_check_frames(&c, sig + RATE + 2 * i, RATE / 2 - i < CHUNK / 2 ? RATE / 2 - i :
		    CHUNK / 2);
	cr_assert_eq(audio_check_verdict(&c, RATE, why, sizeof why), AUDIO_SILENCE);
	cr_assert_str_eq(why, "channel 2: all samples zero for 0.5 s");
}
