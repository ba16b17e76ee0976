/* SPDX-License-Identifier: MIT */
/*
 * The libseccomp functions the sandboxes call, loaded from libseccomp on
 * first use: only a worker (under a feeder, or with -D) applies the
 * sandbox, and a daemon that does not need not map libseccomp.  The
 * prototypes come from libseccomp's own header.
 */
#include <errno.h>
#include <stdarg.h>

#include <seccomp.h>

#include "lazylib.h"
#include "sandbox_dl.h"

#define SANDBOX_DL_ARGS 6	/* a system call has at most six arguments */

static struct lazylib sandbox_dl = LAZYLIB_INIT("libseccomp.so.2");

LAZYLIB_FN(&sandbox_dl, scmp_filter_ctx, seccomp_init, (uint32_t def_action),
    (def_action), NULL)
LAZYLIB_FN(&sandbox_dl, int, seccomp_attr_set,
    (scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value),
    (ctx, attr, value), -ELIBACC)
LAZYLIB_FN(&sandbox_dl, int, seccomp_load, (const scmp_filter_ctx ctx), (ctx),
    -ELIBACC)
LAZYLIB_FN(&sandbox_dl, int, seccomp_syscall_resolve_name, (const char *name),
    (name), __NR_SCMP_ERROR)
LAZYLIB_FN(&sandbox_dl, int, seccomp_rule_add_array,
    (scmp_filter_ctx ctx, uint32_t action, int syscall, unsigned int arg_cnt,
    const struct scmp_arg_cmp *arg_array),
    (ctx, action, syscall, arg_cnt, arg_array), -ELIBACC)

/* Release a filter (nothing to do when libseccomp never loaded). */
LAZYLIB_VOID_FN(&sandbox_dl, seccomp_release, (scmp_filter_ctx ctx), (ctx))

/* The variadic form, through the array form (a variadic call cannot be passed on). */
int
seccomp_rule_add(scmp_filter_ctx ctx, uint32_t action, int syscall,
    unsigned int arg_cnt, ...)
{
	struct scmp_arg_cmp args[SANDBOX_DL_ARGS];
	unsigned int i;
	va_list ap;

	if (arg_cnt > SANDBOX_DL_ARGS)
		return -EINVAL;
	va_start(ap, arg_cnt);
	for (i = 0; i < arg_cnt; i++)
		args[i] = va_arg(ap, struct scmp_arg_cmp);
	va_end(ap);
	return seccomp_rule_add_array(ctx, action, syscall, arg_cnt, args);
}

const char *
sandbox_dl_error(void)
{
	return lazylib_error(&sandbox_dl);
}
