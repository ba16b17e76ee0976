/* SPDX-License-Identifier: MIT */
/*
 * The audio source's signal path, free of ALSA so that it can be tested on
 * synthetic buffers. The checks look at the whole native sample; extraction
 * keeps only its low-order bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_extract.h"
#include "numeric.h"

/* Frames a chunk needs before the tone check fits a predictor to it. */
#define AUDIO_FIT_MIN_FRAMES 16

const struct entropyd_option audio_options[] = {
	{ "device", "hw:0", "the ALSA capture PCM (a hw: device: no plug or resampling layers)" },
	{ "bits", "2", "low-order bits taken from each sample, 1..4" },
	{ "debias", "vonneumann", "vonneumann (pairs of consecutive samples) or none" },
	{ NULL, NULL, NULL }
};

static const char *const audio_cause_names[] = {
	[AUDIO_SIGNAL_OK] = "signal",
	[AUDIO_SILENCE] = "silence",
	[AUDIO_CLIPPING] = "clipping",
	[AUDIO_REPEAT] = "repeating signal",
	[AUDIO_TONE] = "pure tone",
};

/* The bits option: 1 to 4. */
int
audio_parse_bits(const char *s, unsigned *bits, char *err, size_t errlen)
{
	char *end;
	long v;

	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < AUDIO_BITS_MIN || v > AUDIO_BITS_MAX) {
		snprintf(err, errlen, "audio: bits: %s: not a number from %d to %d", s,
		    AUDIO_BITS_MIN, AUDIO_BITS_MAX);
		return -1;
	}
	*bits = (unsigned)v;
	return 0;
}

/* The debias option: vonneumann or none. */
int
audio_parse_debias(const char *s, bool *debias, char *err, size_t errlen)
{
	if (strcmp(s, "vonneumann") == 0)
		*debias = true;
	else if (strcmp(s, "none") == 0)
		*debias = false;
	else {
		snprintf(err, errlen, "audio: debias: %s: not vonneumann or none", s);
		return -1;
	}
	return 0;
}

/* Native bytes to signed integers in units of the least significant bit. */
void
audio_decode(const struct audio_format *fmt, const uint8_t *pcm, size_t n, int32_t *out)
{
	unsigned shift = 32 - fmt->width, pad = fmt->width - fmt->sbits, b;
	size_t i;

	for (i = 0; i < n; i++, pcm += fmt->bytes) {
		uint32_t v = 0;

		for (b = 0; b < fmt->bytes; b++) {
			unsigned at = fmt->big_endian ? fmt->bytes - 1 - b : b;

			v |= (uint32_t)pcm[at] << (8 * b);
		}
		/* Sign-extend from the value's width, then drop the padding below sbits. */
		out[i] = (int32_t)(v << shift) >> shift >> pad;
	}
}

/* Start a window of checks afresh. */
void
audio_check_init(struct audio_check *c, unsigned channels, unsigned sbits)
{
	memset(c, 0, sizeof *c);
	c->channels = channels > AUDIO_MAX_CHANNELS ? AUDIO_MAX_CHANNELS : channels;
	c->sbits = sbits;
}

/*
 * Fit x[n] = a1 x[n-1] + a2 x[n-2] + c to one channel of a chunk by least
 * squares and add its residual: a single sinusoid on any offset, or a
 * constant, is predicted to within rounding (0.71 LSB RMS at most); noise
 * is not.
 */
