/* SPDX-License-Identifier: MIT */
/*
 * Benchmark for the CPU sources (not part of make check): the raw
 * instruction rates, each module's read() rate, and for every source the
 * time from open() to the first credited byte and the credited output rate
 * through the daemon's own pipeline (tests, conditioning, reserve).
 * Usage: bench_cpu [seconds] [source...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "condition.h"
#include "log.h"
#include "options.h"
#include "registry.h"
#include "reserve.h"
#include "x86rng.h"

/* Monotonic seconds. */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU seconds. */
static double
bench_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Execute an instruction in a loop for secs: bytes per second. */
static double
bench_insn(x86rng_step_fn step, double secs)
{
	double start = bench_now(), t;
	uint64_t v, n = 0, sink = 0;
	unsigned i;

	do {
		for (i = 0; i < 4096; i++)
			if (step(&v)) {
				n++;
				sink ^= v;
			}
		t = bench_now() - start;
	} while (t < secs);
	if (sink == 1)
		putchar(' ');
	return (double)n * 8 / t;
}

/* One source through read() and the pipeline, as the daemon drives it. */
static void
bench_source(const char *name, double secs)
{
	struct entropyd_module *m = registry_find(name);
	struct entropyd_instance *inst;
	const struct entropyd_source *src;
	uint8_t buf[4096], out[4096];
	double start, first = -1, t, cpu0;
	uint64_t bytes = 0, credited = 0;
	void *state;
	ssize_t n;
	unsigned credit;

	if (m == NULL || registry_probe(m) <= 0 || (inst = TAILQ_FIRST(&m->instances)) == NULL) {
		printf("%-7s unusable: %s\n", name, m && m->unusable ? m->unusable : "unknown");
		return;
	}
	src = m->src;
	/* read() alone: the rate the source delivers to the core. */
	if (src->open(inst, &state) == -1) {
		printf("%-7s open failed\n", name);
		return;
	}
	start = bench_now();
	do {
		if ((n = src->read(state, buf, sizeof buf)) > 0)
			bytes += (uint64_t)n;
		t = bench_now() - start;
	} while (t < secs);
	src->close(state);
	printf("%-7s read() alone: %.1f kB/s\n", name, (double)bytes / t / 1e3);
	bytes = 0;
	start = bench_now();
	cpu0 = bench_cpu();
	if (src->open(inst, &state) == -1) {
		printf("%-7s open failed\n", name);
		return;
	}
	do {
		n = src->read(state, buf, sizeof buf);
		if (n > 0) {
			bytes += (uint64_t)n;
			pipeline_input(&inst->pipe, buf, (size_t)n);
		}
		/* Drain the reserve like a sink, so the source never idles. */
		while ((n = (ssize_t)pipeline_take(&inst->pipe, out, sizeof out, &credit)) > 0) {
			if (first < 0)
				first = bench_now() - start;
			credited += (uint64_t)n;
		}
		t = bench_now() - start;
	} while (t < secs);
	printf("%-7s with the pipeline: first credited byte %.3f s after open(); read %.1f kB/s; "
	    "credited output %.1f kB/s; %.1f us CPU per output byte\n", name, first,
	    (double)bytes / t / 1e3,
	    (double)credited / t / 1e3, credited ? (bench_cpu() - cpu0) * 1e6 / (double)credited :
	    0.0);
	src->close(state);
}

int
main(int argc, char **argv)
{
	static char *args[] = { "bench", "-x", "all", "-n", "rdrand", "-n", "rdseed", "-n",
	    "jitter", NULL };
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	struct config cfg;
	char err[256];
	int i;

	log_init("bench_cpu", LOG_TO_STDERR, -1);
	condition_global_init();
	registry_add_builtins();
	if (options_parse(&cfg, 9, args, err, sizeof err) != 0 ||
	    registry_configure(&cfg, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "bench_cpu: %s\n", err);
		return 1;
	}
	if (x86rng_cpuid_rdrand())
		printf("RDRAND64 instruction: %.1f MB/s on one core\n",
		    bench_insn(rdrand_step, secs) / 1e6);
	if (x86rng_cpuid_rdseed())
		printf("RDSEED64 instruction: %.1f MB/s on one core\n",
		    bench_insn(rdseed_step, secs) / 1e6);
	if (argc > 2)
		for (i = 2; i < argc; i++)
			bench_source(argv[i], secs);
	else {
		bench_source("rdrand", secs);
		bench_source("rdseed", secs);
		bench_source("jitter", secs);
	}
	registry_free();
	options_free(&cfg);
	return 0;
}
