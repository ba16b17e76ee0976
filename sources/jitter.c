/* SPDX-License-Identifier: MIT */
/*
 * jitter: CPU execution-time jitter, after the published CPU Jitter RNG
 * design. Each raw sample is the time a fixed piece of work took: the same
 * read-modify-writes along one fixed pseudo-random walk over a buffer
 * larger than the L1 data cache, then a hash step. Nothing in the work
 * depends on an earlier timestamp (the walk's length and places once did,
 * which made a spread of the daemon's own), so what varies is the
 * machine's: caches, TLB, pipeline, interrupts. Samples whose 1st, 2nd or
 * 3rd derivative of time is zero are stuck and never delivered; the rest
 * are folded to 8 bits and delivered as raw samples, so the core runs the
 * SP 800-90B start-up, RCT and APT tests and the online entropy estimates
 * on them and SHA-256 conditions them. Start-up measures the clock's step
 * and the entropy of the samples it gives. On a clock too coarse for the
 * work (a 24 MHz counter: a sample spans some 25 ticks, and measures a
 * hundredth of a bit) the work grows, and its buffer past the caches,
 * where memory accesses vary most, until the samples support the claim,
 * within bounds; then it refuses the clock or lowers the credit to what
 * they support. Reads compute, so
 * pollfd() is -1: the core reads from its reader thread, only while a
 * reserve wants data.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <entropyd/source.h>
#include "builtin.h"
#include "estimate.h"
#include "jitter.h"

#define JITTER_ACCESSES 512         /* memory accesses per sample (at growth level 0) */
#define JITTER_WALK_SEED 0x9e3779b97f4a7c15ULL /* the walk's start, every sample */
#define JITTER_READ_SAMPLES 1024    /* at most per read(), so a stop is prompt */
#define JITTER_DEFAULT_L1 32768u
#define JITTER_STEP_READS 256       /* back-to-back clock reads to find its step */

/* One open instance. */
struct jitter_state {
	struct entropyd_instance *instance;
	uint64_t (*clock)(void);
	uint8_t *mem;
	size_t mem_mask;
	uint32_t hash[16];
	uint64_t last_stamp;
	struct jitter_deriv deriv;
	struct jitter_emit emit;
	unsigned osr;
	unsigned accesses; /* memory accesses per sample: JITTER_ACCESSES, or grown */
	unsigned level;    /* how many times the work was doubled */
	uint64_t step;  /* the clock's smallest step seen at start-up */
	unsigned stuck_run, stuck_cutoff;
	uint64_t deltas, stuck;
};

uint64_t (*jitter_clock_override)(void);

static void jitter_state_free(struct jitter_state *);

static const struct entropyd_host *jitter_host;
static uint64_t jitter_tick_hz; /* quantize_hz: the emulated counter's rate, 0 for none */
static unsigned jitter_growth;  /* the level start-up found last: the next one starts there */

static const struct entropyd_option jitter_options[] = {
	{ "osr", "3", "oversampling rate: credit 1/osr bits per non-stuck delta (3 or more)" },
	{ "memsize", "auto", "work buffer in bytes, a power of 2 (k, M suffixes), at least the "
	    "L1 data cache; auto: twice the L1 data cache" },
	{ "clock", "auto", "timestamp: tsc, monotonic_raw, monotonic_coarse (to test a coarse "
	    "clock); auto: tsc where constant, else monotonic_raw" },
	{ "quantize_hz", "0", "diagnostic: cut monotonic_raw timestamps to the ticks of a "
	    "counter of this rate (k, M, G suffixes; 24M emulates a common arm64 counter); "
	    "0: off" },
	{ NULL, NULL, NULL }
};

