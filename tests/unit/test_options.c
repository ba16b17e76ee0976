/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include <criterion/criterion.h>

#include "options.h"

static struct config cfg;
static char err[256];

/* Parse "entropyd" followed by the NULL-terminated arguments. */
static int
parse(const char *first, ...)
{
	char *argv[64];
	int argc = 0;
	const char *a;
	va_list ap;

	argv[argc++] = (char *)"entropyd";
	va_start(ap, first);
	for (a = first; a != NULL; a = va_arg(ap, const char *)) {
		cr_assert_lt(argc, 63);
		argv[argc++] = (char *)a;
	}
	va_end(ap);
	argv[argc] = NULL;
	memset(err, 'X', sizeof err);
	err[sizeof err - 1] = '\0';
	return options_parse(&cfg, argc, argv, err, sizeof err);
}

/* Parse expecting success, with an empty error line. */
#define PARSE_OK(...)                                                              \
	do {                                                                       \
		int rc_ = parse(__VA_ARGS__, NULL);                                \
		cr_assert_eq(rc_, 0, "rc %d, err '%s'", rc_, err);                 \
		cr_assert_str_empty(err);                                          \
	} while (0)

/* Parse expecting EX_USAGE with a one-line message holding each substring. */
static void
expect_usage(const char *const *args, const char *const *want)
{
	char *argv[64];
	int argc = 0, rc;

	argv[argc++] = (char *)"entropyd";
	for (; *args != NULL; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	memset(err, 0, sizeof err);
	rc = options_parse(&cfg, argc, argv, err, sizeof err);
	cr_assert_eq(rc, EX_USAGE, "rc %d for %s", rc, argv[1]);
	cr_assert_str_not_empty(err);
	cr_assert_null(strchr(err, '\n'), "multi-line error '%s'", err);
	for (; *want != NULL; want++)
		cr_assert_not_null(strstr(err, *want), "error '%s' lacks '%s'", err, *want);
	/* A failed parse leaves nothing allocated behind. */
	cr_assert_null(cfg.random_device);
	cr_assert_null(cfg.plugin_dir);
	cr_assert_null(cfg.options);
}

#define UNPAREN(...) __VA_ARGS__
/* USAGE((arguments...), substrings the error must hold...) */
#define USAGE(ARGS, ...)                                                           \
	expect_usage((const char *const[]){ UNPAREN ARGS, NULL },                  \
	    (const char *const[]){ __VA_ARGS__, NULL })

static void
teardown(void)
{
	options_free(&cfg);
}

TestSuite(options, .fini = teardown);

Test(options, defaults)
{
	PARSE_OK(NULL);
	cr_assert_not(cfg.foreground);
	cr_assert_eq(cfg.verbose, 0);
	cr_assert_not(cfg.list);
	cr_assert_eq(cfg.n_exclude, 0);
	cr_assert_eq(cfg.n_include, 0);
	cr_assert_eq(cfg.n_options, 0);
	cr_assert_null(cfg.show_options);
	cr_assert_str_eq(cfg.random_device, "/dev/random");
	cr_assert_null(cfg.pid_file);
	cr_assert_eq(cfg.random_step_bytes, 64);
	cr_assert_eq(cfg.fill_watermark_bits, 2048);
	cr_assert_eq(cfg.reseed_interval_s, 60);
	cr_assert_eq(cfg.entropy_count_bits, 8);
	cr_assert_not(cfg.test_mode);
	cr_assert_not(cfg.ignorefail);
	cr_assert_not(cfg.no_host_mix);
	cr_assert_not(cfg.no_reseed);
	cr_assert_null(cfg.drop_privileges);
	cr_assert_not(cfg.version);
	cr_assert_not(cfg.help);
	cr_assert_str_eq(cfg.plugin_dir, PLUGINDIR);
	cr_assert_str_eq(cfg.control_socket, RUNDIR "/entropyd.sock");
}

Test(options, boolean_flags_short)
{
	PARSE_OK("-f", "-l", "-i", "-v", "-h", "-d");
	cr_assert(cfg.foreground);
	cr_assert(cfg.list);
	cr_assert(cfg.ignorefail);
	cr_assert(cfg.version);
	cr_assert(cfg.help);
	cr_assert_eq(cfg.verbose, 1);
	cr_assert_not(cfg.test_mode);
}

Test(options, boolean_flags_long)
{
	PARSE_OK("--foreground", "--list", "--ignorefail", "--version", "--help", "--quiet",
	    "--no-host-mix", "--no-reseed");
	cr_assert(cfg.no_host_mix);
	cr_assert(cfg.no_reseed);
	cr_assert(cfg.foreground);
	cr_assert(cfg.list);
	cr_assert(cfg.ignorefail);
	cr_assert(cfg.version);
	cr_assert(cfg.help);
	cr_assert_eq(cfg.verbose, -1);
}

Test(options, clustered_short_flags)
{
	PARSE_OK("-fqs", "128");
	cr_assert(cfg.foreground);
	cr_assert_eq(cfg.verbose, -1);
	cr_assert_eq(cfg.random_step_bytes, 128);
}

Test(options, background_after_foreground)
{
	PARSE_OK("-f", "-b");
	cr_assert_not(cfg.foreground);
	options_free(&cfg);
	PARSE_OK("--foreground", "--background");
	cr_assert_not(cfg.foreground);
	options_free(&cfg);
	PARSE_OK("-b", "-f");
	cr_assert(cfg.foreground);
}

Test(options, debug_and_quiet_last_wins)
{
	PARSE_OK("-q", "--debug");
	cr_assert_eq(cfg.verbose, 1);
	options_free(&cfg);
	PARSE_OK("-d", "-q");
	cr_assert_eq(cfg.verbose, -1);
}

Test(options, test_mode_implies_foreground)
{
	PARSE_OK("-t");
	cr_assert(cfg.test_mode);
	cr_assert(cfg.foreground);
	options_free(&cfg);
	PARSE_OK("--test", "-b");
	cr_assert(cfg.test_mode);
	cr_assert(cfg.foreground, "-b cannot send test mode to the background");
}

Test(options, numbers_short)
{
	PARSE_OK("-s", "1", "-W", "0", "-R", "86400", "-e", "1");
	cr_assert_eq(cfg.random_step_bytes, 1);
	cr_assert_eq(cfg.fill_watermark_bits, 0);
	cr_assert_eq(cfg.reseed_interval_s, 86400);
	cr_assert_eq(cfg.entropy_count_bits, 1);
}

Test(options, numbers_long)
{
	PARSE_OK("--random-step=4096", "--fill-watermark", "4096", "--force-reseed=1",
	    "--entropy-count", "8");
	cr_assert_eq(cfg.random_step_bytes, 4096);
	cr_assert_eq(cfg.fill_watermark_bits, 4096);
	cr_assert_eq(cfg.reseed_interval_s, 1);
	cr_assert_eq(cfg.entropy_count_bits, 8);
}

Test(options, paths_short)
{
	PARSE_OK("-o", "-", "-p", "/tmp/e.pid", "-D", "nobody:nogroup");
	cr_assert_str_eq(cfg.random_device, "-");
	cr_assert_str_eq(cfg.pid_file, "/tmp/e.pid");
	cr_assert_str_eq(cfg.drop_privileges, "nobody:nogroup");
}

Test(options, paths_long)
{
	PARSE_OK("--random-device", "/tmp/out", "--pid-file=/tmp/p", "--drop-privileges=u:g",
	    "--plugin-dir", "/opt/src", "--control-socket=/tmp/e.sock");
	cr_assert_str_eq(cfg.random_device, "/tmp/out");
	cr_assert_str_eq(cfg.pid_file, "/tmp/p");
	cr_assert_str_eq(cfg.drop_privileges, "u:g");
	cr_assert_str_eq(cfg.plugin_dir, "/opt/src");
	cr_assert_str_eq(cfg.control_socket, "/tmp/e.sock");
}

Test(options, last_path_wins)
{
	PARSE_OK("-o", "/tmp/a", "-o", "/tmp/b", "-p", "x", "--pid-file", "y");
	cr_assert_str_eq(cfg.random_device, "/tmp/b");
	cr_assert_str_eq(cfg.pid_file, "y");
}

Test(options, rng_device_becomes_hwrng_option)
{
	PARSE_OK("-O", "file:path:/tmp/f", "-r", "/dev/hwrng1", "--rng-device=/dev/x");
	cr_assert_eq(cfg.n_options, 3);
	cr_assert_str_eq(cfg.options[0].source, "file");
	cr_assert_str_eq(cfg.options[1].source, "hwrng");
	cr_assert_str_eq(cfg.options[1].key, "device");
	cr_assert_str_eq(cfg.options[1].value, "/dev/hwrng1");
	cr_assert_str_eq(cfg.options[2].source, "hwrng");
	cr_assert_str_eq(cfg.options[2].key, "device");
	cr_assert_str_eq(cfg.options[2].value, "/dev/x");
}

Test(options, exclude_include_repeatable_in_order)
{
	PARSE_OK("-x", "all", "--exclude", "tpm", "-x", "rdrand", "-n", "file", "--include=hwrng");
	cr_assert_eq(cfg.n_exclude, 3);
	cr_assert_str_eq(cfg.exclude[0], "all");
	cr_assert_str_eq(cfg.exclude[1], "tpm");
	cr_assert_str_eq(cfg.exclude[2], "rdrand");
	cr_assert_eq(cfg.n_include, 2);
	cr_assert_str_eq(cfg.include[0], "file");
	cr_assert_str_eq(cfg.include[1], "hwrng");
}

Test(options, option_value_with_colons_and_empty)
{
	PARSE_OK("-O", "file:path:/tmp/a:b::c", "--option", "hwrng:rng_current:",
	    "--option=usb:id:1d50:60c6");
	cr_assert_eq(cfg.n_options, 3);
	cr_assert_str_eq(cfg.options[0].source, "file");
	cr_assert_str_eq(cfg.options[0].key, "path");
	cr_assert_str_eq(cfg.options[0].value, "/tmp/a:b::c");
	cr_assert_str_eq(cfg.options[1].source, "hwrng");
	cr_assert_str_eq(cfg.options[1].key, "rng_current");
	cr_assert_str_eq(cfg.options[1].value, "");
	cr_assert_str_eq(cfg.options[2].source, "usb");
	cr_assert_str_eq(cfg.options[2].key, "id");
	cr_assert_str_eq(cfg.options[2].value, "1d50:60c6");
	cr_assert_null(cfg.show_options);
}

Test(options, option_source_alone_shows_options)
{
	PARSE_OK("-O", "hwrng");
	cr_assert_str_eq(cfg.show_options, "hwrng");
	cr_assert_eq(cfg.n_options, 0);
	options_free(&cfg);
	PARSE_OK("--option", "tpm_2");
	cr_assert_str_eq(cfg.show_options, "tpm_2");
}

Test(options, entropy_option_values)
{
	double bits = -1;

	PARSE_OK("-O", "file:entropy:4", "-O", "hwrng:entropy:0.5", "-O", "audio:entropy:0");
	cr_assert_eq(cfg.n_options, 3);
	cr_assert_str_eq(cfg.options[1].value, "0.5");
	cr_assert_eq(options_entropy_bits("7.25", &bits), 0);
	cr_assert_float_eq(bits, 7.25, 1e-9);
	cr_assert_eq(options_entropy_bits("16", &bits), 0);
	cr_assert_eq(options_entropy_bits("16.5", &bits), -1);
	cr_assert_eq(options_entropy_bits("-1", &bits), -1);
	cr_assert_eq(options_entropy_bits("1e0", &bits), -1);
	cr_assert_eq(options_entropy_bits("nan", &bits), -1);
	cr_assert_eq(options_entropy_bits("", &bits), -1);
	cr_assert_eq(options_entropy_bits(".", &bits), -1);
}

Test(options, bad_numbers)
{
	USAGE(("-s", "abc"), "-s", "'abc'", "1 to 4096");
	USAGE(("-sabc"), "-s", "'abc'", "1 to 4096");
	USAGE(("-s0"), "-s", "'0'");
	USAGE(("-s4097"), "-s", "'4097'");
	USAGE(("-s-1"), "-s", "'-1'");
	USAGE(("-s+1"), "-s", "'+1'");
	USAGE(("-s 1"), "-s", "' 1'");
	USAGE(("-s1x"), "-s", "'1x'");
	USAGE(("-s99999999999999999999999"), "-s", "not a number");
	USAGE(("--random-step=12k"), "--random-step", "'12k'");
	USAGE(("-W4097"), "-W", "'4097'", "0 to 4096");
	USAGE(("--fill-watermark=-1"), "--fill-watermark", "'-1'");
	USAGE(("-R0"), "-R", "'0'", "1 to 86400");
	USAGE(("-R86401"), "-R", "86401");
	USAGE(("--force-reseed", ""), "--force-reseed", "''");
	USAGE(("-e0"), "-e", "'0'", "1 to 8");
	USAGE(("-e9"), "-e", "'9'");
	USAGE(("--entropy-count=0x8"), "--entropy-count", "0x8");
}

Test(options, missing_values)
{
	USAGE(("-s"), "-s", "value is required");
	USAGE(("--random-step"), "--random-step", "value is required");
	USAGE(("-x"), "-x", "value is required");
	USAGE(("-O"), "-O", "value is required");
	USAGE(("--plugin-dir"), "--plugin-dir", "value is required");
	USAGE(("--control-socket"), "--control-socket", "value is required");
}

Test(options, empty_paths)
{
	USAGE(("-o", ""), "-o", "empty");
	USAGE(("--random-device="), "--random-device", "empty");
	USAGE(("-r", ""), "-r", "empty");
	USAGE(("-p", ""), "-p", "empty");
	USAGE(("--plugin-dir="), "--plugin-dir", "empty");
	USAGE(("--control-socket", ""), "--control-socket", "empty");
}

Test(options, bad_source_options)
{
	USAGE(("-O", "hwrng:"), "-O", "'hwrng:'", "SOURCE:KEY:VALUE");
	USAGE(("-O", "hwrng:device"), "-O", "'hwrng:device'", "SOURCE:KEY:VALUE");
	USAGE(("-O", ":device:/dev/x"), "-O", "SOURCE:KEY:VALUE");
	USAGE(("-O", "hwrng::x"), "-O", "SOURCE:KEY:VALUE");
	USAGE(("-O", ""), "-O", "''");
	USAGE(("--option=Hwrng:device:x"), "--option", "source name");
	USAGE(("-O", "hwrng:Dev-ice:x"), "-O", "key");
	USAGE(("-O", "hw rng"), "-O", "'hw rng'");
	USAGE(("-O", "file:entropy:"), "-O", "entropy", "0 to 16");
	USAGE(("-O", "file:entropy:lots"), "-O", "entropy");
	USAGE(("-O", "file:entropy:-2"), "-O", "entropy");
	USAGE(("-O", "file:entropy:17"), "-O", "entropy");
}

Test(options, stall_timeout_and_repeat_test)
{
	unsigned secs = 99;

	PARSE_OK("-O", "file:stall_timeout:0", "-O", "hwrng:stall_timeout:86400",
	    "--no-repeat-test");
	cr_assert_eq(cfg.n_options, 2);
	cr_assert_str_eq(cfg.options[0].key, OPTIONS_STALL_TIMEOUT_KEY);
	cr_assert(cfg.no_repeat_test);
	options_free(&cfg);
	PARSE_OK("-f");
	cr_assert(!cfg.no_repeat_test, "the repeat test is on by default");
	options_free(&cfg);
	cr_assert_eq(options_stall_timeout("30", &secs), 0);
	cr_assert_eq(secs, 30);
	cr_assert_eq(options_stall_timeout("86401", &secs), -1);
	cr_assert_eq(options_stall_timeout("1.5", &secs), -1);
	cr_assert_eq(options_stall_timeout("-1", &secs), -1);
	cr_assert_eq(options_stall_timeout("", &secs), -1);
	USAGE(("-O", "file:stall_timeout:soon"), "-O", "stall_timeout", "0 (never) to 86400");
	USAGE(("-O", "file:stall_timeout:86401"), "-O", "stall_timeout");
	USAGE(("-O", "file:stall_timeout:"), "-O", "stall_timeout");
}

Test(options, bad_source_names)
{
	USAGE(("-x", ""), "-x", "''");
	USAGE(("-x", "TPM"), "-x", "'TPM'");
	USAGE(("--include", "file,hwrng"), "--include", "'file,hwrng'");
}

Test(options, bad_drop_privileges)
{
	USAGE(("-D", "nobody"), "-D", "'nobody'", "USER:GROUP");
	USAGE(("-D", ":grp"), "-D", "USER:GROUP");
	USAGE(("-D", "usr:"), "-D", "USER:GROUP");
	USAGE(("--drop-privileges=a:b:c"), "--drop-privileges", "'a:b:c'");
	USAGE(("-D", ""), "-D");
}

Test(options, unknown_options)
{
	USAGE(("--bogus"), "unrecognized option '--bogus'");
	USAGE(("--bogus=1"), "unrecognized option '--bogus'");
	USAGE(("-z"), "unrecognized option '-z'");
	USAGE(("-fz"), "unrecognized option '-z'");
	USAGE(("--quiet", "-zf"), "unrecognized option '-z'");
	USAGE(("-:"), "unrecognized option '-:'");
	USAGE(("--foreground=yes"), "--foreground", "does not take a value");
	USAGE(("--f"), "'--f'", "ambiguous");
}

Test(options, abbreviated_long_options)
{
	PARSE_OK("--ignore", "--rng=/dev/x", "--plugin=/p");
	cr_assert(cfg.ignorefail);
	cr_assert_eq(cfg.n_options, 1);
	cr_assert_str_eq(cfg.options[0].value, "/dev/x");
	cr_assert_str_eq(cfg.plugin_dir, "/p");
}

Test(options, positional_arguments)
{
	USAGE(("foo"), "unexpected argument 'foo'");
	USAGE(("-f", "bar"), "unexpected argument 'bar'");
	USAGE(("-"), "unexpected argument '-'");
	USAGE(("--", "-f"), "unexpected argument '-f'");
}

Test(options, double_dash_ends_options)
{
	PARSE_OK("-f", "--");
	cr_assert(cfg.foreground);
}

Test(options, repeated_parsing_resets_getopt)
{
	int i;

	/* A failure in the middle of a cluster leaves getopt mid-argument:
	 * the next parse must start clean anyway. */
	USAGE(("-fzq"), "'-z'");
	for (i = 0; i < 3; i++) {
		PARSE_OK("-q", "-s", "32", "-x", "tpm");
		cr_assert_eq(cfg.verbose, -1);
		cr_assert_eq(cfg.random_step_bytes, 32);
		cr_assert_eq(cfg.n_exclude, 1);
		options_free(&cfg);
		PARSE_OK(NULL);
		cr_assert_eq(cfg.verbose, 0, "a fresh parse keeps nothing from the last");
		cr_assert_eq(cfg.random_step_bytes, 64);
		cr_assert_eq(cfg.n_exclude, 0);
		options_free(&cfg);
	}
}

Test(options, free_zeroes_and_is_idempotent)
{
	PARSE_OK("-x", "a", "-n", "b", "-O", "c:d:e", "-O", "c", "-p", "p", "-D", "u:g");
	options_free(&cfg);
	cr_assert_null(cfg.exclude);
	cr_assert_null(cfg.include);
	cr_assert_null(cfg.options);
	cr_assert_null(cfg.show_options);
	cr_assert_null(cfg.random_device);
	cr_assert_null(cfg.pid_file);
	cr_assert_eq(cfg.n_options, 0);
	options_free(&cfg);
}

Test(options, strings_are_copies)
{
	char path[] = "/tmp/one";
	char *argv[] = { (char *)"entropyd", (char *)"-o", path, NULL };

	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), 0);
	path[1] = 'X';
	cr_assert_str_eq(cfg.random_device, "/tmp/one");
}

