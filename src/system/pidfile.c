/* SPDX-License-Identifier: MIT */
/*
 * A pidfile locked before daemonising, so a second instance is refused,
 * written once the pid is final, removed at the end.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "pidfile.h"
#include "xmalloc.h"

int
pidfile_open(struct pidfile *pf, const char *path, char *err, size_t errlen)
{
	struct stat st;
	char buf[32];
	ssize_t n;

	pf->path = NULL;
	if ((pf->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		snprintf(err, errlen, "pidfile %s: %s", path, strerror(errno));
		return EX_CANTCREAT;
	}
	/* It is removed at exit: never a device or anything else not ours. */
	if (fstat(pf->fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "pidfile %s: not a regular file", path);
		close(pf->fd);
		pf->fd = -1;
		return EX_CANTCREAT;
	}
	if (flock(pf->fd, LOCK_EX | LOCK_NB) == -1) {
		int e = errno;

		n = pread(pf->fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (e == EWOULDBLOCK)
			snprintf(err, errlen, "pidfile %s: another entropyd is running (pid %s)",
			    path, buf[0] ? buf : "unknown");
		else
			snprintf(err, errlen, "pidfile %s: %s", path, strerror(e));
		close(pf->fd);
		pf->fd = -1;
		return EX_CANTCREAT;
	}
	pf->path = xstrdup(path);
	return 0;
}

int
pidfile_write(struct pidfile *pf)
{
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
	ssize_t n;

	if (ftruncate(pf->fd, 0) == -1 || (n = pwrite(pf->fd, buf, (size_t)len, 0)) == -1)
		return -1;
	if (n != len) {
		errno = ENOSPC; /* a short write: the file system is full */
		return -1;
	}
	/* A file system that allocates late says it is full here. */
	return fdatasync(pf->fd);
}

void
pidfile_close(struct pidfile *pf)
{
	if (pf->fd == -1)
		return;
	unlink(pf->path);
	close(pf->fd);
	free(pf->path);
	pf->fd = -1;
	pf->path = NULL;
}
