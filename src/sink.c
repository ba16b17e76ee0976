/* SPDX-License-Identifier: MIT */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/random.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "registry.h"
#include "sink.h"
#include "xmalloc.h"

/* The kernel's pool holds 256 bits: asking for less than that per top-up is pointless. */
#define SINK_MIN_TOPUP_BITS 256

static const char *const sink_kind_names[] = {
	[SINK_KERNEL] = "kernel",
	[SINK_FILE] = "file",
	[SINK_DISCARD] = "discard",
};

const char *
sink_kind_name(enum sink_kind kind)
{
	return sink_kind_names[kind];
}

/* Credit bytes to the kernel's pool: RNDADDENTROPY with the given count. */
static int
sink_kernel_add(int fd, const uint8_t *buf, size_t len, unsigned credit_bits)
{
	struct {
		struct rand_pool_info info;
		uint32_t words[4096 / sizeof(uint32_t)];
	} req;
	int r;

	req.info.entropy_count = (int)credit_bits;
	req.info.buf_size = (int)len;
	if (len > 0)
		memcpy(req.words, buf, len);
	r = ioctl(fd, RNDADDENTROPY, &req);
	explicit_bzero(&req, sizeof req);
	return r;
}

/* Open /dev/random (or -o naming it) and check that crediting is permitted. */
static int
sink_open_kernel(struct sink *s, char *err, size_t errlen)
{
	if ((s->fd = open(s->path, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		return EX_OSFILE;
	}
	if (sink_kernel_add(s->fd, NULL, 0, 0) == -1) {
		int e = errno;

		snprintf(err, errlen, "%s: crediting the kernel's pool: %s%s", s->path,
		    strerror(e), e == EPERM ? " (needs root/CAP_SYS_ADMIN; -t runs without "
		    "writing to the kernel)" : "");
		close(s->fd);
		s->fd = -1;
		return e == EPERM ? EX_NOPERM : EX_OSERR;
	}
	s->want_bits = s->start_bits;
	return 0;
}

/* Open a regular file (appending), a FIFO (waiting for its reader) or stdout. */
static int
sink_open_file(struct sink *s, char *err, size_t errlen)
{
	struct stat st;

	if (strcmp(s->path, "-") == 0)
		s->fd = STDOUT_FILENO;
	else if ((s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		return EX_CANTCREAT;
	}
	if (fstat(s->fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		return EX_IOERR;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		s->nonblocking = true;
		if (fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK) == -1) {
			snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
			return EX_IOERR;
		}
	}
	return 0;
}

int
sink_open(struct sink *s, const struct config *cfg, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	memset(s, 0, sizeof *s);
	s->fd = -1;
	s->path = xstrdup(cfg->random_device);
	s->step_bytes = cfg->random_step_bytes;
	s->credit_per_byte = cfg->entropy_count_bits;
	s->start_bits = cfg->fill_watermark_bits > SINK_MIN_TOPUP_BITS ?
	    cfg->fill_watermark_bits : SINK_MIN_TOPUP_BITS;
	if (cfg->test_mode) {
		s->kind = SINK_DISCARD;
		return 0;
	}
	/* A character device that answers RNDGETENTCNT is the kernel's pool. */
	s->kind = SINK_FILE;
	if (strcmp(s->path, "-") != 0 && stat(s->path, &st) == 0 && S_ISCHR(st.st_mode) &&
	    (fd = open(s->path, O_RDONLY | O_CLOEXEC)) != -1) {
		int count;

		if (ioctl(fd, RNDGETENTCNT, &count) == 0)
			s->kind = SINK_KERNEL;
		close(fd);
	}
	return s->kind == SINK_KERNEL ? sink_open_kernel(s, err, errlen) :
	    sink_open_file(s, err, errlen);
}

void
sink_attach(struct sink *s, struct event_base *base, void (*kick)(int, short, void *))
{
	if (s->kind == SINK_FILE)
		s->ev_write = event_new(base, s->fd, EV_WRITE, kick, s);
}

/* Record a failure: the reader going away closes the sink, anything else fails it. */
static enum sink_status
sink_fail(struct sink *s, int e)
{
	s->error = e;
	s->status = e == EPIPE ? SINK_CLOSED : SINK_FAILED;
	return s->status;
}

/* Write what is pending; SINK_OK with pending bytes left means "wait for POLLOUT". */
static enum sink_status
sink_flush(struct sink *s)
{
	while (s->pending_off < s->pending_len) {
		ssize_t n = write(s->fd, s->pending + s->pending_off, s->pending_len - s->pending_off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			event_add(s->ev_write, NULL);
			return SINK_OK;
		}
		if (n == -1)
			return sink_fail(s, errno);
		s->pending_off += (size_t)n;
		s->bytes_written += (size_t)n;
	}
	explicit_bzero(s->pending, s->pending_len);
	s->pending_off = s->pending_len = 0;
	return SINK_OK;
}

/* Take up to len bytes from an instance's reserve, counting them. */
static size_t
sink_take(struct entropyd_instance *inst, uint8_t *buf, size_t len)
{
	size_t n = reserve_take(&inst->pipe.reserve, buf, len);

	inst->pipe.count.bytes_taken += n;
	return n;
}

/* Kernel: one -s step per credited instance in turn until the want is met. */
static enum sink_status
sink_service_kernel(struct sink *s)
{
	struct entropyd_instance *inst;
	uint8_t step[4096];
	bool served = true;

	while (s->want_bits > 0 && served) {
		served = false;
		TAILQ_FOREACH(inst, &registry_instances, all) {
			size_t n;
			unsigned credit;

			if (!pipeline_credited(&inst->pipe) || inst->pipe.reserve.len == 0)
				continue;
			n = sink_take(inst, step, s->step_bytes);
			credit = (unsigned)n * s->credit_per_byte;
			if (sink_kernel_add(s->fd, step, n, credit) == -1) {
				explicit_bzero(step, sizeof step);
				log_warn("%s: RNDADDENTROPY", s->path);
				return sink_fail(s, errno);
			}
			inst->pipe.count.bits_credited += credit;
			s->bits_credited += credit;
			s->bytes_written += n;
			s->feeds++;
			s->want_bits -= credit;
			served = true;
			if (s->want_bits <= 0)
				break;
		}
	}
	explicit_bzero(step, sizeof step);
	return SINK_OK;
}

/* File, FIFO, stdout or test mode: take everything the reserves hold. */
static enum sink_status
sink_service_stream(struct sink *s)
{
	struct entropyd_instance *inst;
	bool took = true;

	while (took) {
		took = false;
		if (s->kind == SINK_FILE && sink_flush(s) != SINK_OK)
			return s->status;
		if (s->pending_len > 0)
			return SINK_OK; /* waiting for the reader */
		TAILQ_FOREACH(inst, &registry_instances, all) {
			size_t n = sink_take(inst, s->pending, sizeof s->pending);

			if (n == 0)
				continue;
			took = true;
			if (s->kind == SINK_DISCARD) {
				s->bytes_written += n;
				explicit_bzero(s->pending, n);
				continue;
			}
			s->pending_len = n;
			break;
		}
	}
	return SINK_OK;
}

enum sink_status
sink_service(struct sink *s)
{
	if (s->status != SINK_OK)
		return s->status;
	if (s->kind == SINK_KERNEL)
		return sink_service_kernel(s);
	return sink_service_stream(s);
}

void
sink_topup(struct sink *s)
{
	if (s->kind == SINK_KERNEL && s->want_bits < SINK_MIN_TOPUP_BITS)
		s->want_bits = SINK_MIN_TOPUP_BITS;
}

bool
sink_hungry(const struct sink *s)
{
	return s->kind != SINK_KERNEL || s->want_bits > 0;
}

void
sink_close(struct sink *s)
{
	if (s->ev_write != NULL)
		event_free(s->ev_write);
	if (s->fd > STDERR_FILENO)
		close(s->fd);
	explicit_bzero(s->pending, sizeof s->pending);
	free(s->path);
	s->fd = -1;
	s->path = NULL;
}
