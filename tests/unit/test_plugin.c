/* SPDX-License-Identifier: MIT */
/*
 * The host table members added for plugins (cookie release, per-instance
 * entropy limit), the descriptor size floor, the loader's refusals that
 * need no built plugin, and the claims every descriptor is checked for.
 */
#include <sys/stat.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "loader.h"
#include "log.h"
#include "pluginproto.h"
#include "registry.h"

static void *released[8];
static int n_released;

/* A cookie-release function that records what it was handed. */
static void
test_release(void *cookie)
{
	cr_assert_lt(n_released, 8);
	released[n_released++] = cookie;
}

static int
test_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	return 0;
}

static const struct entropyd_source test_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "hosttest",
	.description = "host table test",
	.entropy_bits = 6.0,
	.probe = test_probe,
};

/* Register the test module and return it. */
static struct entropyd_module *
test_module(void)
{
	char err[256];

	n_released = 0;
	cr_assert_eq(registry_add(&test_source, NULL, err, sizeof err), 0, "%s", err);
	return registry_find("hosttest");
}

Test(host, cookie_release_on_replace_and_free)
{
	struct entropyd_module *m = test_module();
	int a, b, c;

	cr_assert(ENTROPYD_HOST_HAS(registry_host(), set_cookie_release));
	registry_host()->set_cookie_release(m, test_release);
	registry_host()->add_instance(m, "x", "dev", &a);
	registry_host()->add_instance(m, "x", "dev", &a);
	cr_assert_eq(n_released, 0, "the same cookie again is not released");
	registry_host()->add_instance(m, "x", "dev", &b);
	cr_assert_eq(n_released, 1);
	cr_assert_eq(released[0], &a, "a replaced cookie is released");
	registry_host()->remove_instance(registry_host()->add_instance(m, "y", "dev", &c));
	cr_assert_eq(n_released, 2);
	cr_assert_eq(released[1], &c, "a removed instance's cookie is released");
	registry_free();
	cr_assert_eq(n_released, 3);
	cr_assert_eq(released[2], &b, "cookies still held are released at exit");
}

Test(host, limit_entropy_only_lowers)
{
	struct entropyd_module *m = test_module();
	struct entropyd_instance *inst, *other;

	cr_assert(ENTROPYD_HOST_HAS(registry_host(), limit_entropy));
	inst = registry_host()->add_instance(m, "a", "dev", NULL);
	other = registry_host()->add_instance(m, "b", "dev", NULL);
	inst->pipe.count.bytes_read = 1234;
	cr_assert_float_eq(registry_host()->limit_entropy(inst, 7.0), 6.0, 1e-9, "never raised");
	cr_assert_float_eq(registry_host()->limit_entropy(inst, -1.0), 6.0, 1e-9, "bad value ignored");
	cr_assert_float_eq(registry_host()->limit_entropy(inst, 2.0), 2.0, 1e-9);
	cr_assert_float_eq(inst->pipe.unit_bits, 2.0, 1e-9);
	cr_assert_eq(inst->pipe.count.bytes_read, 1234, "counters survive");
	cr_assert_float_eq(other->pipe.unit_bits, 6.0, 1e-9, "other instances keep theirs");
	cr_assert_float_eq(m->entropy_bits, 6.0, 1e-9, "the module's estimate is kept");
	cr_assert_float_eq(registry_host()->limit_entropy(inst, 3.0), 2.0, 1e-9);
	registry_free();
}

Test(host, member_check)
{
	struct entropyd_host old = *registry_host();

	old.size = (uint32_t)offsetof(struct entropyd_host, set_cookie_release);
	cr_assert_not(ENTROPYD_HOST_HAS(&old, set_cookie_release), "a 1.0-sized table lacks it");
	cr_assert(ENTROPYD_HOST_HAS(&old, now_ns));
}

Test(plugin, minimum_size_is_the_whole_1_0_descriptor)
{
	/* 1.0 ends with configure; 1.1 added shutdown after it. */
	cr_assert_eq(PLUGINPROTO_MIN_SOURCE_SIZE, offsetof(struct entropyd_source, shutdown));
	cr_assert_lt(PLUGINPROTO_MIN_SOURCE_SIZE, sizeof(struct entropyd_source));
}

