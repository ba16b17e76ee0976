/* SPDX-License-Identifier: MIT */
/*
 * GET /generation and its long poll, end to end in one process: the real
 * control server on private sockets, the worker's generation without the
 * kernel sink (a change is published at once), and many clients. Waiters
 * are all answered with the new ID, one that hung up is forgotten (and
 * frees its place), the timeout answers 304, and the generation socket
 * serves nothing else.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "clock.h"
#include "control.h"
#include "generation.h"
#include "log.h"
#include "longpoll.h"
#include "options.h"
#include "sink.h"

static char dir[] = "/tmp/entropyd-longpoll.XXXXXX";
static char ctlpath[96], genpath[96], gensock[104];
static struct event_base *base;
static struct config cfg;
static struct sink sink;

static void
setup(void)
{
	log_init("test_longpoll", LOG_TO_STDERR, -1);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(ctlpath, sizeof ctlpath, "%s/ctl.sock", dir);
	snprintf(genpath, sizeof genpath, "%s/generation", dir);
	snprintf(gensock, sizeof gensock, "%s%s", genpath, CONTROL_GENERATION_SUFFIX);
	cfg.control_socket = ctlpath;
	cfg.generation_file = genpath;
	sink.fd = -1;
	sink.path = (char *)"(test)";
	sink.kind = SINK_DISCARD;
	cr_assert_not_null(base = event_base_new());
	generation_start(base, genpath, false);
	cr_assert_eq(control_start(base, &cfg, &sink), 0);
}

static void
teardown(void)
{
	char cmd[160];

	control_stop();
	generation_stop();
	event_base_free(base);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
}

TestSuite(longpoll, .init = setup, .fini = teardown);

/* A client that sent a request on a socket. */
static int
ask(const char *sockpath, const char *request)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), rc;

	cr_assert_geq(fd, 0);
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sockpath);
	/* The server's queue is full until the loop accepts: this process runs both. */
	while ((rc = connect(fd, (struct sockaddr *)&sun, sizeof sun)) == -1 && errno == EAGAIN)
		event_base_loop(base, EVLOOP_NONBLOCK);
	cr_assert_eq(rc, 0, "%s", strerror(errno));
	cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	return fd;
}

/* A long poll past the current ID. */
static int
wait_after(const char *sockpath, const char *id, unsigned timeout_s)
{
	char req[256];

	snprintf(req, sizeof req, "GET /generation?after=%s&timeout=%u HTTP/1.1\r\n"
	    "Host: localhost\r\n\r\n", id, timeout_s);
	return ask(sockpath, req);
}

/* Turn the loop without waiting until cond() holds, or give up after many turns. */
static bool
turn_until(bool (*cond)(void *), void *arg)
{
	unsigned turn;

	for (turn = 0; turn < 20000; turn++) {
		if (cond(arg))
			return true;
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (turn % 100 == 99)
			poll(NULL, 0, 1);
	}
	return cond(arg);
}

static bool
waiters_are(void *arg)
{
	return longpoll_waiters() == *(size_t *)arg;
}

/* Read a client's whole answer (the server closes after it), turning the loop meanwhile. */
static size_t
answer(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	unsigned turn;
	ssize_t n;

	for (turn = 0; turn < 20000; turn++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		n = read(fd, buf + len, cap - 1 - len);
		if (n == 0)
			break;
		if (n > 0)
			len += (size_t)n;
		else if (errno != EAGAIN)
			break;
		else if (turn % 100 == 99)
			poll(NULL, 0, 1);
	}
	buf[len] = '\0';
	return len;
}

Test(longpoll, many_waiters_all_get_the_new_id_and_one_that_hung_up_is_forgotten)
{
	size_t n = geteuid() == 0 ? 300 : CONTROL_WAIT_PEER_MAX - 4, want, i, gone = 7;
	char buf[4096], *id = strdup(generation_stats()->id);
	const char *newid;
	int *fds = calloc(n, sizeof *fds);

	for (i = 0; i < n; i++)
		fds[i] = wait_after(gensock, id, 60);
	want = n;
	cr_assert(turn_until(waiters_are, &want), "%zu waiting of %zu", longpoll_waiters(), n);
	/* Some hang up: the server notices and forgets them. */
	for (i = 0; i < gone; i++)
		close(fds[i]);
	want = n - gone;
	cr_assert(turn_until(waiters_are, &want), "%zu waiting, %zu expected", longpoll_waiters(),
	    want);
	/* One stops sending: it still waits; then it closes: it is forgotten too. */
	shutdown(fds[gone], SHUT_WR);
	cr_assert_not(turn_until(waiters_are, &(size_t){ want - 1 }), "a half close is no hangup");
	close(fds[gone]);
	want = n - ++gone;
	cr_assert(turn_until(waiters_are, &want), "%zu waiting after a half close and a close, "
	    "%zu expected", longpoll_waiters(), want);
	generation_changed(VMGENID_TRIGGER_CONTROL, clock_now_ns());
	newid = generation_stats()->id;
	cr_assert_str_neq(newid, id);
	cr_expect_eq(longpoll_waiters(), 0, "every waiter answered in the turn of the publish");
	for (i = gone; i < n; i++) {
		answer(fds[i], buf, sizeof buf);
		cr_expect(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0, "waiter %zu: %.40s", i, buf);
		cr_expect(strstr(buf, newid) != NULL, "waiter %zu has the new ID", i);
		close(fds[i]);
	}
	free(fds);
	free(id);
}

