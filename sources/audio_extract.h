/* SPDX-License-Identifier: MIT */
/*
 * The audio source's signal path, free of ALSA: decode native PCM into
 * integers, judge each second of signal (silence, clipping, a pure tone),
 * and extract and debias the low-order bits into raw samples.
 */
#ifndef ENTROPYD_AUDIO_EXTRACT_H
#define ENTROPYD_AUDIO_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <entropyd/source.h>

#define AUDIO_MAX_CHANNELS 8
#define AUDIO_BITS_MIN 1
#define AUDIO_BITS_MAX 4
/* Silence: fewer than this many sample changes per thousand. */
#define AUDIO_SILENCE_PERMILLE 10
/* Clipping: at least this many samples per thousand at full scale. */
#define AUDIO_CLIP_PERMILLE 10
/*
 * A pure tone: the residual of an order-2 linear predictor is below this
 * many LSB RMS (rounding alone leaves at most 0.71; white noise of s LSB
 * leaves about s).
 */
#define AUDIO_TONE_RESIDUAL_LSB 0.85

/* The module's options (shared by the ALSA module and the stub without it). */
extern const struct entropyd_option audio_options[];

/* How a native sample is laid out. */
struct audio_format {
	unsigned bytes;   /* 2, 3 or 4 per sample */
	unsigned sbits;   /* significant bits, at the top of the sample */
	unsigned width;   /* bits of the sample value (24 for S24_LE in 4 bytes) */
	bool big_endian;
};

enum audio_cause {
	AUDIO_SIGNAL_OK,
	AUDIO_SILENCE,
	AUDIO_CLIPPING,
	AUDIO_REPEAT,
	AUDIO_TONE,
};

/* One channel's statistics over a window. */
struct audio_channel {
	uint64_t samples;
	uint64_t changes;        /* consecutive samples that differ */
	uint64_t nonzero;
	uint64_t clipped;        /* at the format's minimum or maximum */
	int32_t prev;
	bool have_prev;
	double residual_sq;      /* order-2 prediction residual energy */
	uint64_t residual_n;
	double a1_sum;           /* for the tone's frequency */
	uint64_t fits;
};

/* The checks over a window of frames. */
struct audio_check {
	unsigned channels;
	unsigned sbits;
	uint64_t frames;
	uint64_t chunks, repeats; /* chunks identical to the one before */
	uint64_t last_hash;
	size_t last_frames;
	size_t repeat_frames;   /* the length of a chunk that repeated */
	struct audio_channel ch[AUDIO_MAX_CHANNELS];
};

/* Low-order bit extraction with von Neumann debiasing per bit plane. */
struct audio_extract {
	unsigned bits;     /* low-order bits taken per sample */
	bool debias;       /* von Neumann on pairs of consecutive samples */
	unsigned channels;
	uint32_t acc;      /* debiased bits not yet a whole sample */
	unsigned acc_bits;
	uint64_t copies;   /* samples left out: a channel repeated a lower one */
};

/* Parse the bits option: 0, or -1 with a reason in err. */
int audio_parse_bits(const char *, unsigned *bits, char *err, size_t errlen);
/* Parse the debias option ("vonneumann" or "none"). */
int audio_parse_debias(const char *, bool *debias, char *err, size_t errlen);

/* Decode n samples of native PCM to signed values in units of the least significant bit. */
void audio_decode(const struct audio_format *, const uint8_t *pcm, size_t n, int32_t *out);

void audio_check_init(struct audio_check *, unsigned channels, unsigned sbits);
/*
 * Add a chunk of interleaved frames (decoded: one period as read) to the
 * window's statistics.
 */
void audio_check_frames(struct audio_check *, const int32_t *samples, size_t frames);
/*
 * Judge the window: AUDIO_SIGNAL_OK, or the cause with a description in
 * why ("all samples zero for 1.0 s"). Silence outranks clipping, which
 * outranks a repeating signal, which outranks a tone.
 */
enum audio_cause audio_check_verdict(const struct audio_check *, unsigned rate, char *why,
    size_t whylen);
const char *audio_cause_name(enum audio_cause);

void audio_extract_init(struct audio_extract *, unsigned bits, bool debias, unsigned channels);
/*
 * Extract raw samples (one byte each, values below 2^bits) from interleaved
 * frames into out, which holds at least frames * channels bytes; returns
 * how many. With debiasing an odd last frame is dropped. A channel equal
 * to a lower one in every frame of the chunk (mono duplicated into
 * stereo) adds nothing and is left out, counted in copies.
 */
size_t audio_extract_frames(struct audio_extract *, const int32_t *samples, size_t frames,
    uint8_t *out);

#endif