/* CLOCK_MONOTONIC_RAW in nanoseconds. */
static uint64_t
jitter_clock_raw(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC_COARSE: a tick-resolution clock, to see start-up refuse it. */
static uint64_t
jitter_clock_coarse(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC_RAW cut to the ticks of a jitter_tick_hz counter (quantize_hz). */
static uint64_t
jitter_clock_quantized(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	/* tv_nsec < 1e9 and the rate <= 1 GHz: the product fits. */
	return (uint64_t)ts.tv_sec * jitter_tick_hz +
	    (uint64_t)ts.tv_nsec * jitter_tick_hz / 1000000000u;
}

#if defined(__x86_64__)
/* The time-stamp counter: cycle resolution, a few ns to read. */
static uint64_t
jitter_clock_tsc(void)
{
	return __rdtsc();
}
#endif

bool
jitter_stuck(struct jitter_deriv *d, uint64_t delta)
{
	uint64_t delta2 = delta - d->last_delta;
	uint64_t delta3 = delta2 - d->last_delta2;

	d->last_delta = delta;
	d->last_delta2 = delta2;
	return delta == 0 || delta2 == 0 || delta3 == 0;
}

uint8_t
jitter_fold(uint64_t delta)
{
	delta ^= delta >> 32;
	delta ^= delta >> 16;
	delta ^= delta >> 8;
	return (uint8_t)delta;
}

void
jitter_emit_init(struct jitter_emit *e, unsigned osr)
{
	e->osr = osr;
	e->credit = 0;
	e->acc = 0;
}

bool
jitter_emit_sample(struct jitter_emit *e, uint8_t sample, uint8_t *out)
{
	e->acc ^= sample;
	e->credit += JITTER_BASE_OSR;
	if (e->credit < e->osr)
		return false;
	e->credit -= e->osr;
	*out = e->acc;
	e->acc = 0;
	return true;
}

unsigned
jitter_stuck_cutoff(unsigned osr)
{
	return 1 + 20 * osr; /* 1 + ceil(20 / H) with H = 1/osr */
}

void
jitter_assess_init(struct jitter_assessor *a, unsigned osr)
{
	memset(a, 0, sizeof *a);
	a->cutoff = jitter_stuck_cutoff(osr);
	/* Enough deltas for the samples at this osr, with room for many stuck ones. */
	a->max_deltas = (size_t)JITTER_STARTUP_SAMPLES * ((osr + JITTER_BASE_OSR - 1) /
	    JITTER_BASE_OSR) * 4;
	jitter_emit_init(&a->emit, osr);
	estimate_init(&a->est, 8, 0, true, false);
}

void
jitter_assess_free(struct jitter_assessor *a)
{
	estimate_free(&a->est);
	explicit_bzero(a, sizeof *a);
}

void
jitter_assess_stamp(struct jitter_assessor *a, uint64_t stamp)
{
	uint64_t delta;
	uint8_t sample;

	if (!a->have_stamp) {
		a->have_stamp = true;
		a->last_stamp = stamp;
		return;
	}
	if (stamp < a->last_stamp)
		a->backwards = true;
	delta = stamp - a->last_stamp;
	a->last_stamp = stamp;
	a->sum_delta += delta;
	/* The first two deltas have no derivatives yet: measured, not judged. */
	if (jitter_stuck(&a->deriv, delta) && a->deltas >= 2) {
		a->stuck++;
		if (++a->run > a->max_run)
			a->max_run = a->run;
	} else {
		a->run = 0;
		if (a->deltas >= 2 && jitter_emit_sample(&a->emit, jitter_fold(delta), &sample)) {
			estimate_sample(&a->est, sample);
			a->samples++;
		}
	}
	a->deltas++;
}

bool
jitter_assess_done(const struct jitter_assessor *a)
{
	return a->backwards || a->max_run >= a->cutoff || a->samples >= JITTER_STARTUP_SAMPLES ||
	    a->deltas >= a->max_deltas;
}

bool
jitter_assess_verdict(struct jitter_assessor *a, double claim, struct jitter_verdict *v,
    char *why, size_t whylen)
{
	memset(v, 0, sizeof *v);
	v->deltas = a->deltas;
	v->stuck = a->stuck;
	v->samples = a->samples;
	v->mean_delta = a->deltas > 0 ? (double)a->sum_delta / (double)a->deltas : 0.0;
	if (a->backwards) {
		snprintf(why, whylen, "start-up: the clock went backwards");
		return false;
	}
	if (a->max_run >= a->cutoff) {
		snprintf(why, whylen, "start-up: %u stuck samples in a row: the clock is too "
		    "coarse or stuck", a->max_run);
		return false;
	}
	if (a->stuck * 100 > a->deltas * JITTER_STARTUP_MAX_PERCENT) {
		snprintf(why, whylen, "start-up: %zu of %zu samples stuck: the clock is too "
		    "coarse or stuck", a->stuck, a->deltas);
		return false;
	}
	if (a->samples < JITTER_STARTUP_SAMPLES || !estimate_compute(&a->est, &v->est)) {
		snprintf(why, whylen, "start-up: only %zu samples from %zu deltas (%zu stuck): "
		    "the clock is too coarse or stuck", a->samples, a->deltas, a->stuck);
		return false;
	}
	v->supported = estimate_credit_target(claim, v->est.min, true);
	if (v->supported < JITTER_MIN_BITS) {
		snprintf(why, whylen, "start-up: the samples measure %.3g bits each (MCV %.3g, "
		    "Markov %.3g, Lag %.3g), which supports %.3g bits per sample, less than %g: "
		    "the clock is too coarse", v->est.min, v->est.mcv, v->est.markov, v->est.lag,
		    v->supported, JITTER_MIN_BITS);
		return false;
	}
	return true;
}

bool
jitter_assess(const uint64_t *stamps, size_t n, unsigned osr, double claim,
    struct jitter_verdict *v, char *why, size_t whylen)
{
	struct jitter_assessor a;
	size_t i;
	bool ok;

	jitter_assess_init(&a, osr);
	for (i = 0; i <= n && !jitter_assess_done(&a); i++)
		jitter_assess_stamp(&a, stamps[i]);
	ok = jitter_assess_verdict(&a, claim, v, why, whylen);
	jitter_assess_free(&a);
	return ok;
}

int
jitter_parse_osr(const char *s, unsigned *osr)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < JITTER_BASE_OSR || v > JITTER_MAX_OSR)
		return -1;
	*osr = (unsigned)v;
	return 0;
}

