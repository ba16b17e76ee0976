/* SPDX-License-Identifier: MIT */
/*
 * --capture SOURCE:COUNT:PATH and --capture-restarts SOURCE:PATH: the raw
 * samples a source delivers, before any health test, written one a byte in
 * the format NIST's tools read (capture.h).
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
/* A restart capture says how far it is every this many restarts. */
#define CAPTURE_PROGRESS_ROWS 100

static struct {
	const char *source;   /* a module name */
	const char *path;
	uint64_t count;       /* samples asked for */
	uint64_t written;
	uint64_t suspended;   /* of them, read while the source was suspended */
	size_t sample_bytes;  /* 1, or 2 for samples wider than 8 bits */
	unsigned sample_bits;
	bool odd;             /* the next byte is a 2-byte sample's high byte */
	int fd;
	/* --capture-restarts: the restart being taken, and how many are written. */
	bool restarts;
	uint8_t row[OPTIONS_CAPTURE_RESTART_SAMPLES];
	size_t in_row;
	uint64_t rows_done, rows_dropped;
} capture = { .fd = -1 };

/* The flag that asked for this capture, for messages. */
static const char *
capture_flag(void)
{
	return capture.restarts ? "--capture-restarts" : "--capture";
}

/* Which bits of a sample each byte holds, and how NIST's tool reads the file. */
static const char *
capture_which_bits(const char *path)
{
	static char line[4200];
	const char *tool = capture.restarts ? "entropytest -R -w" : "ea_non_iid";

	if (capture.restarts && capture.sample_bits > 8)
		snprintf(line, sizeof line, "bits 0-7 of each %u-bit sample: %s 8 %s",
		    capture.sample_bits, tool, path);
	else if (capture.restarts)
		snprintf(line, sizeof line, "all %u bits: %s %u %s", capture.sample_bits, tool,
		    capture.sample_bits, path);
	else if (capture.sample_bits > 8)
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
	const char *flag;

	if (cfg->capture_source == NULL)
		return 0;
	flag = cfg->capture_restarts ? "--capture-restarts" : "--capture";
	if ((m = registry_find(cfg->capture_source)) == NULL) {
		snprintf(err, errlen, "%s: unknown source '%s' (entropyd -l lists them)", flag,
		    cfg->capture_source);
		return EX_USAGE;
	}
	if (!(m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES)) {
		snprintf(err, errlen, "%s: source '%s' delivers no raw samples (its "
		    "output is already whitened)", flag, cfg->capture_source);
		return EX_USAGE;
	}
	if (!m->enabled) {
		snprintf(err, errlen, "%s: source '%s' is not in use (add -n %s)", flag,
		    cfg->capture_source, cfg->capture_source);
		return EX_USAGE;
	}
	capture.fd = open(cfg->capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (capture.fd == -1) {
		snprintf(err, errlen, "%s: %s: %s", flag, cfg->capture_path, strerror(errno));
		return EX_CANTCREAT;
	}
	capture.restarts = cfg->capture_restarts;
	capture.suspended = 0;
	capture.in_row = 0;
	capture.rows_done = capture.rows_dropped = 0;
	capture.source = cfg->capture_source;
	capture.path = cfg->capture_path;
	capture.count = cfg->capture_count;
	capture.written = 0;
	capture.sample_bytes = m->src->sample_bits > 8 ? 2 : 1;
	capture.sample_bits = m->src->sample_bits;
	capture.odd = false;
	if (capture.restarts)
		log_info("--capture-restarts: %s: opened afresh %lu times, the first %lu raw "
		    "samples each time to %s, one byte each, restart after restart (nothing is "
		    "credited meanwhile: each restart ends before its start-up tests): %s",
		    capture.source, OPTIONS_CAPTURE_RESTARTS, OPTIONS_CAPTURE_RESTART_SAMPLES,
		    capture.path, capture_which_bits(cfg->capture_path));
	else
		log_info("--capture: %s: the first %" PRIu64 " raw samples to %s, one byte each: "
		    "%s", capture.source, capture.count, capture.path,
		    capture_which_bits(cfg->capture_path));
	return 0;
}

/* Close the file, saying how it ended. */
static void
capture_finish(const char *name, bool failed)
{
	const char *what = capture.sample_bits > 8 ? "bits 0-7 of each" : "one per byte";
	char suspended[128] = "";

	if (close(capture.fd) == -1 && !failed) {
		log_warn("%s: %s", capture_flag(), capture.path);
		failed = true;
	}
	capture.fd = -1;
	explicit_bzero(capture.row, sizeof capture.row);
	if (failed)
		return;
	if (capture.restarts) {
		log_info("%s: captured %" PRIu64 " restarts of %lu raw samples to %s (%s)%s", name,
		    capture.rows_done, OPTIONS_CAPTURE_RESTART_SAMPLES, capture.path, what,
		    capture.rows_dropped > 0 ? "; restarts cut short and taken again: see above" :
		    "");
		return;
	}
	if (capture.suspended > 0)
		snprintf(suspended, sizeof suspended, "; %" PRIu64 " of them read while the tests "
		    "had it suspended, none of those credited", capture.suspended);
	log_info("%s: captured %" PRIu64 " raw samples to %s (%s%s)", name, capture.written,
	    capture.path, what, suspended);
}

/* Write len bytes to the file; false (capture abandoned) if that fails. */
static bool
capture_write(const char *name, const uint8_t *bytes, size_t len)
{
	if (len == 0 || write(capture.fd, bytes, len) == (ssize_t)len)
		return true;
	log_warn("%s: %s: writing %s; capture abandoned", name, capture_flag(), capture.path);
	capture_finish(name, true);
	return false;
}

bool
capture_wants(const struct entropyd_instance *inst)
{
	return capture.fd != -1 && strcmp(inst->module->src->name, capture.source) == 0;
}

void
capture_opened(const struct entropyd_instance *inst)
{
	if (!capture.restarts || !capture_wants(inst) || capture.in_row == 0)
		return;
	/* Not a reopen the capture asked for: that restart is taken again. */
	log_warnx("%s: --capture-restarts: reopened after %zu samples of restart %" PRIu64
	    "; taking that restart again", inst->name, capture.in_row, capture.rows_done + 1);
	capture.in_row = 0;
	capture.odd = false;
	capture.rows_dropped++;
}

bool
capture_reopening(const struct entropyd_instance *inst)
{
	return capture.restarts && capture.rows_done > 0 && capture_wants(inst);
}

/* --capture-restarts: the samples of the restart being taken; whether it is complete. */
static enum capture_next
capture_restart_input(const struct entropyd_instance *inst, const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && capture.in_row < sizeof capture.row; i++) {
		if (!capture.odd)
			capture.row[capture.in_row++] = buf[i];
		if (capture.sample_bytes == 2)
			capture.odd = !capture.odd;
	}
	if (capture.in_row < sizeof capture.row)
		return CAPTURE_GO_ON;
	if (!capture_write(inst->name, capture.row, sizeof capture.row))
		return CAPTURE_GO_ON;
	capture.written += sizeof capture.row;
	capture.rows_done++;
	capture.in_row = 0;
	capture.odd = false;
	/* Each reopen's own lines are debug (capture_reopening): progress instead. */
	if (capture.rows_done % CAPTURE_PROGRESS_ROWS == 0 &&
	    capture.rows_done < OPTIONS_CAPTURE_RESTARTS)
		log_info("%s: --capture-restarts: %" PRIu64 " of %lu restarts recorded", inst->name,
		    capture.rows_done, OPTIONS_CAPTURE_RESTARTS);
	if (capture.rows_done < OPTIONS_CAPTURE_RESTARTS)
		return CAPTURE_REOPEN;
	capture_finish(inst->name, false);
	return CAPTURE_GO_ON;
}

enum capture_next
capture_input(const struct entropyd_instance *inst, const uint8_t *buf, size_t len,
    bool suspended)
{
	uint8_t chunk[CAPTURE_CHUNK];
	size_t i, n;

	if (!capture_wants(inst))
		return CAPTURE_GO_ON;
	if (capture.restarts)
		return capture_restart_input(inst, buf, len);
	for (i = 0; i < len && capture.written < capture.count;) {
		/* One byte per sample: the low byte (little-endian first) of wide ones. */
		for (n = 0; n < sizeof chunk && i < len && capture.written + n < capture.count;
		    i++) {
			if (!capture.odd)
				chunk[n++] = buf[i];
			if (capture.sample_bytes == 2)
				capture.odd = !capture.odd;
		}
		if (!capture_write(inst->name, chunk, n)) {
			explicit_bzero(chunk, sizeof chunk);
			return CAPTURE_GO_ON;
		}
		capture.written += n;
		if (suspended)
			capture.suspended += n;
	}
	explicit_bzero(chunk, sizeof chunk);
	if (capture.written >= capture.count)
		capture_finish(inst->name, false);
	return CAPTURE_GO_ON;
}
