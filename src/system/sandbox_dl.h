/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_SANDBOX_DL_H
#define ENTROPYD_SANDBOX_DL_H

/*
 * libseccomp, loaded on first use (sandbox_dl.c): each process's policy
 * (the worker's sandbox, the plugin host's confinement) calls libseccomp's
 * own functions through it.
 */

/* Why libseccomp could not be loaded ("" if it could, or was not tried). */
const char *sandbox_dl_error(void);

#endif
