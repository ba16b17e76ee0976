/* SPDX-License-Identifier: MIT */
/*
 * The modules the worker knows (built in and drop-ins), their options and
 * instances, the worker's side of the host table, and the checks of what a
 * descriptor claims.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <syslog.h>
#include <time.h>

#include "builtin.h"
#include "clock.h"
#include "defer.h"
#include "hosttable.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

struct module_list registry_modules = TAILQ_HEAD_INITIALIZER(registry_modules);
struct instance_list registry_instances = TAILQ_HEAD_INITIALIZER(registry_instances);
static struct registry_hooks registry_hooks;
static unsigned registry_credit_cap = 8; /* -e: bits credited per output byte at most */
static bool registry_skip_repeats;      /* --no-repeat-test */
static double registry_min_credit_bits; /* --min-credit: a source credited less warns */
static pthread_mutex_t registry_error_lock = PTHREAD_MUTEX_INITIALIZER;

static void registry_log_line(struct entropyd_instance *, int, const char *);
static void registry_module_log(struct entropyd_module *, int, const char *);
static void registry_unusable(struct entropyd_module *, const char *);
static struct entropyd_instance *registry_add_instance(struct entropyd_module *, const char *,
    const char *, void *);
static void registry_remove_instance(struct entropyd_instance *);
static void *registry_instance_cookie(struct entropyd_instance *);
static struct entropyd_module *registry_instance_module(struct entropyd_instance *);
static void registry_set_cookie_release(struct entropyd_module *, void (*)(void *));
static double registry_limit_entropy(struct entropyd_instance *, double);
static void registry_instance_gone(struct entropyd_instance *, const char *);

/* The worker's side of the host table its modules are handed. */
static const struct hosttable_ops registry_ops = {
	.log = registry_log_line,
	.module_log = registry_module_log,
	.option = registry_option,
	.unusable = registry_unusable,
	.add_instance = registry_add_instance,
	.remove_instance = registry_remove_instance,
	.instance_cookie = registry_instance_cookie,
	.instance_module = registry_instance_module,
	.set_cookie_release = registry_set_cookie_release,
	.limit_entropy = registry_limit_entropy,
	.defer = defer_add,
	.instance_gone = registry_instance_gone,
};

double
registry_min_credit(void)
{
	return registry_min_credit_bits;
}

const struct entropyd_host *
registry_host(void)
{
	hosttable_bind(&registry_ops);
	return &hosttable;
}

static const char *const registry_state_names[] = {
	[INSTANCE_ABSENT] = "absent",
	[INSTANCE_STARTING] = "starting",
	[INSTANCE_RUNNING] = "running",
	[INSTANCE_SUSPENDED] = "suspended",
	[INSTANCE_DRAINED] = "drained",
	[INSTANCE_STALLED] = "stalled",
};

const char *
registry_state_name(enum instance_state s)
{
	return registry_state_names[s];
}

void
registry_set_hooks(const struct registry_hooks *hooks)
{
	registry_hooks = *hooks;
}

/* Log a line for an instance; warnings and errors also become its last error. */
static void
registry_log_line(struct entropyd_instance *inst, int priority, const char *line)
{
	if (priority <= LOG_WARNING) {
		pthread_mutex_lock(&registry_error_lock);
		snprintf(inst->last_error, sizeof inst->last_error, "%s", line);
		pthread_mutex_unlock(&registry_error_lock);
	}
	/* A restart capture opens a source a thousand times: what each open
	 * says is debug, after the first. */
	if (inst->quiet && priority == LOG_INFO)
		priority = LOG_DEBUG;
	log_printf(priority, "%s: %s", inst->name, line);
}

void
registry_note_error(struct entropyd_instance *inst, const char *fmt, ...)
{
	char line[sizeof inst->last_error];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&registry_error_lock);
	memcpy(inst->last_error, line, sizeof line);
	pthread_mutex_unlock(&registry_error_lock);
}

void
registry_copy_error(struct entropyd_instance *inst, char *buf, size_t len)
{
	pthread_mutex_lock(&registry_error_lock);
	snprintf(buf, len, "%s", inst->last_error);
	pthread_mutex_unlock(&registry_error_lock);
}

bool
registry_has_error(struct entropyd_instance *inst)
{
	bool has;

	pthread_mutex_lock(&registry_error_lock);
	has = inst->last_error[0] != '\0';
	pthread_mutex_unlock(&registry_error_lock);
	return has;
}

