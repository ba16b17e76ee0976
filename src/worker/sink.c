/* SPDX-License-Identifier: MIT */
/*
 * Where conditioned bytes go: the kernel pool (through the feeder, by steps
 * with their credit, at boot, on top-ups and after a clone) or a file, FIFO
 * or stdout at its reader's pace.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <linux/random.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "sink.h"
#include "xmalloc.h"

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

static const char *const sink_phase_names[] = {
	[SINK_BOOT] = "boot",
	[SINK_BURST] = "burst",
	[SINK_STEADY] = "steady",
};

const char *
sink_phase_name(enum sink_phase phase)
{
	return sink_phase_names[phase];
}

/* Linux 5.18 changed /dev/random: no POLLOUT after boot, a 256-bit pool. */
bool
sink_kernel_is_modern(const char *release)
{
	unsigned major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 18);
}

void
sink_kernel_init(struct sink *s, const struct config *cfg, bool modern)
{
	s->kind = SINK_KERNEL;
	s->phase = SINK_BOOT;
	s->modern = modern;
	s->reseed = !cfg->no_reseed;
	s->watermark_bits = cfg->fill_watermark_bits;
	/* A step is one segment of an ADD to the feeder. */
	s->step_bytes = cfg->random_step_bytes < FEEDPROTO_MAX_SEGMENT_BYTES ?
	    cfg->random_step_bytes : FEEDPROTO_MAX_SEGMENT_BYTES;
	s->credit_per_byte = cfg->entropy_count_bits;
	s->reseed_interval_s = cfg->reseed_interval_s;
	s->want_bits = 0;
	s->refill_bits = cfg->refill_bits;
}

/*
 * Open /dev/random (or -o naming it) and check that crediting is permitted
 * (an empty RNDADDENTROPY). The descriptor goes to the feeder
 * (privsep_split), which alone credits the pool.
 */
