/* SPDX-License-Identifier: MIT */
/*
 * Purpose-built bad plugins, one per -D switch, each refused for one
 * reason; with no switch a good one ("testgood") that reads /dev/urandom
 * uncredited and lowers its estimate through the host table on request.
 *   BAD_NOSYM     exports no entry symbol
 *   BAD_MAJOR     ABI major + 1
 *   BAD_MINOR     ABI minor newer than the daemon's
 *   BAD_SIZE      a descriptor smaller than ABI 1.0's
 *   BAD_CLASH     calls itself "file", a built-in's name
 *   BAD_INIT      configure() always fails
 *   BAD_DAEMONSYM calls a daemon function directly instead of the host table
 * and, for a good one used unless excluded, DEFAULT_ON; for source ABI
 * versions, WITH_FORGET (an ABI 1.2 forget() that logs each call) and
 * ABI_1_1 (a descriptor as an ABI 1.1 plugin has it, without forget()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <entropyd/source.h>

#ifndef NAME
#define NAME "testgood"
#endif

#ifdef BAD_DAEMONSYM
/* In the daemon, but not exported by it: loading must fail. */
extern void log_warnx(const char *, ...);
#endif

static const struct entropyd_host *bad_host;
static struct entropyd_module *bad_module;

static const struct entropyd_option bad_options[] = {
	{ "limit", NULL, "lower each instance's estimate to this, through the host table" },
	{ NULL, NULL, NULL }
};

/* Refuse to start when built to fail its init. */
static int
bad_configure(struct entropyd_module *m, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	bad_host = host;
#ifdef BAD_INIT
	snprintf(err, errlen, "the test device is on fire");
	return -1;
#else
	return 0;
#endif
}

/* One instance, reading /dev/urandom. */
static int
bad_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	struct entropyd_instance *inst;
	const char *limit;

	bad_host = host;
	bad_module = m;
#ifdef BAD_DAEMONSYM
	log_warnx("this must never run");
#endif
	if ((inst = host->add_instance(m, "", "/dev/urandom", NULL)) == NULL)
		return -1;
	if ((limit = host->option(m, "limit")) != NULL && ENTROPYD_HOST_HAS(host, limit_entropy))
		host->log(inst, ENTROPYD_LOG_INFO, "estimate now %g",
		    host->limit_entropy(inst, atof(limit)));
	return 1;
}

/* Open /dev/urandom for the instance. */
static int
bad_open(struct entropyd_instance *inst, void **state)
{
	int *fd = malloc(sizeof *fd);

	if (fd == NULL || (*fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(fd);
		return -1;
	}
	*state = fd;
	return 0;
}

/* Read it; an error or end makes the instance absent. */
static ssize_t
bad_read(void *state, void *buf, size_t len)
{
	ssize_t n = read(*(int *)state, buf, len);

	return n > 0 ? n : ENTROPYD_READ_ERROR;
}

/* The daemon polls the descriptor. */
static int
bad_pollfd(void *state)
{
	return *(int *)state;
}

#ifdef WITH_FORGET
/* The VM generation changed: nothing is held here, but say it was heard. */
static void
bad_forget(void *state)
{
	bad_host->module_log(bad_module, ENTROPYD_LOG_INFO, "forget called");
}
#endif

/* Close it and free the state. */
static void
bad_close(void *state)
{
	close(*(int *)state);
	free(state);
}

static const struct entropyd_source bad_source = {
#ifdef BAD_MAJOR
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR + 1,
#else
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
#endif
#if defined(BAD_MINOR)
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR + 1,
#elif defined(ABI_1_1)
	.abi_minor = 1,
#else
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
#endif
#if defined(BAD_SIZE)
	.size = 16,
#elif defined(ABI_1_1)
	.size = offsetof(struct entropyd_source, forget),
#else
	.size = sizeof(struct entropyd_source),
#endif
#ifdef BAD_CLASH
	.name = "file",
#else
	.name = NAME,
#endif
	.description = "a test plugin reading /dev/urandom",
#ifdef DEFAULT_ON
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST | ENTROPYD_SOURCE_DEFAULT_ON,
#else
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
#endif
	.entropy_bits = 8.0,
	.options = bad_options,
	.probe = bad_probe,
	.open = bad_open,
	.read = bad_read,
	.pollfd = bad_pollfd,
	.close = bad_close,
	.configure = bad_configure,
#ifdef WITH_FORGET
	.forget = bad_forget,
#endif
};

#ifdef BAD_NOSYM
/* Exported, but under another name. */
const struct entropyd_source *entropyd_source_entry_v0(void);
__attribute__((visibility("default"))) const struct entropyd_source *
entropyd_source_entry_v0(void)
#else
const struct entropyd_source *
entropyd_source_entry(void)
#endif
{
	return &bad_source;
}
