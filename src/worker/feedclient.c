/* SPDX-License-Identifier: MIT */
/*
 * The worker's end of its socket to the feeder: the kernel sink's calls as
 * requests, one answered at a time, and the copy of the feeder's state its
 * answers carry.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feedclient.h"
#include "log.h"
#include "xmalloc.h"

struct feedclient *
feedclient_new(int fd)
{
	struct feedclient *c = xcalloc(1, sizeof *c);

	c->fd = fd;
	return c;
}

void
feedclient_free(struct feedclient *c)
{
	if (c == NULL)
		return;
	if (c->fd != -1)
		close(c->fd);
	free(c);
}

int
feedclient_request(struct feedclient *c, enum feedproto_type type, uint32_t arg0,
    const void *payload, size_t len, struct feedproto_state *st)
{
	uint8_t frame[FEEDPROTO_MAX_FRAME], answer[FEEDPROTO_HEADER_BYTES + FEEDPROTO_STATE_BYTES];
	struct feedproto_frame a;
	size_t flen = feedproto_encode(frame, sizeof frame, type, arg0, 0, payload, len);
	ssize_t n;
	int e;

	if (flen == 0) {
		errno = EINVAL; /* our own bug: the feeder would refuse it and end us */
		return -1;
	}
	while ((n = send(c->fd, frame, flen, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	explicit_bzero(frame, flen);
	if (n != (ssize_t)flen)
		return -1;
	while ((n = recv(c->fd, answer, sizeof answer, 0)) == -1 && errno == EINTR)
		;
	if (n <= 0) {
		errno = n == 0 ? EPIPE : errno;
		return -1;
	}
	if (feedproto_decode(answer, (size_t)n, false, &a) != FEEDPROTO_OK ||
	    a.type != FEEDPROTO_ANSWER) {
		errno = EPROTO;
		return -1;
	}
	if (a.len == FEEDPROTO_STATE_BYTES) {
		feedproto_answer_state(&a, &c->state);
		c->have_state = true;
	}
	if (st != NULL)
		feedproto_answer_state(&a, st);
	if ((e = (int)a.arg0) != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

int
feedclient_query(struct feedclient *c, struct feedproto_state *st)
{
	return feedclient_request(c, FEEDPROTO_QUERY, 0, NULL, 0, st);
}

const struct feedproto_state *
feedclient_state(const struct feedclient *c)
{
	return c->have_state ? &c->state : NULL;
}

void
feedclient_status(const char *status, void *arg)
{
	char text[FEEDPROTO_MAX_STATUS];
	size_t i, len = strlen(status);

	/* What the feeder takes: printable ASCII, cut to its length. */
	if (len > sizeof text)
		len = sizeof text;
	for (i = 0; i < len; i++)
		text[i] = status[i] >= 0x20 && status[i] <= 0x7e ? status[i] : '?';
	if (feedclient_request(arg, FEEDPROTO_STATUS, 0, text, len, NULL) == -1)
		log_debug("feeder: STATUS: %s", strerror(errno));
}

/* The kernel sink's ops, each a request to the feeder. */
static int
feedclient_add(struct sink *s, const struct feedproto_batch *b)
{
	return feedclient_request(s->ops_arg, FEEDPROTO_ADD, b->segments, b->payload, b->len, NULL);
}

static int
feedclient_mix(struct sink *s, const uint8_t *buf, size_t len)
{
	return feedclient_request(s->ops_arg, FEEDPROTO_MIX, 0, buf, len, NULL);
}

static int
feedclient_reseed(struct sink *s)
{
	return feedclient_request(s->ops_arg, FEEDPROTO_RESEED, 0, NULL, 0, NULL);
}

static int
feedclient_crng_ready(struct sink *s)
{
	struct feedproto_state st;

	return feedclient_query(s->ops_arg, &st) == 0 && st.crng_ready ? 1 : 0;
}

static int
feedclient_entropy_avail(struct sink *s)
{
	struct feedproto_state st;

	return feedclient_query(s->ops_arg, &st) == 0 ? (int)st.entropy_avail : 0;
}

const struct sink_kernel_ops feedclient_ops = {
	.add = feedclient_add,
	.mix = feedclient_mix,
	.reseed = feedclient_reseed,
	.crng_ready = feedclient_crng_ready,
	.entropy_avail = feedclient_entropy_avail,
};
