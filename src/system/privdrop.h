/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PRIVDROP_H
#define ENTROPYD_PRIVDROP_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A capability (CAP_SYS_ADMIN, ... from <linux/capability.h>) as a bit of a set. */
#define PRIVDROP_CAP(n) (UINT64_C(1) << (n))

/*
 * Resolve -D USER:GROUP (names, or decimal ids) and the user's supplementary
 * groups, before anything is opened: name lookups may need files and
 * sockets the dropped daemon can no longer reach. Returns 0, or EX_NOUSER
 * (unknown user or group) or EX_USAGE with one line in err.
 */
int privdrop_prepare(const char *spec, char *err, size_t errlen);
/*
 * Empty the capability bounding set but for CAP_SYS_ADMIN, clear the
 * ambient set and set no_new_privs. All three are per thread and inherited
 * by threads started later, so call it before any thread exists (reader
 * threads start with the event loop); privdrop_apply() repeats it for the
 * thread that calls it. With the kernel sink it runs before the split, so
 * the feeder, the supervisor and the worker start from it and narrow it.
 * Needs CAP_SETPCAP; any failure is fatal (exit 71).
 */
void privdrop_bound(void);
/* The same, keeping the capabilities in keep (PRIVDROP_CAP) instead. */
void privdrop_bound_keep(uint64_t keep);
/* Whether privdrop_prepare() succeeded, so a drop is due. */
bool privdrop_prepared(void);
/* The prepared user and group (plugin hosts take them); false when none. */
bool privdrop_ids(uid_t *uid, gid_t *gid);
/*
 * Keep only the capabilities in keep, permitted and effective, with the
 * inheritable and ambient sets empty and the bounding set emptied but for
 * keep; with -D, switch to the prepared user, group and groups first. Then
 * set no_new_privs and read it all back. Any failure is fatal (exit 71,
 * EX_OSERR). who names the process in the log line that says what it now
 * runs as. Without -D it is privdrop_limit().
 */
void privdrop_apply(const char *who, uint64_t keep);
/*
 * The same without switching user, even with -D: keep what of keep is held
 * (the bounding set is emptied only where CAP_SETPCAP allows).
 */
void privdrop_limit(const char *who, uint64_t keep);
/*
 * Give the prepared user and group a Unix socket at path, mode 0660, so
 * members of the daemon group may connect. Call it after the socket is bound
 * and before privdrop_apply(). Without a prepared drop it does nothing.
 * 0, or -1 with errno set.
 */
int privdrop_socket_owner(const char *path);

#endif
