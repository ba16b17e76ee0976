/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_MEMLOCK_H
#define ENTROPYD_MEMLOCK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Page-aligned buffers for key material, locked in memory where the
 * process may (RLIMIT_MEMLOCK, or CAP_IPC_LOCK), so conditioned bytes are
 * never written to swap. Where locking is refused the buffer is used
 * unlocked, and one log line says so.
 */
/* A zeroed, page-aligned buffer of len bytes, locked if permitted; dies on out-of-memory. */
void *memlock_alloc(size_t len);
/* Wipe, unlock and free a buffer from memlock_alloc(). */
void memlock_free(void *p, size_t len);
/* How many buffers are locked now (for tests and reports). */
size_t memlock_count(void);

#endif
