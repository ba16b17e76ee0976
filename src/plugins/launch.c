/* SPDX-License-Identifier: MIT */
/*
 * The plugin launcher as the worker sees it: entropyd-plugin --launcher,
 * started once (early with -D, while the daemon may still exec), which
 * forks a host process per plugin on request and says when one ended.
 * hostproc.c asks it for hosts; its news about ended hosts goes there.
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "hostproc_int.h"
#include "log.h"
#include "msg.h"
#include "pluginproto.h"
#include "privdrop.h"
#include "stopsig.h"

#ifndef PLUGINHOSTPATH
#define PLUGINHOSTPATH "/usr/local/libexec/entropyd/entropyd-plugin"
#endif

/* How long the daemon's end waits for the launcher (and so its hosts) to end. */
#define LAUNCH_END_WAIT_MS 2000u

/*
 * The launcher: its socket (-1 when none runs), pid and the loop watching
 * it; inherited: this process is a worker the supervisor forked, and the
 * launcher is the supervisor's, kept for the next worker.
 */
static struct {
	int fd;
	pid_t pid;
	uint32_t next_id;
	bool inherited;
	struct event *ev;
	struct event_base *base;
} launch = { .fd = -1, .pid = -1 };

/* The entropyd-plugin program: $ENTROPYD_PLUGIN_HOST, the installed one, or the daemon's neighbour. */
static const char *
launch_program(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("ENTROPYD_PLUGIN_HOST");
	char self[PATH_MAX];
	ssize_t n;

	if (env != NULL && *env != '\0')
		return env;
	if (access(PLUGINHOSTPATH, X_OK) == 0)
		return PLUGINHOSTPATH;
	if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
		self[n] = '\0';
		snprintf(path, sizeof path, "%s/entropyd-plugin", dirname(self));
		if (access(path, X_OK) == 0)
			return path;
	}
	return PLUGINHOSTPATH;
}

/* Handle what the launcher sent; spawned_id/pid: an awaited PP_SPAWNED. */
static bool
launch_drain(uint32_t spawned_id, int32_t *pid)
{
	uint8_t buf[64];
	struct pluginproto_msg m;
	int32_t v;
	int fds[2];
	bool got = false;
	ssize_t n;

	while ((n = pluginproto_recv(launch.fd, buf, sizeof buf, MSG_DONTWAIT, fds)) > 0) {
		msg_close_fds(fds);
		if (!pluginproto_open(&m, buf, (size_t)n) || !pluginproto_get_i32(&m, &v))
			continue;
		if (pluginproto_header(&m)->type == PP_SPAWNED &&
		    pluginproto_header(&m)->id == spawned_id) {
			*pid = v;
			got = true;
		} else if (pluginproto_header(&m)->type == PP_EXITED)
			hostproc_exited(pluginproto_header(&m)->id, v);
	}
	if (n == 0 || (n == -1 && errno != EAGAIN)) {
		log_warnx("plugin launcher: gone; plugins cannot be (re)started");
		if (launch.ev != NULL)
			event_free(launch.ev);
		launch.ev = NULL;
		close(launch.fd);
		launch.fd = -1;
	}
	return got;
}

/* The launcher's socket is readable (the loop runs). */
static void
launch_readable(int fd, short what, void *arg)
{
	int32_t pid;

	launch_drain(0, &pid);
}

/* Watch the launcher's socket from the loop, when both exist. */
static void
launch_watch(void)
{
	if (launch.base == NULL || launch.fd == -1 || launch.ev != NULL)
		return;
	launch.ev = event_new(launch.base, launch.fd, EV_READ | EV_PERSIST, launch_readable, NULL);
	event_add(launch.ev, NULL);
}

/* Start the launcher, once: entropyd-plugin --launcher with its socket on fd 3. */
static int
launch_start(char *err, size_t errlen)
{
	const char *program = launch_program();
	int sv[2];
	pid_t pid;

	if (launch.fd != -1)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		int fd;

		/* The worker's loop takes its stop signals from a descriptor: not so the launcher. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(sv[1], 3) == -1)
			_exit(127);
		for (fd = 4; fd < 1024; fd++)
			close(fd);
		execl(program, program, "--launcher", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	launch.fd = sv[0];
	launch.pid = pid;
	launch_watch();
	log_debug("plugin launcher %s started (pid %d)", program, (int)pid);
	return 0;
}

/* Wait until fd is readable (true), or the deadline passes or stop_fd (if not -1) is readable. */
static bool
launch_poll_until(int fd, int stop_fd, uint64_t deadline_ns)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN },
	};
	uint64_t now;
	int rc;

	for (;;) {
		now = clock_now_ns();
		if (now >= deadline_ns)
			return false;
		rc = poll(pfd, stop_fd != -1 ? 2 : 1, (int)((deadline_ns - now) / 1000000u) + 1);
		if (rc > 0)
			return pfd[0].revents != 0 && (stop_fd == -1 || pfd[1].revents == 0);
		if (rc == -1 && errno != EINTR)
			return false;
	}
}

