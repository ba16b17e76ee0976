/* SPDX-License-Identifier: MIT */
/*
 * Hostile and broken plugins, each a way a drop-in can try to hurt the
 * daemon: one file whose case is its file name. Copied as hostile_CASE.so it
 * is the source hostile_CASE and misbehaves as CASE says from its first call
 * on, its descriptor included; as hostile.so it is a good source reading
 * /dev/urandom (credited only on request); under any other name it gives no
 * descriptor, so a misspelt case is refused at load.
 *   segv_read      writes through a NULL pointer in read()
 *   abort_probe    abort() in probe()
 *   block_probe    blocks in probe() with every signal blocked
 *   slow_block_probe  the same, from a module that declares a slow start
 *   loop_read      spins for ever in read() (a blocking source)
 *   block_read     blocks in read() with every signal blocked (a blocking source)
 *   poll_block     hands over a descriptor that is always readable, then blocks in read()
 *   overread       read() returns 100 bytes more than asked for
 *   gigabyte       read() returns 1 GB for any read
 *   forkbomb       fork()s 1000 times in probe() and logs how many succeeded
 *   rndadd         opens /dev/random in probe() and tries RNDADDENTROPY, logging the result
 *   garbage        writes a malformed message onto every socket it holds, in probe()
 *   forge          in read(), sends a forged 8 KiB data message for a 4 KiB read on
 *                  every data socket of its host (bypassing the host's own checks)
 *   flood          logs 20000 lines in probe()
 *   bits_1000      claims 1000 bits per byte
 *   bits_nan       claims NaN bits per byte
 *   sample_0       raw samples of 0 bits
 *   eight_per_bit  8 bits of entropy per 1-bit raw sample
 */
#define _GNU_SOURCE /* dladdr() */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/random.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>

/* The ways to misbehave; HOSTILE_NONE is the good source. */
enum hostile_case {
	HOSTILE_NONE,
	HOSTILE_SEGV_READ,
	HOSTILE_ABORT_PROBE,
	HOSTILE_BLOCK_PROBE,
	HOSTILE_SLOW_BLOCK_PROBE,
	HOSTILE_LOOP_READ,
	HOSTILE_BLOCK_READ,
	HOSTILE_POLL_BLOCK,
	HOSTILE_OVERREAD,
	HOSTILE_GIGABYTE,
	HOSTILE_FORKBOMB,
	HOSTILE_RNDADD,
	HOSTILE_GARBAGE,
	HOSTILE_FORGE,
	HOSTILE_FLOOD,
	HOSTILE_BITS_1000,
	HOSTILE_BITS_NAN,
	HOSTILE_SAMPLE_0,
	HOSTILE_EIGHT_PER_BIT,
	HOSTILE_UNKNOWN /* a file name that names no case: no descriptor */
};

/* One open instance. */
struct hostile {
	int fd;         /* /dev/urandom */
	int poll_fd;    /* poll_block: always readable */
	int block_fd;   /* block_read, poll_block: never readable */
	int block_w;
};

/* This file's case, learnt from its name as it is loaded. */
static enum hostile_case hostile_case = HOSTILE_UNKNOWN;

static int hostile_probe(struct entropyd_module *, const struct entropyd_host *);
static int hostile_open(struct entropyd_instance *, void **);
static ssize_t hostile_read(void *, void *, size_t);
static int hostile_pollfd(void *);
static void hostile_close(void *);
static void hostile_block(int);

