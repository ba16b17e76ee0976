/* SPDX-License-Identifier: MIT */
/*
 * The messages between the worker, the plugin launcher and the plugin
 * hosts: a header and bounds-checked fields, one message per send.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"
#include "pluginproto.h"

/* A NULL string on the wire. */
#define PLUGINPROTO_NULL_STR 0xffffffffu

void
pluginproto_begin(struct pluginproto_msg *m, void *buf, size_t cap, uint16_t type, uint32_t id)
{
	struct pluginproto_header h = { .type = type, .id = id };

	m->buf = buf;
	m->cap = cap;
	m->len = sizeof h;
	m->pos = 0;
	m->bad = cap < sizeof h;
	if (!m->bad)
		memcpy(buf, &h, sizeof h);
}

/* Append len bytes, or mark the message bad when they do not fit. */
void
pluginproto_put_bytes(struct pluginproto_msg *m, const void *p, size_t len)
{
	if (m->bad || len > m->cap - m->len) {
		m->bad = true;
		return;
	}
	memcpy(m->buf + m->len, p, len);
	m->len += len;
}

void
pluginproto_put_u32(struct pluginproto_msg *m, uint32_t v)
{
	pluginproto_put_bytes(m, &v, sizeof v);
}

void
pluginproto_put_i32(struct pluginproto_msg *m, int32_t v)
{
	pluginproto_put_bytes(m, &v, sizeof v);
}

void
pluginproto_put_f64(struct pluginproto_msg *m, double v)
{
	pluginproto_put_bytes(m, &v, sizeof v);
}

void
pluginproto_put_str(struct pluginproto_msg *m, const char *s)
{
	size_t len;

	if (s == NULL) {
		pluginproto_put_u32(m, PLUGINPROTO_NULL_STR);
		return;
	}
	len = strnlen(s, PLUGINPROTO_STRING_MAX);
	pluginproto_put_u32(m, (uint32_t)len);
	pluginproto_put_bytes(m, s, len);
}

bool
pluginproto_open(struct pluginproto_msg *m, void *buf, size_t len)
{
	m->buf = buf;
	m->cap = m->len = len;
	m->pos = sizeof(struct pluginproto_header);
	m->bad = len < sizeof(struct pluginproto_header);
	return !m->bad;
}

const struct pluginproto_header *
pluginproto_header(const struct pluginproto_msg *m)
{
	return (const struct pluginproto_header *)(const void *)m->buf;
}

/* Take len bytes from the payload, or mark the message bad. */
static const uint8_t *
pluginproto_take(struct pluginproto_msg *m, size_t len)
{
	const uint8_t *p;

	if (m->bad || len > m->len - m->pos) {
		m->bad = true;
		return NULL;
	}
	p = m->buf + m->pos;
	m->pos += len;
	return p;
}

/* Copy the next size bytes of the message into v; false (and bad) when short. */
static bool
pluginproto_get_fixed(struct pluginproto_msg *m, void *v, size_t size)
{
	const uint8_t *p = pluginproto_take(m, size);

	if (p != NULL)
		memcpy(v, p, size);
	return p != NULL;
}

bool
pluginproto_get_u32(struct pluginproto_msg *m, uint32_t *v)
{
	return pluginproto_get_fixed(m, v, sizeof *v);
}

bool
pluginproto_get_i32(struct pluginproto_msg *m, int32_t *v)
{
	return pluginproto_get_fixed(m, v, sizeof *v);
}

bool
pluginproto_get_f64(struct pluginproto_msg *m, double *v)
{
	return pluginproto_get_fixed(m, v, sizeof *v);
}

bool
pluginproto_get_str(struct pluginproto_msg *m, char *out, size_t outlen, bool *present)
{
	const uint8_t *p;
	uint32_t len;
	size_t i;

	if (!pluginproto_get_u32(m, &len))
		return false;
	*present = len != PLUGINPROTO_NULL_STR;
	out[0] = '\0';
	if (!*present)
		return true;
	if (len > PLUGINPROTO_STRING_MAX || len >= outlen || (p = pluginproto_take(m, len)) == NULL) {
		m->bad = true;
		return false;
	}
	for (i = 0; i < len; i++)
		out[i] = p[i] < 0x20 || p[i] == 0x7f ? '?' : (char)p[i];
	out[len] = '\0';
	return true;
}

const uint8_t *
pluginproto_rest(struct pluginproto_msg *m, size_t *len)
{
	*len = m->len - m->pos;
	return pluginproto_take(m, *len);
}

bool
pluginproto_done(const struct pluginproto_msg *m)
{
	return !m->bad && m->pos == m->len;
}

int
pluginproto_send(int sock, const struct pluginproto_msg *m, int fd1, int fd2)
{
	int fds[MSG_MAX_FDS] = { fd1, fd2 };

	if (m->bad) {
		errno = EMSGSIZE;
		return -1;
	}
	return msg_send(sock, m->buf, m->len, fds, MSG_MAX_FDS);
}

ssize_t
pluginproto_recv(int sock, void *buf, size_t cap, int flags, int fds[2])
{
	return msg_recv(sock, buf, cap, flags, fds);
}

ssize_t
pluginproto_recv_split(int sock, struct pluginproto_header *h, void *payload, size_t cap)
{
	struct iovec iov[2] = { { h, sizeof *h }, { payload, cap } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_DONTWAIT);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	if (n == 0)
		return -2;
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof *h) {
		errno = EMSGSIZE;
		return -1;
	}
	return n - (ssize_t)sizeof *h;
}
