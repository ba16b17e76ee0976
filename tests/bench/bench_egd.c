/* SPDX-License-Identifier: MIT */
/*
 * entropyd-bench's EGD clients, for make bench's broker figures: many
 * clients asking all the time (the served rate and Jain's fairness index),
 * one asking 64 bytes at a time (the latency), and a crowd of idle ones
 * (the worker's memory per client); and a paced writer standing in for a
 * hardware source where the machine has no RDSEED.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

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

#include "bench_egd.h"

/* Blocking reads each client keeps asked for: a pipeline, as QEMU's backend has. */
#define BENCH_EGD_DEPTH 16
#define BENCH_EGD_READ 255
/* One request of the depth, repeated. */
static const uint8_t bench_egd_request[2] = { 0x02, BENCH_EGD_READ };

/* A client connected to the Unix socket at path, or -1 (said on stderr). */
static int
bench_egd_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		fprintf(stderr, "entropyd-bench: %s: %s\n", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* Write all of len bytes; 0 or -1. */
static int
bench_egd_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes; 0 or -1. */
static int
bench_egd_recv(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		if ((n = read(fd, p, len)) <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* N clients asking all the time for SECONDS: "egd BYTES SECONDS JAIN". */
int
bench_egd_rate(int nclients, double seconds, const char *path)
{
	struct pollfd *pf = calloc((size_t)nclients, sizeof *pf);
	uint64_t *got = calloc((size_t)nclients, sizeof *got), total = 0;
	size_t *owed = calloc((size_t)nclients, sizeof *owed);
	uint8_t buf[65536];
	double t0, t, sum2 = 0;
	int i, d;

	for (i = 0; i < nclients; i++) {
		if ((pf[i].fd = bench_egd_connect(path)) == -1)
			return EX_UNAVAILABLE;
		pf[i].events = POLLIN;
		for (d = 0; d < BENCH_EGD_DEPTH; d++)
			bench_egd_send(pf[i].fd, bench_egd_request, sizeof bench_egd_request);
		owed[i] = BENCH_EGD_DEPTH * BENCH_EGD_READ;
	}
	t0 = bench_now();
	while ((t = bench_now() - t0) < seconds) {
		if (poll(pf, (nfds_t)nclients, 100) < 0)
			break;
		for (i = 0; i < nclients; i++) {
			ssize_t n;

			if (!(pf[i].revents & (POLLIN | POLLHUP)))
				continue;
			if ((n = read(pf[i].fd, buf, sizeof buf)) <= 0) {
				fprintf(stderr, "entropyd-bench: client %d: hung up\n", i);
				return EX_PROTOCOL;
			}
			got[i] += (uint64_t)n;
			owed[i] -= (size_t)n;
			/* Ask again for each read answered whole. */
			while (owed[i] <= (BENCH_EGD_DEPTH - 1) * BENCH_EGD_READ) {
				bench_egd_send(pf[i].fd, bench_egd_request, sizeof bench_egd_request);
				owed[i] += BENCH_EGD_READ;
			}
		}
	}
	for (i = 0; i < nclients; i++) {
		total += got[i];
		sum2 += (double)got[i] * (double)got[i];
		close(pf[i].fd);
	}
	printf("egd %llu %.6f %.6f\n", (unsigned long long)total, t,
	    sum2 > 0 ? (double)total * (double)total / ((double)nclients * sum2) : 0.0);
	free(pf);
	free(got);
	free(owed);
	return EX_OK;
}

/* Compare two doubles for qsort. */
static int
bench_egd_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * COUNT blocking reads of 64 bytes, one at a time, a pause of 2 ms before
 * each so the broker's stock has bytes: "egdlat P50_MS P99_MS".
 */
int
bench_egd_latency(int count, const char *path)
{
	double *ms = calloc((size_t)count, sizeof *ms), t0;
	static const uint8_t ask[2] = { 0x02, 64 };
	uint8_t buf[64];
	int fd = bench_egd_connect(path), i;

	if (fd == -1)
		return EX_UNAVAILABLE;
	for (i = 0; i < count; i++) {
		usleep(2000);
		t0 = bench_now();
		if (bench_egd_send(fd, ask, sizeof ask) == -1 || bench_egd_recv(fd, buf, 64) == -1) {
			fprintf(stderr, "entropyd-bench: the broker hung up\n");
			return EX_PROTOCOL;
		}
		ms[i] = (bench_now() - t0) * 1000;
	}
	qsort(ms, (size_t)count, sizeof *ms, bench_egd_cmp);
	printf("egdlat %.3f %.3f\n", ms[count / 2], ms[count * 99 / 100]);
	close(fd);
	free(ms);
	return EX_OK;
}

/* A process's resident set in KiB, or -1. */
static long
bench_egd_rss_kib(long pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* A client that has had one byte, so the broker has set it up whole; -1. */
static int
bench_egd_idle_client(const char *path)
{
	static const uint8_t ask[2] = { 0x02, 1 };
	uint8_t b;
	int fd = bench_egd_connect(path);

	if (fd != -1 && (bench_egd_send(fd, ask, sizeof ask) == -1 ||
	    bench_egd_recv(fd, &b, 1) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The worker's RSS growth per client: N idle clients (after a first one,
 * so one-time costs are not counted): "egdrss KIB_PER_CLIENT".
 */
int
bench_egd_rss(int nclients, const char *path, long pid)
{
	int *fds = calloc((size_t)nclients + 1, sizeof *fds), i;
	long before, after;

	if ((fds[0] = bench_egd_idle_client(path)) == -1)
		return EX_UNAVAILABLE;
	usleep(200000);
	before = bench_egd_rss_kib(pid);
	for (i = 1; i <= nclients; i++)
		if ((fds[i] = bench_egd_idle_client(path)) == -1)
			return EX_UNAVAILABLE;
	usleep(200000);
	after = bench_egd_rss_kib(pid);
	if (before < 0 || after < 0) {
		fprintf(stderr, "entropyd-bench: no RSS for process %ld\n", pid);
		return EX_UNAVAILABLE;
	}
	printf("egdrss %.3f\n", (double)(after - before) / nclients);
	for (i = 0; i <= nclients; i++)
		close(fds[i]);
	free(fds);
	return EX_OK;
}

/*
 * entropyd-bench egdpace FILE BYTES_PER_S: FILE's bytes over and over to
 * stdout at that rate, 64 KiB at a time on a schedule from the start (a
 * late write is made up, but no more than 50 ms of it: a reader that
 * paused does not get a burst). With no reader (a FIFO between two
 * daemons), it waits for the next; it runs until it is killed.
 */
int
bench_egd_pace(const char *path, double rate)
{
	const struct timespec idle = { 0, 10000000 };
	struct stat st;
	struct timespec ts;
	uint8_t *data;
	size_t len, at = 0, chunk;
	double t0, sent = 0, wait;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd == -1 || fstat(fd, &st) == -1 || st.st_size <= 0) {
		fprintf(stderr, "entropyd-bench: %s: %s\n", path, fd == -1 ? strerror(errno) :
		    "empty");
		return EX_NOINPUT;
	}
	len = (size_t)st.st_size;
	data = malloc(len);
	for (at = 0; data != NULL && at < len; at += (size_t)n)
		if ((n = read(fd, data + at, len - at)) <= 0)
			break;
	close(fd);
	if (data == NULL || at < len) {
		fprintf(stderr, "entropyd-bench: %s: could not read it whole\n", path);
		free(data);
		return EX_IOERR;
	}
	signal(SIGPIPE, SIG_IGN);
	t0 = bench_now();
	for (at = 0;; at = (at + chunk) % len) {
		chunk = len - at < 65536 ? len - at : 65536;
		if (bench_egd_send(STDOUT_FILENO, data + at, chunk) == -1) {
			if (errno != EPIPE)
				break;
			nanosleep(&idle, NULL);
			chunk = 0;
		}
		sent += (double)chunk;
		if ((wait = t0 + sent / rate - bench_now()) < -0.05)
			t0 -= wait + 0.05;
		else if (wait > 0) {
			ts.tv_sec = (time_t)wait;
			ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
	}
	free(data);
	perror("entropyd-bench: egdpace");
	return EX_IOERR;
}
