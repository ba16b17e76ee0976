/* SPDX-License-Identifier: MIT */
/*
 * A drop-in with as many instances as -O many:instances:N asks (1 to 64),
 * each reading /dev/urandom, polled by its host; credited only on request.
 * make bench loads it to measure what instances and their host cost. With
 * -O many:late:1 a thread of its own adds one more ("many:late") a moment
 * after probe, through host->defer, as a hotplug thread would.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

#include <entropyd/source.h>

static const struct entropyd_option many_options[] = {
	{ "instances", "1", "how many instances to add (1 to 64)" },
	{ "late", "0", "1: a thread adds one more instance after probe, through defer" },
	{ NULL, NULL, NULL }
};

static const struct entropyd_host *many_host;
static pthread_t many_thread;
static int many_thread_started;

/* On the host's loop, as defer promises: add the late instance. */
static void
many_add_late(struct entropyd_module *m, void *arg)
{
	many_host->add_instance(m, "late", "/dev/urandom", NULL);
}

/* The plugin's own thread: wait a moment, then ask for the late instance. */
static void *
many_hotplug(void *arg)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };

	nanosleep(&pause, NULL);
	many_host->defer(arg, many_add_late, NULL);
	return NULL;
}

/* Add the instances asked for. */
static int
many_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	int i, n = atoi(host->option(m, "instances"));
	char id[16];

	many_host = host;
	if (n < 1 || n > 64) {
		host->unusable(m, "instances must be 1 to 64");
		return 0;
	}
	if (strcmp(host->option(m, "late"), "1") == 0 && !many_thread_started &&
	    ENTROPYD_HOST_HAS(host, defer) &&
	    pthread_create(&many_thread, NULL, many_hotplug, m) == 0)
		many_thread_started = 1;
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "%d", i);
		if (host->add_instance(m, id, "/dev/urandom", NULL) == NULL)
			return -1;
	}
	return n;
}

/* Open /dev/urandom for one instance. */
static int
many_open(struct entropyd_instance *inst, void **state)
{
	int *fd = malloc(sizeof *fd);

	if (fd == NULL || (*fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(fd);
		return -1;
	}
	*state = fd;
	return 0;
}

/* Read it. */
static ssize_t
many_read(void *state, void *buf, size_t len)
{
	ssize_t n = read(*(int *)state, buf, len);

	return n > 0 ? n : ENTROPYD_READ_ERROR;
}

/* Its host polls the descriptor. */
static int
many_pollfd(void *state)
{
	return *(int *)state;
}

/* Close it. */
static void
many_close(void *state)
{
	close(*(int *)state);
	free(state);
}

/* Unloaded: the thread is done by now; join it. */
static void
many_shutdown(struct entropyd_module *m)
{
	if (many_thread_started)
		pthread_join(many_thread, NULL);
	many_thread_started = 0;
}

static const struct entropyd_source many_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "many",
	.description = "a test plugin with N instances reading /dev/urandom",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.options = many_options,
	.probe = many_probe,
	.open = many_open,
	.read = many_read,
	.pollfd = many_pollfd,
	.close = many_close,
	.shutdown = many_shutdown,
};

const struct entropyd_source *
entropyd_source_entry(void)
{
	return &many_source;
}