void
registry_clear_error(struct entropyd_instance *inst)
{
	pthread_mutex_lock(&registry_error_lock);
	inst->last_error[0] = '\0';
	pthread_mutex_unlock(&registry_error_lock);
}

/* Record an instance's last error and log it as a warning. */
void
registry_set_error(struct entropyd_instance *inst, const char *fmt, ...)
{
	char line[sizeof inst->last_error];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	registry_log_line(inst, LOG_WARNING, line);
}

static void
registry_module_log(struct entropyd_module *m, int priority, const char *line)
{
	log_printf(priority, "%s: %s", m->src->name, line);
}

static void
registry_unusable(struct entropyd_module *m, const char *why)
{
	free(m->unusable);
	m->unusable = xstrdup(why);
}

/* Add an instance, or hand back the one of that name (a re-probe finds it again). */
static struct entropyd_instance *
registry_add_instance(struct entropyd_module *m, const char *id, const char *device, void *cookie)
{
	struct entropyd_instance *inst;
	char *name;
	bool raw = m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES;

	if (id != NULL && *id != '\0')
		xasprintf(&name, "%s:%s", m->src->name, id);
	else
		name = xstrdup(m->src->name);
	TAILQ_FOREACH(inst, &m->instances, entry) {
		if (strcmp(inst->name, name) == 0 && !inst->removed) {
			free(name);
			if (inst->cookie != cookie && inst->cookie != NULL && m->cookie_release != NULL)
				m->cookie_release(inst->cookie);
			inst->cookie = cookie;
			if (registry_hooks.added != NULL)
				registry_hooks.added(inst);
			return inst;
		}
	}
	inst = xcalloc(1, sizeof *inst);
	inst->module = m;
	inst->name = name;
	inst->device = xstrdup(device != NULL ? device : "");
	inst->cookie = cookie;
	inst->state = INSTANCE_ABSENT;
	inst->state_since_ns = clock_now_ns();
	pipeline_init(&inst->pipe, raw, m->src->sample_bits, m->entropy_bits);
	pipeline_cap_credit(&inst->pipe, registry_credit_cap);
	if (registry_skip_repeats)
		pipeline_skip_repeats(&inst->pipe);
	TAILQ_INSERT_TAIL(&m->instances, inst, entry);
	TAILQ_INSERT_TAIL(&registry_instances, inst, all);
	if (registry_hooks.added != NULL)
		registry_hooks.added(inst);
	return inst;
}

static void
registry_remove_instance(struct entropyd_instance *inst)
{
	inst->removed = true;
	if (registry_hooks.removed != NULL)
		registry_hooks.removed(inst);
	else
		registry_free_instance(inst);
}

/* Unplugged for now: the engine closes it and reports it absent. */
static void
registry_instance_gone(struct entropyd_instance *inst, const char *reason)
{
	if (registry_hooks.gone != NULL)
		registry_hooks.gone(inst, reason != NULL ? reason : "gone");
}

static void *
registry_instance_cookie(struct entropyd_instance *inst)
{
	return inst->cookie;
}

static struct entropyd_module *
registry_instance_module(struct entropyd_instance *inst)
{
	return inst->module;
}

static void
registry_set_cookie_release(struct entropyd_module *m, void (*release)(void *))
{
	m->cookie_release = release;
}

/* Lower one instance's claim (and credit): the pipeline's lowering path, counters kept. */
static double
registry_limit_entropy(struct entropyd_instance *inst, double bits)
{
	double before = inst->pipe.claim_bits, now = pipeline_limit(&inst->pipe, bits);

	if (now < before)
		log_info("%s: estimate lowered to %g bits per %s by its module", inst->name, now,
		    registry_unit_name(inst));
	return now;
}

/* The unit credited per: a raw sample or a byte. */
const char *
registry_unit_name(const struct entropyd_instance *inst)
{
	return inst->pipe.raw ? "sample" : "byte";
}

