/* SPDX-License-Identifier: MIT */
/*
 * entropyd-bench: the C side of `make bench`.
 *   condition MB RUNS   the conditioner against libgcrypt's raw SHA-256 on the
 *                       same buffers (one hash per 40 input bytes, as the
 *                       conditioner takes at 8 bits per byte), interleaved;
 *                       one line per run: "condition SECONDS sha256 SECONDS"
 *   rdrand SECONDS      raw RDRAND64 rate alone: "rdrand BYTES SECONDS"
 *   pipeline MB RUNS    the in-process pipeline (FIPS 140-2, SHA-256 at 8 bits
 *                       per byte, reserve) with and without the repeated-output
 *                       test on the same buffer, interleaved; one line per
 *                       run: "pipeline SECONDS norepeat SECONDS"
 *   source NAME SECONDS [OPTION...]
 *                       the module's own read() rate in this process, in
 *                       reads of PIPELINE_READ_MAX bytes, for SECONDS or to
 *                       the source's end; OPTIONs are the daemon's (-O ...):
 *                       "source BYTES SECONDS"
 *   estimate NAME SECONDS RUNS
 *                       a raw-sample source read as the daemon reads it
 *                       (reads of PIPELINE_RAW_READ) and put through a
 *                       pipeline with the online entropy estimates on, then
 *                       off, for SECONDS of CPU time each, interleaved; one
 *                       line per run:
 *                       "estimate ON_BYTES ON_SECONDS OFF_BYTES OFF_SECONDS"
 *   feed NAME SECONDS [OPTION...]
 *                       the same source as source's through the pipeline
 *                       (tests, conditioning, reserve) and the kernel sink's
 *                       policy, always wanting bits, to a real feeder process
 *                       that credits /dev/random (root only): the worker's
 *                       path with the frames and the feeder's checks in it,
 *                       with the daemon's -s step; a source without a pollable
 *                       fd is read by the daemon's reader thread, as the
 *                       daemon reads it: "feed BYTES SECONDS BITS"
 *   credit NAME SECONDS [OPTION...]
 *                       a raw-sample source as the daemon runs it (its
 *                       pipeline with the online estimates, a suspension
 *                       started afresh at once) for SECONDS of CPU time:
 *                       "credit BITS SECONDS SUSPENSIONS CREDIT_PER_SAMPLE"
 *   egd CLIENTS SECONDS SOCKET
 *                       EGD clients on the broker's Unix socket, each keeping
 *                       16 blocking reads of 255 bytes asked, for SECONDS:
 *                       "egd BYTES SECONDS JAIN" (Jain's fairness index)
 *   egdlat COUNT SOCKET COUNT blocking reads of 64 bytes, one at a time:
 *                       "egdlat P50_MS P99_MS"
 *   egdrss CLIENTS SOCKET PID
 *                       PID's RSS growth per idle EGD client: "egdrss KIB"
 *   startup LOG ENTROPYD [ARGUMENT...]
 *                       exec the daemon and time, on the monotonic clock,
 *                       from just before the exec to the moment its "first
 *                       feed" line arrives on its stderr (copied to LOG),
 *                       then stop it: "startup SECONDS"; exit 1 if no such
 *                       line comes within 30 s
 *   waiters SOCKET FILE N
 *                       N long polls of GET /generation past the ID in the
 *                       generation FILE, on SOCKET; says "waiting" once all
 *                       are sent, then takes every answer: "waiters N OK
 *                       P99_MS MAX_MS", the arrivals after the new ID's
 *                       write (the file's mtime), on the wall clock
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <gcrypt.h>

#include "bench_egd.h"
#include "condition.h"
#include "feedclient.h"
#include "feeder.h"
#include "genfile.h"
#include "log.h"
#include "options.h"
#include "pipeline.h"
#include "reader.h"
#include "registry.h"
#include "sink.h"
#include "x86rng.h"
#include "xmalloc.h"

/* Where outputs go, so that nothing is optimised away. */
static uint8_t bench_sink[CONDITION_OUTPUT_BYTES];
static uint64_t bench_outputs;

/* A monotonic clock in seconds. */
double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The conditioner's output callback: fold the output into the sink. */
static void
bench_output(void *arg, const uint8_t *out, size_t len, unsigned credit_bits)
{
	for (size_t i = 0; i < len; i++)
		bench_sink[i] ^= out[i];
	bench_outputs++;
}