int
jitter_parse_memsize(const char *s, size_t *size)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		end++;
	}
	if (*end != '\0' || v < JITTER_MIN_MEMSIZE || v > JITTER_MAX_MEMSIZE || (v & (v - 1)))
		return -1;
	*size = (size_t)v;
	return 0;
}

int
jitter_parse_hz(const char *s, uint64_t *hz)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v > JITTER_MAX_QUANTIZE_HZ)
		return -1;
	if (*end == 'k' || *end == 'K') {
		v *= 1000;
		end++;
	} else if (*end == 'M') {
		v *= 1000000;
		end++;
	} else if (*end == 'G') {
		v *= 1000000000;
		end++;
	}
	if (*end != '\0' || (v != 0 && (v < JITTER_MIN_QUANTIZE_HZ || v > JITTER_MAX_QUANTIZE_HZ)))
		return -1;
	*hz = v;
	return 0;
}

/* The L1 data cache size, or a common value when the system does not say. */
static size_t
jitter_l1_size(void)
{
	long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);

	return l1 > 0 ? (size_t)l1 : JITTER_DEFAULT_L1;
}

/* The buffer size: the option, or twice L1 rounded up to a power of 2. */
static int
jitter_memsize(struct entropyd_module *module, size_t *size)
{
	const char *v = jitter_host->option(module, "memsize");
	size_t s;

	if (v == NULL || strcmp(v, "auto") == 0) {
		for (s = JITTER_MIN_MEMSIZE; s < 2 * jitter_l1_size() && s < JITTER_MAX_MEMSIZE;
		    s <<= 1)
			;
		*size = s;
		return 0;
	}
	return jitter_parse_memsize(v, size);
}

/* Whether the kernel says the TSC ticks at a constant rate. */
static bool
jitter_constant_tsc(void)
{
	char line[8192];
	FILE *f;
	bool found = false;

	if ((f = fopen("/proc/cpuinfo", "re")) == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			found = strstr(line, " constant_tsc") != NULL;
			break;
		}
	fclose(f);
	return found;
}

