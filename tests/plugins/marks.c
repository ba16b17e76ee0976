/* SPDX-License-Identifier: MIT */
/*
 * "testmarks": one instance reading a file or FIFO (-O testmarks:path:P)
 * in order, credited only on request, with an ABI 1.2 forget() that logs
 * how many bytes the instance had read when it was called:
 * "forget called after N bytes read". With -O testmarks:thread:1 it reads
 * from a thread of its host (no pollfd, a blocking read) instead of being
 * polled. tests/integration/daemon-plugin-forget.sh knows from that line
 * which bytes were read before a VM generation change, wherever they were
 * held.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>

static const struct entropyd_option marks_options[] = {
	{ "path", NULL, "the file or FIFO to read" },
	{ "thread", "0", "1: read from a thread (blocking), not polled" },
	{ NULL, NULL, NULL }
};

/* An open instance. */
struct marks {
	struct entropyd_instance *inst;
	int fd;
	int threaded;
	uint64_t read_bytes;
};

static const struct entropyd_host *marks_host;
static struct entropyd_module *marks_module;

/* One instance on the path given. */
static int
marks_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	const char *path = host->option(m, "path");

	marks_host = host;
	marks_module = m;
	if (path == NULL) {
		host->unusable(m, "no path given");
		return 0;
	}
	return host->add_instance(m, "", path, NULL) != NULL ? 1 : -1;
}

/* Open the path, non-blocking when polled. */
static int
marks_open(struct entropyd_instance *inst, void **state)
{
	struct marks *s = calloc(1, sizeof *s);
	const char *path = marks_host->option(marks_module, "path");

	if (s == NULL)
		return -1;
	s->inst = inst;
	s->threaded = strcmp(marks_host->option(marks_module, "thread"), "1") == 0;
	if ((s->fd = open(path, O_RDONLY | O_CLOEXEC | (s->threaded ? 0 : O_NONBLOCK))) == -1) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

/* Read in order, counting; the end of the file is the instance's end. */
static ssize_t
marks_read(void *state, void *buf, size_t len)
{
	struct marks *s = state;
	ssize_t n = read(s->fd, buf, len);

	if (n > 0) {
		s->read_bytes += (uint64_t)n;
		return n;
	}
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return ENTROPYD_READ_AGAIN;
	return n == 0 ? ENTROPYD_READ_EOF : ENTROPYD_READ_ERROR;
}

/* Polled, or -1 to be read from a thread. */
static int
marks_pollfd(void *state)
{
	struct marks *s = state;

	return s->threaded ? -1 : s->fd;
}

/* The VM generation changed: say how far the instance had read. */
static void
marks_forget(void *state)
{
	struct marks *s = state;

	marks_host->log(s->inst, ENTROPYD_LOG_INFO, "forget called after %" PRIu64 " bytes read",
	    s->read_bytes);
}

static void
marks_close(void *state)
{
	struct marks *s = state;

	close(s->fd);
	free(s);
}

static const struct entropyd_source marks_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "testmarks",
	.description = "a test plugin reading a file in order, saying how far at forget()",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.options = marks_options,
	.probe = marks_probe,
	.open = marks_open,
	.read = marks_read,
	.pollfd = marks_pollfd,
	.close = marks_close,
	.forget = marks_forget,
};

const struct entropyd_source *
entropyd_source_entry(void)
{
	return &marks_source;
}