/* The source names, by case. */
static const char *const hostile_names[] = {
	[HOSTILE_NONE] = "hostile",
	[HOSTILE_SEGV_READ] = "hostile_segv_read",
	[HOSTILE_ABORT_PROBE] = "hostile_abort_probe",
	[HOSTILE_BLOCK_PROBE] = "hostile_block_probe",
	[HOSTILE_SLOW_BLOCK_PROBE] = "hostile_slow_block_probe",
	[HOSTILE_LOOP_READ] = "hostile_loop_read",
	[HOSTILE_BLOCK_READ] = "hostile_block_read",
	[HOSTILE_POLL_BLOCK] = "hostile_poll_block",
	[HOSTILE_OVERREAD] = "hostile_overread",
	[HOSTILE_GIGABYTE] = "hostile_gigabyte",
	[HOSTILE_FORKBOMB] = "hostile_forkbomb",
	[HOSTILE_RNDADD] = "hostile_rndadd",
	[HOSTILE_GARBAGE] = "hostile_garbage",
	[HOSTILE_FORGE] = "hostile_forge",
	[HOSTILE_FLOOD] = "hostile_flood",
	[HOSTILE_BITS_1000] = "hostile_bits_1000",
	[HOSTILE_BITS_NAN] = "hostile_bits_nan",
	[HOSTILE_SAMPLE_0] = "hostile_sample_0",
	[HOSTILE_EIGHT_PER_BIT] = "hostile_eight_per_bit",
};

/* The good source's descriptor; hostile_learn_case() adjusts it to the case. */
static struct entropyd_source hostile_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "hostile",
	.description = "a hostile test plugin",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.probe = hostile_probe,
	.open = hostile_open,
	.read = hostile_read,
	.pollfd = hostile_pollfd,
	.close = hostile_close,
};

/*
 * The case from this file's name, before anything else of it runs. A
 * constructor, as it must run inside dlopen(): the host loads the plugin
 * from a descriptor (/proc/self/fd/N) that it closes right after, and only
 * the link's target carries the name the file was copied under.
 */
__attribute__((constructor)) static void
hostile_learn_case(void)
{
	char path[PATH_MAX], *base, *dot;
	Dl_info info;
	ssize_t len;
	size_t i;

	if (dladdr(&hostile_source, &info) == 0 || info.dli_fname == NULL)
		return;
	if ((len = readlink(info.dli_fname, path, sizeof path - 1)) >= 0)
		path[len] = '\0';
	else
		snprintf(path, sizeof path, "%s", info.dli_fname); /* loaded by its own path */
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	if ((dot = strrchr(base, '.')) != NULL && strcmp(dot, ".so") == 0)
		*dot = '\0';
	for (i = 0; i < sizeof hostile_names / sizeof hostile_names[0]; i++)
		if (strcmp(base, hostile_names[i]) == 0)
			hostile_case = (enum hostile_case)i;
	if (hostile_case == HOSTILE_UNKNOWN)
		return;
	hostile_source.name = hostile_names[hostile_case];
	if (hostile_case == HOSTILE_SAMPLE_0 || hostile_case == HOSTILE_EIGHT_PER_BIT)
		hostile_source.flags |= ENTROPYD_SOURCE_RAW_SAMPLES;
	if (hostile_case == HOSTILE_BITS_1000)
		hostile_source.entropy_bits = 1000.0;
	else if (hostile_case == HOSTILE_BITS_NAN)
		hostile_source.entropy_bits = NAN;
	if (hostile_case == HOSTILE_EIGHT_PER_BIT)
		hostile_source.sample_bits = 1;
	if (hostile_case == HOSTILE_SLOW_BLOCK_PROBE)
		hostile_source.flags |= ENTROPYD_SOURCE_SLOW_START;
}

/* fork() 1000 times and log how many succeeded. */
static void
hostile_forkbomb(struct entropyd_module *m, const struct entropyd_host *host)
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

/* Try to credit the kernel directly, and log how that went. */
static void
hostile_rndadd(struct entropyd_module *m, const struct entropyd_host *host)
{
	struct {
		int entropy_count, buf_size;
		unsigned char buf[32];
	} info = { 256, 32, { 0 } };
	int fd = open("/dev/random", O_WRONLY | O_CLOEXEC);

	if (fd == -1)
		host->module_log(m, ENTROPYD_LOG_WARNING, "open /dev/random: %s", strerror(errno));
	else if (ioctl(fd, RNDADDENTROPY, &info) == -1)
		host->module_log(m, ENTROPYD_LOG_WARNING, "RNDADDENTROPY: %s", strerror(errno));
	else
		host->module_log(m, ENTROPYD_LOG_WARNING, "RNDADDENTROPY: credited 256 bits");
	if (fd != -1)
		close(fd);
}

