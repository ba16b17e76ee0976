/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the control socket's request handling, end to end in one
 * process: each input is sent as one client's bytes to the real control
 * server (evhttp, routing, /health, /metrics, /sources rendering) on a
 * private Unix socket, then as another client's to the generation socket
 * (its own small reader, open to every local user), and the loop runs until
 * the server has answered and closed, or a bounded number of turns has
 * passed.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "control.h"
#include "log.h"
#include "options.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct event_base *fuzz_base;
static struct config fuzz_cfg;
static struct sink fuzz_sink;
static char fuzz_path[sizeof ((struct sockaddr_un *)0)->sun_path];
static char fuzz_genfile[sizeof ((struct sockaddr_un *)0)->sun_path - 8];
static char fuzz_gensock[sizeof ((struct sockaddr_un *)0)->sun_path];

/* Start the control server once, on a socket private to this process. */
static void
fuzz_start(void)
{
	snprintf(fuzz_path, sizeof fuzz_path, "%s/entropyd-fuzz-control.%ld.sock",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (long)getpid());
	unlink(fuzz_path);
	snprintf(fuzz_genfile, sizeof fuzz_genfile, "%s/entropyd-fuzz-gen.%ld",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (long)getpid());
	snprintf(fuzz_gensock, sizeof fuzz_gensock, "%s.sock", fuzz_genfile);
	unlink(fuzz_gensock);
	/* The generation socket may close before a client wrote (over a limit). */
	signal(SIGPIPE, SIG_IGN);
	log_init("fuzz_control", LOG_TO_STDERR, 0);
	fuzz_cfg.control_socket = fuzz_path;
	fuzz_cfg.generation_file = fuzz_genfile;
	fuzz_sink.fd = -1;
	fuzz_sink.path = (char *)"(fuzz)";
	fuzz_sink.kind = SINK_DISCARD;
	if ((fuzz_base = event_base_new()) == NULL ||
	    control_start(fuzz_base, &fuzz_cfg, &fuzz_sink) != 0)
		abort();
}

/* One client's exchange on the socket at path. */
static void
fuzz_exchange(const char *path, const uint8_t *data, size_t size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char reply[4096];
	ssize_t n;
	int fd, turn;

	strncpy(sun.sun_path, path, sizeof sun.sun_path - 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1)
		abort();
	if (size > 0)
		(void)write(fd, data, size);
	shutdown(fd, SHUT_WR);
	for (turn = 0; turn < 400; turn++) {
		event_base_loop(fuzz_base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
		n = read(fd, reply, sizeof reply);
		if (n == 0 || (n == -1 && errno != EAGAIN))
			break;
	}
	close(fd);
	/* Let the server see the close and free the connection. */
	for (turn = 0; turn < 8; turn++)
		event_base_loop(fuzz_base, EVLOOP_NONBLOCK | EVLOOP_ONCE);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_base == NULL)
		fuzz_start();
	if (size > 16384)
		return 0;
	fuzz_exchange(fuzz_path, data, size);
	fuzz_exchange(fuzz_gensock, data, size);
	return 0;
}
