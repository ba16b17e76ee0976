/* SPDX-License-Identifier: MIT */
/*
 * Page-aligned buffers locked in memory where the process may, so key
 * material never reaches swap; one log line when locking is refused.
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "memlock.h"

static atomic_size_t memlock_locked;
static atomic_bool memlock_warned;

/* The buffer length rounded up to whole pages. */
static size_t
memlock_span(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

void *
memlock_alloc(size_t len)
{
	size_t span = memlock_span(len);
	void *p;
	int e;

	if ((e = posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), span)) != 0) {
		errno = e;
		fatal("memlock: %zu bytes", span);
	}
	memset(p, 0, span);
#ifdef ENTROPYD_SANITIZED
	/* Keep the sanitizers' view simple: no locking in that build. */
	return p;
#else
	if (mlock(p, span) == 0) {
		atomic_fetch_add(&memlock_locked, 1);
		/* Mark the pages: a locked buffer stays out of core dumps too. */
		(void)madvise(p, span, MADV_DONTDUMP);
	} else if (!atomic_exchange(&memlock_warned, true))
		log_info("entropy buffers are not locked in memory (%s); "
		    "raise RLIMIT_MEMLOCK or run with CAP_IPC_LOCK to keep them out of swap",
		    strerror(errno));
	return p;
#endif
}

void
memlock_free(void *p, size_t len)
{
	size_t span = memlock_span(len);

	if (p == NULL)
		return;
	explicit_bzero(p, span);
#ifndef ENTROPYD_SANITIZED
	if (munlock(p, span) == 0 && atomic_load(&memlock_locked) > 0)
		atomic_fetch_sub(&memlock_locked, 1);
#endif
	free(p);
}

size_t
memlock_count(void)
{
	return atomic_load(&memlock_locked);
}
