/* SPDX-License-Identifier: MIT */
/*
 * audio: the noise in the low-order bits of an ALSA capture device. Off by
 * default, because whoever can make a sound near a microphone, or feed a
 * line input, influences what it records.
 *
 * The device is opened as it is (a hw: PCM, no plug, rate, format or
 * softvol layers that would resample or scale the noise away) in the first
 * of the native formats it offers from audio_formats[], at 48 kHz or the
 * nearest rate it has, with as few channels as it has. The first second
 * is thrown away (the start-up click). After that, each second of signal
 * is judged as a whole on the native samples (silence, clipping, a period
 * repeated over and over, a pure tone) before any of it is delivered: a bad second fails the read with a
 * line naming the cause, and the daemon retries the source with backoff.
 * A good second is delivered as raw samples: the low bits of each sample,
 * debiased with von Neumann's method over pairs of consecutive samples.
 *
 * read() is driven by the daemon's reader thread: it polls ALSA's
 * descriptors itself (so a signal interrupts it, whatever plugin is below)
 * and reads at most one period per snd_pcm_readi() call.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <alsa/asoundlib.h>

#include "audio_extract.h"
#include "builtin.h"
#include <entropyd/source.h>

#define AUDIO_RATE 48000u
#define AUDIO_PERIOD_FRAMES 1024u
#define AUDIO_PERIODS 8u
/* A device that delivers nothing for this long has stopped. */
#define AUDIO_STALL_MS 2000

/* One open capture device. */
struct audio_state {
	struct entropyd_instance *instance;
	snd_pcm_t *pcm;
	char *device;
	struct audio_format fmt;
	unsigned channels;
	unsigned rate;
	snd_pcm_uframes_t period;
	snd_pcm_uframes_t discard;   /* start-up frames still to throw away */
	struct pollfd *pfds;
	int npfds;
	uint8_t *pcm_buf;            /* one period of native PCM */
	int32_t *decoded;            /* the same, decoded */
	struct audio_check check;
	struct audio_extract extract;
	uint8_t *window;             /* raw samples of the second being judged */
	size_t window_len;
	uint8_t *ready;              /* raw samples of a second that passed */
	size_t ready_len, ready_pos;
	size_t window_cap;
	bool copies_noted;           /* said that a channel repeats another */
};

/* A native format the extractor knows, in the order they are tried. */
struct audio_native {
	snd_pcm_format_t format;
	struct audio_format layout;
};

static const struct audio_native audio_formats[] = {
	{ SND_PCM_FORMAT_S16_LE, { .bytes = 2, .sbits = 16, .width = 16 } },
	{ SND_PCM_FORMAT_S32_LE, { .bytes = 4, .sbits = 32, .width = 32 } },
	{ SND_PCM_FORMAT_S24_LE, { .bytes = 4, .sbits = 24, .width = 24 } },
	{ SND_PCM_FORMAT_S24_3LE, { .bytes = 3, .sbits = 24, .width = 24 } },
	{ SND_PCM_FORMAT_S16_BE, { .bytes = 2, .sbits = 16, .width = 16, .big_endian = true } },
	{ SND_PCM_FORMAT_S32_BE, { .bytes = 4, .sbits = 32, .width = 32, .big_endian = true } },
};

static const struct entropyd_host *audio_host;

/* alsa-lib's own messages would go to stderr: errors are reported through the host. */
static void
audio_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt,
    ...)
{
}

/* The device option. */
static const char *
audio_device(struct entropyd_module *module)
{
	const char *device = audio_host->option(module, "device");

	return device != NULL ? device : "hw:0";
}

/* Check the options before probing. */
static int
audio_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	unsigned bits;
	bool debias;

	audio_host = host;
	if (*audio_device(module) == '\0') {
		snprintf(err, errlen, "audio: device: empty (use -O audio:device:NAME)");
		return -1;
	}
	if (audio_parse_bits(host->option(module, "bits"), &bits, err, errlen) == -1 ||
	    audio_parse_debias(host->option(module, "debias"), &debias, err, errlen) == -1)
		return -1;
	return 0;
}

/*
 * Add the device as the one instance if it can be opened for capture. A
 * busy device is added anyway (opening is retried with backoff); any
 * other failure makes the module unusable, with the reason.
 */
static int
audio_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	const char *device;
	snd_pcm_t *pcm;
	int e;

	audio_host = host;
	snd_lib_error_set_handler(audio_alsa_quiet);
	device = audio_device(module);
	e = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK);
	if (e == 0)
		snd_pcm_close(pcm);
	else if (e != -EBUSY && e != -EAGAIN) {
		host->unusable(module, "cannot open ALSA capture device %s: %s", device,
		    snd_strerror(e));
		return 0;
	}
	if (host->add_instance(module, "", device, NULL) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "%s: cannot add an instance", device);
		return -1;
	}
	return 1;
}

