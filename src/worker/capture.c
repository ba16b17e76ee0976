/* SPDX-License-Identifier: MIT */
/*
 * --capture SOURCE:COUNT:PATH: the raw samples a source delivers, before any
 * health test, written one a byte in the format NIST's tool reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "capture.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

#define CAPTURE_CHUNK 4096

static struct {
	const char *source;   /* a module name */
	const char *path;
	uint64_t count;       /* samples asked for */
	uint64_t written;
	size_t sample_bytes;  /* 1, or 2 for samples wider than 8 bits */
	unsigned sample_bits;
	bool odd;             /* the next byte is a 2-byte sample's high byte */
	int fd;
} capture = { .fd = -1 };

/* Which bits of a sample each byte holds, and how NIST's tool reads the file. */
static const char *
capture_which_bits(const char *path)
{
	static char line[4200];

	if (capture.sample_bits > 8)
		snprintf(line, sizeof line, "bits 0-7 of each %u-bit sample (NIST's tool takes "
		    "at most 8 bits a sample): ea_non_iid %s 8", capture.sample_bits, path);
	else
		snprintf(line, sizeof line, "all %u bits: ea_non_iid %s %u", capture.sample_bits,
		    path, capture.sample_bits);
	return line;
}

int
capture_start(const struct config *cfg, char *err, size_t errlen)
{
	struct entropyd_module *m;

	if (cfg->capture_source == NULL)
		return 0;
	if ((m = registry_find(cfg->capture_source)) == NULL) {
		snprintf(err, errlen, "--capture: unknown source '%s' (entropyd -l lists them)",
		    cfg->capture_source);
		return EX_USAGE;
	}
	if (!(m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES)) {
		snprintf(err, errlen, "--capture: source '%s' delivers no raw samples (its "
		    "output is already whitened)", cfg->capture_source);
		return EX_USAGE;
	}
	if (!m->enabled) {
		snprintf(err, errlen, "--capture: source '%s' is not in use (add -n %s)",
		    cfg->capture_source, cfg->capture_source);
		return EX_USAGE;
	}
	capture.fd = open(cfg->capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (capture.fd == -1) {
		snprintf(err, errlen, "--capture: %s: %s", cfg->capture_path, strerror(errno));
		return EX_CANTCREAT;
	}
	capture.source = cfg->capture_source;
	capture.path = cfg->capture_path;
	capture.count = cfg->capture_count;
	capture.written = 0;
	capture.sample_bytes = m->src->sample_bits > 8 ? 2 : 1;
	capture.sample_bits = m->src->sample_bits;
	capture.odd = false;
	log_info("--capture: %s: the first %" PRIu64 " raw samples to %s, one byte each: %s",
	    capture.source, capture.count, capture.path, capture_which_bits(cfg->capture_path));
	return 0;
}

/* Close the file, saying how it ended. */
static void
capture_finish(const char *name, bool failed)
{
	if (close(capture.fd) == -1 && !failed) {
		log_warn("--capture: %s", capture.path);
		failed = true;
	}
	capture.fd = -1;
	if (!failed)
		log_info("%s: captured %" PRIu64 " raw samples to %s (%s)", name, capture.written,
		    capture.path, capture.sample_bits > 8 ? "bits 0-7 of each" : "one per byte");
}

void
capture_input(const struct entropyd_instance *inst, const uint8_t *buf, size_t len)
{
	uint8_t chunk[CAPTURE_CHUNK];
	size_t i, n;

	if (capture.fd == -1 || strcmp(inst->module->src->name, capture.source) != 0)
		return;
	for (i = 0; i < len && capture.written < capture.count;) {
		/* One byte per sample: the low byte (little-endian first) of wide ones. */
		for (n = 0; n < sizeof chunk && i < len && capture.written + n < capture.count;
		    i++) {
			if (!capture.odd)
				chunk[n++] = buf[i];
			if (capture.sample_bytes == 2)
				capture.odd = !capture.odd;
		}
		if (n > 0 && write(capture.fd, chunk, n) != (ssize_t)n) {
			log_warn("%s: --capture: writing %s; capture abandoned", inst->name,
			    capture.path);
			capture_finish(inst->name, true);
			return;
		}
		capture.written += n;
	}
	explicit_bzero(chunk, sizeof chunk);
	if (capture.written >= capture.count)
		capture_finish(inst->name, false);
}
