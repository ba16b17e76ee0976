/* SPDX-License-Identifier: MIT */
/*
 * Rates per source over fixed windows and the daemon's start time: the
 * worker's own record of its counters over time, which /sources, /health
 * and /metrics read. Samples are taken lazily (rates_touch, the reports),
 * so an idle daemon has no timer for them.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rates.h"
#include "registry.h"
#include "xmalloc.h"

static struct rates_window *rates_windows;
static size_t rates_nwindows;
static uint64_t rates_epoch_ns; /* the first sample: rates start here */
static uint64_t rates_tick_ns;  /* the last sample: windows end every window on */
static struct timespec rates_wall; /* when the daemon started (rates_started) */
static uint64_t rates_mono_ns;

void
rates_started(void)
{
	clock_gettime(CLOCK_REALTIME, &rates_wall);
	rates_mono_ns = clock_now_ns();
}

uint64_t
rates_start_ns(void)
{
	return rates_mono_ns;
}

struct timespec
rates_start_wall(void)
{
	return rates_wall;
}

struct rates_window *
rates_of(const struct entropyd_instance *inst, uint64_t now_ns)
{
	struct rates_window *r;
	size_t i;

	for (i = 0; i < rates_nwindows; i++)
		if (strcmp(rates_windows[i].name, inst->name) == 0)
			return &rates_windows[i];
	rates_windows = xreallocarray(rates_windows, rates_nwindows + 1, sizeof *rates_windows);
	r = &rates_windows[rates_nwindows++];
	*r = (struct rates_window){
		.name = xstrdup(inst->name),
		.mark_ns = rates_epoch_ns != 0 ? rates_epoch_ns : now_ns,
	};
	return r;
}

double
rates_per_second(uint64_t now, uint64_t mark, uint64_t dt_ns)
{
	return dt_ns == 0 || now < mark ? 0.0 : (double)(now - mark) * 1e9 / (double)dt_ns;
}

void
rates_sample(uint64_t now_ns)
{
	struct entropyd_instance *inst;
	struct rates_window *r;
	const struct pipeline_counters *n;
	uint64_t dt;

	if (rates_epoch_ns == 0)
		rates_epoch_ns = now_ns;
	rates_tick_ns = now_ns;
	TAILQ_FOREACH(inst, &registry_instances, all) {
		r = rates_of(inst, now_ns);
		n = &inst->pipe.count;
		dt = now_ns - r->mark_ns;
		if (dt == 0)
			continue;
		r->read_bps = rates_per_second(n->bytes_read, r->mark_read, dt);
		r->fed_bps = rates_per_second(n->bytes_taken, r->mark_fed, dt);
		r->credited_bps = rates_per_second(n->bits_credited, r->mark_credited, dt);
		r->have = true;
		r->mark_ns = now_ns;
		r->mark_read = n->bytes_read;
		r->mark_fed = n->bytes_taken;
		r->mark_credited = n->bits_credited;
	}
}

/*
 * Take the samples of the windows that ended by now_ns (none before the
 * first sample). Counters change only after rates_catch_up, so at a
 * window's end they were what they are now: the samples are those a timer
 * would have taken, and the daemon need not wake up every window to take
 * them. Past the first window that ended, the counters stood still: only
 * the last window's sample (rates of 0) is still needed.
 */
void
rates_catch_up(uint64_t now_ns)
{
	const uint64_t window = RATES_WINDOW_MS * UINT64_C(1000000);
	uint64_t ended;

	if (rates_epoch_ns == 0 || now_ns < rates_tick_ns + window)
		return;
	ended = (now_ns - rates_tick_ns) / window;
	rates_sample(rates_tick_ns + window);
	if (ended > 1)
		rates_sample(rates_tick_ns + (ended - 1) * window);
}

void
rates_touch(void)
{
	if (rates_epoch_ns != 0)
		rates_catch_up(clock_now_ns());
}

void
rates_reset(void)
{
	size_t i;

	for (i = 0; i < rates_nwindows; i++)
		free(rates_windows[i].name);
	free(rates_windows);
	rates_windows = NULL;
	rates_nwindows = 0;
	rates_epoch_ns = 0;
	rates_tick_ns = 0;
}
