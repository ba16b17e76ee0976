/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PIDFILE_H
#define ENTROPYD_PIDFILE_H

#include <stddef.h>

/*
 * A locked pidfile: opened and locked before daemonising (so a second
 * instance is refused while the first runs), written after.
 */
struct pidfile {
	char *path;
	int fd;
};

/*
 * Open and lock a regular file: 0, or a sysexits code with err naming the
 * running pid.
 */
int pidfile_open(struct pidfile *, const char *path, char *err, size_t errlen);
/* Write the current pid, on disk: 0, or -1 with errno (a full file system: ENOSPC). */
int pidfile_write(struct pidfile *);
/* Remove and close. */
void pidfile_close(struct pidfile *);

#endif