Test(plugin, refusals_without_a_built_plugin)
{
	char dir[] = "/tmp/entropyd-plugin.XXXXXX", path[64], cmd[128];
	FILE *f;
	char *list = NULL;
	size_t len = 0;

	log_init("test", LOG_TO_STDERR, -1);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/text.so", dir);
	f = fopen(path, "w");
	fputs("not ELF\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/dir.so", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/ignored.txt", dir);
	fclose(fopen(path, "w"));
	cr_assert_eq(loader_load_dir(dir), 0);
	cr_assert_eq(loader_load_dir(dir), 0, "seen files are not tried again");
	f = open_memstream(&list, &len);
	loader_print_list(dir, f);
	fclose(f);
	cr_assert(strstr(list, "text.so: not a shared object (no ELF header)") != NULL, "%s", list);
	cr_assert(strstr(list, "dir.so: not a shared object (not a regular file)") != NULL, "%s",
	    list);
	cr_assert(strstr(list, "ignored.txt") == NULL, "%s", list);
	free(list);
	loader_free();
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A descriptor claiming bits per byte, or per raw sample of sample_bits. */
static struct entropyd_source
test_claim(double bits, bool raw, unsigned sample_bits)
{
	struct entropyd_source src = test_source;

	src.entropy_bits = bits;
	src.flags = raw ? ENTROPYD_SOURCE_RAW_SAMPLES : 0;
	src.sample_bits = sample_bits;
	return src;
}

Test(claims, what_a_descriptor_may_claim)
{
	struct entropyd_source ok[] = {
		test_claim(8.0, false, 0), test_claim(0.001, false, 0), test_claim(1.0 / 64, false, 0),
		test_claim(1.0, true, 1), test_claim(0.5, true, 8), test_claim(16.0, true, 16),
		test_claim(2.0, true, 12),
	};
	struct entropyd_source bad[] = {
		test_claim(1000.0, false, 0), test_claim(8.0001, false, 0), test_claim(0.0, false, 0),
		test_claim(-1.0, false, 0), test_claim(NAN, false, 0), test_claim(INFINITY, false, 0),
		test_claim(8.0, true, 1), test_claim(1.0, true, 0), test_claim(1.0, true, 17),
		test_claim(NAN, true, 8), test_claim(0.0, true, 8),
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++)
		cr_assert_eq(registry_check_claims(&ok[i], err, sizeof err), 0, "%zu: %s", i, err);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		cr_assert_eq(registry_check_claims(&bad[i], err, sizeof err), -1, "%zu accepted", i);
		cr_assert_neq(err[0], '\0', "%zu: a reason is given", i);
	}
	registry_check_claims(&bad[0], err, sizeof err);
	cr_assert_str_eq(err, "entropy_bits 1000: a claim must be more than 0 and at most 8 bits "
	    "per byte");
	registry_check_claims(&bad[6], err, sizeof err);
	cr_assert_str_eq(err, "entropy_bits 8: a claim must be more than 0 and at most 1 bits per "
	    "raw sample");
	registry_check_claims(&bad[7], err, sizeof err);
	cr_assert_str_eq(err, "sample_bits 0: raw samples must be 1 to 16 bits wide");
}

Test(claims, registry_add_refuses_them_and_registers_nothing)
{
	struct entropyd_source src = test_claim(NAN, false, 0);
	char err[256];

	cr_assert_eq(registry_add(&src, "/x/nan.so", err, sizeof err), -1);
	cr_assert(strstr(err, "entropy_bits nan") != NULL, "%s", err);
	cr_assert_null(registry_find("hosttest"));
}

Test(claims, every_built_in_claims_what_it_may)
{
	struct entropyd_module *m;

	registry_add_builtins(); /* fatal when one is refused */
	cr_assert_not_null(m = TAILQ_FIRST(&registry_modules));
	registry_free();
}