Test(options, null_error_buffer)
{
	char *argv[] = { (char *)"entropyd", (char *)"--bogus", NULL };

	cr_assert_eq(options_parse(&cfg, 2, argv, NULL, 0), EX_USAGE);
}

Test(options, usage_lists_every_flag)
{
	static const char *const flags[] = { "-f, --foreground", "-b, --background",
		"-d, --debug", "-q, --quiet", "-l, --list", "-x, --exclude", "-n, --include",
		"-O, --option", "-o, --random-device", "-r, --rng-device", "-p, --pid-file",
		"-s, --random-step", "-W, --fill-watermark", "-R, --force-reseed",
		"-e, --entropy-count", "-t, --test", "-i, --ignorefail",
		"-D, --drop-privileges", "-v, --version", "-h, --help", "--plugin-dir",
		"--use-slow-sources", "--usage",
		"--control-socket", "--no-host-mix", "--no-reseed", PLUGINDIR,
		RUNDIR "/entropyd.sock", "/dev/random",
		OPTIONS_DEFAULT_PIDFILE, "64 bad flag", "77", "--egd-socket [NAME=]PATH",
		"--egd-listen ADDR:PORT", "--egd-listen-any", "--egd-group GROUP",
		"--egd-rate BYTES", "--egd-share PERCENT", "--egd-max-clients COUNT",
		"(default: 4096)", "(default: 50)", "(default: 256)", NULL };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *const *p;

	cr_assert_not_null(f);
	options_usage(f);
	fclose(f);
	for (p = flags; *p != NULL; p++)
		cr_assert_not_null(strstr(text, *p), "--help lacks '%s'", *p);
	free(text);
}

