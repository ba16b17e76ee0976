/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_DAEMONIZE_H
#define ENTROPYD_DAEMONIZE_H

/*
 * Detach from the terminal: fork twice with a new session between, chdir
 * to /, stdin, stdout and stderr to /dev/null. The original process waits
 * until daemonize_ready() is called in the daemon and then exits 0, or
 * exits 71 (EX_OSERR) when the daemon ends before that, so an init script
 * sees a pidfile that names a running daemon as soon as the start returns.
 * Descriptors (the pidfile and its lock) are kept. 0, or -1 with errno.
 */
int daemonize_start(void);
/* Tell the waiting parent the daemon is up. */
void daemonize_ready(void);

#endif
