/* SPDX-License-Identifier: MIT */
/*
 * The host table modules are handed, once for every host process: the
 * ABI's fixed fields, the formatting of its printf-style calls, and each
 * call passed on to the process's own side (hosttable_ops).
 */
#include <stdarg.h>
#include <stdio.h>

#include "clock.h"
#include "hosttable.h"

static const struct hosttable_ops *hosttable_ops;

static void hosttable_log(struct entropyd_instance *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static void hosttable_module_log(struct entropyd_module *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static void hosttable_unusable(struct entropyd_module *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static const char *hosttable_option(struct entropyd_module *, const char *);
static struct entropyd_instance *hosttable_add_instance(struct entropyd_module *, const char *,
    const char *, void *);
static void hosttable_remove_instance(struct entropyd_instance *);
static void *hosttable_instance_cookie(struct entropyd_instance *);
static struct entropyd_module *hosttable_instance_module(struct entropyd_instance *);
static void hosttable_set_cookie_release(struct entropyd_module *, void (*)(void *));
static double hosttable_limit_entropy(struct entropyd_instance *, double);
static void hosttable_defer(struct entropyd_module *,
    void (*)(struct entropyd_module *, void *), void *);
static void hosttable_instance_gone(struct entropyd_instance *, const char *);

const struct entropyd_host hosttable = {
	.size = sizeof(struct entropyd_host),
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.log = hosttable_log,
	.module_log = hosttable_module_log,
	.option = hosttable_option,
	.unusable = hosttable_unusable,
	.add_instance = hosttable_add_instance,
	.remove_instance = hosttable_remove_instance,
	.instance_cookie = hosttable_instance_cookie,
	.instance_module = hosttable_instance_module,
	.now_ns = clock_now_ns,
	.set_cookie_release = hosttable_set_cookie_release,
	.limit_entropy = hosttable_limit_entropy,
	.defer = hosttable_defer,
	.instance_gone = hosttable_instance_gone,
};

void
hosttable_bind(const struct hosttable_ops *ops)
{
	hosttable_ops = ops;
}

static void
hosttable_log(struct entropyd_instance *inst, int priority, const char *fmt, ...)
{
	char line[HOSTTABLE_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	hosttable_ops->log(inst, priority, line);
}

static void
hosttable_module_log(struct entropyd_module *m, int priority, const char *fmt, ...)
{
	char line[HOSTTABLE_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	hosttable_ops->module_log(m, priority, line);
}

static void
hosttable_unusable(struct entropyd_module *m, const char *fmt, ...)
{
	char line[HOSTTABLE_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	hosttable_ops->unusable(m, line);
}

static const char *
hosttable_option(struct entropyd_module *m, const char *key)
{
	return hosttable_ops->option(m, key);
}

static struct entropyd_instance *
hosttable_add_instance(struct entropyd_module *m, const char *id, const char *device,
    void *cookie)
{
	return hosttable_ops->add_instance(m, id, device, cookie);
}

static void
hosttable_remove_instance(struct entropyd_instance *inst)
{
	hosttable_ops->remove_instance(inst);
}

static void *
hosttable_instance_cookie(struct entropyd_instance *inst)
{
	return hosttable_ops->instance_cookie(inst);
}

static struct entropyd_module *
hosttable_instance_module(struct entropyd_instance *inst)
{
	return hosttable_ops->instance_module(inst);
}

/* A host without cookie release (the tests' fake) ignores it. */
static void
hosttable_set_cookie_release(struct entropyd_module *m, void (*release)(void *))
{
	if (hosttable_ops->set_cookie_release != NULL)
		hosttable_ops->set_cookie_release(m, release);
}

static double
hosttable_limit_entropy(struct entropyd_instance *inst, double bits)
{
	return hosttable_ops->limit_entropy(inst, bits);
}

/* A host without a loop to defer to (the tests' fake) drops the call. */
static void
hosttable_defer(struct entropyd_module *m, void (*fn)(struct entropyd_module *, void *),
    void *arg)
{
	if (hosttable_ops->defer != NULL)
		hosttable_ops->defer(m, fn, arg);
}

/* A host without hotplug (the tests' fake) ignores it. */
static void
hosttable_instance_gone(struct entropyd_instance *inst, const char *reason)
{
	if (hosttable_ops->instance_gone != NULL)
		hosttable_ops->instance_gone(inst, reason);
}
