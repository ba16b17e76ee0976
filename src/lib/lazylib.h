/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_LAZYLIB_H
#define ENTROPYD_LAZYLIB_H
/*
 * An optional library loaded with dlopen() the first time one of its
 * functions is called, so a daemon that never uses it never maps it.
 * A shim file defines each function the code calls with LAZYLIB_FN; the
 * callers include the library's own header and are not changed.
 */
#include <stdbool.h>
#include <stddef.h>

struct lazylib {
	const char *soname;		/* e.g. "libasound.so.2" */
	bool tried;			/* dlopen() was called */
	void *handle;			/* NULL when it could not be loaded */
	char error[160];		/* why not, from dlerror() */
};

#define LAZYLIB_INIT(so) { .soname = (so) }

/* The address of a function of the library, loading it first; NULL if either fails. */
void *lazylib_sym(struct lazylib *, const char *);
/* Why the library or a function of it could not be had ("" if it could). */
const char *lazylib_error(struct lazylib *);

/* In a shim: f, the library's NAME, resolved once; ONFAIL when it cannot be. */
#define LAZYLIB_GET(lib, ret, name, params, onfail)			\
	static ret (*fn) params;					\
	ret (*f) params = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);	\
									\
	if (f == NULL) {						\
		*(void **)&f = lazylib_sym((lib), #name);		\
		if (f == NULL)						\
			onfail;						\
		__atomic_store_n(&fn, f, __ATOMIC_RELEASE);		\
	}

/*
 * Define function NAME (returning RET, taking PARAMS, called with ARGS) as
 * a call through the library, or FAIL when it cannot be loaded.
 */
#define LAZYLIB_FN(lib, ret, name, params, args, fail)			\
	ret name params							\
	{								\
		LAZYLIB_GET(lib, ret, name, params, return fail)	\
		return f args;						\
	}
/* The same for a function returning nothing (nothing happens without the library). */
#define LAZYLIB_VOID_FN(lib, name, params, args)			\
	void name params						\
	{								\
		LAZYLIB_GET(lib, void, name, params, return)		\
		f args;							\
	}
#endif
