/* SPDX-License-Identifier: MIT */
/*
 * The plugin host protocol's framing: fields round-trip, a malformed or
 * cut message is refused without an over-read, a message larger than the
 * receiver's buffer is discarded and said so, descriptors travel, and the
 * forget frames (FORGET on the control socket, FORGOTTEN in the data
 * stream) carry their sequence number and keep their place among the reads.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "pluginproto.h"

Test(pluginproto, fields_round_trip)
{
	uint8_t buf[256];
	struct pluginproto_msg m, r;
	char s[64];
	uint32_t u;
	int32_t i;
	double d;
	bool present;

	pluginproto_begin(&m, buf, sizeof buf, PP_LOG, 7);
	pluginproto_put_u32(&m, 0xdeadbeefu);
	pluginproto_put_i32(&m, -3);
	pluginproto_put_f64(&m, 2.5);
	pluginproto_put_str(&m, "a\nline\x1b");
	pluginproto_put_str(&m, NULL);
	pluginproto_put_str(&m, "");
	cr_assert_not(m.bad);
	cr_assert(pluginproto_open(&r, buf, m.len));
	cr_assert_eq(pluginproto_header(&r)->type, PP_LOG);
	cr_assert_eq(pluginproto_header(&r)->id, 7);
	cr_assert(pluginproto_get_u32(&r, &u) && u == 0xdeadbeefu);
	cr_assert(pluginproto_get_i32(&r, &i) && i == -3);
	cr_assert(pluginproto_get_f64(&r, &d) && d == 2.5);
	cr_assert(pluginproto_get_str(&r, s, sizeof s, &present) && present);
	cr_assert_str_eq(s, "a?line?", "control characters never reach a log");
	cr_assert(pluginproto_get_str(&r, s, sizeof s, &present) && !present);
	cr_assert(pluginproto_get_str(&r, s, sizeof s, &present) && present && s[0] == '\0');
	cr_assert(pluginproto_done(&r));
}

Test(pluginproto, malformed_messages_are_refused)
{
	uint8_t buf[64];
	struct pluginproto_msg m, r;
	char s[8];
	uint32_t u;
	bool present;

	cr_assert_not(pluginproto_open(&r, buf, 3), "shorter than a header");
	/* A string whose length runs past the end. */
	pluginproto_begin(&m, buf, sizeof buf, PP_UNUSABLE, 0);
	pluginproto_put_u32(&m, 1000);
	pluginproto_put_bytes(&m, "abc", 3);
	pluginproto_open(&r, buf, m.len);
	cr_assert_not(pluginproto_get_str(&r, s, sizeof s, &present));
	cr_assert_not(pluginproto_done(&r));
	/* A string longer than the reader's buffer. */
	pluginproto_begin(&m, buf, sizeof buf, PP_UNUSABLE, 0);
	pluginproto_put_str(&m, "far too long for eight");
	pluginproto_open(&r, buf, m.len);
	cr_assert_not(pluginproto_get_str(&r, s, sizeof s, &present));
	/* A field missing, or one left over. */
	pluginproto_begin(&m, buf, sizeof buf, PP_PROBED, 0);
	pluginproto_open(&r, buf, m.len);
	cr_assert_not(pluginproto_get_u32(&r, &u));
	pluginproto_begin(&m, buf, sizeof buf, PP_PROBED, 0);
	pluginproto_put_u32(&m, 1);
	pluginproto_put_u32(&m, 2);
	pluginproto_open(&r, buf, m.len);
	cr_assert(pluginproto_get_u32(&r, &u));
	cr_assert_not(pluginproto_done(&r), "a field left over");
	/* Building past the buffer marks the message bad; it is never sent. */
	pluginproto_begin(&m, buf, 12, PP_PROBED, 0);
	pluginproto_put_u32(&m, 1);
	pluginproto_put_u32(&m, 2);
	cr_assert(m.bad);
}

Test(pluginproto, messages_larger_than_asked_are_cut_and_said_so)
{
	uint8_t big[8192], small[4096 + 8];
	struct pluginproto_header h;
	struct pluginproto_msg m;
	int sv[2], fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	memset(big, 0xa5, sizeof big);
	pluginproto_begin(&m, big, sizeof big, PP_DATA, 1);
	m.len = sizeof big;
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	memset(small, 0, sizeof small);
	errno = 0;
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, small, 4096), -1);
	cr_assert_eq(errno, EMSGSIZE);
	cr_assert_eq(small[4096], 0, "nothing written past what was asked for");
	/* The next message is whole again. */
	pluginproto_begin(&m, big, sizeof big, PP_DATA, 1);
	pluginproto_put_bytes(&m, "xyz", 3);
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, small, 4096), 3);
	cr_assert_eq(h.type, PP_DATA);
	pluginproto_begin(&m, big, sizeof big, PP_DATA, 1);
	m.len = sizeof big;
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	cr_assert_eq(pluginproto_recv(sv[0], small, sizeof small, MSG_DONTWAIT, fds), -1);
	cr_assert_eq(errno, EMSGSIZE);
	close(sv[1]);
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, small, 4096), -2, "end of stream");
	close(sv[0]);
}

