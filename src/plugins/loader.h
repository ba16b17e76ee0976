/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_LOADER_H
#define ENTROPYD_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include <entropyd/source.h>

/*
 * Drop-in source modules: every *.so in the plugin directory, at start and
 * again on SIGHUP (new or replaced files only), each checked here (an ELF
 * shared object; the file and its directory owned by root or the daemon's
 * user and writable by no one else) and then loaded in a plugin host
 * process of its own (hostproc.h), never in the worker. A plugin is
 * refused, with one log line naming the file and the reason, when a check
 * fails, when its host cannot load it (no entry symbol, another ABI major
 * or a newer minor, a descriptor smaller than PLUGINPROTO_MIN_SOURCE_SIZE,
 * bad claims), when its name is taken, or when its configure() (its init)
 * fails while it is enabled. The daemon carries on without it.
 */

/* Load the plugins in dir not seen before; return how many were added. */
int loader_load_dir(const char *dir);
/*
 * SIGHUP: load new plugins, then select and configure the modules they
 * add by the command line (they take default options: -O for a source
 * unknown at start was already a usage error).
 */
int loader_reload(const struct config *);
/* A plugin's configure() failed: refuse it, remove its module, unload it. */
void loader_init_failed(struct entropyd_module *, const char *why);
/* -l: the plugin directory and every refused plugin with its reason. */
void loader_print_list(const char *dir, FILE *);
/* Unload every plugin (after registry_free()). */
void loader_free(void);

#endif