/* --health-listen (branch health): ADDR:PORT, numeric, port 1..65535. */
Test(options, health_listen)
{
	char addr[64];
	unsigned port;

	PARSE_OK(NULL);
	cr_assert_null(cfg.health_listen, "no TCP unless asked for");
	options_free(&cfg);
	PARSE_OK("--health-listen", "127.0.0.1:9181");
	cr_assert_str_eq(cfg.health_listen, "127.0.0.1:9181");
	cr_assert_eq(options_listen_addr("127.0.0.1:9181", addr, sizeof addr, &port), 0);
	cr_assert_str_eq(addr, "127.0.0.1");
	cr_assert_eq(port, 9181);
	cr_assert_eq(options_listen_addr("[::1]:80", addr, sizeof addr, &port), 0);
	cr_assert_str_eq(addr, "::1");
	cr_assert_eq(port, 80);
	options_free(&cfg);
	USAGE(("--health-listen", "localhost:80"), "--health-listen", "'localhost:80'", "ADDR:PORT");
	USAGE(("--health-listen", "127.0.0.1"), "--health-listen", "ADDR:PORT");
	USAGE(("--health-listen", "127.0.0.1:0"), "--health-listen", "65535");
	USAGE(("--health-listen", "127.0.0.1:65536"), "--health-listen");
	USAGE(("--health-listen", "::1:80"), "--health-listen");
	USAGE(("--health-listen", "[::1]80"), "--health-listen");
	USAGE(("--health-listen"), "--health-listen", "value is required");
}

