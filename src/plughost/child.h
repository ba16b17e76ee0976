/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CHILD_H
#define ENTROPYD_CHILD_H

#include <sys/types.h>

/*
 * One plugin host: entropyd-plugin --host UID GID, its control socket on
 * fd 3 and the plugin file on fd 4. It confines itself (confine.h), loads
 * the plugin from fd 4 and reports its descriptor (PP_LOADED) or why it is
 * refused (PP_REFUSED); then it speaks the source ABI, unchanged, to the
 * plugin on the daemon's behalf:
 *   - configure and probe on request; the host calls the plugin makes
 *     (log, unusable, add/remove instance, instance_gone, limit_entropy)
 *     go to the daemon as messages; options, cookies, defer and the clock
 *     are served here;
 *   - an opened instance has a data socket of its own: the daemon asks
 *     for bytes (PP_WANT) and the host answers from read(), polled on the
 *     host's main thread when the plugin gives a descriptor, else from a
 *     reader thread of the host's, as the daemon did;
 *   - a read() that returns more than asked for ends the host before a
 *     byte is sent, and a read() (or configure, probe, open, close) that
 *     has not returned after PLUGINPROTO_CALL_TIMEOUT_MS ends it too, with
 *     PP_FAULT saying why.
 * It ends on PP_SHUTDOWN or when the daemon's socket closes.
 */

/* Run the host. Returns an exit status. */
int child_main(int control, int file, uid_t uid, gid_t gid);

#endif