/* The timestamp function the clock option names (quantized with quantize_hz), or NULL. */
static uint64_t (*jitter_pick_clock(const char *name))(void)
{
	if (jitter_clock_override != NULL)
		return jitter_clock_override;
	if (jitter_tick_hz != 0)
		return name == NULL || strcmp(name, "auto") == 0 ||
		    strcmp(name, "monotonic_raw") == 0 ? jitter_clock_quantized : NULL;
	if (name == NULL || strcmp(name, "auto") == 0) {
#if defined(__x86_64__)
		if (jitter_constant_tsc())
			return jitter_clock_tsc;
#endif
		return jitter_clock_raw;
	}
#if defined(__x86_64__)
	if (strcmp(name, "tsc") == 0)
		return jitter_clock_tsc;
#endif
	if (strcmp(name, "monotonic_raw") == 0)
		return jitter_clock_raw;
	if (strcmp(name, "monotonic_coarse") == 0)
		return jitter_clock_coarse;
	return NULL;
}

/* Check osr, memsize and clock before anything is probed. */
static int
jitter_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	const char *v;
	unsigned osr;
	size_t mem;

	jitter_host = host;
	v = host->option(module, "osr");
	if (v != NULL && jitter_parse_osr(v, &osr) == -1) {
		snprintf(err, errlen, "-O jitter:osr: '%s' is not a whole number from %d to %d "
		    "(below %d would raise the credit)", v, JITTER_BASE_OSR, JITTER_MAX_OSR,
		    JITTER_BASE_OSR);
		return -1;
	}
	if (jitter_memsize(module, &mem) == -1) {
		snprintf(err, errlen, "-O jitter:memsize: '%s' is not a power of 2 from %u to %u "
		    "bytes", host->option(module, "memsize"), JITTER_MIN_MEMSIZE,
		    JITTER_MAX_MEMSIZE);
		return -1;
	}
	if (mem < jitter_l1_size()) {
		snprintf(err, errlen, "-O jitter:memsize: %zu bytes is below the L1 data cache "
		    "(%zu bytes)", mem, jitter_l1_size());
		return -1;
	}
	v = host->option(module, "quantize_hz");
	if (v != NULL && jitter_parse_hz(v, &jitter_tick_hz) == -1) {
		snprintf(err, errlen, "-O jitter:quantize_hz: '%s' is not 0 or a rate from %u Hz "
		    "to %u Hz (k, M, G suffixes)", v, JITTER_MIN_QUANTIZE_HZ,
		    JITTER_MAX_QUANTIZE_HZ);
		return -1;
	}
	v = host->option(module, "clock");
	if (jitter_clock_override == NULL && jitter_pick_clock(v) == NULL) {
		if (jitter_tick_hz != 0)
			snprintf(err, errlen, "-O jitter:quantize_hz cuts monotonic_raw: it does "
			    "not go with -O jitter:clock:%s", v);
		else
			snprintf(err, errlen, "-O jitter:clock: '%s' is not auto, tsc, "
			    "monotonic_raw or monotonic_coarse", v);
		return -1;
	}
	return 0;
}

