/* SPDX-License-Identifier: MIT */
/*
 * Hostile and broken plugins, one per -D switch, each a way a drop-in can
 * try to hurt the daemon; with none, a good source reading /dev/urandom
 * (credited only on request). NAME names the source.
 *   SEGV_READ      writes through a NULL pointer in read()
 *   ABORT_PROBE    abort() in probe()
 *   LOOP_READ      spins for ever in read() (a blocking source)
 *   BLOCK_READ     blocks in read() with every signal blocked (a blocking source)
 *   POLL_BLOCK     hands over a descriptor that is always readable, then blocks in read()
 *   OVERREAD       read() returns 100 bytes more than asked for
 *   GIGABYTE       read() returns 1 GB for any read
 *   FORKBOMB       fork()s 1000 times in probe() and logs how many succeeded
 *   RNDADD         opens /dev/random in probe() and tries RNDADDENTROPY, logging the result
 *   GARBAGE        writes a malformed message onto every socket it holds, in probe()
 *   FORGE          in read(), sends a forged 8 KiB data message for a 4 KiB read on
 *                  every data socket of its host (bypassing the host's own checks)
 *   FLOOD          logs 20000 lines in probe()
 *   BITS_1000      claims 1000 bits per byte
 *   BITS_NAN       claims NaN bits per byte
 *   SAMPLE_0       raw samples of 0 bits
 *   EIGHT_PER_BIT  8 bits of entropy per 1-bit raw sample
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/random.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>

#ifndef NAME
#define NAME "hostile"
#endif

/* One open instance. */
struct hostile {
	int fd;         /* /dev/urandom */
	int poll_fd;    /* POLL_BLOCK: always readable */
	int block_fd;   /* BLOCK_READ, POLL_BLOCK: never readable */
	int block_w;
};

static const struct entropyd_host *hostile_host;

