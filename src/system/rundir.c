/* SPDX-License-Identifier: MIT */
/*
 * The run directories of the daemon's files: the default one made with its
 * parents when missing (any other must exist), and with -D handed to the
 * daemon's user where the dropped worker must still replace or remove a
 * file (the control socket, the EGD sockets, the generation file).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rundir.h"
#include "xmalloc.h"

/* Whether a file's path lies directly in the default runtime directory (RUNDIR). */
static bool
rundir_is_default(const char *path)
{
	size_t len = strlen(RUNDIR);

	return strncmp(path, RUNDIR, len) == 0 && path[len] == '/' &&
	    strchr(path + len + 1, '/') == NULL;
}

int
rundir_make(const char *path)
{
	char *dir, *p, c;
	int rc = 0;

	if (!rundir_is_default(path))
		return 0;
	dir = xstrdup(path);
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

void
rundir_explain(const char *path, char *err, size_t errlen)
{
	if (errno == ENOENT && !rundir_is_default(path))
		snprintf(err, errlen, "%s: its directory does not exist (only %s is made when "
		    "missing)", path, RUNDIR);
	else
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
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