Test(longpoll, the_timeout_answers_304)
{
	char buf[1024];
	size_t one = 1;
	int fd = wait_after(gensock, generation_stats()->id, 1);

	cr_assert(turn_until(waiters_are, &one));
	/* The loop sleeps until the waiter's timer: its answer then. */
	while (longpoll_waiters() > 0)
		event_base_loop(base, EVLOOP_ONCE);
	cr_assert_gt(answer(fd, buf, sizeof buf), 0);
	cr_expect(strncmp(buf, "HTTP/1.1 304 Not Modified\r\n", 27) == 0, "%s", buf);
	cr_expect_eq(longpoll_waiters(), 0);
	close(fd);
}

Test(longpoll, what_is_answered_at_once)
{
	char buf[4096];
	const char *id = generation_stats()->id;
	int fd;

	fd = wait_after(gensock, "11111111-2222-4333-8444-555555555555", 60);
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.1 200 OK", 15) == 0, "another ID already: %s", buf);
	cr_expect(strstr(buf, id) != NULL);
	close(fd);
	fd = wait_after(gensock, id, 0);
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.1 304", 12) == 0, "no time to wait: %s", buf);
	close(fd);
	fd = ask(gensock, "GET /generation HTTP/1.0\r\n\r\n");
	answer(fd, buf, sizeof buf);
	cr_expect(strstr(buf, "\"trigger\": \"start\"") != NULL, "%s", buf);
	cr_expect(strstr(buf, "\"reseed_seconds\": null") != NULL, "%s", buf);
	close(fd);
	fd = wait_after(gensock, "not-an-id", 60);
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.1 400", 12) == 0, "%s", buf);
	close(fd);
	fd = ask(gensock, "GET /generation?after=11111111-2222-4333-8444-555555555555"
	    "&timeout=3601 HTTP/1.0\r\n\r\n");
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.0 400", 12) == 0, "%s", buf);
	close(fd);
	cr_expect_eq(longpoll_waiters(), 0);
}

Test(longpoll, the_generation_socket_serves_nothing_else)
{
	char buf[4096];
	int fd;

	fd = ask(gensock, "GET /health HTTP/1.0\r\n\r\n");
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.0 404", 12) == 0, "%s", buf);
	close(fd);
	fd = ask(gensock, "POST /vmgenid HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
	answer(fd, buf, sizeof buf);
	cr_expect(strncmp(buf, "HTTP/1.0 404", 12) == 0, "%s", buf);
	close(fd);
	fd = ask(ctlpath, "GET /health HTTP/1.0\r\n\r\n");
	answer(fd, buf, sizeof buf);
	cr_expect(strstr(buf, "\"generation:hooks\"") != NULL, "the control socket has it all");
	close(fd);
}

Test(longpoll, a_long_poll_on_the_control_socket_waits_too_and_a_hangup_is_seen)
{
	char buf[4096];
	size_t one = 1, two = 2;
	int fd = wait_after(ctlpath, generation_stats()->id, 60),
	    gone = wait_after(ctlpath, generation_stats()->id, 60);

	cr_assert(turn_until(waiters_are, &two));
	/* evhttp's connection of one that hangs up is closed, and its waiter forgotten. */
	close(gone);
	cr_assert(turn_until(waiters_are, &one), "%zu waiting", longpoll_waiters());
	generation_changed(VMGENID_TRIGGER_SIGNAL, clock_now_ns());
	answer(fd, buf, sizeof buf);
	cr_expect(strstr(buf, "\"trigger\": \"signal\"") != NULL, "%s", buf);
	cr_expect(strstr(buf, "\"generation\": 1") != NULL, "%s", buf);
	close(fd);
}