/* The plugin's own misdeeds at probe time. */
static void
hostile_probe_misdeeds(struct entropyd_module *m, const struct entropyd_host *host)
{
#ifdef ABORT_PROBE
	abort();
#endif
#ifdef FORKBOMB
	{
		int i, ok = 0, first_errno = 0;
		pid_t pid;

		for (i = 0; i < 1000; i++) {
			if ((pid = fork()) == 0)
				_exit(0);
			if (pid > 0) {
				ok++;
				waitpid(pid, NULL, 0);
			} else if (first_errno == 0)
				first_errno = errno;
		}
		host->module_log(m, ENTROPYD_LOG_WARNING, "forks: %d of 1000 succeeded (%s)", ok,
		    first_errno ? strerror(first_errno) : "no error");
	}
#endif
#ifdef RNDADD
	{
		struct {
			int entropy_count, buf_size;
			unsigned char buf[32];
		} info = { 256, 32, { 0 } };
		int fd = open("/dev/random", O_WRONLY | O_CLOEXEC);

		if (fd == -1)
			host->module_log(m, ENTROPYD_LOG_WARNING, "open /dev/random: %s",
			    strerror(errno));
		else if (ioctl(fd, RNDADDENTROPY, &info) == -1)
			host->module_log(m, ENTROPYD_LOG_WARNING, "RNDADDENTROPY: %s", strerror(errno));
		else
			host->module_log(m, ENTROPYD_LOG_WARNING, "RNDADDENTROPY: credited 256 bits");
		if (fd != -1)
			close(fd);
	}
#endif
#ifdef GARBAGE
	{
		static const char junk[] = "\xff\xff\x00\x00\x01\x00\x00\x00garbage";
		int fd;

		for (fd = 0; fd < 64; fd++)
			send(fd, junk, sizeof junk, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
#endif
#ifdef FLOOD
	{
		int i;

		for (i = 0; i < 20000; i++)
			host->module_log(m, ENTROPYD_LOG_INFO, "flood line %d", i);
	}
#endif
}

/* One instance, reading /dev/urandom. */
static int
hostile_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	hostile_host = host;
	hostile_probe_misdeeds(m, host);
	return host->add_instance(m, "", "/dev/urandom", NULL) != NULL ? 1 : -1;
}

/* Open /dev/urandom, and the descriptors a misdeed needs. */
static int
hostile_open(struct entropyd_instance *inst, void **state)
{
	struct hostile *h = calloc(1, sizeof *h);
	int p[2];

	if (h == NULL || (h->fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(h);
		return -1;
	}
	h->poll_fd = h->block_fd = h->block_w = -1;
#if defined(BLOCK_READ) || defined(POLL_BLOCK)
	if (pipe(p) == 0) {
		h->block_fd = p[0];
		h->block_w = p[1];
	}
#endif
#ifdef POLL_BLOCK
	/* /dev/zero is always readable to poll(). */
	h->poll_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
#endif
	(void)p;
	*state = h;
	return 0;
}

/* Read, or misbehave. */
static ssize_t
hostile_read(void *state, void *buf, size_t len)
{
	struct hostile *h = state;
	ssize_t n;

#ifdef SEGV_READ
	*(volatile int *)(uintptr_t)(h->fd & 0) = 1;
#endif
#ifdef LOOP_READ
	for (;;)
		__asm__ volatile("" ::: "memory");
#endif
#if defined(BLOCK_READ) || defined(POLL_BLOCK)
	{
		sigset_t all;
		char c;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		while (read(h->block_fd, &c, 1) != 1)
			continue;
	}
#endif
#ifdef GIGABYTE
	return (ssize_t)1 << 30;
#endif
#ifdef FORGE
	{
		/* The host's data message: type 65 (PP_DATA), instance 1, 8 KiB. */
		static unsigned char forged[8 + 8192] = { 65, 0, 0, 0, 1, 0, 0, 0 };
		int fd, type;
		socklen_t tlen;

		/* Its data sockets; fd 3 is the host's control socket. */
		for (fd = 4; fd < 64; fd++) {
			tlen = sizeof type;
			if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 &&
			    type == SOCK_SEQPACKET)
				send(fd, forged, sizeof forged, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
	}
#endif
	n = read(h->fd, buf, len);
#ifdef OVERREAD
	if (n > 0)
		return n + 100;
#endif
	return n > 0 ? n : ENTROPYD_READ_ERROR;
}

/* The descriptor the host polls: /dev/urandom, or the misdeed's, or none. */
static int
hostile_pollfd(void *state)
{
	struct hostile *h = state;

#if defined(LOOP_READ) || defined(BLOCK_READ)
	(void)h;
	return -1;
#elif defined(POLL_BLOCK)
	return h->poll_fd;
#else
	return h->fd;
#endif
}

/* Close what was opened. */
static void
hostile_close(void *state)
{
	struct hostile *h = state;

	close(h->fd);
	if (h->poll_fd != -1)
		close(h->poll_fd);
	if (h->block_fd != -1) {
		close(h->block_fd);
		close(h->block_w);
	}
	free(h);
}

static const struct entropyd_source hostile_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = NAME,
	.description = "a hostile test plugin",
#if defined(SAMPLE_0) || defined(EIGHT_PER_BIT)
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST | ENTROPYD_SOURCE_RAW_SAMPLES,
#else
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
#endif
#if defined(BITS_1000)
	.entropy_bits = 1000.0,
#elif defined(BITS_NAN)
	.entropy_bits = NAN,
#else
	.entropy_bits = 8.0,
#endif
#if defined(SAMPLE_0)
	.sample_bits = 0,
#elif defined(EIGHT_PER_BIT)
	.sample_bits = 1,
#endif
	.probe = hostile_probe,
	.open = hostile_open,
	.read = hostile_read,
	.pollfd = hostile_pollfd,
	.close = hostile_close,
};

const struct entropyd_source *
entropyd_source_entry(void)
{
	return &hostile_source;
}