/* A 32-bit left rotation. */
static inline uint32_t
jitter_rotl(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

/* The hash step: absorb the timestamp into a 512-bit ARX state (two ChaCha double rounds). */
static void
jitter_hash(struct jitter_state *js, uint64_t stamp)
{
	uint32_t *x = js->hash;
	int i, r;

	x[0] ^= (uint32_t)stamp;
	x[1] ^= (uint32_t)(stamp >> 32);
	for (r = 0; r < 2; r++) {
		for (i = 0; i < 4; i++) {
			uint32_t *a = &x[i], *b = &x[4 + i], *c = &x[8 + i], *d = &x[12 + i];

			*a += *b; *d = jitter_rotl(*d ^ *a, 16);
			*c += *d; *b = jitter_rotl(*b ^ *c, 12);
			*a += *b; *d = jitter_rotl(*d ^ *a, 8);
			*c += *d; *b = jitter_rotl(*b ^ *c, 7);
		}
		for (i = 0; i < 4; i++) {
			uint32_t *a = &x[i], *b = &x[4 + (i + 1) % 4], *c = &x[8 + (i + 2) % 4],
			    *d = &x[12 + (i + 3) % 4];

			*a += *b; *d = jitter_rotl(*d ^ *a, 16);
			*c += *d; *b = jitter_rotl(*b ^ *c, 12);
			*a += *b; *d = jitter_rotl(*d ^ *a, 8);
			*c += *d; *b = jitter_rotl(*b ^ *c, 7);
		}
	}
}

/*
 * The timed work, the same every time: read-modify-write js->accesses
 * bytes along one fixed pseudo-random walk, then the hash step (constant
 * time). No timestamp chooses how long it is or where it goes, so its
 * duration varies only with the machine.
 */
static void
jitter_work(struct jitter_state *js)
{
	volatile uint8_t *mem = js->mem;
	uint64_t s = JITTER_WALK_SEED;
	unsigned i;

	/*
	 * Level 0 keeps the loop it always had, its count a constant: how the
	 * loop is compiled shapes its timing, and a variable count (or the same
	 * loop through an inlined helper) measured a third less on a TSC.
	 */
	if (js->accesses == JITTER_ACCESSES)
		for (i = 0; i < JITTER_ACCESSES; i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			mem[s & js->mem_mask] = (uint8_t)(mem[s & js->mem_mask] + 1);
		}
	else
		for (i = 0; i < js->accesses; i++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			mem[s & js->mem_mask] = (uint8_t)(mem[s & js->mem_mask] + 1);
		}
	jitter_hash(js, js->last_stamp);
}

/* One raw measurement: the time the work took since the last timestamp. */
static uint64_t
jitter_measure(struct jitter_state *js)
{
	uint64_t now, delta;

	jitter_work(js);
	now = js->clock();
	delta = now - js->last_stamp;
	js->last_stamp = now;
	return delta;
}

/* The smallest step the clock shows between back-to-back reads (0 if it never moved). */
static uint64_t
jitter_clock_step(uint64_t (*clock)(void))
{
	uint64_t prev = clock(), now, step = 0;
	unsigned i;

	for (i = 0; i < JITTER_STEP_READS; i++) {
		now = clock();
		if (now > prev && (step == 0 || now - prev < step))
			step = now - prev;
		prev = now;
	}
	return step;
}

/*
 * The work of growth level `level`: JITTER_ACCESSES << level accesses over
 * the buffer (memsize, or with memsize auto twice L1 << level, at most
 * JITTER_GROWN_MEMSIZE), every page of it touched, then a few samples'
 * work thrown away: judged cold, the first samples span page faults and
 * cache misses the later ones never see. False if out of memory.
 */
static bool
jitter_set_level(struct jitter_state *js, struct entropyd_module *module, unsigned level)
{
	const char *v = jitter_host->option(module, "memsize");
	size_t mem, i;

	if (jitter_memsize(module, &mem) == -1)
		mem = JITTER_MIN_MEMSIZE;
	if (v == NULL || strcmp(v, "auto") == 0)
		for (i = 0; i < level && mem < JITTER_GROWN_MEMSIZE; i++)
			mem <<= 1;
	if (js->mem != NULL && js->mem_mask + 1 != mem) {
		explicit_bzero(js->mem, js->mem_mask + 1);
		free(js->mem);
		js->mem = NULL;
	}
	if (js->mem == NULL && (js->mem = calloc(1, mem)) == NULL)
		return false;
	js->mem_mask = mem - 1;
	js->level = level;
	js->accesses = JITTER_ACCESSES << level;
	for (i = 0; i < mem; i += 4096)
		((volatile uint8_t *)js->mem)[i] = 1;
	js->last_stamp = js->clock();
	for (i = 0; i < JITTER_WARMUP_SAMPLES; i++)
		jitter_measure(js);
	return true;
}

/*
 * The entropy of n warm samples at this work, as the online estimates see
 * it, and the credit per sample that supports with JITTER_GROW_MARGIN to
 * spare (at most the claim). Enough samples that the Lag predictor sees
 * the pattern a coarse clock makes:
 * 1024 of them measure a 24 MHz counter's samples at half a bit, 16384 at
 * the 0.01 NIST's tool finds.
 */
static double
jitter_grow_measure(struct jitter_state *js, size_t n, struct estimate_result *r)
{
	struct jitter_deriv deriv = { 0, 0 };
	struct jitter_emit emit;
	struct estimate est;
	size_t deltas = 0, got = 0;
	uint8_t sample;
	double supported = 0.0;

	jitter_emit_init(&emit, js->osr);
	estimate_init(&est, 8, 0, true, false);
	/* Stuck deltas give no sample: stop at ten times the deltas needed. */
	while (got < n && deltas < 10 * n * js->osr) {
		uint64_t delta = jitter_measure(js);

		if (jitter_stuck(&deriv, delta) || deltas++ < 2)
			continue;
		if (jitter_emit_sample(&emit, jitter_fold(delta), &sample)) {
			estimate_sample(&est, sample);
			got++;
		}
	}
	if (estimate_compute(&est, r))
		supported = estimate_credit_target(jitter_source.entropy_bits,
		    r->min / JITTER_GROW_MARGIN, true);
	estimate_free(&est);
	return supported;
}

/*
 * Allocate the state and run the start-up assessment: the clock's step,
 * then timed work until the samples it gives can be judged. On a coarse
 * clock (the work spans fewer than JITTER_COARSE_STEPS steps) they are
 * judged on JITTER_GROW_SAMPLES samples, and until they support the claim
 * and the work spans JITTER_COARSE_STEPS steps the work grows
 * (jitter_set_level), at most to JITTER_MAX_GROWTH. NULL with why set on
 * failure; else v says what was found (at a grown level, v's estimate is
 * the long one).
 */
static struct jitter_state *
jitter_state_new(struct entropyd_module *module, struct jitter_verdict *v, char *why,
    size_t whylen)
{
	struct jitter_assessor a;
	struct estimate_result grown;
	struct jitter_state *js;
	unsigned level = jitter_growth;
	double supported;
	size_t i;
	bool ok, wide;

	if ((js = calloc(1, sizeof *js)) == NULL) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return NULL;
	}
	if (jitter_parse_osr(jitter_host->option(module, "osr"), &js->osr) == -1)
		js->osr = JITTER_BASE_OSR;
	js->clock = jitter_pick_clock(jitter_host->option(module, "clock"));
	if (js->clock == NULL)
		js->clock = jitter_clock_raw;
	js->stuck_cutoff = jitter_stuck_cutoff(js->osr);
	js->step = jitter_clock_step(js->clock);
	for (;;) {
		if (!jitter_set_level(js, module, level)) {
			snprintf(why, whylen, "%zu-byte buffer: %s", js->mem_mask + 1,
			    strerror(ENOMEM));
			jitter_state_free(js);
			return NULL;
		}
		jitter_emit_init(&js->emit, js->osr);
		jitter_assess_init(&a, js->osr);
		jitter_assess_stamp(&a, js->last_stamp);
		while (!jitter_assess_done(&a)) {
			jitter_measure(js);
			jitter_assess_stamp(&a, js->last_stamp);
		}
		ok = jitter_assess_verdict(&a, jitter_source.entropy_bits, v, why, whylen);
		jitter_assess_free(&a);
		/* A fine clock is judged as it always was; a coarse one, at length; a
		 * clock that failed (stuck, backwards) more work cannot mend. */
		wide = js->step > 0 && v->mean_delta >= (double)js->step * JITTER_COARSE_STEPS;
		if (!ok || (level == 0 && wide))
			break;
		supported = jitter_grow_measure(js, JITTER_GROW_SAMPLES, &grown);
		if (supported > 0.0) {
			v->est = grown;
			v->supported = supported;
		}
		/* Work of a few steps measures well in a burst (a busy machine) and
		 * then collapses: stop only once it spans the steps too. */
		if ((supported >= jitter_source.entropy_bits && (wide || js->step == 0)) ||
		    level == JITTER_MAX_GROWTH)
			break;
		level++;
	}
	if (ok && v->supported < JITTER_MIN_BITS) {
		snprintf(why, whylen, "start-up: the work grew %u-fold and the samples still "
		    "measure %.3g bits each (MCV %.3g, Markov %.3g, Lag %.3g), which supports "
		    "%.3g bits per sample, less than %g: the clock is too coarse", 1u << level,
		    v->est.min, v->est.mcv, v->est.markov, v->est.lag, v->supported,
		    JITTER_MIN_BITS);
		ok = false;
	}
	if (!ok) {
		jitter_state_free(js);
		return NULL;
	}
	jitter_growth = level;
	/* Prime the derivatives with the last start-up deltas. */
	for (i = 0; i < 3; i++)
		jitter_stuck(&js->deriv, jitter_measure(js));
	return js;
}

