/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RUNDIR_H
#define ENTROPYD_RUNDIR_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

/*
 * The directories the daemon's files go in (the control socket, the
 * generation file): made when missing, and with -D made the daemon user's,
 * so that the dropped worker can still replace and remove its files there.
 */

/*
 * Create the directory a file at path goes in, with its parents (mode
 * 0755), when it is the daemon's default runtime directory (RUNDIR): 1 when
 * it was made here, 0 when it was there or is another directory (which
 * must exist: a typo must not leave directories behind), -1 with errno.
 */
int rundir_make(const char *path);
/*
 * Put why a file at path could not be made into err: that its directory
 * does not exist (and is not made), or errno's reason.
 */
void rundir_explain(const char *path, char *err, size_t errlen);
/*
 * With -D the worker replaces and removes the file at path as uid:gid, so
 * they must be able to: a directory made here (created), or the daemon's own
 * run directory, is handed to them; about any other directory where they
 * could not, one line is logged: "WHO: DIR: the -D user cannot WHAT".
 */
void rundir_for_user(const char *path, bool created, uid_t uid, gid_t gid, const char *who,
    const char *what);

#endif