static int
sink_open_kernel(struct sink *s, const struct config *cfg, char *err, size_t errlen)
{
	struct rand_pool_info none = { 0, 0 };
	struct utsname u;

	if ((s->fd = open(s->path, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		return EX_OSFILE;
	}
	if (ioctl(s->fd, RNDADDENTROPY, &none) == -1) {
		int e = errno;

		snprintf(err, errlen, "%s: crediting the kernel's pool: %s%s", s->path,
		    strerror(e), e == EPERM ? " (needs root/CAP_SYS_ADMIN; -t runs without "
		    "writing to the kernel)" : "");
		close(s->fd);
		s->fd = -1;
		return e == EPERM ? EX_NOPERM : EX_OSERR;
	}
	uname(&u);
	sink_kernel_init(s, cfg, sink_kernel_is_modern(u.release));
	if (!s->modern) {
		/* As rngd does: make POLLOUT mean "below the watermark". */
		FILE *f = fopen("/proc/sys/kernel/random/write_wakeup_threshold", "w");

		if (f == NULL || fprintf(f, "%u\n", s->watermark_bits) < 0)
			log_warn("write_wakeup_threshold");
		if (f != NULL)
			fclose(f);
	}
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
	s->reseed_interval_s = cfg->reseed_interval_s;
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
	return s->kind == SINK_KERNEL ? sink_open_kernel(s, cfg, err, errlen) :
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

/*
 * Send the steps batched so far in one ADD and, once the feeder did them
 * all, count each against its source. 0, or -1 with errno (logged): the
 * bytes are gone either way, and what the feeder did before a call failed
 * is counted by the feeder alone.
 */
static int
sink_kernel_send(struct sink *s)
{
	uint32_t i;
	int r = 0;

	if (s->batch.segments == 0)
		return 0;
	if (s->ops->add(s, &s->batch) == -1) {
		log_warn("%s: RNDADDENTROPY", s->path);
		r = -1;
	} else {
		for (i = 0; i < s->batch.segments; i++) {
			const struct sink_step *st = &s->batch_steps[i];

			pipeline_note_credit(st->from, st->credit);
			s->bits_credited += st->credit;
			if (st->credit > 0)
				s->last_credit_ns = clock_now_ns();
		}
		s->bytes_written += feedproto_batch_bytes(&s->batch);
		s->feeds += s->batch.segments;
	}
	feedproto_batch_clear(&s->batch);
	return r;
}

/*
 * One pass: a -s step from every healthy credited source that has data,
 * credited with what its conditioner decided, batched for the kernel. A
 * full batch is sent at once; the last one by the caller, or here while
 * the kernel boots (whether its CRNG is ready is asked after each pass).
 * The number of steps taken, or -1 with errno.
 */
static int
sink_kernel_pass(struct sink *s, const struct sink_supply *supply)
{
	struct pipeline *p = NULL;
	bool ok;
	int served = 0;

	while ((p = supply->next(supply->ctx, p, &ok)) != NULL) {
		size_t n;
		unsigned credit;
		uint8_t *at;

		if (!ok || p->reserve.len == 0)
			continue;
		if (!feedproto_batch_fits(&s->batch, s->step_bytes) && sink_kernel_send(s) == -1)
			return -1;
		/* Taken straight into the batch: the step's bytes are copied nowhere else. */
		if ((at = feedproto_batch_space(&s->batch, s->step_bytes)) != NULL) {
			n = pipeline_take(p, at, s->step_bytes, &credit);
			s->batch_steps[s->batch.segments] = (struct sink_step){ p, credit };
		}
		if (at == NULL || feedproto_batch_commit(&s->batch, n, credit) == -1) {
			feedproto_batch_clear(&s->batch);
			errno = EINVAL; /* our own bug: a step the feeder would refuse */
			log_warn("%s: a step of %u bytes the feeder would refuse", s->path,
			    s->step_bytes);
			return -1;
		}
		s->want_bits -= credit;
		served++;
	}
	if (s->phase == SINK_BOOT && sink_kernel_send(s) == -1)
		return -1;
	return served;
}

/* RNDRESEEDCRNG, counted; 0 or -1 (logged). */
static int
sink_kernel_reseed_now(struct sink *s)
{
	if (s->ops->reseed(s) == -1) {
		log_warn("%s: RNDRESEEDCRNG", s->path);
		return -1;
	}
	s->reseeds++;
	return 0;
}

/* Leave the boot phase once the kernel's CRNG is ready. */
static void
sink_kernel_check_boot(struct sink *s)
{
	if (s->phase != SINK_BOOT || s->ops->crng_ready(s) != 1)
		return;
	s->crng_ready_at_start = s->bits_credited == 0;
	log_info("kernel CRNG is ready (%" PRIu64 " bits credited so far); "
	    "feeding a start-up burst of %u bits", s->bits_credited, SINK_BURST_BITS);
	s->phase = SINK_BURST;
	if (s->want_bits < SINK_BURST_BITS)
		s->want_bits = SINK_BURST_BITS; /* a refill asked for may be larger */
}

/*
 * A refill after a VM generation change was fed: reseed at once, whatever
 * --no-reseed says (the refill exists to reach the CRNG now).
 */
static void
sink_kernel_refilled(struct sink *s)
{
	if (!s->refill_pending)
		return;
	s->refill_pending = false;
	if (sink_kernel_reseed_now(s) == 0) {
		s->refill_reseed_ns = clock_now_ns();
		s->refills++;
	}
}

/* Kernel: whole passes over the sources until what is wanted was credited. */
static enum sink_status
sink_service_kernel(struct sink *s, const struct sink_supply *supply)
{
	int served = 1;

	sink_kernel_check_boot(s);
	while ((s->phase == SINK_BOOT || s->want_bits > 0) && served > 0) {
		if ((served = sink_kernel_pass(s, supply)) == -1)
			return sink_fail(s, errno);
		sink_kernel_check_boot(s);
	}
	if (sink_kernel_send(s) == -1)
		return sink_fail(s, errno);
	if (s->phase == SINK_BOOT || s->want_bits > 0)
		return SINK_OK; /* waiting for data */
	if (s->phase == SINK_BURST) {
		log_info("start-up burst fed; topping up every interval from now on");
		s->phase = SINK_STEADY;
		/* Without this the burst would wait in the pool for the first top-up. */
		if (s->crng_ready_at_start && s->reseed && sink_kernel_reseed_now(s) == 0)
			log_info("kernel CRNG reseeded with the start-up burst");
	}
	sink_kernel_refilled(s);
	if (s->topup_pending) {
		s->topup_pending = false;
		s->topups++;
		if (s->reseed)
			sink_kernel_reseed_now(s);
	}
	return SINK_OK;
}

/*
 * Stream sinks: the next instance with conditioned bytes, taking turns from
 * where the last take left off, so a fast source cannot starve the others.
 */
static struct pipeline *
sink_next_source(struct sink *s, const struct sink_supply *supply)
{
	struct pipeline *p = NULL, *first = NULL;
	unsigned i = 0, first_i = 0;
	bool ok;

	while ((p = supply->next(supply->ctx, p, &ok)) != NULL) {
		if (p->reserve.len > 0) {
			if (i >= s->next_source) {
				s->next_source = i + 1;
				return p;
			}
			if (first == NULL) {
				first = p;
				first_i = i;
			}
		}
		i++;
	}
	/* Past the end of the list: wrap to the first that has bytes. */
	if (first != NULL)
		s->next_source = first_i + 1;
	return first;
}

/* File, FIFO, stdout or test mode: take everything the reserves hold. */
static enum sink_status
sink_service_stream(struct sink *s, const struct sink_supply *supply)
{
	struct pipeline *p;
	unsigned credit;
	size_t n;

	for (;;) {
		if (s->kind == SINK_FILE && sink_flush(s) != SINK_OK)
			return s->status;
		if (s->pending_len > 0)
			return SINK_OK; /* waiting for the reader */
		if ((p = sink_next_source(s, supply)) == NULL)
			return SINK_OK;
		n = pipeline_take(p, s->pending, sizeof s->pending, &credit);
		if (s->kind == SINK_DISCARD) {
			s->bytes_written += n;
			explicit_bzero(s->pending, n);
			continue;
		}
		s->pending_len = n;
	}
}

enum sink_status
sink_service(struct sink *s, const struct sink_supply *supply)
{
	if (s->status != SINK_OK)
		return s->status;
	if (s->kind == SINK_KERNEL)
		return sink_service_kernel(s, supply);
	return sink_service_stream(s, supply);
}

void
sink_topup(struct sink *s)
{
	if (s->kind != SINK_KERNEL || s->phase != SINK_STEADY)
		return;
	if (s->want_bits < SINK_TOPUP_BITS)
		s->want_bits = SINK_TOPUP_BITS;
	s->topup_pending = true;
}

void
sink_pool_writable(struct sink *s)
{
	int64_t step_bits = (int64_t)s->step_bytes * s->credit_per_byte;

	if (s->kind != SINK_KERNEL || s->modern)
		return;
	if (s->ops->entropy_avail(s) < (int)s->watermark_bits && s->want_bits < step_bits)
		s->want_bits = step_bits;
}

size_t
sink_forget(struct sink *s)
{
	size_t held = s->pending_len - s->pending_off;

	explicit_bzero(s->pending, sizeof s->pending);
	s->pending_off = s->pending_len = 0;
	/* Empty between services; were it not, those bytes are from before too. */
	held += feedproto_batch_bytes(&s->batch);
	feedproto_batch_clear(&s->batch);
	if (s->kind == SINK_KERNEL) {
		if (s->want_bits < (int64_t)s->refill_bits)
			s->want_bits = s->refill_bits;
		s->refill_pending = true;
	}
	return held;
}

int
sink_mix_host(struct sink *s, const uint8_t *buf, size_t len)
{
	if (s->kind != SINK_KERNEL)
		return 0;
	return s->ops->mix(s, buf, len);
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
