/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_RUNDIR_H
#define ENTROPYD_RUNDIR_H

#include <sys/types.h>

#include <stdbool.h>

/*
 * The directories the daemon's files go in (the control socket, the
 * generation file): made when missing, and with -D made the daemon user's,
 * so that the dropped worker can still replace and remove its files there.
 */

/*
 * Create the directory a file at path goes in, and its parents (mode 0755):
 * 1 when the file's own directory was made here, 0 when it was there, -1.
 */
int rundir_make(const char *path);
/*
 * With -D the worker replaces and removes the file at path as uid:gid, so
 * they must be able to: a directory made here (created), or the daemon's own
 * run directory, is handed to them; about any other directory where they
 * could not, one line is logged: "WHO: DIR: the -D user cannot WHAT".
 */
void rundir_for_user(const char *path, bool created, uid_t uid, gid_t gid, const char *who,
    const char *what);

#endif