/*
 * Both sides hand each output over through this pointer, so the compiler
 * cannot inline and specialise the callback for the raw side only (a
 * constant-length, vectorised fold there made the raw side look 10% faster).
 */
static condition_output_fn volatile bench_deliver = bench_output;

/* Condition the buffer the way a credited 8 bits/byte source is. */
static double
bench_condition(const uint8_t *buf, size_t len)
{
	struct conditioner c;
	double t0 = bench_now();
	size_t off, step = 65536;

	condition_init(&c, 8, 1);
	for (off = 0; off < len; off += step)
		condition_input(&c, buf + off, len - off < step ? len - off : step,
		    bench_deliver, NULL);
	condition_free(&c);
	return bench_now() - t0;
}

/* The same hashes done directly: one SHA-256 per units_per_output bytes. */
static double
bench_sha256(const uint8_t *buf, size_t len)
{
	size_t chunk = condition_units_per_output(8, 1), off;
	uint8_t out[CONDITION_OUTPUT_BYTES];
	double t0 = bench_now();

	for (off = 0; off + chunk <= len; off += chunk) {
		gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf + off, chunk);
		bench_deliver(NULL, out, sizeof out, 0);
	}
	return bench_now() - t0;
}

/*
 * The arguments MB RUNS of a command NAME: a buffer of MB megabytes of
 * random bytes (its length in *len) and the runs, or NULL after the usage.
 */
static uint8_t *
bench_random_buffer(const char *name, int argc, char **argv, size_t *len, int *runs)
{
	uint8_t *buf;

	if (argc != 2 || atof(argv[0]) <= 0 || atoi(argv[1]) < 1) {
		fprintf(stderr, "usage: entropyd-bench %s MB RUNS\n", name);
		return NULL;
	}
	*len = (size_t)(atof(argv[0]) * 1e6);
	*runs = atoi(argv[1]);
	condition_global_init();
	buf = xmalloc(*len);
	gcry_randomize(buf, *len, GCRY_WEAK_RANDOM);
	return buf;
}

/* Conditioner against raw SHA-256, interleaved over runs. */
static int
bench_condition_cmd(int argc, char **argv)
{
	size_t len;
	uint8_t *buf;
	int runs, r;

	if ((buf = bench_random_buffer("condition", argc, argv, &len, &runs)) == NULL)
		return EX_USAGE;
	bench_sha256(buf, len);		/* warm up caches and the CPU */
	for (r = 0; r < runs; r++) {
		double tc = bench_condition(buf, len);
		double ts = bench_sha256(buf, len);

		printf("condition %.6f sha256 %.6f\n", tc, ts);
	}
	free(buf);
	return bench_outputs == 0 ? EX_SOFTWARE : EX_OK;
}

/* One pass of the buffer through a fresh credited pipeline, drained as it fills. */
static double
bench_pipeline_once(const uint8_t *buf, size_t len, bool repeats)
{
	static uint8_t drain[RESERVE_CAPACITY];
	struct pipeline p;
	double t0 = bench_now();
	size_t off, step = PIPELINE_READ_MAX;
	unsigned credit;

	pipeline_init(&p, false, 0, 8);
	if (!repeats)
		pipeline_skip_repeats(&p);
	for (off = 0; off < len; off += step) {
		pipeline_input(&p, buf + off, len - off < step ? len - off : step);
		pipeline_take(&p, drain, sizeof drain, &credit);
	}
	bench_outputs += p.count.blocks_passed;
	pipeline_free(&p);
	return bench_now() - t0;
}