/* The EGD broker: off by default; sockets NAME=PATH or PATH, TCP on loopback unless allowed. */
Test(options, egd)
{
	char name[OPTIONS_EGD_NAME_MAX + 1];
	const char *path;

	PARSE_OK(NULL);
	cr_assert_eq(cfg.n_egd_sockets, 0, "off unless asked for");
	cr_assert_eq(cfg.n_egd_listen, 0);
	cr_assert_eq(cfg.egd_rate_bytes, 4096);
	cr_assert_eq(cfg.egd_share_percent, 50);
	cr_assert_eq(cfg.egd_max_clients, 256);
	cr_assert_null(cfg.egd_group);
	options_free(&cfg);
	PARSE_OK("--egd-socket", "web1=/run/g/web1.sock", "--egd-socket", "/run/g/anon.sock",
	    "--egd-socket", "/run/a=b/c.sock", "--egd-listen", "127.0.0.1:7000",
	    "--egd-listen", "[::1]:7001", "--egd-group", "kvm", "--egd-rate", "0",
	    "--egd-share", "100", "--egd-max-clients", "65536");
	cr_assert_eq(cfg.n_egd_sockets, 3);
	cr_assert_eq(options_egd_socket(cfg.egd_sockets[0], name, &path), 0);
	cr_assert_str_eq(name, "web1");
	cr_assert_str_eq(path, "/run/g/web1.sock");
	cr_assert_eq(options_egd_socket(cfg.egd_sockets[1], name, &path), 0);
	cr_assert_str_eq(name, "");
	cr_assert_str_eq(path, "/run/g/anon.sock");
	cr_assert_eq(options_egd_socket(cfg.egd_sockets[2], name, &path), 0);
	cr_assert_str_eq(name, "", "a '/' before the '=': a path alone");
	cr_assert_str_eq(path, "/run/a=b/c.sock");
	cr_assert_eq(cfg.n_egd_listen, 2);
	cr_assert_str_eq(cfg.egd_group, "kvm");
	cr_assert_eq(cfg.egd_rate_bytes, 0);
	cr_assert_eq(cfg.egd_share_percent, 100);
	cr_assert_eq(cfg.egd_max_clients, 65536);
	options_free(&cfg);
	PARSE_OK("--egd-listen", "10.1.2.3:7000", "--egd-listen-any");
	cr_assert(cfg.egd_listen_any);
	options_free(&cfg);
	cr_assert(options_listen_loopback("127.9.9.9:1"));
	cr_assert(options_listen_loopback("[::1]:1"));
	cr_assert_not(options_listen_loopback("[::]:1"));
	cr_assert_not(options_listen_loopback("0.0.0.0:1"));
	USAGE(("--egd-listen", "10.1.2.3:7000"), "--egd-listen", "10.1.2.3:7000", "loopback",
	    "--egd-listen-any");
	USAGE(("--egd-listen", "0.0.0.0:7000"), "--egd-listen", "loopback");
	USAGE(("--egd-listen", "localhost:7000"), "--egd-listen", "ADDR:PORT");
	USAGE(("--egd-socket", ""), "--egd-socket", "[NAME=]PATH");
	USAGE(("--egd-socket", "web1="), "--egd-socket", "[NAME=]PATH");
	USAGE(("--egd-socket", "=/x"), "--egd-socket", "[NAME=]PATH");
	USAGE(("--egd-socket", "a b=/x"), "--egd-socket", "[NAME=]PATH");
	USAGE(("--egd-socket", "a=/x", "--egd-socket", "a=/y"), "--egd-socket", "'a'", "twice");
	USAGE(("--egd-group", ""), "--egd-group", "empty");
	USAGE(("--egd-rate", "-1"), "--egd-rate", "0 (no limit)");
	USAGE(("--egd-rate", "1000000001"), "--egd-rate");
	USAGE(("--egd-share", "0"), "--egd-share", "1 to 100");
	USAGE(("--egd-share", "101"), "--egd-share");
	USAGE(("--egd-max-clients", "0"), "--egd-max-clients", "1 to 65536");
	USAGE(("--egd-max-clients", "65537"), "--egd-max-clients");
	USAGE(("--egd-listen-any=1"), "--egd-listen-any", "does not take a value");
}