static void
audio_check_fit(struct audio_channel *ch, const int32_t *s, size_t frames, unsigned stride)
{
	double m0 = 0, m1 = 0, m2 = 0, s11 = 0, s22 = 0, s12 = 0, s01 = 0, s02 = 0;
	double det, a1 = 0, a2 = 0, count = (double)(frames - 2);
	size_t i;

	/* Centring each regressor on its own mean is the constant term c. */
	for (i = 2; i < frames; i++) {
		m0 += s[i * stride];
		m1 += s[(i - 1) * stride];
		m2 += s[(i - 2) * stride];
	}
	m0 /= count;
	m1 /= count;
	m2 /= count;
	for (i = 2; i < frames; i++) {
		double y0 = s[i * stride] - m0, y1 = s[(i - 1) * stride] - m1;
		double y2 = s[(i - 2) * stride] - m2;

		s11 += y1 * y1;
		s22 += y2 * y2;
		s12 += y1 * y2;
		s01 += y0 * y1;
		s02 += y0 * y2;
	}
	det = s11 * s22 - s12 * s12;
	if (det > 1e-12 * s11 * s22 && det > 0) {
		a1 = (s01 * s22 - s02 * s12) / det;
		a2 = (s02 * s11 - s01 * s12) / det;
	}
	for (i = 2; i < frames; i++) {
		double r = (s[i * stride] - m0) - a1 * (s[(i - 1) * stride] - m1) -
		    a2 * (s[(i - 2) * stride] - m2);

		ch->residual_sq += r * r;
	}
	ch->residual_n += frames - 2;
	ch->a1_sum += a1;
	ch->fits++;
}

