/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fake_host.h"
#include "hosttable.h"

#define FAKE_MAX_OPTIONS 8

static struct {
	const char *key;
	char value[4096];
} fake_options[FAKE_MAX_OPTIONS];
static size_t fake_n_options;

struct entropyd_module fake_module;
struct entropyd_instance fake_instances[FAKE_MAX_INSTANCES] = { { .module = &fake_module } };
size_t fake_n_instances;
char fake_log[16384];
int fake_n_log;
char fake_unusable[1024];
int fake_n_unusable;

/* Append "PRIORITY NAME: line" and a newline to the log. */
static void
fake_append(int priority, const char *name, const char *line)
{
	size_t used = strlen(fake_log);

	snprintf(fake_log + used, sizeof fake_log - used, "%d %s: %s\n", priority, name, line);
	fake_n_log++;
}

/* host->log: named by the instance's id, else the module's name. */
static void
fake_host_log(struct entropyd_instance *inst, int priority, const char *line)
{
	fake_append(priority, *inst->id != '\0' ? inst->id : inst->module->source->name, line);
}

/* host->module_log: named by the module. */
static void
fake_host_module_log(struct entropyd_module *module, int priority, const char *line)
{
	fake_append(priority, module->source->name, line);
}

/* host->option: the test's value, else the descriptor's default. */
static const char *
fake_host_option(struct entropyd_module *module, const char *key)
{
	const struct entropyd_option *o;
	size_t i;

	for (i = 0; i < fake_n_options; i++)
		if (strcmp(fake_options[i].key, key) == 0)
			return fake_options[i].value;
	for (o = module->source->options; o != NULL && o->key != NULL; o++)
		if (strcmp(o->key, key) == 0)
			return o->default_value;
	return NULL;
}

/* host->unusable: keep the last reason. */
static void
fake_host_unusable(struct entropyd_module *module, const char *why)
{
	(void)module;
	snprintf(fake_unusable, sizeof fake_unusable, "%s", why);
	fake_n_unusable++;
}

/* host->add_instance: record what the module says about its device. */
static struct entropyd_instance *
fake_host_add_instance(struct entropyd_module *module, const char *id, const char *device,
    void *cookie)
{
	struct entropyd_instance *inst;

	if (fake_n_instances == FAKE_MAX_INSTANCES)
		return NULL;
	inst = &fake_instances[fake_n_instances++];
	snprintf(inst->id, sizeof inst->id, "%s", id != NULL ? id : "");
	snprintf(inst->device, sizeof inst->device, "%s", device != NULL ? device : "");
	inst->cookie = cookie;
	inst->module = module;
	inst->limit_bits = -1;
	return inst;
}

/* host->remove_instance: no module under these tests unplugs anything. */
static void
fake_host_remove_instance(struct entropyd_instance *inst)
{
	cr_assert_fail("remove_instance called for %s", inst->device);
}

static void *
fake_host_instance_cookie(struct entropyd_instance *inst)
{
	return inst->cookie;
}

static struct entropyd_module *
fake_host_instance_module(struct entropyd_instance *inst)
{
	return inst->module;
}

/* host->limit_entropy: record what the module asked for. */
static double
fake_host_limit_entropy(struct entropyd_instance *inst, double bits)
{
	inst->limit_bits = bits;
	return bits;
}

/* The fake's side of the host table (no hotplug, no loop to defer to). */
static const struct hosttable_ops fake_ops = {
	.log = fake_host_log,
	.module_log = fake_host_module_log,
	.option = fake_host_option,
	.unusable = fake_host_unusable,
	.add_instance = fake_host_add_instance,
	.remove_instance = fake_host_remove_instance,
	.instance_cookie = fake_host_instance_cookie,
	.instance_module = fake_host_instance_module,
	.limit_entropy = fake_host_limit_entropy,
};

const struct entropyd_host *
fake_host(void)
{
	hosttable_bind(&fake_ops);
	return &hosttable;
}

void
fake_reset(const struct entropyd_source *src)
{
	fake_module.source = src;
	fake_n_options = 0;
	memset(fake_instances, 0, sizeof fake_instances);
	for (size_t i = 0; i < FAKE_MAX_INSTANCES; i++)
		fake_instances[i].limit_bits = -1;
	fake_instances[0].module = &fake_module;
	fake_n_instances = 0;
	fake_log[0] = '\0';
	fake_n_log = 0;
	fake_unusable[0] = '\0';
	fake_n_unusable = 0;
}

void
fake_set_option(const char *key, const char *value)
{
	cr_assert_lt(fake_n_options, FAKE_MAX_OPTIONS);
	fake_options[fake_n_options].key = key;
	snprintf(fake_options[fake_n_options].value, sizeof fake_options[0].value, "%s", value);
	fake_n_options++;
}

int
fake_probe(const struct entropyd_source *src)
{
	char err[256] = "";

	fake_module.source = src;
	if (src->configure != NULL)
		cr_assert_eq(src->configure(&fake_module, fake_host(), err, sizeof err), 0,
		    "configure failed: %s", err);
	return src->probe(&fake_module, fake_host());
}