Test(options, usage_lists_health_listen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	options_usage(f);
	fclose(f);
	cr_assert_not_null(strstr(text, "--health-listen ADDR:PORT"));
	free(text);
}

/* rngd's rdrand source is both CPU instructions: in rngd's sense (rdseed
 * named nowhere, no -x all) rdseed follows rdrand into the same list. */
Test(options, rdrand_in_rngd_sense_takes_rdseed_along)
{
	PARSE_OK("-x", "rdrand");
	cr_assert(cfg.rdseed_follows_rdrand);
	cr_assert_eq(cfg.n_exclude, 2);
	cr_assert_str_eq(cfg.exclude[0], "rdrand");
	cr_assert_str_eq(cfg.exclude[1], "rdseed");
	cr_assert_eq(cfg.n_include, 0);
	options_free(&cfg);

	PARSE_OK("--include=rdrand", "-x", "tpm");
	cr_assert(cfg.rdseed_follows_rdrand);
	cr_assert_eq(cfg.n_include, 2);
	cr_assert_str_eq(cfg.include[1], "rdseed");
	cr_assert_eq(cfg.n_exclude, 1, "rdseed is not excluded for -n rdrand");
	options_free(&cfg);

	PARSE_OK("-x", "rdrand", "-n", "rdrand");
	cr_assert_eq(cfg.n_exclude, 2);
	cr_assert_str_eq(cfg.exclude[1], "rdseed");
	cr_assert_eq(cfg.n_include, 2);
	cr_assert_str_eq(cfg.include[1], "rdseed");
}