/* The pipeline with and without the repeat test, interleaved over runs. */
static int
bench_pipeline_cmd(int argc, char **argv)
{
	size_t len;
	uint8_t *buf;
	int runs, r;

	if ((buf = bench_random_buffer("pipeline", argc, argv, &len, &runs)) == NULL)
		return EX_USAGE;
	bench_pipeline_once(buf, len, false); /* warm up caches and the CPU */
	for (r = 0; r < runs; r++) {
		double with = bench_pipeline_once(buf, len, true);
		double without = bench_pipeline_once(buf, len, false);

		printf("pipeline %.6f norepeat %.6f\n", with, without);
	}
	free(buf);
	return bench_outputs == 0 ? EX_SOFTWARE : EX_OK;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* RDRAND64 in a loop for the given time, retrying as the source does. */
__attribute__((target("rdrnd"))) static int
bench_rdrand(double seconds)
{
	unsigned long long v, acc = 0;
	uint64_t bytes = 0;
	double t0 = bench_now(), t;
	int i;

	if (!x86rng_cpuid_rdrand()) {
		fprintf(stderr, "entropyd-bench: no RDRAND on this CPU\n");
		return EX_UNAVAILABLE;
	}
	do {
		for (i = 0; i < 4096; i++) {
			while (!_rdrand64_step(&v))
				;
			acc ^= v;
		}
		bytes += 4096 * 8;
		t = bench_now() - t0;
	} while (t < seconds);
	bench_sink[0] ^= (uint8_t)acc;
	printf("rdrand %llu %.6f\n", (unsigned long long)bytes, t);
	return EX_OK;
}
#else
/* No RDRAND off x86. */
static int
bench_rdrand(double seconds)
{
	fprintf(stderr, "entropyd-bench: no RDRAND on this CPU\n");
	return EX_UNAVAILABLE;
}
#endif

/*
 * Configure the built-in NAME (argv[0]) with the daemon's OPTIONs
 * (argv[2...]), probe it and open its first instance; EX_OK or why not.
 */
static int
bench_open_source(int argc, char **argv, struct config *cfg, struct entropyd_module **mp,
    void **state)
{
	char *args[64] = { "entropyd-bench", "-x", "all", "-n", argv[0] }, err[256];
	struct entropyd_module *m;
	struct entropyd_instance *inst;
	int i, nargs = 5;

	for (i = 2; i < argc && nargs < 63; i++)
		args[nargs++] = argv[i];
	log_init("entropyd-bench", LOG_TO_STDERR, -1);
	condition_global_init();
	registry_add_builtins();
	if (options_parse(cfg, nargs, args, err, sizeof err) != 0 ||
	    registry_configure(cfg, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "entropyd-bench: %s\n", err);
		return EX_USAGE;
	}
	if ((m = registry_find(argv[0])) == NULL || registry_probe(m) <= 0 ||
	    (inst = TAILQ_FIRST(&m->instances)) == NULL) {
		fprintf(stderr, "entropyd-bench: %s is unusable: %s\n", argv[0],
		    m && m->unusable ? m->unusable : "unknown");
		return EX_UNAVAILABLE;
	}
	if (m->src->open(inst, state) == -1) {
		fprintf(stderr, "entropyd-bench: %s: open failed\n", argv[0]);
		return EX_UNAVAILABLE;
	}
	*mp = m;
	return EX_OK;
}

/* A module's read() alone, as the daemon's reader thread calls it when warm. */
static int
bench_source(int argc, char **argv)
{
	struct entropyd_module *m;
	struct config cfg;
	double secs = atof(argv[1]), t0, t = 0;
	uint64_t bytes = 0;
	uint8_t *buf;
	void *state;
	ssize_t n = 0;
	int rc;

	if ((rc = bench_open_source(argc, argv, &cfg, &m, &state)) != EX_OK)
		return rc;
	buf = xmalloc(PIPELINE_READ_MAX);
	t0 = bench_now();
	do {
		n = m->src->read(state, buf, PIPELINE_READ_MAX);
		if (n > 0)
			bytes += (uint64_t)n;
		t = bench_now() - t0;
	} while (t < secs && (n > 0 || n == ENTROPYD_READ_AGAIN));
	m->src->close(state);
	free(buf);
	registry_free();
	options_free(&cfg);
	printf("source %llu %.6f\n", (unsigned long long)bytes, t);
	return bytes > 0 ? EX_OK : EX_SOFTWARE;
}

/* CPU time this process used, in seconds. */
static double
bench_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Read a source into a pipeline for seconds of CPU time: the bytes read and
 * the CPU time taken (CPU time, so other work on the machine does not
 * count against either side).
 */
static uint64_t
bench_through_pipeline(struct entropyd_module *m, void *state, struct pipeline *p,
    double secs, double *took)
{
	static uint8_t buf[PIPELINE_RAW_READ];
	double t0 = bench_cpu();
	uint64_t bytes = 0;
	ssize_t n;

	do {
		n = m->src->read(state, buf, sizeof buf);
		if (n > 0) {
			pipeline_input(p, buf, (size_t)n);
			bytes += (uint64_t)n;
		}
		*took = bench_cpu() - t0;
	} while (*took < secs && (n > 0 || n == ENTROPYD_READ_AGAIN));
	return bytes;
}

/*
 * A raw-sample source as the daemon runs it, for seconds of CPU time: reads
 * of PIPELINE_RAW_READ through a pipeline with the online estimates, its
 * reserve drained as a sink would; a suspension starts it afresh at once,
 * as the daemon's retry does (the wait costs no CPU). The credited bits,
 * the CPU seconds, the suspensions and the credit per sample at the end.
 */
static int
bench_credit(int argc, char **argv)
{
	static uint8_t buf[PIPELINE_RAW_READ], out[4096];
	struct entropyd_module *m;
	struct pipeline *p;
	struct config cfg;
	double secs = atof(argv[1]), t0, t;
	uint64_t credited = 0, bits, suspended = 0;
	void *state;
	ssize_t n;
	int rc;

	if ((rc = bench_open_source(argc, argv, &cfg, &m, &state)) != EX_OK)
		return rc;
	if (!(m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES)) {
		fprintf(stderr, "entropyd-bench: %s delivers no raw samples\n", argv[0]);
		return EX_UNAVAILABLE;
	}
	/* The instance's own pipeline: the one its start-up verdict may limit. */
	p = &TAILQ_FIRST(&m->instances)->pipe;
	t0 = bench_cpu();
	do {
		n = m->src->read(state, buf, sizeof buf);
		if (n > 0)
			pipeline_input(p, buf, (size_t)n);
		while (reserve_take(&p->reserve, out, sizeof out, &bits) > 0)
			credited += bits;
		if (pipeline_failing(p)) {
			suspended++;
			pipeline_suspended(p);
			pipeline_restart(p);
		}
		t = bench_cpu() - t0;
	} while (t < secs && (n > 0 || n == ENTROPYD_READ_AGAIN));
	printf("credit %llu %.6f %llu %.6g\n", (unsigned long long)credited, t,
	    (unsigned long long)suspended, p->unit_bits);
	m->src->close(state);
	registry_free();
	options_free(&cfg);
	return EX_OK;
}

/* A raw source through the pipeline with the online estimates on and off, interleaved. */
static int
bench_estimate(int argc, char **argv)
{
	char *args[] = { "entropyd-bench", "-x", "all", "-n", argv[0] }, err[256];
	struct entropyd_module *m;
	struct entropyd_instance *inst;
	struct pipeline on, off;
	struct config cfg;
	double secs = atof(argv[1]), ton, toff;
	uint64_t bon, boff;
	void *state;
	int runs = atoi(argv[2]), r;

	log_init("entropyd-bench", LOG_TO_STDERR, -1);
	condition_global_init();
	registry_add_builtins();
	if (options_parse(&cfg, 5, args, err, sizeof err) != 0 ||
	    registry_configure(&cfg, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "entropyd-bench: %s\n", err);
		return EX_USAGE;
	}
	if ((m = registry_find(argv[0])) == NULL ||
	    !(m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES) || registry_probe(m) <= 0 ||
	    (inst = TAILQ_FIRST(&m->instances)) == NULL || m->src->open(inst, &state) == -1) {
		fprintf(stderr, "entropyd-bench: %s is not a usable raw-sample source\n", argv[0]);
		return EX_UNAVAILABLE;
	}
	pipeline_init(&on, true, m->src->sample_bits, m->src->entropy_bits);
	pipeline_init(&off, true, m->src->sample_bits, m->src->entropy_bits);
	pipeline_estimating(&off, false);
	for (r = 0; r < runs; r++) {
		bon = bench_through_pipeline(m, state, &on, secs, &ton);
		boff = bench_through_pipeline(m, state, &off, secs, &toff);
		printf("estimate %llu %.6f %llu %.6f\n", (unsigned long long)bon, ton,
		    (unsigned long long)boff, toff);
	}
	m->src->close(state);
	pipeline_free(&on);
	pipeline_free(&off);
	registry_free();
	options_free(&cfg);
	return EX_OK;
}

/* The sink's supply: the one pipeline, always fit for the kernel. */
static struct pipeline *
bench_supply_next(void *ctx, struct pipeline *prev, bool *kernel_ok)
{
	*kernel_ok = true;
	return prev == NULL ? ctx : NULL;
}

/* A feeder process on sv: serve until the other end closes. */
static void __attribute__((noreturn))
bench_feeder(int fd, int random_fd)
{
	struct feeder f;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	feeder_init(&f, &feeder_kernel_ops);
	f.random_fd = random_fd;
	while (poll(&p, 1, -1) >= 0 && feeder_serve(&f, fd) == FEEDER_SERVED)
		;
	_exit(0);
}

/*
 * The next read of the feed's source into its pipeline: through the reader
 * thread when there is one (waiting up to a second for it), as the daemon's
 * loop takes it, else the module's read() here. What read() returned.
 */
static ssize_t
bench_feed_read(struct entropyd_module *m, void *state, struct reader *r, struct pipeline *p,
    uint8_t *buf, uint64_t *bytes)
{
	struct pollfd pf;
	const uint8_t *got;
	ssize_t n;
	int err;

	if (r == NULL) {
		if ((n = m->src->read(state, buf, pipeline_next_read(p))) > 0)
			pipeline_input(p, buf, (size_t)n);
	} else {
		reader_want(r, true, pipeline_next_read(p), pipeline_read_ahead(p));
		pf = (struct pollfd){ .fd = reader_fd(r), .events = POLLIN };
		if (poll(&pf, 1, 1000) <= 0 || !reader_take(r, &got, &n, &err))
			return ENTROPYD_READ_AGAIN;
		if (n > 0)
			pipeline_input(p, got, (size_t)n);
		reader_release(r);
	}
	if (n > 0)
		*bytes += (uint64_t)n;
	return n;
}

/* Source -> pipeline -> kernel sink -> frames -> a feeder process -> RNDADDENTROPY. */
static int
bench_feed(int argc, char **argv)
{
	char *args[64] = { "entropyd-bench", "-x", "all", "-n", argv[0] }, err[256];
	struct entropyd_module *m;
	struct entropyd_instance *inst;
	struct sink sink;
	struct sink_supply supply = { .next = bench_supply_next };
	struct config cfg;
	double secs = atof(argv[1]), t0, t = 0;
	uint64_t bytes = 0;
	struct reader *r = NULL;
	uint8_t *buf;
	void *state;
	ssize_t n = 0;
	int i, nargs = 5, sv[2], random_fd, status;
	pid_t pid;

	for (i = 2; i < argc && nargs < 63; i++)
		args[nargs++] = argv[i];
	log_init("entropyd-bench", LOG_TO_STDERR, -1);
	condition_global_init();
	registry_add_builtins();
	if (options_parse(&cfg, nargs, args, err, sizeof err) != 0 ||
	    registry_configure(&cfg, NULL, err, sizeof err) != 0) {
		fprintf(stderr, "entropyd-bench: %s\n", err);
		return EX_USAGE;
	}
	if ((random_fd = open("/dev/random", O_WRONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "entropyd-bench: /dev/random: %s\n", strerror(errno));
		return EX_NOPERM;
	}
	if ((m = registry_find(argv[0])) == NULL || registry_probe(m) <= 0 ||
	    (inst = TAILQ_FIRST(&m->instances)) == NULL || m->src->open(inst, &state) == -1) {
		fprintf(stderr, "entropyd-bench: %s is unusable\n", argv[0]);
		return EX_UNAVAILABLE;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1 ||
	    (pid = fork()) == -1) {
		perror("entropyd-bench: feeder");
		return EX_OSERR;
	}
	if (pid == 0) {
		close(sv[1]);
		bench_feeder(sv[0], random_fd);
	}
	close(sv[0]);
	close(random_fd);
	memset(&sink, 0, sizeof sink);
	sink.fd = -1;
	sink.path = "/dev/random";
	sink_kernel_init(&sink, &cfg, true);
	sink.ops = &feedclient_ops;
	sink.ops_arg = feedclient_new(sv[1]);
	supply.ctx = &inst->pipe;
	buf = xmalloc(PIPELINE_READ_MAX);
	if (m->src->pollfd(state) < 0) {
		reader_global_init();
		r = reader_start(m->src, state);
	}
	t0 = bench_now();
	do {
		n = bench_feed_read(m, state, r, &inst->pipe, buf, &bytes);
		/* A kernel that always wants more: every step credited goes through. */
		sink.phase = SINK_STEADY;
		sink.want_bits = INT64_MAX / 2;
		if (sink_service(&sink, &supply) != SINK_OK) {
			fprintf(stderr, "entropyd-bench: the feeder: %s\n", strerror(sink.error));
			break;
		}
		t = bench_now() - t0;
	} while (t < secs && (n > 0 || n == ENTROPYD_READ_AGAIN));
	if (r == NULL || reader_stop(r, 1000))
		m->src->close(state);
	feedclient_free(sink.ops_arg);
	waitpid(pid, &status, 0);
	free(buf);
	registry_free();
	options_free(&cfg);
	printf("feed %llu %.6f %llu\n", (unsigned long long)bytes, t,
	    (unsigned long long)sink.bits_credited);
	return sink.bits_credited > 0 ? EX_OK : EX_SOFTWARE;
}

/* Exec to first credited feed, read off the daemon's own stderr as it writes it. */
static int
bench_startup(char **argv)
{
	static const char mark[] = "first feed";
	char text[65536];
	size_t len = 0;
	double t0, t = -1;
	int fds[2], status, log = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid_t pid;

	if (log == -1 || pipe2(fds, O_CLOEXEC) == -1) {
		perror("entropyd-bench: startup");
		return EX_OSERR;
	}
	t0 = bench_now();
	if ((pid = fork()) == 0) {
		dup2(fds[1], STDERR_FILENO);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	close(fds[1]);
	if (pid == -1) {
		perror("entropyd-bench: startup");
		return EX_OSERR;
	}
	while (t < 0) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		double left = 30 - (bench_now() - t0);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0 ||
		    (n = read(fds[0], text + len, sizeof text - 1 - len)) <= 0)
			break;
		if (write(log, text + len, (size_t)n) != n)
			break;
		len += (size_t)n;
		text[len] = '\0';
		if (strstr(text, mark) != NULL)
			t = bench_now() - t0;
		else if (len > sizeof text / 2) {
			/* Keep a tail long enough to hold a mark cut in two. */
			memmove(text, text + len - (sizeof mark - 1), sizeof mark - 1);
			len = sizeof mark - 1;
		}
	}
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	close(fds[0]);
	close(log);
	if (t < 0)
		return 1;
	printf("startup %.6f\n", t);
	return EX_OK;
}

/* Milliseconds from a to b, wall-clock times. */
static double
bench_ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* waiters SOCKET FILE N: see the top of the file. */
static int
bench_waiters(char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char id[GENFILE_ID_CHARS + 1], req[256], buf[4096];
	int n = atoi(argv[2]), i, left, ok = 0, *fd;
	struct timespec *arrived, published;
	struct pollfd *pfd;
	struct rlimit rl;
	struct stat st;
	double *ms;
	ssize_t r;

	/* One descriptor a waiter, and a few more. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)n + 64 ? rl.rlim_max : (rlim_t)n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (n < 1 || genfile_read(argv[1], id) == -1) {
		fprintf(stderr, "entropyd-bench: %s: no generation ID\n", argv[1]);
		return EX_NOINPUT;
	}
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", argv[0]);
	snprintf(req, sizeof req, "GET /generation?after=%s&timeout=600 HTTP/1.0\r\n\r\n", id);
	fd = xcalloc((size_t)n, sizeof *fd);
	pfd = xcalloc((size_t)n, sizeof *pfd);
	arrived = xcalloc((size_t)n, sizeof *arrived);
	ms = xcalloc((size_t)n, sizeof *ms);
	for (i = 0; i < n; i++) {
		if ((fd[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
		    connect(fd[i], (struct sockaddr *)&sun, sizeof sun) == -1 ||
		    write(fd[i], req, strlen(req)) != (ssize_t)strlen(req)) {
			fprintf(stderr, "entropyd-bench: waiter %d: %s\n", i, strerror(errno));
			return EX_UNAVAILABLE;
		}
		pfd[i].fd = fd[i];
		pfd[i].events = POLLIN;
	}
	printf("waiting\n");
	fflush(stdout);
	/* The first bytes of each answer: when it arrived; then the rest, to its end. */
	for (left = n; left > 0;) {
		if (poll(pfd, (nfds_t)n, -1) == -1 && errno != EINTR)
			return EX_OSERR;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			if (arrived[i].tv_sec == 0)
				clock_gettime(CLOCK_REALTIME, &arrived[i]);
			if ((r = read(fd[i], buf, sizeof buf)) > 0) {
				if (strncmp(buf, "HTTP/1.", 7) == 0 && strncmp(buf + 8, " 200", 4) == 0)
					ok++;
				continue;
			}
			close(fd[i]);
			pfd[i].fd = -1;
			left--;
		}
	}
	if (stat(argv[1], &st) == -1)
		return EX_NOINPUT;
	published = st.st_mtim;
	for (i = 0; i < n; i++)
		ms[i] = bench_ms_between(&published, &arrived[i]);
	qsort(ms, (size_t)n, sizeof *ms, bench_cmp_double);
	printf("waiters %d %d %.3f %.3f\n", n, ok, ms[(n * 99 + 99) / 100 - 1], ms[n - 1]);
	free(fd);
	free(pfd);
	free(arrived);
	free(ms);
	return EX_OK;
}

