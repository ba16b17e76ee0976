/* SPDX-License-Identifier: MIT */
/*
 * The VM generation ID for applications: drawn from the kernel, published
 * in the generation file only after the reseed that follows a change, then
 * announced to the long polls and handed to the supervisor's hooks. The
 * order of those steps is the promise this file keeps.
 */
#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "generation.h"
#include "hookclient.h"
#include "log.h"
#include "privdrop.h"
#include "rundir.h"
#include "xmalloc.h"

static struct {
	struct generation_stats stats;
	uint8_t id[GENFILE_ID_BYTES];
	bool reseeds;                  /* the kernel sink: a change waits for the reseed */
	bool started;                  /* the start-up ID is out */
	int random_fd;                 /* /dev/random, polled until the CRNG is ready */
	struct event *ev_ready;
	void (*published)(void *);
	void *published_arg;
} generation = { .random_fd = -1 };

const char *
generation_trigger_name(int trigger)
{
	if (trigger < 0 || trigger >= VMGENID_NTRIGGERS)
		return "start";
	return vmgenid_trigger_name((enum vmgenid_trigger)trigger);
}

/* 128 bits from the kernel, made a version 4 UUID; 0, or -1 with errno (EAGAIN: not ready). */
static int
generation_draw(uint8_t id[GENFILE_ID_BYTES])
{
	ssize_t n;

	while ((n = getrandom(id, GENFILE_ID_BYTES, GRND_NONBLOCK)) == -1 && errno == EINTR)
		;
	if (n != GENFILE_ID_BYTES) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
	return 0;
}

/* Stop waiting for the CRNG. */
static void
generation_unwait(void)
{
	if (generation.ev_ready != NULL)
		event_free(generation.ev_ready);
	generation.ev_ready = NULL;
	if (generation.random_fd != -1)
		close(generation.random_fd);
	generation.random_fd = -1;
}

/*
 * Draw a new ID, write it, then tell the long polls and ask for the hooks.
 * change_ns is when the change was heard (0 for the start-up ID). false
 * when no ID could be drawn (logged; the change stays pending).
 */
static bool
generation_publish(int trigger, bool reseeded, uint64_t change_ns)
{
	struct generation_stats *s = &generation.stats;
	uint8_t id[GENFILE_ID_BYTES];
	char text[GENFILE_ID_CHARS + 1];
	bool start = trigger == GENERATION_TRIGGER_START;

	if (generation_draw(id) == -1) {
		log_warn("generation: drawing an ID from the kernel");
		return false;
	}
	genfile_format(id, text);
	if (genfile_write(s->path, text) == -1) {
		s->write_failures++;
		snprintf(s->error, sizeof s->error, "%s: %s", s->path, strerror(errno));
		log_warnx("generation: %s", s->error);
	} else
		s->error[0] = '\0';
	generation_unwait();
	memcpy(generation.id, id, sizeof id);
	memcpy(s->id, text, sizeof text);
	if (!start)
		s->number++;
	s->trigger = trigger;
	s->reseeded = reseeded;
	s->since_ns = clock_now_ns();
	clock_gettime(CLOCK_REALTIME, &s->since);
	s->reseed_ns = start ? 0 : s->since_ns - change_ns;
	s->pending = false;
	generation.started = true;
	if (start)
		log_info("generation: %s in %s (this start's)", text, s->path);
	else
		log_info("generation %" PRIu64 ": %s in %s, %.1f ms after the change (%s)%s",
		    s->number, text, s->path, (double)s->reseed_ns / 1e6,
		    generation_trigger_name(trigger), reseeded ? ", after the kernel's reseed" :
		    "; no kernel reseed: the sink is not the kernel");
	if (generation.published != NULL)
		generation.published(generation.published_arg);
	if (!start)
		hookclient_request(s->number, id, (uint32_t)trigger);
	explicit_bzero(id, sizeof id);
	return true;
}

/* /dev/random is readable: the CRNG is ready, so the start-up ID can be drawn. */
static void
generation_crng_ready(int fd, short what, void *arg)
{
	if (!generation.started)
		generation_publish(GENERATION_TRIGGER_START, false, 0);
	generation_unwait();
}

/* Publish the start-up ID now, or once the CRNG is ready (poll() on /dev/random says when). */
static void
generation_start_id(struct event_base *base)
{
	uint8_t probe[1];

	if (getrandom(probe, sizeof probe, GRND_NONBLOCK) == (ssize_t)sizeof probe) {
		explicit_bzero(probe, sizeof probe);
		generation_publish(GENERATION_TRIGGER_START, false, 0);
		return;
	}
	log_info("generation: the kernel's CRNG is not ready; the start-up ID follows once it is");
	if ((generation.random_fd = open("/dev/random", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) ==
	    -1 || (generation.ev_ready = event_new(base, generation.random_fd, EV_READ,
	    generation_crng_ready, NULL)) == NULL || event_add(generation.ev_ready, NULL) == -1) {
		log_warn("generation: /dev/random");
		generation_unwait();
	}
}

void
generation_start(struct event_base *base, const char *path, bool reseeds)
{
	struct generation_stats *s = &generation.stats;
	uid_t uid;
	gid_t gid;
	int created;

	memset(s, 0, sizeof *s);
	s->path = xstrdup(path);
	s->trigger = GENERATION_TRIGGER_START;
	generation.reseeds = reseeds;
	generation.started = false;
	hookclient_start(base);
	if ((created = rundir_make(path)) == -1)
		log_warn("generation: creating the directory of %s", path);
	else if (privdrop_ids(&uid, &gid))
		rundir_for_user(path, created == 1, uid, gid, "generation",
		    "replace the generation file in this directory");
	generation_start_id(base);
}

void
generation_stop(void)
{
	struct generation_stats *s = &generation.stats;
	char text[GENFILE_ID_CHARS + 1];

	generation_unwait();
	hookclient_stop();
	/* Only what this daemon wrote: a file another one replaced since is left alone. */
	if (s->path != NULL && generation.started && genfile_read(s->path, text) == 0 &&
	    strcmp(text, s->id) == 0 && unlink(s->path) == -1)
		log_warn("generation: removing %s", s->path);
	free((char *)s->path);
	s->path = NULL;
	generation.published = NULL;
	explicit_bzero(generation.id, sizeof generation.id);
}

void
generation_changed(enum vmgenid_trigger trigger, uint64_t event_ns)
{
	struct generation_stats *s = &generation.stats;

	s->changes++;
	if (!s->pending) {
		s->pending = true;
		s->pending_trigger = (int)trigger;
		s->pending_since_ns = event_ns;
	}
	if (!generation.reseeds)
		generation_publish(s->pending_trigger, false, s->pending_since_ns);
}

void
generation_reseeded(uint64_t reseed_ns)
{
	struct generation_stats *s = &generation.stats;

	/* A reseed of a refill fed before the change would prove nothing. */
	if (s->pending && reseed_ns >= s->pending_since_ns)
		generation_publish(s->pending_trigger, true, s->pending_since_ns);
}

void
generation_listen(void (*published)(void *), void *arg)
{
	generation.published = published;
	generation.published_arg = arg;
}

const struct generation_stats *
generation_stats(void)
{
	return &generation.stats;
}