/* Naming rdseed anywhere, or -x all, is entropyd's own sense: rdrand alone. */
Test(options, rdrand_alone_when_rdseed_is_named_or_all_is_excluded)
{
	static const char *const lines[][6] = {
		{ "-x", "rdrand", "-n", "rdseed", NULL },
		{ "-x", "rdrand", "-x", "rdseed", NULL },
		{ "-x", "rdrand", "-O", "rdseed:entropy:4", NULL },
		{ "-x", "rdrand", "-O", "rdseed", NULL },
		{ "-x", "rdrand", "--capture", "rdseed:10:/tmp/x", NULL },
		{ "-x", "all", "-n", "rdrand", NULL },
		{ "-x", "tpm", NULL },
	};
	size_t i, j;

	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char *argv[8] = { (char *)"entropyd" };
		int argc = 1;
		size_t rdseed = 0;

		for (j = 0; lines[i][j] != NULL; j++)
			argv[argc++] = (char *)lines[i][j];
		cr_assert_eq(options_parse(&cfg, argc, argv, err, sizeof err), 0, "%s", err);
		cr_assert_not(cfg.rdseed_follows_rdrand, "line %zu", i);
		for (j = 0; j < cfg.n_exclude; j++)
			rdseed += strcmp(cfg.exclude[j], "rdseed") == 0;
		for (j = 0; j < cfg.n_include; j++)
			rdseed += strcmp(cfg.include[j], "rdseed") == 0;
		cr_assert_leq(rdseed, 1, "line %zu: rdseed added", i);
		options_free(&cfg);
	}
}

