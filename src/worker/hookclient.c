/* SPDX-License-Identifier: MIT */
/*
 * The worker's side of the generation hooks: a HOOKS request to the
 * supervisor after each publish, and the outcomes it reports back, kept
 * per hook for /health and /metrics. The worker runs nothing itself.
 */
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "hookclient.h"
#include "log.h"

static struct {
	int fd;
	struct event *ev;
	struct hookclient_stats stats;
} hookclient = { .fd = -1 };

void
hookclient_attach(int fd)
{
	hookclient.fd = fd;
	hookclient.stats.supervised = fd != -1;
}

/* The record of a hook by name: found, added, or the catch-all once the table is full. */
static struct hookclient_hook *
hookclient_hook(const char *name)
{
	struct hookclient_stats *s = &hookclient.stats;
	struct hookclient_hook *h;
	size_t i;

	for (i = 0; i < s->nhooks; i++)
		if (strcmp(s->hooks[i].name, name) == 0)
			return &s->hooks[i];
	if (s->nhooks < HOOKCLIENT_MAX_HOOKS)
		h = &s->hooks[s->nhooks++];
	else {
		h = &s->hooks[HOOKCLIENT_MAX_HOOKS];
		name = HOOKCLIENT_OTHER;
		if (s->nhooks == HOOKCLIENT_MAX_HOOKS)
			s->nhooks++;
	}
	snprintf(h->name, sizeof h->name, "%s", name);
	return h;
}

bool
hookclient_take(const uint8_t *buf, size_t len)
{
	struct hookclient_stats *s = &hookclient.stats;
	struct feedproto_hook_ran ran;
	struct feedproto_frame f;
	struct hookclient_hook *h;

	if (feedproto_decode(buf, len, false, &f) != FEEDPROTO_OK)
		return false;
	switch (f.type) {
	case FEEDPROTO_HOOK_RAN:
		feedproto_hook_ran_of(&f, &ran);
		if (ran.result >= FEEDPROTO_HOOK_NRESULTS)
			return false;
		h = hookclient_hook(ran.name);
		h->last = ran;
		if (ran.generation != 0)
			h->runs[ran.result]++;
		if (ran.generation != 0 && (ran.result == FEEDPROTO_HOOK_FAILED ||
		    ran.result == FEEDPROTO_HOOK_TIMEOUT))
			s->batch_failed++;
		return true;
	case FEEDPROTO_HOOKS_DONE:
		if (feedproto_hooks_done_generation(&f) == 0) {
			s->checked = true;
			s->check_ready = f.arg0;
			s->check_refused = f.arg1;
			return true;
		}
		s->batch_done = true;
		s->batch_generation = feedproto_hooks_done_generation(&f);
		s->batch_ran = f.arg0;
		s->batch_refused = f.arg1;
		log_info("generation %" PRIu64 ": hooks done: %" PRIu32 " run (%" PRIu32 " failed or "
		    "timed out), %" PRIu32 " refused", s->batch_generation, s->batch_ran,
		    s->batch_failed, s->batch_refused);
		return true;
	default:
		return false;
	}
}

/* The supervisor reported: take every frame queued. */
static void
hookclient_readable(int fd, short what, void *arg)
{
	uint8_t buf[FEEDPROTO_HEADER_BYTES + 8 + FEEDPROTO_MAX_HOOK_NAME + 1];
	ssize_t n;

	for (;;) {
		while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) == -1 && errno == EINTR)
			;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* The supervisor is gone: the worker ends with it (its parent-death signal). */
			log_warnx("hooks: the supervisor closed its socket");
			hookclient_stop();
			return;
		}
		if (!hookclient_take(buf, (size_t)n))
			log_warnx("hooks: a malformed report from the supervisor; ignored");
	}
}

void
hookclient_start(struct event_base *base)
{
	if (hookclient.fd == -1 || hookclient.ev != NULL)
		return;
	hookclient.ev = event_new(base, hookclient.fd, EV_READ | EV_PERSIST, hookclient_readable,
	    NULL);
	if (hookclient.ev == NULL || event_add(hookclient.ev, NULL) == -1)
		log_warnx("hooks: cannot watch the supervisor's socket");
}

void
hookclient_stop(void)
{
	if (hookclient.ev != NULL)
		event_free(hookclient.ev);
	hookclient.ev = NULL;
	if (hookclient.fd != -1)
		close(hookclient.fd);
	hookclient.fd = -1;
}

int
hookclient_request(uint64_t generation, const uint8_t id[FEEDPROTO_ID_BYTES], uint32_t trigger)
{
	struct feedproto_hooks req = { .generation = generation, .trigger = trigger };
	uint8_t frame[FEEDPROTO_HEADER_BYTES + FEEDPROTO_HOOKS_BYTES];
	size_t len;

	if (hookclient.fd == -1)
		return -1;
	memcpy(req.id, id, sizeof req.id);
	hookclient.stats.batch_failed = 0;
	len = feedproto_encode_hooks(frame, sizeof frame, &req);
	if (len == 0 || send(hookclient.fd, frame, len, MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)len) {
		hookclient.stats.request_failures++;
		log_warn("hooks: asking the supervisor to run the hooks of generation %" PRIu64,
		    generation);
		return -1;
	}
	hookclient.stats.requests++;
	return 0;
}

const struct hookclient_stats *
hookclient_stats(void)
{
	return &hookclient.stats;
}
