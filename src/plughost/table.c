/* SPDX-License-Identifier: MIT */
/*
 * The plugin host's side of the host table its plugin is handed: the one
 * module and the instances the plugin adds (each announced to the daemon),
 * options, cookies, estimates lowered, and calls deferred to the main
 * thread. Log lines and reasons go to the daemon as messages.
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child_int.h"

/* host->defer's queue, run on the main thread. */
struct table_deferred {
	struct table_deferred *next;
	void (*fn)(struct entropyd_module *, void *);
	void *arg;
};
static struct table_deferred *table_deferred_head, **table_deferred_tail = &table_deferred_head;
static pthread_mutex_t table_defer_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t table_next_id = 1;
int table_defer_fd = -1;

static void table_log(struct entropyd_instance *, int, const char *);
static void table_unusable(struct entropyd_module *, const char *);
static const char *table_option(struct entropyd_module *, const char *);
static struct entropyd_instance *table_add_instance(struct entropyd_module *, const char *,
    const char *, void *);
static void table_remove_instance(struct entropyd_instance *);
static void *table_instance_cookie(struct entropyd_instance *);
static struct entropyd_module *table_instance_module(struct entropyd_instance *);
static void table_set_cookie_release(struct entropyd_module *, void (*)(void *));
static double table_limit_entropy(struct entropyd_instance *, double);
static void table_defer(struct entropyd_module *, void (*)(struct entropyd_module *, void *),
    void *);
static void table_instance_gone(struct entropyd_instance *, const char *);

const struct hosttable_ops table_ops = {
	.log = table_log,
	.module_log = table_module_log,
	.option = table_option,
	.unusable = table_unusable,
	.add_instance = table_add_instance,
	.remove_instance = table_remove_instance,
	.instance_cookie = table_instance_cookie,
	.instance_module = table_instance_module,
	.set_cookie_release = table_set_cookie_release,
	.limit_entropy = table_limit_entropy,
	.defer = table_defer,
	.instance_gone = table_instance_gone,
};

int
table_start(void)
{
	hosttable_bind(&table_ops);
	table_defer_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return table_defer_fd == -1 ? -1 : 0;
}

void
table_drop_deferred(void)
{
	struct table_deferred *d;

	while ((d = table_deferred_head) != NULL) {
		table_deferred_head = d->next;
		free(d);
	}
	table_deferred_tail = &table_deferred_head;
}

/* A line for the daemon's log, for an instance (id) or the module (0). */
static void
table_send_log(uint32_t id, int priority, const char *line)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, PP_LOG, id);
	pluginproto_put_i32(&m, priority);
	pluginproto_put_str(&m, line);
	child_send(&m);
}

static void
table_log(struct entropyd_instance *inst, int priority, const char *line)
{
	table_send_log(inst != NULL ? inst->id : 0, priority, line);
}

void
table_module_log(struct entropyd_module *m, int priority, const char *line)
{
	table_send_log(0, priority, line);
}

/* Send the daemon a message carrying one line. */
void
table_send_line(uint16_t type, const char *line)
{
	struct pluginproto_msg msg;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&msg, buf, sizeof buf, type, 0);
	pluginproto_put_str(&msg, line);
	child_send(&msg);
}

static void
table_unusable(struct entropyd_module *m, const char *why)
{
	table_send_line(PP_UNUSABLE, why);
}

/* An option's value as given, or its default, or NULL. */
static const char *
table_option(struct entropyd_module *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_options && key != NULL; i++) {
		if (strcmp(m->src->options[i].key, key) != 0)
			continue;
		return m->values[i] != NULL ? m->values[i] : m->src->options[i].default_value;
	}
	return NULL;
}

/* Tell the daemon about an instance (again: a re-probe or replug opens it). */
static void
table_announce(struct entropyd_instance *inst, const char *device)
{
	struct pluginproto_msg m;
	uint8_t buf[2 * PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, PP_ADD, inst->id);
	pluginproto_put_str(&m, inst->name);
	pluginproto_put_str(&m, device != NULL ? device : "");
	child_send(&m);
}