/* rngd 6 also took source numbers, whose meaning changed between its
 * versions: refused with a pointer to the names. */
Test(options, rngd_source_numbers_refused)
{
	USAGE(("-x", "2"), "-x", "'2'", "rngd source number", "entropyd -l");
	USAGE(("--include", "0"), "--include", "'0'", "rngd source number");
	PARSE_OK("-x", "usb2", "-n", "tpm0x");
}

/* rngd 6 long options with an equivalent here are taken. */
Test(options, rngd6_long_options)
{
	PARSE_OK("--use-slow-sources", "--pid-file=/run/x.pid", "--force-reseed", "30",
	    "--entropy-count", "4", "--drop-privileges", "u:g", "--ignorefail", "--debug");
	cr_assert_str_eq(cfg.pid_file, "/run/x.pid");
	cr_assert_eq(cfg.reseed_interval_s, 30);
	cr_assert_eq(cfg.entropy_count_bits, 4);
	cr_assert_str_eq(cfg.drop_privileges, "u:g");
	cr_assert(cfg.ignorefail);
	cr_assert_eq(cfg.verbose, 1);
	options_free(&cfg);
	PARSE_OK("--usage");
	cr_assert(cfg.help, "--usage is --help");
	options_free(&cfg);
	USAGE(("--use-slow-sources=1"), "does not take a value");
	USAGE(("--us"), "ambiguous");
}

