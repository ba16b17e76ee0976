/* SPDX-License-Identifier: MIT */
/*
 * audio-gen KIND SECONDS: write a synthetic capture to stdout as raw S16_LE,
 * mono, 48 kHz, for the audio source's tests to replay through ALSA's file
 * plugin. Deterministic (a fixed seed), so a failure can be reproduced.
 *   noise    a 440 Hz tone plus Gaussian noise of 4 LSB RMS, like a recording
 *   tone     a pure 1000.5 Hz tone, no noise
 *   clipped  a 440 Hz tone overdriven past full scale, plus noise
 *   silence  digital silence
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#define GEN_RATE 48000

static uint64_t gen_seed = 0x656e74726f707964ull;

/* splitmix64: a fixed-seed generator, good enough for test noise. */
static uint64_t
gen_next(void)
{
	uint64_t z = (gen_seed += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Roughly Gaussian with unit variance: the sum of 12 uniforms, less 6. */
static double
gen_gauss(void)
{
	double sum = 0;
	int i;

	for (i = 0; i < 12; i++)
		sum += (double)(gen_next() >> 11) / 9007199254740992.0;
	return sum - 6;
}

int
main(int argc, char **argv)
{
	const char *kind;
	long seconds, n, i;
	double amp = 0, hz = 440, noise = 0, v;

	if (argc != 3 || (seconds = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: audio-gen noise|tone|clipped|silence SECONDS\n");
		return EX_USAGE;
	}
	kind = argv[1];
	if (strcmp(kind, "noise") == 0) {
		amp = 3000;
		noise = 4;
	} else if (strcmp(kind, "tone") == 0) {
		amp = 10000;
		hz = 1000.5;
	} else if (strcmp(kind, "clipped") == 0) {
		amp = 60000;
		noise = 4;
	} else if (strcmp(kind, "silence") != 0) {
		fprintf(stderr, "audio-gen: %s: unknown kind\n", kind);
		return EX_USAGE;
	}
	n = seconds * GEN_RATE;
	for (i = 0; i < n; i++) {
		uint8_t le[2];
		long s;

		v = amp * sin(2 * M_PI * hz * (double)i / GEN_RATE);
		if (noise > 0)
			v += noise * gen_gauss();
		s = lround(v);
		s = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
		le[0] = (uint8_t)((uint16_t)s & 0xff);
		le[1] = (uint8_t)((uint16_t)s >> 8);
		if (fwrite(le, 1, 2, stdout) != 2) {
			perror("audio-gen");
			return EX_IOERR;
		}
	}
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}