void
registry_credit_moved(struct entropyd_instance *inst, double before)
{
	/* The figures that decided it: what /health quotes too. */
	const struct estimate_result *r = inst->pipe.have_decided ? &inst->pipe.decided :
	    pipeline_estimate_result(&inst->pipe);
	const char *unit = registry_unit_name(inst);
	char why[256];

	if (r == NULL)
		return;
	if (r->markov >= 0)
		snprintf(why, sizeof why, "%.3g bits per %s (MCV %.3g, Markov %.3g, Lag %.3g) "
		    "over the last %" PRIu64 " samples", r->min, unit, r->mcv, r->markov, r->lag,
		    r->samples);
	else
		snprintf(why, sizeof why, "%.3g bits per %s (MCV) over the last %" PRIu64 " bytes",
		    r->min, unit, r->samples);
	/* The estimate doing its job: information, not a warning (see /health's levels). */
	log_info("%s: credit lowered from %g to %g bits per %s: the online estimate is %s",
	    inst->name, before, inst->pipe.unit_bits, unit, why);
}

void
registry_set_state(struct entropyd_instance *inst, enum instance_state state)
{
	if (inst->state == state)
		return;
	log_debug("%s: %s -> %s", inst->name, registry_state_name(inst->state),
	    registry_state_name(state));
	inst->state = state;
	inst->state_since_ns = clock_now_ns();
}

/* Free a closed instance and unlink it. */
void
registry_free_instance(struct entropyd_instance *inst)
{
	TAILQ_REMOVE(&inst->module->instances, inst, entry);
	TAILQ_REMOVE(&registry_instances, inst, all);
	if (inst->cookie != NULL && inst->module->cookie_release != NULL)
		inst->module->cookie_release(inst->cookie);
	pipeline_free(&inst->pipe);
	free(inst->name);
	free(inst->device);
	free(inst);
}

/* Check a module name: lowercase letters, digits and '_'. */
static bool
registry_valid_name(const char *name)
{
	if (*name == '\0')
		return false;
	for (; *name != '\0'; name++)
		if (!islower((unsigned char)*name) && !isdigit((unsigned char)*name) && *name != '_')
			return false;
	return true;
}

int
registry_check_claims(const struct entropyd_source *src, char *err, size_t errlen)
{
	bool raw = src->flags & ENTROPYD_SOURCE_RAW_SAMPLES;
	double most = raw ? (double)src->sample_bits : 8.0;

	if (raw && (src->sample_bits < 1 || src->sample_bits > 16)) {
		snprintf(err, errlen, "sample_bits %u: raw samples must be 1 to 16 bits wide",
		    src->sample_bits);
		return -1;
	}
	/* Written so that NaN fails too. */
	if (!(src->entropy_bits > 0 && src->entropy_bits <= most)) {
		snprintf(err, errlen, "entropy_bits %g: a claim must be more than 0 and at most "
		    "%g bits per %s", src->entropy_bits, most, raw ? "raw sample" : "byte");
		return -1;
	}
	return 0;
}

int
registry_add(const struct entropyd_source *src, const char *path, char *err, size_t errlen)
{
	struct entropyd_module *m;
	const struct entropyd_option *o;
	size_t n = 0;

	if (src->name == NULL || !registry_valid_name(src->name)) {
		snprintf(err, errlen, "invalid source name");
		return -1;
	}
	if (registry_check_claims(src, err, errlen) == -1)
		return -1;
	if ((m = registry_find(src->name)) != NULL) {
		snprintf(err, errlen, "source name '%s' is taken by %s", src->name,
		    m->path != NULL ? m->path : "a built-in source");
		return -1;
	}
	for (o = src->options; o != NULL && o->key != NULL; o++) {
		if (strcmp(o->key, OPTIONS_ENTROPY_KEY) == 0 ||
		    strcmp(o->key, OPTIONS_STALL_TIMEOUT_KEY) == 0) {
			snprintf(err, errlen, "option '%s' is reserved for the daemon", o->key);
			return -1;
		}
		n++;
	}
	m = xcalloc(1, sizeof *m);
	m->src = src;
	m->path = path != NULL ? xstrdup(path) : NULL;
	m->entropy_bits = src->flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST ? 0 : src->entropy_bits;
	m->stall_timeout_ms = OPTIONS_STALL_TIMEOUT_DEFAULT_S * 1000u;
	m->n_options = n;
	m->options = xcalloc(n, sizeof *m->options);
	for (n = 0; n < m->n_options; n++)
		m->options[n].key = src->options[n].key;
	TAILQ_INIT(&m->instances);
	TAILQ_INSERT_TAIL(&registry_modules, m, entry);
	return 0;
}

void
registry_add_builtins(void)
{
	const struct entropyd_source *const *b;
	char err[256];

	for (b = builtin_sources; *b != NULL; b++)
		if (registry_add(*b, NULL, err, sizeof err) == -1)
			fatalx("built-in source: %s", err);
}

