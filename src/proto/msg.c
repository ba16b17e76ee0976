/* SPDX-License-Identifier: MIT */
/*
 * Messages with descriptors on Unix sockets (sendmsg and recvmsg with
 * SCM_RIGHTS), for every channel between the daemon's processes: the
 * supervisor's to the feeder, and the plugin launcher's and hosts'.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "msg.h"

int
msg_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(MSG_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int pass[MSG_MAX_FDS];
	size_t i, n = 0;
	ssize_t sent;

	for (i = 0; i < nfds && i < MSG_MAX_FDS; i++)
		if (fds[i] >= 0)
			pass[n++] = fds[i];
	if (n > 0) {
		memset(&ctl, 0, sizeof ctl);
		mh.msg_control = ctl.space;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), pass, n * sizeof(int));
	}
	do
		sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (sent == -1 && errno == EINTR);
	if (sent == -1)
		return -1;
	if ((size_t)sent != len) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

ssize_t
msg_recv(int sock, void *buf, size_t cap, int flags, int fds[MSG_MAX_FDS])
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
	    .msg_controllen = sizeof ctl.space };
	struct cmsghdr *c;
	ssize_t n;
	int i, got = 0;

	for (i = 0; i < MSG_MAX_FDS; i++)
		fds[i] = -1;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		size_t k, j;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (j = 0; j < k; j++) {
			memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof fd);
			if (got < MSG_MAX_FDS)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		msg_close_fds(fds);
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}

void
msg_close_fds(int fds[MSG_MAX_FDS])
{
	int i;

	for (i = 0; i < MSG_MAX_FDS; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}