Test(pluginproto, descriptors_travel_with_a_message)
{
	uint8_t buf[64];
	struct pluginproto_msg m;
	struct stat a, b;
	int sv[2], fds[2], fd = open("/dev/null", O_RDONLY);

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pluginproto_begin(&m, buf, sizeof buf, PP_OPEN, 3);
	cr_assert_eq(pluginproto_send(sv[1], &m, fd, -1), 0);
	cr_assert_eq(pluginproto_recv(sv[0], buf, sizeof buf, 0, fds), 8);
	cr_assert_geq(fds[0], 0);
	cr_assert_eq(fds[1], -1);
	fstat(fd, &a);
	fstat(fds[0], &b);
	cr_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	cr_assert(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, "received descriptors are close-on-exec");
	close(fds[0]);
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

Test(pluginproto, forget_frames_carry_their_number_and_keep_their_place)
{
	uint8_t buf[64], payload[4096];
	struct pluginproto_header h;
	struct pluginproto_msg m, r;
	uint32_t seq;
	int sv[2], fds[2];
	ssize_t n;

	/* New types after the old ones: an old peer's numbers mean what they meant. */
	cr_assert_eq(PP_FORGET, PP_SHUTDOWN + 1);
	cr_assert_eq(PP_FORGOTTEN, PP_RESULT + 1);
	cr_assert_lt(PP_FORGET, PP_LOADED, "FORGET is a daemon-to-host control message");
	cr_assert_gt(PP_FORGOTTEN, PP_WANT, "FORGOTTEN travels in the data stream");

	/* FORGET: the host's instance id and one u32, nothing more. */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pluginproto_begin(&m, buf, sizeof buf, PP_FORGET, 5);
	pluginproto_put_u32(&m, 0xfffffffeu);
	cr_assert_eq(pluginproto_send(sv[0], &m, -1, -1), 0);
	n = pluginproto_recv(sv[1], buf, sizeof buf, MSG_DONTWAIT, fds);
	cr_assert_eq(n, (ssize_t)(sizeof h + sizeof seq));
	cr_assert(pluginproto_open(&r, buf, (size_t)n));
	cr_assert_eq(pluginproto_header(&r)->type, PP_FORGET);
	cr_assert_eq(pluginproto_header(&r)->id, 5);
	cr_assert(pluginproto_get_u32(&r, &seq) && seq == 0xfffffffeu);
	cr_assert(pluginproto_done(&r));
	/* One without its number, or with one too many, is malformed. */
	pluginproto_begin(&m, buf, sizeof buf, PP_FORGET, 5);
	pluginproto_open(&r, buf, m.len);
	cr_assert_not(pluginproto_get_u32(&r, &seq));
	pluginproto_begin(&m, buf, sizeof buf, PP_FORGET, 5);
	pluginproto_put_u32(&m, 1);
	pluginproto_put_u32(&m, 2);
	pluginproto_open(&r, buf, m.len);
	cr_assert(pluginproto_get_u32(&r, &seq));
	cr_assert_not(pluginproto_done(&r));

	/* In the data stream: DATA, FORGOTTEN 9, DATA come out in that order, each whole. */
	pluginproto_begin(&m, buf, sizeof buf, PP_DATA, 5);
	pluginproto_put_bytes(&m, "old", 3);
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	pluginproto_begin(&m, buf, sizeof buf, PP_FORGOTTEN, 5);
	pluginproto_put_u32(&m, 9);
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	pluginproto_begin(&m, buf, sizeof buf, PP_DATA, 5);
	pluginproto_put_bytes(&m, "new!", 4);
	cr_assert_eq(pluginproto_send(sv[1], &m, -1, -1), 0);
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, payload, sizeof payload), 3);
	cr_assert(h.type == PP_DATA && memcmp(payload, "old", 3) == 0);
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, payload, sizeof payload),
	    (ssize_t)sizeof seq, "the payload is the number alone");
	memcpy(&seq, payload, sizeof seq);
	cr_assert(h.type == PP_FORGOTTEN && h.id == 5 && seq == 9);
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, payload, sizeof payload), 4);
	cr_assert(h.type == PP_DATA && memcmp(payload, "new!", 4) == 0);
	errno = 0;
	cr_assert_eq(pluginproto_recv_split(sv[0], &h, payload, sizeof payload), -1);
	cr_assert_eq(errno, EAGAIN);
	close(sv[0]);
	close(sv[1]);
}