/* Free an instance's state (the PCM is closed if open). */
static void
audio_free(struct audio_state *as)
{
	if (as == NULL)
		return;
	if (as->pcm != NULL)
		snd_pcm_close(as->pcm);
	if (as->window != NULL)
		explicit_bzero(as->window, as->window_cap);
	if (as->ready != NULL)
		explicit_bzero(as->ready, as->window_cap);
	free(as->window);
	free(as->ready);
	free(as->pcm_buf);
	free(as->decoded);
	free(as->pfds);
	free(as->device);
	free(as);
}

/* Choose the first native format, the rate, channels and period; -1 with a log line. */
static int
audio_set_params(struct audio_state *as)
{
	const struct audio_native *native = NULL;
	snd_pcm_hw_params_t *hw;
	snd_pcm_uframes_t buffer;
	unsigned rate = AUDIO_RATE;
	const char *what;
	size_t i;
	int e, sbits;

	snd_pcm_hw_params_alloca(&hw);
	if ((e = snd_pcm_hw_params_any(as->pcm, hw)) < 0) {
		what = "no hardware parameters";
		goto fail;
	}
	if ((e = snd_pcm_hw_params_set_rate_resample(as->pcm, hw, 0)) < 0) {
		what = "cannot turn resampling off";
		goto fail;
	}
	if ((e = snd_pcm_hw_params_set_access(as->pcm, hw,
	    SND_PCM_ACCESS_RW_INTERLEAVED)) < 0) {
		what = "no interleaved read access";
		goto fail;
	}
	for (i = 0; i < sizeof audio_formats / sizeof audio_formats[0]; i++) {
		if (snd_pcm_hw_params_test_format(as->pcm, hw, audio_formats[i].format) == 0) {
			native = &audio_formats[i];
			break;
		}
	}
	if (native == NULL) {
		e = -EINVAL;
		what = "no supported sample format (S16, S24, S32)";
		goto fail;
	}
	if ((e = snd_pcm_hw_params_set_format(as->pcm, hw, native->format)) < 0 ||
	    (e = snd_pcm_hw_params_set_channels_first(as->pcm, hw, &as->channels)) < 0 ||
	    (e = snd_pcm_hw_params_set_rate_near(as->pcm, hw, &rate, NULL)) < 0) {
		what = "cannot set format, channels or rate";
		goto fail;
	}
	if (as->channels > AUDIO_MAX_CHANNELS) {
		e = -EINVAL;
		what = "too many channels";
		goto fail;
	}
	as->period = AUDIO_PERIOD_FRAMES;
	buffer = AUDIO_PERIOD_FRAMES * AUDIO_PERIODS;
	if ((e = snd_pcm_hw_params_set_period_size_near(as->pcm, hw, &as->period, NULL)) < 0 ||
	    (e = snd_pcm_hw_params_set_buffer_size_near(as->pcm, hw, &buffer)) < 0 ||
	    (e = snd_pcm_hw_params(as->pcm, hw)) < 0 ||
	    (e = snd_pcm_hw_params_get_period_size(hw, &as->period, NULL)) < 0) {
		what = "cannot set the period or buffer";
		goto fail;
	}
	as->fmt = native->layout;
	sbits = snd_pcm_hw_params_get_sbits(hw);
	if (sbits > 1 && (unsigned)sbits < as->fmt.width)
		as->fmt.sbits = (unsigned)sbits;
	as->rate = rate;
	audio_host->log(as->instance, ENTROPYD_LOG_INFO, "%s: %s, %u significant bits, %u Hz, "
	    "%u channel%s, %lu frames per period", as->device, snd_pcm_format_name(native->format),
	    as->fmt.sbits, as->rate, as->channels, as->channels == 1 ? "" : "s",
	    (unsigned long)as->period);
	return 0;

fail:
	audio_host->log(as->instance, ENTROPYD_LOG_ERR, "%s: %s: %s", as->device, what,
	    snd_strerror(e));
	errno = -e;
	return -1;
}

