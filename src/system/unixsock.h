/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_UNIXSOCK_H
#define ENTROPYD_UNIXSOCK_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

/* A listening Unix socket made by unixsock_listen(): which file it is, and its owners. */
struct unixsock {
	dev_t dev;
	ino_t ino;
	uid_t uid;
	gid_t gid;
};

/*
 * Listen on a Unix socket at path, of mode (0660 for the daemon's own
 * sockets), non-blocking: its directory is created (mode 0755) if missing
 * and it is the default runtime directory (RUNDIR; any other must exist);
 * a stale socket is replaced, a live one
 * (another daemon) or any other file is not. With -D the prepared user and
 * group own it (privdrop_socket_owner), and group, unless it is (gid_t)-1,
 * is its group instead; a directory made here, or the run directory, is
 * handed to them so the dropped daemon can remove the socket at exit. who
 * prefixes the log lines ("control", "egd"). The descriptor, or -1 with
 * err set.
 */
int unixsock_listen(const char *who, const char *path, mode_t mode, gid_t group, int backlog,
    struct unixsock *, char *err, size_t errlen);
/* Remove the socket at path if it is still the one made (not a successor's). */
void unixsock_remove(const char *path, const struct unixsock *);

#endif