/* FNV-1a over the samples, to spot a chunk that repeats the one before. */
static uint64_t
audio_check_hash(const int32_t *samples, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (uint32_t)samples[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Count changes, zeros and full-scale samples, fit the predictor, spot repeats. */
void
audio_check_frames(struct audio_check *c, const int32_t *samples, size_t frames)
{
	uint64_t hash;
	int64_t max = ((int64_t)1 << (c->sbits - 1)) - 1, min = -((int64_t)1 << (c->sbits - 1));
	unsigned k;
	size_t i;

	for (k = 0; k < c->channels; k++) {
		struct audio_channel *ch = &c->ch[k];

		for (i = 0; i < frames; i++) {
			int32_t v = samples[i * c->channels + k];

			if (ch->have_prev && v != ch->prev)
				ch->changes++;
			ch->prev = v;
			ch->have_prev = true;
			if (v != 0)
				ch->nonzero++;
			if (v >= max || v <= min)
				ch->clipped++;
		}
		ch->samples += frames;
		if (frames >= AUDIO_FIT_MIN_FRAMES)
			audio_check_fit(ch, samples + k, frames, c->channels);
	}
	/* A chunk that repeats the last one exactly: a loop, or a stuck buffer. */
	hash = audio_check_hash(samples, frames * c->channels);
	if (c->chunks > 0 && frames == c->last_frames && hash == c->last_hash) {
		c->repeats++;
		c->repeat_frames = frames;
	}
	c->chunks++;
	c->last_hash = hash;
	c->last_frames = frames;
	c->frames += frames;
}

/* One channel's verdict. */
static enum audio_cause
audio_check_channel(const struct audio_channel *ch, unsigned rate, double secs, char *why,
    size_t whylen)
{
	double rms, a1, hz;

	if (ch->samples == 0)
		return AUDIO_SIGNAL_OK;
	if (ch->changes * 1000 < AUDIO_SILENCE_PERMILLE * ch->samples) {
		if (ch->nonzero == 0)
			snprintf(why, whylen, "all samples zero for %.1f s", secs);
		else if (ch->changes == 0)
			snprintf(why, whylen, "one constant value for %.1f s", secs);
		else
			snprintf(why, whylen, "near-constant: %.1f%% of samples change over %.1f s",
			    100.0 * (double)ch->changes / (double)ch->samples, secs);
		return AUDIO_SILENCE;
	}
	if (ch->clipped * 1000 >= AUDIO_CLIP_PERMILLE * ch->samples) {
		snprintf(why, whylen, "%.1f%% of samples at full scale over %.1f s",
		    100.0 * (double)ch->clipped / (double)ch->samples, secs);
		return AUDIO_CLIPPING;
	}
	if (ch->residual_n > 0) {
		rms = numeric_sqrt(ch->residual_sq / (double)ch->residual_n);
		if (rms < AUDIO_TONE_RESIDUAL_LSB) {
			a1 = ch->a1_sum / (double)ch->fits / 2;
			a1 = a1 > 1 ? 1 : a1 < -1 ? -1 : a1;
			hz = numeric_acos(a1) * rate / (2 * M_PI);
			snprintf(why, whylen, "about %.0f Hz, predictable to %.2f LSB RMS, "
			    "for %.1f s", hz, rms, secs);
			return AUDIO_TONE;
		}
	}
	return AUDIO_SIGNAL_OK;
}

/* The window's verdict: the worst cause on any channel, then repeats. */
enum audio_cause
audio_check_verdict(const struct audio_check *c, unsigned rate, char *why, size_t whylen)
{
	double secs = rate ? (double)c->frames / rate : 0;
	enum audio_cause worst = AUDIO_SIGNAL_OK, cause;
	char line[256];
	unsigned k;

	/* The worst cause on whichever channel (the enum is in order of rank). */
	for (k = 0; k < c->channels; k++) {
		cause = audio_check_channel(&c->ch[k], rate, secs, line, sizeof line);
		if (cause == AUDIO_SIGNAL_OK || (worst != AUDIO_SIGNAL_OK && cause >= worst))
			continue;
		worst = cause;
		if (c->channels > 1)
			snprintf(why, whylen, "channel %u: %s", k + 1, line);
		else
			snprintf(why, whylen, "%s", line);
	}
	if (worst == AUDIO_SILENCE || worst == AUDIO_CLIPPING)
		return worst;
	if (c->chunks >= 4 && c->repeats * 2 >= c->chunks) {
		snprintf(why, whylen, "the same %zu frames over and over for %.1f s",
		    c->repeat_frames, secs);
		return AUDIO_REPEAT;
	}
	return worst;
}

/* The cause as the log names it. */
const char *
audio_cause_name(enum audio_cause cause)
{
	return audio_cause_names[cause];
}

/* Start extracting with no debiased bits pending. */
void
audio_extract_init(struct audio_extract *x, unsigned bits, bool debias, unsigned channels)
{
	memset(x, 0, sizeof *x);
	x->bits = bits;
	x->debias = debias;
	x->channels = channels;
}

/* Add one debiased bit; a sample is out once bits of them are in. */
static size_t
audio_extract_bit(struct audio_extract *x, unsigned bit, uint8_t *out)
{
	x->acc = x->acc << 1 | bit;
	if (++x->acc_bits < x->bits)
		return 0;
	*out = (uint8_t)x->acc;
	x->acc = 0;
	x->acc_bits = 0;
	return 1;
}

/* Whether channel k repeats a lower channel in every frame of the chunk. */
static bool
audio_extract_is_copy(const struct audio_extract *x, const int32_t *samples, size_t frames,
    unsigned k)
{
	unsigned j;
	size_t i;

	for (j = 0; j < k; j++) {
		for (i = 0; i < frames; i++)
			if (samples[i * x->channels + k] != samples[i * x->channels + j])
				break;
		if (i == frames)
			return true;
	}
	return false;
}

/* Low bits of each sample, as they are or debiased, as one-byte raw samples. */
size_t
audio_extract_frames(struct audio_extract *x, const int32_t *samples, size_t frames,
    uint8_t *out)
{
	uint32_t mask = (1u << x->bits) - 1;
	bool copy[AUDIO_MAX_CHANNELS] = { false };
	size_t i, n = 0;
	unsigned k, j;

	if (frames == 0)
		return 0;
	for (k = 1; k < x->channels; k++)
		if ((copy[k] = audio_extract_is_copy(x, samples, frames, k)))
			x->copies += frames;
	if (!x->debias) {
		for (i = 0; i < frames; i++)
			for (k = 0; k < x->channels; k++)
				if (!copy[k])
					out[n++] = (uint8_t)((uint32_t)samples[i * x->channels + k] & mask);
		return n;
	}
	/* Von Neumann per bit plane: 01 gives 0, 10 gives 1, 00 and 11 nothing. */
	for (i = 0; i + 1 < frames; i += 2) {
		for (k = 0; k < x->channels; k++) {
			uint32_t a = (uint32_t)samples[i * x->channels + k];
			uint32_t b = (uint32_t)samples[(i + 1) * x->channels + k];

			if (copy[k])
				continue;
			for (j = 0; j < x->bits; j++)
				if (((a ^ b) >> j) & 1)
					n += audio_extract_bit(x, (a >> j) & 1, out + n);
		}
	}
	return n;
}