static struct entropyd_instance *
table_add_instance(struct entropyd_module *m, const char *id, const char *device, void *cookie)
{
	struct entropyd_instance *inst;
	unsigned n = 0;

	if (id == NULL)
		id = "";
	pthread_mutex_lock(&child_lock);
	for (inst = child_instances; inst != NULL; inst = inst->next, n++)
		if (!inst->removed && strcmp(inst->name, id) == 0)
			break;
	if (inst != NULL) {
		if (inst->cookie != cookie && inst->cookie != NULL && m->cookie_release != NULL)
			m->cookie_release(inst->cookie);
		inst->cookie = cookie;
	} else if (n < PLUGINPROTO_MAX_INSTANCES &&
	    (inst = calloc(1, sizeof *inst)) != NULL && (inst->name = strdup(id)) != NULL) {
		inst->id = table_next_id++;
		inst->cookie = cookie;
		inst->estimate = m->estimate;
		inst->data = inst->fd = inst->wake = -1;
		inst->next = child_instances;
		child_instances = inst;
	} else {
		free(inst);
		inst = NULL;
	}
	pthread_mutex_unlock(&child_lock);
	if (inst != NULL)
		table_announce(inst, device);
	return inst;
}

/* Unlink and free a closed instance, releasing its cookie. */
void
table_free_instance(struct entropyd_instance *inst)
{
	struct entropyd_instance **p;

	pthread_mutex_lock(&child_lock);
	for (p = &child_instances; *p != NULL; p = &(*p)->next)
		if (*p == inst) {
			*p = inst->next;
			break;
		}
	pthread_mutex_unlock(&child_lock);
	if (inst->cookie != NULL && child_module.cookie_release != NULL)
		child_module.cookie_release(inst->cookie);
	free(inst->name);
	free(inst);
}

/* Send a message about one instance: REMOVE or GONE. */
static void
table_send_about(uint16_t type, uint32_t id, const char *reason)
{
	struct pluginproto_msg m;
	uint8_t buf[PLUGINPROTO_STRING_MAX + 64];

	pluginproto_begin(&m, buf, sizeof buf, type, id);
	if (reason != NULL)
		pluginproto_put_str(&m, reason);
	child_send(&m);
}

static void
table_remove_instance(struct entropyd_instance *inst)
{
	inst->removed = true;
	table_send_about(PP_REMOVE, inst->id, NULL);
	/* From its own reader thread it is closed (and freed) when the daemon says. */
	if (inst->threaded && pthread_equal(inst->thread, pthread_self()))
		return;
	instance_close(inst);
	table_free_instance(inst);
}

static void *
table_instance_cookie(struct entropyd_instance *inst)
{
	return inst->cookie;
}

static struct entropyd_module *
table_instance_module(struct entropyd_instance *inst)
{
	return &child_module;
}

static void
table_set_cookie_release(struct entropyd_module *m, void (*release)(void *))
{
	m->cookie_release = release;
}

/* Lower an instance's estimate here, and have the daemon lower it too. */
static double
table_limit_entropy(struct entropyd_instance *inst, double bits)
{
	struct pluginproto_msg m;
	uint8_t buf[64];

	if (!(bits >= 0) || bits >= inst->estimate)
		return inst->estimate;
	inst->estimate = bits;
	pluginproto_begin(&m, buf, sizeof buf, PP_LIMIT, inst->id);
	pluginproto_put_f64(&m, bits);
	child_send(&m);
	return bits;
}

static void
table_defer(struct entropyd_module *m, void (*fn)(struct entropyd_module *, void *), void *arg)
{
	struct table_deferred *d = calloc(1, sizeof *d);
	uint64_t one = 1;

	if (d == NULL)
		return;
	d->fn = fn;
	d->arg = arg;
	pthread_mutex_lock(&table_defer_lock);
	*table_deferred_tail = d;
	table_deferred_tail = &d->next;
	if (write(table_defer_fd, &one, sizeof one) == -1 && errno != EAGAIN)
		d->fn = NULL;
	pthread_mutex_unlock(&table_defer_lock);
}

static void
table_instance_gone(struct entropyd_instance *inst, const char *reason)
{
	table_send_about(PP_GONE, inst->id, reason != NULL ? reason : "gone");
}

/* Run the deferred calls, in order, on the main thread. */
void
table_run_deferred(void)
{
	struct table_deferred *d;
	uint64_t n;

	if (read(table_defer_fd, &n, sizeof n) == -1 && errno != EAGAIN)
		return;
	for (;;) {
		pthread_mutex_lock(&table_defer_lock);
		if ((d = table_deferred_head) != NULL) {
			table_deferred_head = d->next;
			if (table_deferred_head == NULL)
				table_deferred_tail = &table_deferred_head;
		}
		pthread_mutex_unlock(&table_defer_lock);
		if (d == NULL)
			return;
		if (d->fn != NULL)
			d->fn(&child_module, d->arg);
		free(d);
	}
}
