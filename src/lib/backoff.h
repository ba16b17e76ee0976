/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_BACKOFF_H
#define ENTROPYD_BACKOFF_H

/*
 * Exponential backoff for what is retried: an absent or suspended source
 * reopened, a re-probe, a plugin host restarted. 1 s doubling to 5 min.
 */
#define BACKOFF_MIN_MS 1000u
#define BACKOFF_MAX_MS 300000u

/* The delay after ms: the first (ms below the minimum), else doubled, capped. */
static inline unsigned
backoff_next(unsigned ms)
{
	if (ms < BACKOFF_MIN_MS)
		return BACKOFF_MIN_MS;
	return ms >= BACKOFF_MAX_MS / 2 ? BACKOFF_MAX_MS : ms * 2;
}

#endif
