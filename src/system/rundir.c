/* SPDX-License-Identifier: MIT */
/*
 * The run directories of the daemon's files: made with their parents when
 * missing, and with -D handed to the daemon's user where the dropped
 * worker must still replace or remove a file (the control socket, the
 * generation file).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rundir.h"
#include "xmalloc.h"

int
rundir_make(const char *path)
{
	char *dir = xstrdup(path), *p, c;
	int rc = 0;

	if ((p = strrchr(dir, '/')) == NULL || p == dir) {
		free(dir);
		return 0;
	}
	*p = '\0';
	for (p = dir + 1; rc != -1; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) == 0)
			rc = 1;
		else if (errno == EEXIST)
			rc = 0;
		else
			rc = -1;
		*p = c;
		if (c == '\0')
			break;
	}
	free(dir);
	return rc;
}

/* Whether a user and group may add or remove entries in a directory of this mode and owner. */
static bool
rundir_may_write(const struct stat *dir, uid_t uid, gid_t gid)
{
	if (uid == 0)
		return true;
	if (dir->st_uid == uid)
		return (dir->st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
	if (dir->st_gid == gid)
		return (dir->st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	return (dir->st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}

void
rundir_for_user(const char *path, bool created, uid_t uid, gid_t gid, const char *who,
    const char *what)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	struct stat st;
	int fd;

	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (created || strcmp(dir, RUNDIR) == 0) {
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    fchown(fd, uid, gid) == -1)
			log_warn("%s: %s: handing it to the -D user", who, dir);
		if (fd != -1)
			close(fd);
	} else if (stat(dir, &st) == 0 && !rundir_may_write(&st, uid, gid))
		log_warnx("%s: %s: the -D user cannot %s", who, dir, what);
	free(dir);
}
