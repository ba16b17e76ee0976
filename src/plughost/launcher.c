/* SPDX-License-Identifier: MIT */
/*
 * entropyd-plugin --launcher: started by the worker before it confines
 * itself, it forks a host process per plugin on request, kills one on
 * request, and reports each host's end.
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"
#include "msg.h"
#include "pluginproto.h"

/* The most hosts one launcher runs at once. */
#define LAUNCHER_MAX_HOSTS 256

struct launcher_host {
	uint32_t id;
	pid_t pid; /* 0: free slot */
};

static struct launcher_host launcher_hosts[LAUNCHER_MAX_HOSTS];

/* Start one host: fds 3 and 4 as given, nothing else open, then exec. */
static pid_t
launcher_spawn(const char *self, int control, int file, uint32_t uid, uint32_t gid)
{
	char uidbuf[16], gidbuf[16];
	char *argv[] = { (char *)self, (char *)"--host", uidbuf, gidbuf, NULL };
	sigset_t none;
	pid_t pid;
	int fd;

	snprintf(uidbuf, sizeof uidbuf, "%u", uid);
	snprintf(gidbuf, sizeof gidbuf, "%u", gid);
	if ((pid = fork()) != 0)
		return pid;
	/* Move the two descriptors out of the way, then to 3 and 4. */
	control = fcntl(control, F_DUPFD, 10);
	file = fcntl(file, F_DUPFD, 10);
	if (control == -1 || file == -1 || dup2(control, 3) == -1 || dup2(file, 4) == -1)
		_exit(127);
	for (fd = 5; fd < 1024; fd++)
		close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Capabilities given to the daemon as ambient ones (systemd) stop here. */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	execv(self, argv);
	_exit(127);
}

/* Answer one message from the daemon; false when the socket closed or failed. */
static bool
launcher_serve(int sock, const char *self)
{
	uint8_t buf[256], out[64];
	struct pluginproto_msg m, r;
	uint32_t uid, gid;
	int fds[2], i;
	ssize_t n;

	if ((n = pluginproto_recv(sock, buf, sizeof buf, 0, fds)) <= 0)
		return n == -1 && (errno == EMSGSIZE || errno == EAGAIN);
	pluginproto_open(&m, buf, (size_t)n);
	if (m.bad)
		goto done;
	switch (pluginproto_header(&m)->type) {
	case PP_SPAWN: {
		pid_t pid = -EINVAL;

		if (pluginproto_get_u32(&m, &uid) && pluginproto_get_u32(&m, &gid) &&
		    pluginproto_done(&m) && fds[0] >= 0 && fds[1] >= 0) {
			for (i = 0; i < LAUNCHER_MAX_HOSTS && launcher_hosts[i].pid != 0; i++)
				continue;
			if (i == LAUNCHER_MAX_HOSTS)
				pid = -EAGAIN;
			else if ((pid = launcher_spawn(self, fds[0], fds[1], uid, gid)) == -1)
				pid = -errno;
			else {
				launcher_hosts[i].id = pluginproto_header(&m)->id;
				launcher_hosts[i].pid = pid;
			}
		}
		pluginproto_begin(&r, out, sizeof out, PP_SPAWNED, pluginproto_header(&m)->id);
		pluginproto_put_i32(&r, (int32_t)pid);
		pluginproto_send(sock, &r, -1, -1);
		break;
	}
	case PP_KILL:
		for (i = 0; i < LAUNCHER_MAX_HOSTS; i++)
			if (launcher_hosts[i].pid != 0 &&
			    launcher_hosts[i].id == pluginproto_header(&m)->id)
				kill(launcher_hosts[i].pid, SIGKILL);
		break;
	}
done:
	msg_close_fds(fds);
	return true;
}

/* Reap ended hosts and report each. */
static void
launcher_reap(int sock)
{
	struct pluginproto_msg r;
	uint8_t out[64];
	pid_t pid;
	int status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < LAUNCHER_MAX_HOSTS; i++) {
			if (launcher_hosts[i].pid != pid)
				continue;
			launcher_hosts[i].pid = 0;
			pluginproto_begin(&r, out, sizeof out, PP_EXITED, launcher_hosts[i].id);
			pluginproto_put_i32(&r, status);
			pluginproto_send(sock, &r, -1, -1);
		}
	}
}

int
launcher_main(int sock, const char *self)
{
	struct pollfd pfd[2];
	sigset_t set;
	int i;

	setsid();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pfd[0].fd = sock;
	pfd[0].events = POLLIN;
	if ((pfd[1].fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1)
		return 71;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(pfd[1].fd, &si, sizeof si) > 0)
				continue;
			launcher_reap(sock);
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) && !launcher_serve(sock, self))
			break;
	}
	/* The daemon is gone: so are its plugins. */
	for (i = 0; i < LAUNCHER_MAX_HOSTS; i++)
		if (launcher_hosts[i].pid != 0)
			kill(launcher_hosts[i].pid, SIGKILL);
	while (wait(NULL) > 0)
		continue;
	return 0;
}