/* Open the device, set it up and start capturing. */
static int
audio_open(struct entropyd_instance *inst, void **state)
{
	struct entropyd_module *module;
	struct audio_state *as;
	unsigned bits;
	bool debias;
	char err[256];
	int e;

	if (audio_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	module = audio_host->instance_module(inst);
	if (audio_parse_bits(audio_host->option(module, "bits"), &bits, err, sizeof err) == -1 ||
	    audio_parse_debias(audio_host->option(module, "debias"), &debias, err,
	    sizeof err) == -1) {
		audio_host->log(inst, ENTROPYD_LOG_ERR, "%s", err);
		errno = EINVAL;
		return -1;
	}
	if ((as = calloc(1, sizeof *as)) == NULL ||
	    (as->device = strdup(audio_device(module))) == NULL) {
		free(as);
		errno = ENOMEM;
		return -1;
	}
	as->instance = inst;
	e = snd_pcm_open(&as->pcm, as->device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK |
	    SND_PCM_NO_AUTO_RESAMPLE | SND_PCM_NO_AUTO_CHANNELS | SND_PCM_NO_AUTO_FORMAT |
	    SND_PCM_NO_SOFTVOL);
	if (e < 0) {
		as->pcm = NULL;
		audio_host->log(inst, ENTROPYD_LOG_ERR, "cannot open ALSA capture device %s: %s",
		    as->device, snd_strerror(e));
		goto fail;
	}
	if (audio_set_params(as) == -1) {
		e = -errno;
		goto fail;
	}
	as->npfds = snd_pcm_poll_descriptors_count(as->pcm);
	as->window_cap = ((size_t)as->rate + as->period) * as->channels;
	if (as->npfds <= 0 ||
	    (as->pfds = calloc((size_t)as->npfds, sizeof *as->pfds)) == NULL ||
	    (as->pcm_buf = calloc(as->period * as->channels, as->fmt.bytes)) == NULL ||
	    (as->decoded = calloc(as->period * as->channels, sizeof *as->decoded)) == NULL ||
	    (as->window = malloc(as->window_cap)) == NULL ||
	    (as->ready = malloc(as->window_cap)) == NULL) {
		e = -ENOMEM;
		audio_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s", as->device, strerror(ENOMEM));
		goto fail;
	}
	snd_pcm_poll_descriptors(as->pcm, as->pfds, (unsigned)as->npfds);
	if ((e = snd_pcm_prepare(as->pcm)) < 0 || (e = snd_pcm_start(as->pcm)) < 0) {
		audio_host->log(inst, ENTROPYD_LOG_ERR, "%s: cannot start capture: %s",
		    as->device, snd_strerror(e));
		goto fail;
	}
	as->discard = as->rate;
	audio_check_init(&as->check, as->channels, as->fmt.sbits);
	audio_extract_init(&as->extract, bits, debias, as->channels);
	*state = as;
	return 0;

fail:
	audio_free(as);
	errno = -e;
	return -1;
}

/*
 * Wait for and read at most one period: frames read, ENTROPYD_READ_AGAIN
 * (interrupted, or nothing yet), or ENTROPYD_READ_ERROR after a log line.
 */
static ssize_t
audio_capture(struct audio_state *as)
{
	unsigned short revents;
	snd_pcm_sframes_t n;
	int e;

	e = poll(as->pfds, (nfds_t)as->npfds, AUDIO_STALL_MS);
	if (e == -1)
		return errno == EINTR ? ENTROPYD_READ_AGAIN : ENTROPYD_READ_ERROR;
	if (e == 0) {
		audio_host->log(as->instance, ENTROPYD_LOG_ERR, "%s: no data for %d ms",
		    as->device, AUDIO_STALL_MS);
		errno = ETIMEDOUT;
		return ENTROPYD_READ_ERROR;
	}
	if ((e = snd_pcm_poll_descriptors_revents(as->pcm, as->pfds, (unsigned)as->npfds,
	    &revents)) < 0)
		goto fail;
	if (!(revents & (POLLIN | POLLERR)))
		return ENTROPYD_READ_AGAIN;
	/* Some plugins leave the buffer alone at the end of their input: no stale bytes. */
	memset(as->pcm_buf, 0, as->period * as->channels * as->fmt.bytes);
	n = snd_pcm_readi(as->pcm, as->pcm_buf, as->period);
	if (n >= 0)
		return n;
	if (n == -EAGAIN)
		return ENTROPYD_READ_AGAIN;
	if (n == -EPIPE || n == -ESTRPIPE || n == -EINTR) {
		/* An overrun or a suspend: carry on; the lost frames are just lost. */
		if ((e = snd_pcm_recover(as->pcm, (int)n, 1)) < 0 ||
		    (e = snd_pcm_start(as->pcm)) < 0)
			goto fail;
		audio_host->log(as->instance, ENTROPYD_LOG_INFO, "%s: %s; recovered", as->device,
		    n == -EPIPE ? "overrun" : snd_strerror((int)n));
		return ENTROPYD_READ_AGAIN;
	}
	e = (int)n;
fail:
	audio_host->log(as->instance, ENTROPYD_LOG_ERR, "%s: capture: %s", as->device,
	    snd_strerror(e));
	errno = e < 0 ? -e : EIO;
	return ENTROPYD_READ_ERROR;
}

/* Judge the second just captured: hand it on, or fail naming the cause. */
static int
audio_judge(struct audio_state *as)
{
	enum audio_cause cause;
	uint8_t *swap;
	char why[256];

	cause = audio_check_verdict(&as->check, as->rate, why, sizeof why);
	audio_check_init(&as->check, as->channels, as->fmt.sbits);
	if (cause != AUDIO_SIGNAL_OK) {
		explicit_bzero(as->window, as->window_len);
		as->window_len = 0;
		audio_host->log(as->instance, ENTROPYD_LOG_ERR, "%s on %s (%s)",
		    audio_cause_name(cause), as->device, why);
		errno = EIO;
		return -1;
	}
	swap = as->ready;
	as->ready = as->window;
	as->ready_len = as->window_len;
	as->ready_pos = 0;
	as->window = swap;
	as->window_len = 0;
	return 0;
}

/* Deliver raw samples of a second that passed, capturing the next one as needed. */
static ssize_t
audio_read(void *state, void *buf, size_t len)
{
	struct audio_state *as = state;
	size_t skip, n;
	ssize_t frames;

	for (;;) {
		if (as->ready_pos < as->ready_len) {
			n = as->ready_len - as->ready_pos;
			if (n > len)
				n = len;
			memcpy(buf, as->ready + as->ready_pos, n);
			explicit_bzero(as->ready + as->ready_pos, n);
			as->ready_pos += n;
			return (ssize_t)n;
		}
		if ((frames = audio_capture(as)) < 0)
			return frames;
		skip = 0;
		if (as->discard > 0) {
			skip = as->discard < (size_t)frames ? as->discard : (size_t)frames;
			as->discard -= skip;
		}
		if ((size_t)frames <= skip)
			continue;
		frames -= (ssize_t)skip;
		audio_decode(&as->fmt, as->pcm_buf + skip * as->channels * as->fmt.bytes,
		    (size_t)frames * as->channels, as->decoded);
		audio_check_frames(&as->check, as->decoded, (size_t)frames);
		as->window_len += audio_extract_frames(&as->extract, as->decoded, (size_t)frames,
		    as->window + as->window_len);
		if (as->extract.copies > 0 && !as->copies_noted) {
			as->copies_noted = true;
			audio_host->log(as->instance, ENTROPYD_LOG_INFO, "%s: a channel repeats "
			    "another: only distinct channels are used", as->device);
		}
		if (as->check.frames >= as->rate && audio_judge(as) == -1)
			return ENTROPYD_READ_ERROR;
	}
}

/*
 * The VM generation changed: drop the second being judged, the one ready to
 * hand out and a half-debiased sample, and throw away the next second of
 * capture as at start-up (ALSA's buffer, a fraction of a second, holds
 * frames captured before).
 */
static void
audio_forget(void *state)
{
	struct audio_state *as = state;

	explicit_bzero(as->window, as->window_cap);
	explicit_bzero(as->ready, as->window_cap);
	as->window_len = as->ready_len = as->ready_pos = 0;
	audio_check_init(&as->check, as->channels, as->fmt.sbits);
	audio_extract_init(&as->extract, as->extract.bits, as->extract.debias, as->channels);
	as->discard = as->rate;
}

/* Always read from the daemon's reader thread: read() polls ALSA itself. */
static int
audio_pollfd(void *state)
{
	return -1;
}

/* Close the device and free the instance's state. */
static void
audio_close(void *state)
{
	audio_free(state);
}

/*
 * 0.5 bits per delivered sample, whatever its width: a debiased sample of
 * 2 bits is credited a quarter of a bit per bit. Sound hardware is not
 * designed as a noise source, its noise floor differs from card to card
 * and with the mixer settings, and neighbouring samples are correlated
 * by the converter's filters, which von Neumann's method assumes away.
 */
const struct entropyd_source audio_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "audio",
	.description = "ALSA capture noise: low-order bits, debiased (off by default)",
	.flags = ENTROPYD_SOURCE_RAW_SAMPLES,
	.entropy_bits = 0.5,
	.sample_bits = AUDIO_BITS_MAX,
	.options = audio_options,
	.probe = audio_probe,
	.open = audio_open,
	.read = audio_read,
	.pollfd = audio_pollfd,
	.close = audio_close,
	.configure = audio_configure,
	.forget = audio_forget,
};
