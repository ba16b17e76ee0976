/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_DAEMONIZE_H
#define ENTROPYD_DAEMONIZE_H

#include <stdbool.h>

/*
 * Detach from the terminal with a readiness pipe, so that a background
 * start reports only real success. daemonize_start() forks twice with a
 * new session between, chdirs to /, and puts stdin and stdout on /dev/null;
 * stderr stays the starting command's, and warnings and errors logged to
 * syslog are copied there, until daemonize_ready(). The starting process
 * waits: it exits 0 once daemonize_ready() is called in the daemon, or,
 * when the daemon ends before that, with the daemon's own exit status (71,
 * EX_OSERR, if a signal ended it or it exited 0), the daemon's error
 * already on its stderr. Descriptors (the pidfile and its lock) are kept.
 * Returns 0 in the daemon, or -1 with errno.
 */
int daemonize_start(void);
/*
 * The daemon is up (sources probed, control socket listening, privileges
 * dropped, pidfile written): let the starting process exit 0, and put
 * stderr on /dev/null. Does nothing in the foreground or when called again.
 */
void daemonize_ready(void);
/*
 * In a process forked from the daemon that will not report it up (the
 * feeder, the supervisor once it forked the first worker): close this
 * process's end of the readiness pipe, so that the worker's is the one the
 * starting process waits on. Whether there was one (a background start not
 * yet up: stderr is still the starting command's).
 */
bool daemonize_release(void);
/*
 * What daemonize_ready() does to this process's logging, without the word:
 * no more copies of log lines on stderr, and stderr on /dev/null (devnull,
 * a descriptor open on it, is used and closed; -1: open it here).
 */
void daemonize_quiet(int devnull);

#endif