/* Run one subcommand. */
int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "condition") == 0)
		return bench_condition_cmd(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "pipeline") == 0)
		return bench_pipeline_cmd(argc - 2, argv + 2);
	if (argc == 3 && strcmp(argv[1], "rdrand") == 0 && atof(argv[2]) > 0)
		return bench_rdrand(atof(argv[2]));
	if (argc >= 4 && strcmp(argv[1], "source") == 0 && atof(argv[3]) > 0)
		return bench_source(argc - 2, argv + 2);
	if (argc == 5 && strcmp(argv[1], "estimate") == 0 && atof(argv[3]) > 0 &&
	    atoi(argv[4]) >= 1)
		return bench_estimate(argc - 2, argv + 2);
	if (argc >= 4 && strcmp(argv[1], "feed") == 0 && atof(argv[3]) > 0)
		return bench_feed(argc - 2, argv + 2);
	if (argc >= 4 && strcmp(argv[1], "credit") == 0 && atof(argv[3]) > 0)
		return bench_credit(argc - 2, argv + 2);
	if (argc >= 4 && strcmp(argv[1], "startup") == 0)
		return bench_startup(argv + 2);
	if (argc == 5 && strcmp(argv[1], "waiters") == 0)
		return bench_waiters(argv + 2);
	if (argc == 5 && strcmp(argv[1], "egd") == 0 && atoi(argv[2]) >= 1 && atof(argv[3]) > 0)
		return bench_egd_rate(atoi(argv[2]), atof(argv[3]), argv[4]);
	if (argc == 4 && strcmp(argv[1], "egdlat") == 0 && atoi(argv[2]) >= 1)
		return bench_egd_latency(atoi(argv[2]), argv[3]);
	if (argc == 5 && strcmp(argv[1], "egdrss") == 0 && atoi(argv[2]) >= 1)
		return bench_egd_rss(atoi(argv[2]), argv[3], atol(argv[4]));
	if (argc == 4 && strcmp(argv[1], "egdpace") == 0 && atof(argv[3]) > 0)
		return bench_egd_pace(argv[2], atof(argv[3]));
	fprintf(stderr, "usage: entropyd-bench condition MB RUNS | pipeline MB RUNS | "
	    "rdrand SECONDS | source NAME SECONDS [OPTION...] | estimate NAME SECONDS RUNS | "
	    "feed NAME SECONDS [OPTION...] | credit NAME SECONDS [OPTION...] | "
	    "startup LOG ENTROPYD [ARGUMENT...] | waiters SOCKET FILE N | "
	    "egd CLIENTS SECONDS SOCKET | egdlat COUNT SOCKET | egdrss CLIENTS SOCKET PID | "
	    "egdpace FILE BYTES_PER_S\n");
	return EX_USAGE;
}
