/* SPDX-License-Identifier: MIT */
/*
 * A raw-sample test plugin for the online entropy estimates: samples of
 * SAMPLE_BITS (8 unless built otherwise, two bytes little-endian above 8)
 * claimed at CLAIM bits each, in one of three modes set with -O NAME:mode:
 *   noise    random samples (/dev/urandom): measures well above its claim
 *   pattern  a five-sample cycle with one sample in eight random: the
 *            health tests pass it and its values look varied, but a
 *            predictor guesses most samples, so it measures well below
 *   turn     pattern for the first RAW_TURN_SAMPLES samples, then noise
 *   count    0, 1, 2, ... (each sample its index): for --capture checks
 *   stale    noise for the first RAW_STALE_SAMPLES samples after each open,
 *            then every other read the same noise again (a stale buffer
 *            between fresh ones): the repeat test fails each, and its
 *            failures suspend the source
 *   replay   the same pseudo-random samples after every open (a fixed
 *            seed): a source whose restarts repeat each other
 * Reads compute, so the daemon reads it from a thread, only on demand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>

#ifndef NAME
#define NAME "testraw"
#endif
#ifndef SAMPLE_BITS
#define SAMPLE_BITS 8
#endif
#ifndef CLAIM
#define CLAIM 2.0
#endif

#define RAW_READ_MAX 4096
#define RAW_TURN_SAMPLES 200000
#define RAW_STALE_SAMPLES 20000

enum raw_mode { RAW_NOISE, RAW_PATTERN, RAW_TURN, RAW_COUNT, RAW_STALE, RAW_REPLAY };

/* One open instance. */
struct raw_state {
	enum raw_mode mode;
	int fd;              /* /dev/urandom */
	uint64_t index;      /* samples delivered */
	uint64_t replay;     /* replay: the generator's state, the same at every open */
	uint8_t stale[2 * RAW_READ_MAX]; /* stale: the noise every other read repeats */
	bool have_stale;
	uint64_t reads;      /* stale: reads since the noise went stale */
};

static const struct entropyd_host *raw_host;

static const struct entropyd_option raw_options[] = {
	{ "mode", "noise", "noise, pattern, turn, count, stale or replay" },
	{ NULL, NULL, NULL }
};

/* The mode option, or -1 when it names none. */
static int
raw_mode(struct entropyd_module *m)
{
	const char *v = raw_host->option(m, "mode");

	if (v == NULL || strcmp(v, "noise") == 0)
		return RAW_NOISE;
	if (strcmp(v, "pattern") == 0)
		return RAW_PATTERN;
	if (strcmp(v, "turn") == 0)
		return RAW_TURN;
	if (strcmp(v, "count") == 0)
		return RAW_COUNT;
	if (strcmp(v, "stale") == 0)
		return RAW_STALE;
	if (strcmp(v, "replay") == 0)
		return RAW_REPLAY;
	return -1;
}

/* Refuse an unknown mode before anything is probed. */
static int
raw_configure(struct entropyd_module *m, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	raw_host = host;
	if (raw_mode(m) == -1) {
		snprintf(err, errlen, "%s: mode must be noise, pattern, turn, count, stale or "
		    "replay", NAME);
		return -1;
	}
	return 0;
}

/* One instance. */
static int
raw_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	raw_host = host;
	return host->add_instance(m, "", "test samples", NULL) != NULL ? 1 : -1;
}

/* Open /dev/urandom for the random parts. */
static int
raw_open(struct entropyd_instance *inst, void **state)
{
	struct raw_state *rs = calloc(1, sizeof *rs);

	if (rs == NULL || (rs->fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(rs);
		return -1;
	}
	rs->mode = (enum raw_mode)raw_mode(raw_host->instance_module(inst));
	rs->replay = UINT64_C(0x9e3779b97f4a7c15);
	*state = rs;
	return 0;
}

/* One sample of the mode, from a random byte where it needs one. */
static uint32_t
raw_sample(struct raw_state *rs, uint8_t noise1, uint8_t noise2)
{
	uint64_t i = rs->index++;

	switch (rs->mode) {
	case RAW_COUNT:
		return (uint32_t)i;
	case RAW_REPLAY:
		/* xorshift64*: the same stream after every open. */
		rs->replay ^= rs->replay >> 12;
		rs->replay ^= rs->replay << 25;
		rs->replay ^= rs->replay >> 27;
		return (uint32_t)((rs->replay * UINT64_C(2685821657736338717)) >> 48);
	case RAW_TURN:
		if (i >= RAW_TURN_SAMPLES)
			return (uint32_t)noise2 << 8 | noise1;
		/* FALLTHROUGH */
	case RAW_PATTERN:
		if (noise1 % 8 == 0)
			return (uint32_t)noise2 << 4 ^ noise1;
		return (uint32_t)(i % 5 * 37 + 11);
	default:
		return (uint32_t)noise2 << 8 | noise1;
	}
}

/* Up to len bytes of whole samples. */
static ssize_t
raw_read(void *state, void *buf, size_t len)
{
	struct raw_state *rs = state;
	uint8_t noise[2 * RAW_READ_MAX], *out = buf;
	size_t per = SAMPLE_BITS > 8 ? 2 : 1, n, i;
	ssize_t got;

	if (len > RAW_READ_MAX)
		len = RAW_READ_MAX;
	n = len / per;
	if (n == 0)
		return ENTROPYD_READ_AGAIN;
	if ((got = read(rs->fd, noise, 2 * n)) != (ssize_t)(2 * n))
		return got == -1 && errno == EINTR ? ENTROPYD_READ_AGAIN : ENTROPYD_READ_ERROR;
	/* stale: past its first samples, every other read the noise of the first such. */
	if (rs->mode == RAW_STALE && rs->index >= RAW_STALE_SAMPLES) {
		if (!rs->have_stale) {
			memcpy(rs->stale, noise, sizeof rs->stale);
			rs->have_stale = true;
		}
		if (rs->reads++ % 2 == 1)
			memcpy(noise, rs->stale, 2 * n);
	}
	for (i = 0; i < n; i++) {
		uint32_t s = raw_sample(rs, noise[2 * i], noise[2 * i + 1]) &
		    ((1u << SAMPLE_BITS) - 1);

		out[i * per] = (uint8_t)s;
		if (per == 2)
			out[i * per + 1] = (uint8_t)(s >> 8);
	}
	return (ssize_t)(n * per);
}

/* No fd: the daemon reads from a thread. */
static int
raw_pollfd(void *state)
{
	return -1;
}

static void
raw_close(void *state)
{
	struct raw_state *rs = state;

	close(rs->fd);
	free(rs);
}

static const struct entropyd_source raw_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = NAME,
	.description = "test raw samples: noise, a pattern, both, a count, stale, or replayed",
	.flags = ENTROPYD_SOURCE_RAW_SAMPLES,
	.entropy_bits = CLAIM,
	.sample_bits = SAMPLE_BITS,
	.options = raw_options,
	.probe = raw_probe,
	.open = raw_open,
	.read = raw_read,
	.pollfd = raw_pollfd,
	.close = raw_close,
	.configure = raw_configure,
};

const struct entropyd_source *
entropyd_source_entry(void)
{
	return &raw_source;
}
