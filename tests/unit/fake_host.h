/* SPDX-License-Identifier: MIT */
/*
 * A fake host table for unit tests: drives a source module exactly as the
 * daemon does (configure, probe, open, read, close) and records what the
 * module says: log lines, unusable reasons, the instances it adds.
 */
#ifndef ENTROPYD_TEST_FAKE_HOST_H
#define ENTROPYD_TEST_FAKE_HOST_H

#include <stddef.h>

#include <entropyd/source.h>

/* The daemon's opaque types, as the fake host sees them. */
struct entropyd_module {
	const struct entropyd_source *source;
};
struct entropyd_instance {
	char id[64];
	char device[4096];
	void *cookie;
	struct entropyd_module *module;
	double limit_bits;  /* the last host->limit_entropy, or -1 */
};

#define FAKE_MAX_INSTANCES 4

/* The host table, with the fake bound to it. */
const struct entropyd_host *fake_host(void);
extern struct entropyd_module fake_module;
/* What the module added; fake_instances[0] is ready for modules never probed. */
extern struct entropyd_instance fake_instances[FAKE_MAX_INSTANCES];
extern size_t fake_n_instances;
/* Log lines as "PRIORITY NAME: text\n", and how many. */
extern char fake_log[16384];
extern int fake_n_log;
/* The last unusable reason, and how many were given. */
extern char fake_unusable[1024];
extern int fake_n_unusable;

/* Forget everything recorded and set; src becomes the module under test. */
void fake_reset(const struct entropyd_source *src);
/* Set -O SOURCE:KEY:VALUE for the module under test. */
void fake_set_option(const char *key, const char *value);
/* Configure (which must succeed), then probe; probe's result. */
int fake_probe(const struct entropyd_source *src);

#endif
