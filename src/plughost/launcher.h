/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_LAUNCHER_H
#define ENTROPYD_LAUNCHER_H

/*
 * The plugin launcher: entropyd-plugin --launcher, started by the daemon
 * before it confines itself (its seccomp list has no exec), so plugins
 * can be started and restarted for as long as the daemon runs. On the
 * daemon's request (PP_SPAWN, with the host's control socket and the
 * plugin file) it starts `entropyd-plugin --host UID GID` with the socket
 * as fd 3 and the file as fd 4 and nothing else open; it kills a host on
 * request (PP_KILL) and reports each host's end (PP_EXITED with its wait
 * status). When the daemon's socket closes it kills every host and exits.
 * It runs in a session of its own, so a terminal's signals do not reach it.
 */

/* Serve the daemon on sock; self is this program's path. Returns an exit status. */
int launcher_main(int sock, const char *self);

#endif
