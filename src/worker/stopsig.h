/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_STOPSIG_H
#define ENTROPYD_STOPSIG_H

#include <stdbool.h>

/*
 * SIGTERM and SIGINT as a descriptor (signalfd): the loop reads it, and a
 * wait the loop's thread makes outside the loop (a plugin host's answer,
 * up to its 5 s limit) polls it too, so a stop is never held up by it.
 */

/*
 * Block SIGTERM and SIGINT in this thread (threads made later inherit it;
 * call it before any other exists) and open the descriptor. 0, or -1 with
 * errno.
 */
int stopsig_open(void);
/* The descriptor, readable while a stop signal is pending; -1 when not open. */
int stopsig_fd(void);
/* Take one pending stop signal: its number, or 0 when none is pending. */
int stopsig_take(void);
/* Close the descriptor. The signals stay blocked: the process is ending, and one
 * sent now must not kill it before it has tidied up. */
void stopsig_close(void);

#endif
