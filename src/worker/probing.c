/* SPDX-License-Identifier: MIT */
/*
 * Finding the sources: each enabled module probed, at start (the quick
 * ones first, so a device makes the first feed while a clock is still
 * being assessed), on SIGHUP, and with backoff while none is usable.
 */
#include <stdbool.h>
#include <stdio.h>

#include <event2/event.h>

#include "backoff.h"
#include "clock.h"
#include "log.h"
#include "probing.h"
#include "registry.h"

static struct {
	struct event *ev_reprobe;   /* while no source is usable */
	struct event *ev_slow;      /* the slow-starting modules' turn */
	bool slow_pending;          /* they wait for the first feed */
	bool fed;                   /* it went out */
	unsigned backoff_ms;
	bool warned_none;           /* "no usable entropy source" said */
} probing;

/* Whether any module has an instance. */
static bool
probing_any_instance(void)
{
	return !TAILQ_EMPTY(&registry_instances);
}

/* No instance anywhere: say so once, with each module's reason, and retry. */
static void
probing_none(void)
{
	struct entropyd_module *m;
	struct timeval tv;
	char reasons[1024] = "";
	size_t len = 0;

	TAILQ_FOREACH(m, &registry_modules, entry)
		if (m->enabled && len < sizeof reasons)
			len += (size_t)snprintf(reasons + len, sizeof reasons - len, "%s%s: %s",
			    len ? "; " : "", m->src->name, m->unusable ? m->unusable :
			    "no device found");
	if (!probing.warned_none)
		log_warnx("no usable entropy source (%s); re-probing until one appears",
		    len ? reasons : "none enabled");
	probing.warned_none = true;
	probing.backoff_ms = backoff_next(probing.backoff_ms);
	tv = clock_tv_ms(probing.backoff_ms);
	evtimer_add(probing.ev_reprobe, &tv);
}

void
probing_run(enum probing_set set)
{
	struct entropyd_module *m;
	struct timeval tv;
	bool slow;

	if (set != PROBING_SLOW) {
		probing.slow_pending = false;
		evtimer_del(probing.ev_slow);
	}
	TAILQ_FOREACH(m, &registry_modules, entry) {
		if (!m->enabled)
			continue;
		slow = (m->src->flags & ENTROPYD_SOURCE_SLOW_START) != 0;
		if ((set == PROBING_QUICK && slow) || (set == PROBING_SLOW && !slow)) {
			probing.slow_pending |= set == PROBING_QUICK;
			continue;
		}
		registry_probe(m);
		if (TAILQ_EMPTY(&m->instances) && !probing.warned_none)
			log_info("%s: not used: %s", m->src->name, m->unusable ? m->unusable :
			    "no device found");
	}
	if (probing.slow_pending && probing_any_instance()) {
		tv = clock_tv_ms(PROBING_SLOW_START_MS);
		evtimer_add(probing.ev_slow, &tv);
		return;
	}
	if (probing.slow_pending) {
		/* Nothing quicker to wait for. */
		probing.slow_pending = false;
		probing_run(PROBING_SLOW);
		return;
	}
	if (!probing_any_instance()) {
		probing_none();
		return;
	}
	probing.backoff_ms = 0;
	probing.warned_none = false;
}

/* The re-probe's timer. */
static void
probing_again(int fd, short what, void *arg)
{
	probing_run(PROBING_ALL);
}

/* The first feed came, or none within PROBING_SLOW_START_MS: probe the slow-starting modules. */
static void
probing_slow(int fd, short what, void *arg)
{
	if (!probing.slow_pending)
		return;
	probing.slow_pending = false;
	if (probing.fed)
		log_debug("the first feed is out: probing the slow-starting sources");
	else
		log_info("no feed within %d ms: probing the slow-starting sources now",
		    PROBING_SLOW_START_MS);
	probing_run(PROBING_SLOW);
}

void
probing_fed(void)
{
	struct timeval now = { 0, 0 };

	probing.fed = true;
	if (probing.slow_pending)
		evtimer_add(probing.ev_slow, &now);
}

void
probing_found(void)
{
	probing.warned_none = false;
}

void
probing_start(struct event_base *base)
{
	probing.ev_reprobe = evtimer_new(base, probing_again, NULL);
	probing.ev_slow = evtimer_new(base, probing_slow, NULL);
}

void
probing_stop(void)
{
	event_free(probing.ev_reprobe);
	event_free(probing.ev_slow);
	probing.ev_reprobe = probing.ev_slow = NULL;
	probing.slow_pending = probing.fed = false;
}