static void
jitter_state_free(struct jitter_state *js)
{
	if (js == NULL)
		return;
	if (js->mem != NULL)
		explicit_bzero(js->mem, js->mem_mask + 1);
	free(js->mem);
	explicit_bzero(js, sizeof *js);
	free(js);
}

/*
 * Say what start-up found and hold the instance to what the samples
 * support: a clock too coarse for the claim lowers the credit (host
 * limit_entropy, which only lowers).
 */
static void
jitter_apply_verdict(struct entropyd_instance *inst, const struct jitter_state *js,
    const struct jitter_verdict *v)
{
	const double claim = jitter_source.entropy_bits;

	if (js->level > 0)
		jitter_host->log(inst, ENTROPYD_LOG_INFO, "start-up: the clock steps by %llu%s, "
		    "too coarse for the work: it grew %u-fold%s to %u memory accesses over a %zu "
		    "KiB buffer a sample, which takes %.0f steps; %d samples measure %.3g bits "
		    "each (MCV %.3g, Markov %.3g, Lag %.3g)", (unsigned long long)js->step,
		    jitter_tick_hz != 0 ? " (quantized)" : "", 1u << js->level,
		    js->level == JITTER_MAX_GROWTH ? " (its bound)" : "", js->accesses,
		    (js->mem_mask + 1) >> 10, js->step > 0 ? v->mean_delta / (double)js->step :
		    0.0, JITTER_GROW_SAMPLES, v->est.min, v->est.mcv, v->est.markov, v->est.lag);
	else
		jitter_host->log(inst, ENTROPYD_LOG_INFO, "start-up: the clock steps by %llu%s, "
		    "the work takes %.0f steps; %zu samples from %zu deltas (%zu stuck) measure "
		    "%.3g bits each (MCV %.3g, Markov %.3g, Lag %.3g)",
		    (unsigned long long)js->step, jitter_tick_hz != 0 ? " (quantized)" : "",
		    js->step > 0 ? v->mean_delta / (double)js->step : 0.0, v->samples, v->deltas,
		    v->stuck, v->est.min, v->est.mcv, v->est.markov, v->est.lag);
	if (v->supported >= claim)
		return;
	jitter_host->log(inst, ENTROPYD_LOG_WARNING, "start-up: the clock is too coarse for "
	    "%.3g bits per sample: the samples support %.3g; credit lowered to that", claim,
	    v->supported);
	if (ENTROPYD_HOST_HAS(jitter_host, limit_entropy) && jitter_host->limit_entropy != NULL)
		jitter_host->limit_entropy(inst, v->supported);
}