/* --refill-bits: what is fed after a VM generation change, 256..65536 bits. */
Test(options, refill_bits)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	PARSE_OK(NULL);
	cr_assert_eq(cfg.refill_bits, 2048, "as large as the start-up burst by default");
	options_free(&cfg);
	PARSE_OK("--refill-bits", "256");
	cr_assert_eq(cfg.refill_bits, 256);
	options_free(&cfg);
	PARSE_OK("--refill-bits=65536");
	cr_assert_eq(cfg.refill_bits, 65536);
	options_free(&cfg);
	USAGE(("--refill-bits", "255"), "--refill-bits", "'255'", "256 to 65536");
	USAGE(("--refill-bits", "65537"), "--refill-bits", "'65537'");
	USAGE(("--refill-bits", "2k"), "--refill-bits", "'2k'");
	USAGE(("--refill-bits"), "--refill-bits", "value is required");
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	options_usage(f);
	fclose(f);
	cr_assert_not_null(strstr(text, "--refill-bits BITS"));
	cr_assert_not_null(strstr(text, "SIGUSR2"));
	free(text);
}

Test(options, capture_restarts)
{
	PARSE_OK("--capture-restarts", "jitter:/tmp/r:1.bin");
	cr_assert(cfg.capture_restarts);
	cr_assert_str_eq(cfg.capture_source, "jitter");
	cr_assert_str_eq(cfg.capture_path, "/tmp/r:1.bin", "the path may hold ':'");
	cr_assert_eq(cfg.capture_count, 1000000, "1000 restarts of 1000 samples");
	options_free(&cfg);
	USAGE(("--capture-restarts", "jitter"), "--capture-restarts", "SOURCE:PATH");
	USAGE(("--capture-restarts", "jitter:"), "--capture-restarts", "SOURCE:PATH");
	USAGE(("--capture-restarts", "Jitter:/tmp/r"), "lower-case");
	USAGE(("--capture", "jitter:10:/tmp/c", "--capture-restarts", "jitter:/tmp/r"),
	    "one capture at a time");
	USAGE(("--capture-restarts", "jitter:/tmp/r", "--capture", "jitter:10:/tmp/c"),
	    "one capture at a time");
}