/* The plugin's own misdeeds at probe time. */
static void
hostile_probe_misdeeds(struct entropyd_module *m, const struct entropyd_host *host)
{
	static const char junk[] = "\xff\xff\x00\x00\x01\x00\x00\x00garbage";
	int i, p[2];

	switch (hostile_case) {
	case HOSTILE_ABORT_PROBE:
		abort();
	case HOSTILE_BLOCK_PROBE:
	case HOSTILE_SLOW_BLOCK_PROBE:
		if (pipe(p) == 0)
			hostile_block(p[0]);
		break;
	case HOSTILE_FORKBOMB:
		hostile_forkbomb(m, host);
		break;
	case HOSTILE_RNDADD:
		hostile_rndadd(m, host);
		break;
	case HOSTILE_GARBAGE:
		for (i = 0; i < 64; i++)
			send(i, junk, sizeof junk, MSG_NOSIGNAL | MSG_DONTWAIT);
		break;
	case HOSTILE_FLOOD:
		for (i = 0; i < 20000; i++)
			host->module_log(m, ENTROPYD_LOG_INFO, "flood line %d", i);
		break;
	default:
		break;
	}
}

/* One instance, reading /dev/urandom. */
static int
hostile_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	hostile_probe_misdeeds(m, host);
	return host->add_instance(m, "", "/dev/urandom", NULL) != NULL ? 1 : -1;
}

/* Open /dev/urandom, and the descriptors a misdeed needs. */
static int
hostile_open(struct entropyd_instance *inst, void **state)
{
	struct hostile *h = calloc(1, sizeof *h);
	int p[2];

	(void)inst;
	if (h == NULL || (h->fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(h);
		return -1;
	}
	h->poll_fd = h->block_fd = h->block_w = -1;
	if ((hostile_case == HOSTILE_BLOCK_READ || hostile_case == HOSTILE_POLL_BLOCK) &&
	    pipe(p) == 0) {
		h->block_fd = p[0];
		h->block_w = p[1];
	}
	/* /dev/zero is always readable to poll(). */
	if (hostile_case == HOSTILE_POLL_BLOCK)
		h->poll_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	*state = h;
	return 0;
}

/* Block for ever with every signal blocked: on fd, a pipe no one writes to. */
static void
hostile_block(int fd)
{
	sigset_t all;
	char c;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (read(fd, &c, 1) != 1)
		continue;
}

/* Send a forged 8 KiB data message on every data socket of the host. */
static void
hostile_forge(void)
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

/* Read, or misbehave. */
static ssize_t
hostile_read(void *state, void *buf, size_t len)
{
	struct hostile *h = state;
	ssize_t n;

	switch (hostile_case) {
	case HOSTILE_SEGV_READ:
		*(volatile int *)(uintptr_t)(h->fd & 0) = 1;
		break;
	case HOSTILE_LOOP_READ:
		for (;;)
			__asm__ volatile("" ::: "memory");
	case HOSTILE_BLOCK_READ:
	case HOSTILE_POLL_BLOCK:
		hostile_block(h->block_fd);
		break;
	case HOSTILE_GIGABYTE:
		return (ssize_t)1 << 30;
	case HOSTILE_FORGE:
		hostile_forge();
		break;
	default:
		break;
	}
	n = read(h->fd, buf, len);
	if (hostile_case == HOSTILE_OVERREAD && n > 0)
		return n + 100;
	return n > 0 ? n : ENTROPYD_READ_ERROR;
}

/* The descriptor the host polls: /dev/urandom, or the misdeed's, or none. */
static int
hostile_pollfd(void *state)
{
	struct hostile *h = state;

	switch (hostile_case) {
	case HOSTILE_LOOP_READ:
	case HOSTILE_BLOCK_READ:
		return -1;
	case HOSTILE_POLL_BLOCK:
		return h->poll_fd;
	default:
		return h->fd;
	}
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

const struct entropyd_source *
entropyd_source_entry(void)
{
	return hostile_case != HOSTILE_UNKNOWN ? &hostile_source : NULL;
}
