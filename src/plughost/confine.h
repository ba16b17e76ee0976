/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CONFINE_H
#define ENTROPYD_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The powers of a plugin host, all in this file: before the plugin is
 * loaded the host takes the daemon's user and group (the -D ones, or the
 * daemon's own), gives up every capability (effective, permitted,
 * inheritable, ambient and bounding), sets no_new_privs, and, when built
 * with libseccomp, confines itself to a system-call allow-list:
 *   - I/O on what it holds and opening devices and files again (a plugin
 *     opens its own device), poll/epoll, timers, memory, clocks, signals
 *     to itself, Unix and netlink sockets (hotplug);
 *   - threads, but no new process: clone without CLONE_THREAD, fork and
 *     vfork fail with EPERM (clone3 with ENOSYS, so the C library falls
 *     back to clone for its threads);
 *   - the random driver's ioctls (RNDADDENTROPY and the other 'R' ones)
 *     fail with EPERM; without capabilities the kernel refuses them too;
 *   - exec, ptrace, set*id, mounts, modules, namespaces, bpf and the like
 *     kill the host.
 * A core dump is never written (RLIMIT_CORE 0). The filter is loaded
 * while the host has one thread. Under valgrind, which refuses seccomp
 * filters, the host runs without one (and says so).
 */

/* Whether the allow-list is built in (libseccomp). */
bool confine_seccomp_available(void);
/* Apply everything above. 0; 1 without the filter (under valgrind); -1 with one line in err. */
int confine_apply(uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
