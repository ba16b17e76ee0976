/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_PLUGIN_H
#define ENTROPYD_PLUGIN_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include <entropyd/source.h>

/*
 * Drop-in source modules: every *.so in the plugin directory, loaded with
 * dlopen(RTLD_NOW | RTLD_LOCAL) at start and again on SIGHUP (new files
 * only). A plugin is refused, with one log line naming the file and the
 * reason, when it is not a shared object, cannot be loaded, lacks the entry
 * symbol, has another ABI major or a newer minor, a descriptor smaller than
 * PLUGIN_MIN_SOURCE_SIZE, a name already taken, or when its configure()
 * (its init) fails while it is enabled. The daemon carries on without it.
 */

struct entropyd_module;

/*
 * The smallest descriptor accepted: the ABI 1.0 struct entropyd_source,
 * ending with configure. Members added by later minors go after it, and the
 * daemon must look at them only when a descriptor's size covers them.
 */
#define PLUGIN_MIN_SOURCE_SIZE \
	(offsetof(struct entropyd_source, configure) + sizeof(void (*)(void)))

/* Load the plugins in dir not seen before; return how many were added. */
int plugin_load_dir(const char *dir);
/*
 * SIGHUP: load new plugins, then select and configure the modules they
 * add by the command line (they take default options: -O for a source
 * unknown at start was already a usage error).
 */
int plugin_reload(const struct config *);
/* A plugin's configure() failed: refuse it, remove its module, unload it. */
void plugin_init_failed(struct entropyd_module *, const char *why);
/* -l: the plugin directory and every refused plugin with its reason. */
void plugin_print_list(const char *dir, FILE *);
/* Unload every plugin (after registry_free()). */
void plugin_free(void);

#endif
