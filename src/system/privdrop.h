/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PRIVDROP_H
#define ENTROPYD_PRIVDROP_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

/* The one capability the daemon keeps: RNDADDENTROPY needs it. */
#define PRIVDROP_KEEP_CAP 21 /* CAP_SYS_ADMIN */

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
 * thread that calls it. Needs CAP_SETPCAP; any failure is fatal (exit 71).
 */
void privdrop_bound(void);
/* Whether privdrop_prepare() succeeded, so a drop is due. */
bool privdrop_prepared(void);
/* The prepared user and group (plugin hosts take them); false when none. */
bool privdrop_ids(uid_t *uid, gid_t *gid);
/*
 * Switch to the prepared user and group and keep only CAP_SYS_ADMIN,
 * permitted and effective, with the bounding and ambient sets cleared, then
 * read it all back. Any failure is fatal (exit 71, EX_OSERR). Then, when
 * built with libseccomp, confine the daemon to its system-call allow-list.
 * Call it once every device and socket is open.
 */
void privdrop_apply(void);
/*
 * Give the prepared user and group a Unix socket at path, mode 0660, so
 * members of the daemon group may connect. Call it after the socket is bound
 * and before privdrop_apply(). Without a prepared drop it does nothing.
 * 0, or -1 with errno set.
 */
int privdrop_socket_owner(const char *path);

#endif
