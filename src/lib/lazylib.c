/* SPDX-License-Identifier: MIT */
/*
 * Optional libraries loaded on first use (see lazylib.h): the default
 * sources then run without mapping the code of sources that are off.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lazylib.h"

static pthread_mutex_t lazylib_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlopen() the library, once; note why not if it fails. */
static void
lazylib_load(struct lazylib *lib)
{
	const char *e;

	if (lib->tried)
		return;
	lib->tried = true;
	lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (lib->handle == NULL) {
		e = dlerror();
		snprintf(lib->error, sizeof lib->error, "cannot load %s: %s",
		    lib->soname, e != NULL ? e : "unknown error");
	}
}

/* The address of a function of the library, loading it first; NULL if either fails. */
void *
lazylib_sym(struct lazylib *lib, const char *name)
{
	void *p;
	const char *e;

	pthread_mutex_lock(&lazylib_lock);
	lazylib_load(lib);
	if (lib->handle == NULL) {
		pthread_mutex_unlock(&lazylib_lock);
		return NULL;
	}
	dlerror();
	p = dlsym(lib->handle, name);
	if (p == NULL) {
		e = dlerror();
		snprintf(lib->error, sizeof lib->error, "%s: no %s: %s",
		    lib->soname, name, e != NULL ? e : "unknown error");
	}
	pthread_mutex_unlock(&lazylib_lock);
	return p;
}

/* Why the library or a function of it could not be had ("" if it could). */
const char *
lazylib_error(struct lazylib *lib)
{
	const char *e;

	pthread_mutex_lock(&lazylib_lock);
	e = lib->error;
	pthread_mutex_unlock(&lazylib_lock);
	return e;
}