/* Usable when the clock passes the start-up assessment here. */
static int
jitter_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	struct jitter_verdict v;
	struct jitter_state *js;
	char why[256];

	jitter_host = host;
	if ((js = jitter_state_new(module, &v, why, sizeof why)) == NULL) {
		host->unusable(module, "%s", why);
		host->module_log(module, ENTROPYD_LOG_WARNING, "%s; not used", why);
		return 0;
	}
	jitter_state_free(js);
	if (host->add_instance(module, "", "CPU execution-time jitter", NULL) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "cannot add an instance");
		return -1;
	}
	return 1;
}

/* Allocate the buffer and pass start-up again on the clock. */
static int
jitter_open(struct entropyd_instance *inst, void **state)
{
	struct jitter_verdict v;
	struct jitter_state *js;
	char why[256];

	if (jitter_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((js = jitter_state_new(jitter_host->instance_module(inst), &v, why, sizeof why)) ==
	    NULL) {
		jitter_host->log(inst, ENTROPYD_LOG_ERR, "%s", why);
		errno = EIO;
		return -1;
	}
	js->instance = inst;
	jitter_apply_verdict(inst, js, &v);
	*state = js;
	return 0;
}

/*
 * Measure until the buffer holds the samples asked for (at most
 * JITTER_READ_SAMPLES). Stuck deltas are dropped; too many in a row (the
 * SP 800-90B repetition cutoff at 1/osr bits per delta) fail the read.
 */
static ssize_t
jitter_read(void *state, void *buf, size_t len)
{
	struct jitter_state *js = state;
	uint8_t *out = buf;
	size_t done = 0;

	if (len > JITTER_READ_SAMPLES)
		len = JITTER_READ_SAMPLES;
	while (done < len) {
		uint64_t delta = jitter_measure(js);

		js->deltas++;
		if (jitter_stuck(&js->deriv, delta)) {
			js->stuck++;
			if (++js->stuck_run >= js->stuck_cutoff) {
				jitter_host->log(js->instance, ENTROPYD_LOG_ERR, "%u stuck samples "
				    "in a row (%llu of %llu stuck so far); read discarded",
				    js->stuck_run, (unsigned long long)js->stuck,
				    (unsigned long long)js->deltas);
				explicit_bzero(buf, len);
				errno = EIO;
				return ENTROPYD_READ_ERROR;
			}
			continue;
		}
		js->stuck_run = 0;
		if (jitter_emit_sample(&js->emit, jitter_fold(delta), &out[done]))
			done++;
	}
	return (ssize_t)done;
}

/*
 * The VM generation changed: the hash state, the work buffer and the
 * half-gathered sample are the same in every clone. Wipe them and take new
 * timestamps for the derivatives (the last one predates the snapshot, so
 * the first delta would span the pause). The walk is fixed: nothing of it
 * is secret.
 */
static void
jitter_forget(void *state)
{
	struct jitter_state *js = state;
	int i;

	explicit_bzero(js->hash, sizeof js->hash);
	explicit_bzero(js->mem, js->mem_mask + 1);
	jitter_emit_init(&js->emit, js->osr);
	js->stuck_run = 0;
	js->last_stamp = js->clock();
	for (i = 0; i < 3; i++)
		jitter_stuck(&js->deriv, jitter_measure(js));
}

/* Computation has no fd: the daemon reads from its own thread. */
static int
jitter_pollfd(void *state)
{
	return -1;
}

static void
jitter_close(void *state)
{
	jitter_state_free(state);
}

/*
 * entropy_bits: 1/3 bit per raw sample, the design's default of 1/osr bits
 * per non-stuck delta at osr 3. A larger osr gathers osr/3 deltas into each
 * sample (XOR), so the credit per delta falls to 1/osr without changing the
 * per-sample figure; -O jitter:entropy lowers it further.
 */
const struct entropyd_source jitter_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "jitter",
	.description = "CPU execution-time jitter (1/osr bits per delta, osr 3 by default)",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON | ENTROPYD_SOURCE_RAW_SAMPLES |
	    ENTROPYD_SOURCE_SLOW_START,
	.entropy_bits = 1.0 / JITTER_BASE_OSR,
	.sample_bits = 8,
	.options = jitter_options,
	.probe = jitter_probe,
	.open = jitter_open,
	.read = jitter_read,
	.pollfd = jitter_pollfd,
	.close = jitter_close,
	.configure = jitter_configure,
	.forget = jitter_forget,
};