struct entropyd_module *
registry_find(const char *name)
{
	struct entropyd_module *m;

	TAILQ_FOREACH(m, &registry_modules, entry)
		if (strcmp(m->src->name, name) == 0)
			return m;
	return NULL;
}

const char *
registry_option(struct entropyd_module *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_options; i++) {
		if (strcmp(m->options[i].key, key) != 0)
			continue;
		if (m->options[i].value != NULL)
			return m->options[i].value;
		return m->src->options[i].default_value;
	}
	return NULL;
}

/* Whether name is among the n names. */
static bool
registry_named(char *const *names, size_t n, const char *name)
{
	while (n-- > 0)
		if (strcmp(names[n], name) == 0)
			return true;
	return false;
}

/* Look up a source named on the command line, or say it is unknown. */
static struct entropyd_module *
registry_lookup(const char *flag, const char *name, char *err, size_t errlen)
{
	struct entropyd_module *m = registry_find(name);

	if (m == NULL)
		snprintf(err, errlen, "%s: unknown source '%s' (entropyd -l lists them)", flag, name);
	return m;
}

/* Apply one -O SOURCE:KEY:VALUE. */
static int
registry_apply_option(const struct config_option *o, char *err, size_t errlen)
{
	struct entropyd_module *m;
	double h;
	size_t i;

	if ((m = registry_lookup("-O", o->source, err, errlen)) == NULL)
		return -1;
	if (strcmp(o->key, OPTIONS_ENTROPY_KEY) == 0) {
		/* options_parse() checked the syntax already. */
		if (options_entropy_bits(o->value, &h) == -1 || h > m->src->entropy_bits) {
			snprintf(err, errlen, "-O %s:entropy: %g is above the source's own "
			    "estimate of %g bits; it can only be lowered", o->source, h,
			    m->src->entropy_bits);
			return -1;
		}
		m->entropy_bits = h;
		return 0;
	}
	if (strcmp(o->key, OPTIONS_STALL_TIMEOUT_KEY) == 0) {
		unsigned s;

		/* options_parse() checked the value already. */
		if (options_stall_timeout(o->value, &s) == 0)
			m->stall_timeout_ms = s * 1000u;
		return 0;
	}
	for (i = 0; i < m->n_options; i++) {
		if (strcmp(m->options[i].key, o->key) == 0) {
			free(m->options[i].value);
			m->options[i].value = xstrdup(o->value);
			return 0;
		}
	}
	snprintf(err, errlen, "-O: source '%s' has no option '%s' (entropyd -O %s lists them)",
	    o->source, o->key, o->source);
	return -1;
}

int
registry_configure(const struct config *cfg, registry_refuse_fn refuse, char *err,
    size_t errlen)
{
	struct entropyd_module *m, *next;
	size_t i;

	if (cfg->entropy_count_bits > 0)
		registry_credit_cap = cfg->entropy_count_bits;
	registry_skip_repeats = cfg->no_repeat_test;
	registry_min_credit_bits = cfg->min_credit_bits;
	/* Excluding what is not there is harmless (rngd names sources this
	 * daemon lacks): say so and carry on. */
	for (i = 0; i < cfg->n_exclude; i++)
		if (strcmp(cfg->exclude[i], "all") != 0 && registry_find(cfg->exclude[i]) == NULL)
			log_warnx("-x: no source '%s' here, nothing to exclude (entropyd -l lists "
			    "them)", cfg->exclude[i]);
	if (cfg->rdseed_follows_rdrand)
		log_info("%s rdrand: rdseed %s as well, as rngd's rdrand source covers both CPU "
		    "instructions (name rdseed to choose it apart)",
		    registry_named(cfg->include, cfg->n_include, "rdrand") ? "-n" : "-x",
		    registry_named(cfg->include, cfg->n_include, "rdrand") ? "included" :
		    "excluded");
	for (i = 0; i < cfg->n_include; i++)
		if (registry_lookup("-n", cfg->include[i], err, errlen) == NULL)
			return EX_USAGE;
	if (cfg->show_options != NULL &&
	    registry_lookup("-O", cfg->show_options, err, errlen) == NULL)
		return EX_USAGE;
	for (i = 0; i < cfg->n_options; i++)
		if (registry_apply_option(&cfg->options[i], err, errlen) == -1)
			return EX_USAGE;
	for (m = TAILQ_FIRST(&registry_modules); m != NULL; m = next) {
		next = TAILQ_NEXT(m, entry);
		if (registry_enable(m, cfg, err, errlen) == -1) {
			/* A built-in's bad option is a usage error; a plugin is refused. */
			if (m->path == NULL || refuse == NULL)
				return EX_USAGE;
			refuse(m, err);
		}
	}
	return 0;
}

