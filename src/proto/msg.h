/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_MSG_H
#define ENTROPYD_MSG_H

#include <stddef.h>
#include <sys/types.h>

/*
 * One message on a Unix socket between two of the daemon's processes,
 * with descriptors passed alongside (SCM_RIGHTS): written once for the
 * supervisor, the feeder and the plugin hosts alike.
 */

/* Descriptors one message may carry at most. */
#define MSG_MAX_FDS 2

/*
 * Send len bytes as one message, with the descriptors of fds that are not
 * -1 (nfds at most MSG_MAX_FDS). 0 once all of it went, or -1 with errno.
 */
int msg_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
/*
 * Receive one message into buf (cap bytes); the descriptors it carried go
 * into fds (-1 where none; any past MSG_MAX_FDS are closed). Its length, 0
 * when the peer closed, or -1 with errno: EMSGSIZE when the message or its
 * descriptors did not fit (the descriptors are closed then).
 */
ssize_t msg_recv(int sock, void *buf, size_t cap, int flags, int fds[MSG_MAX_FDS]);
/* Close the descriptors msg_recv left in fds (those not -1). */
void msg_close_fds(int fds[MSG_MAX_FDS]);

#endif
