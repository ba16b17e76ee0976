/* SPDX-License-Identifier: MIT */
/*
 * systemd's readiness protocol (READY=1, STATUS=, STOPPING=1) without
 * libsystemd; a worker relays its lines through the feeder.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "notify.h"

static int notify_fd = -1;
static struct sockaddr_un notify_addr;
static socklen_t notify_addrlen;
/* In a worker under a feeder: where STATUS= lines go instead. */
static void (*notify_relay_fn)(const char *, void *);
static void *notify_relay_arg;

void
notify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;

	if (path == NULL || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof notify_addr.sun_path) {
		log_warnx("NOTIFY_SOCKET is too long; not notifying");
		return;
	}
	memset(&notify_addr, 0, sizeof notify_addr);
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, path, len);
	if (path[0] == '@')
		notify_addr.sun_path[0] = '\0';
	notify_addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	if ((notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		log_warn("NOTIFY_SOCKET: socket");
	unsetenv("NOTIFY_SOCKET");
}

void
notify_send(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	if (notify_fd == -1 && notify_relay_fn == NULL)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (notify_relay_fn != NULL) {
		if (strncmp(msg, "STATUS=", 7) == 0)
			notify_relay_fn(msg + 7, notify_relay_arg);
		return;
	}
	if (sendto(notify_fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&notify_addr, notify_addrlen) == -1)
		log_debug("NOTIFY_SOCKET: %s: %m", msg);
}

void
notify_close(void)
{
	if (notify_fd != -1)
		close(notify_fd);
	notify_fd = -1;
}

void
notify_relay(void (*fn)(const char *status, void *arg), void *arg)
{
	if (notify_fd == -1)
		return;
	notify_close();
	notify_relay_fn = fn;
	notify_relay_arg = arg;
}