int
registry_enable(struct entropyd_module *m, const struct config *cfg, char *err, size_t errlen)
{
	bool all = registry_named(cfg->exclude, cfg->n_exclude, "all");

	m->enabled = registry_named(cfg->include, cfg->n_include, m->src->name) ||
	    ((m->src->flags & ENTROPYD_SOURCE_DEFAULT_ON) && !all &&
	    !registry_named(cfg->exclude, cfg->n_exclude, m->src->name));
	if (m->enabled && m->src->configure != NULL &&
	    m->src->configure(m, registry_host(), err, errlen) == -1)
		return -1;
	return 0;
}

void
registry_print_options(const struct entropyd_module *m, FILE *f)
{
	const struct entropyd_option *o;

	fprintf(f, "%s: %s\n", m->src->name, m->src->description);
	fprintf(f, "  %s:%-14s %s (default %g%s)\n", m->src->name, OPTIONS_ENTROPY_KEY,
	    m->src->flags & ENTROPYD_SOURCE_RAW_SAMPLES ? "assessed bits per raw sample; lower only" :
	    "assessed bits per byte; lower only", m->src->flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST ?
	    0.0 : m->src->entropy_bits, m->src->flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST ?
	    ", at most the source's estimate" : "");
	fprintf(f, "  %s:%-14s seconds asked for data without any before it is stalled; "
	    "0 never (default %u)\n", m->src->name, OPTIONS_STALL_TIMEOUT_KEY,
	    OPTIONS_STALL_TIMEOUT_DEFAULT_S);
	for (o = m->src->options; o != NULL && o->key != NULL; o++)
		fprintf(f, "  %s:%-14s %s%s%s%s\n", m->src->name, o->key, o->help,
		    o->default_value ? " (default " : "", o->default_value ? o->default_value : "",
		    o->default_value ? ")" : "");
}

int
registry_probe(struct entropyd_module *m)
{
	free(m->unusable);
	m->unusable = NULL;
	return m->src->probe(m, registry_host());
}

void
registry_print_list(FILE *f)
{
	struct entropyd_module *m;
	struct entropyd_instance *inst;

	fprintf(f, "%-12s %-7s %-8s %s\n", "SOURCE", "DEFAULT", "SELECTED", "HERE");
	TAILQ_FOREACH(m, &registry_modules, entry) {
		int n = registry_probe(m);

		fprintf(f, "%-12s %-7s %-8s ", m->src->name,
		    m->src->flags & ENTROPYD_SOURCE_DEFAULT_ON ? "on" : "off",
		    m->enabled ? "yes" : "no");
		if (n <= 0 || TAILQ_EMPTY(&m->instances)) {
			fprintf(f, "unusable: %s\n", m->unusable != NULL ? m->unusable :
			    "no device found");
			continue;
		}
		fprintf(f, "usable:");
		TAILQ_FOREACH(inst, &m->instances, entry)
			fprintf(f, " %s (%s)", inst->name, inst->device);
		/* An instance's module may have lowered it below the module's figure. */
		inst = TAILQ_FIRST(&m->instances);
		fprintf(f, ", %g bits per %s credited\n", inst->pipe.claim_bits,
		    registry_unit_name(inst));
	}
}

void
registry_remove_module(struct entropyd_module *m)
{
	size_t i;

	while (!TAILQ_EMPTY(&m->instances))
		registry_free_instance(TAILQ_FIRST(&m->instances));
	defer_drop(m);
	if (m->src->size >= offsetof(struct entropyd_source, shutdown) + sizeof m->src->shutdown &&
	    m->src->shutdown != NULL)
		m->src->shutdown(m);
	defer_drop(m);
	TAILQ_REMOVE(&registry_modules, m, entry);
	for (i = 0; i < m->n_options; i++)
		free(m->options[i].value);
	free(m->options);
	free(m->unusable);
	free(m->path);
	free(m);
}

void
registry_free(void)
{
	struct entropyd_module *m;

	while ((m = TAILQ_FIRST(&registry_modules)) != NULL)
		registry_remove_module(m);
}
