/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_NOTIFY_H
#define ENTROPYD_NOTIFY_H

/*
 * systemd's readiness protocol without libsystemd: datagrams such as
 * "READY=1" or "STATUS=..." to the socket named by NOTIFY_SOCKET (a path,
 * or "@name" for the abstract namespace). Nothing happens when it is unset.
 */

/* Open the socket if NOTIFY_SOCKET is set; unsets it for child processes. */
void notify_init(void);
/* Send one message; failures are logged at debug level only. */
void notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_close(void);
/*
 * In a worker under a feeder, which owns the socket and sends READY=1 and
 * STOPPING=1 itself: hand STATUS= text to fn (to pass on to the feeder) and
 * drop the rest. Closes this process's socket; nothing when notification
 * is off.
 */
void notify_relay(void (*fn)(const char *status, void *arg), void *arg);

#endif