bool
launch_poll(int fd, uint64_t deadline_ns)
{
	return launch_poll_until(fd, stopsig_fd(), deadline_ns);
}

bool
launch_stopping(void)
{
	struct pollfd pfd = { .fd = stopsig_fd(), .events = POLLIN };

	return pfd.fd != -1 && poll(&pfd, 1, 0) == 1;
}

int
launch_spawn(int file, uint32_t *id, int *control, char *err, size_t errlen)
{
	struct pluginproto_msg m;
	uint8_t buf[64];
	uint64_t deadline;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int32_t pid = -ETIMEDOUT;
	int sv[2];

	if (launch_start(err, errlen) == -1)
		return -1;
	if (launch.fd == -1) {
		snprintf(err, errlen, "the plugin launcher is gone");
		return -1;
	}
	privdrop_ids(&uid, &gid);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	*id = ++launch.next_id;
	pluginproto_begin(&m, buf, sizeof buf, PP_SPAWN, *id);
	pluginproto_put_u32(&m, uid);
	pluginproto_put_u32(&m, gid);
	if (pluginproto_send(launch.fd, &m, sv[1], file) == -1) {
		snprintf(err, errlen, "the plugin launcher: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	deadline = clock_now_ns() + (uint64_t)HOSTPROC_WAIT_MS * 1000000u;
	while (launch.fd != -1 && launch_poll(launch.fd, deadline))
		if (launch_drain(*id, &pid))
			break;
	if (pid <= 0) {
		snprintf(err, errlen, "cannot start %s: %s", launch_program(),
		    strerror(pid < 0 ? -pid : EIO));
		close(sv[0]);
		return -1;
	}
	*control = sv[0];
	return 0;
}

bool
launch_wait(uint64_t deadline_ns)
{
	int32_t pid;

	if (launch.fd == -1 || !launch_poll(launch.fd, deadline_ns))
		return false;
	launch_drain(0, &pid);
	return true;
}

void
launch_kill(uint32_t id)
{
	struct pluginproto_msg m;
	uint8_t buf[64];

	if (launch.fd == -1)
		return;
	pluginproto_begin(&m, buf, sizeof buf, PP_KILL, id);
	pluginproto_send(launch.fd, &m, -1, -1);
}

void
launch_prepare(void)
{
	char err[256];

	if (privdrop_prepared() && launch_start(err, sizeof err) == -1)
		log_warnx("plugin launcher: %s", err);
}

void
launch_attach(struct event_base *base)
{
	launch.base = base;
	launch_watch();
}

void
launch_detach(void)
{
	if (launch.ev != NULL)
		event_free(launch.ev);
	launch.ev = NULL;
	launch.base = NULL;
}

/* Wait until deadline for pid, not our child, to have exited (its pidfd is readable then). */
static void
launch_await_exit(pid_t pid, uint64_t deadline_ns)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd == -1)
		return; /* gone already, or no pidfd here */
	launch_poll_until(fd, -1, deadline_ns);
	close(fd);
#endif
}

void
launch_inherited(void)
{
	launch.inherited = true;
}

void
launch_end(void)
{
	uint8_t buf[64];
	uint64_t deadline;
	int fds[2];
	ssize_t n = -1;

	if (launch.fd == -1)
		return;
	/*
	 * Shut down, not closed: other processes may hold the socket too. The
	 * launcher sees its end, kills its hosts, waits for them and exits,
	 * which closes its side: what it still says is read and dropped.
	 */
	shutdown(launch.fd, SHUT_WR);
	deadline = clock_now_ns() + (uint64_t)LAUNCH_END_WAIT_MS * 1000000u;
	while (launch_poll_until(launch.fd, -1, deadline)) {
		n = pluginproto_recv(launch.fd, buf, sizeof buf, MSG_DONTWAIT, fds);
		if (n > 0)
			msg_close_fds(fds);
		else if (n == 0 || errno != EAGAIN)
			break;
	}
	if (n != 0)
		log_warnx("plugin launcher: not ended within %u ms", LAUNCH_END_WAIT_MS);
	else
		log_debug("plugin launcher: ended, its hosts before it");
	close(launch.fd);
	launch.fd = -1;
	/*
	 * Its side closes as it exits, a moment before it has: reap it if it
	 * is ours, else wait (the same deadline) until it has exited.
	 */
	if (launch.pid > 0 && n == 0 && waitpid(launch.pid, NULL, 0) == -1)
		launch_await_exit(launch.pid, deadline);
	launch.pid = -1;
}

void
launch_stop(void)
{
	if (launch.fd == -1)
		return;
	if (!launch.inherited) {
		launch_end();
		return;
	}
	/* The supervisor's launcher: the next worker uses it, the daemon's end ends it. */
	close(launch.fd);
	launch.fd = -1;
}
