/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SANDBOX_H
#define ENTROPYD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox_dl.h"

/* Whether the daemon was built with the seccomp allow-list (libseccomp). */
bool sandbox_available(void);
/*
 * Load the worker's system-call allow-list into every thread of the process.
 * What is not on the list fails with EPERM; exec, ptrace and other
 * process-control calls, and the kernel pool's privileged ioctls, kill the
 * process; memory cannot be both writable and executable, clone makes only
 * threads, and signals reach only this process. 0; -1 with one line in
 * err; 1 with one line in err when libseccomp cannot be loaded, nothing
 * done (built without libseccomp: 0 and nothing done).
 */
int sandbox_apply(char *err, size_t errlen);

#endif
