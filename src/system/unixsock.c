/* SPDX-License-Identifier: MIT */
/*
 * Listening Unix sockets the way the daemon makes them (the control socket,
 * the EGD sockets): created with their directory, mode 0660, owned as -D
 * says, replacing a stale socket but never a live one or another file.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "rundir.h"
#include "unixsock.h"

/* Whether a daemon answers on a Unix socket (connect succeeds). */
static int
unixsock_live(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd == -1)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof *sun);
	close(fd);
	if (rc == 0)
		return 1;
	return errno == ECONNREFUSED || errno == ENOENT ? 0 : -1;
}

/* Give the socket its owners: -D's, and the group asked for. */
static int
unixsock_own(const char *path, gid_t group)
{
	if (privdrop_socket_owner(path) == -1)
		return -1;
	if (group != (gid_t)-1 && chown(path, (uid_t)-1, group) == -1)
		return -1;
	return 0;
}

int
unixsock_listen(const char *who, const char *path, mode_t mode, gid_t group, int backlog,
    struct unixsock *us, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t mask;
	int fd, created;

	if (strlen(path) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "%s: path too long for a Unix socket", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((created = rundir_make(path)) == -1) {
		snprintf(err, errlen, "%s: creating its directory: %s", path, strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s: exists and is not a socket", path);
			return -1;
		}
		switch (unixsock_live(&sun)) {
		case 1:
			snprintf(err, errlen, "%s: another daemon answers on it", path);
			return -1;
		case 0:
			log_info("%s: removing stale socket %s", who, path);
			if (unlink(path) == -1 && errno != ENOENT) {
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				return -1;
			}
			break;
		default:
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	mask = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		umask(mask);
		rundir_explain(path, err, errlen);
		close(fd);
		return -1;
	}
	umask(mask);
	/* With -D, the daemon's user and group own it (before the drop). */
	if (chmod(path, mode) == -1 || unixsock_own(path, group) == -1 ||
	    listen(fd, backlog) == -1 || stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	us->dev = st.st_dev;
	us->ino = st.st_ino;
	us->uid = st.st_uid;
	us->gid = st.st_gid;
	if (privdrop_prepared())
		rundir_for_user(path, created == 1, st.st_uid, st.st_gid, who,
		    "remove the socket from this directory at exit; it stays until the next "
		    "start replaces it");
	return fd;
}

void
unixsock_remove(const char *path, const struct unixsock *us)
{
	struct stat st;

	if (stat(path, &st) == 0 && st.st_dev == us->dev && st.st_ino == us->ino)
		unlink(path);
}
