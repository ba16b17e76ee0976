/* SPDX-License-Identifier: MIT */
/*
 * The built-in hwrng and file sources, driven through a fake host table
 * exactly as the daemon drives them: probe, open, pollfd, read, close.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <entropyd/source.h>
#include "builtin.h"
#include "hwrng.h"
#include "fake_host.h"

static char test_dir[256];

/* A path inside the test's scratch directory (a static buffer per slot). */
static const char *
test_path(int slot, const char *name)
{
	static char paths[4][4096];

	snprintf(paths[slot], sizeof paths[slot], "%s/%s", test_dir, name);
	return paths[slot];
}

/* Create a file with the given bytes. */
static void
test_write_file(const char *path, const void *data, size_t len)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cr_assert_neq(fd, -1, "create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* Probe src with option key set to path: no instance, and "PATH: reason" why. */
static void
test_unusable_at(const struct entropyd_source *src, const char *key, const char *path,
    const char *reason)
{
	char want[4200];

	fake_set_option(key, path);
	cr_assert_eq(fake_probe(src), 0);
	cr_assert_eq(fake_n_instances, 0);
	snprintf(want, sizeof want, "%s: %s", path, reason);
	cr_assert_str_eq(fake_unusable, want);
}

/* Poll one fd for input for up to ms milliseconds; the revents, or 0. */
static short
test_poll(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	n = poll(&pfd, 1, ms);
	cr_assert_neq(n, -1, "poll: %s", strerror(errno));
	return n == 0 ? 0 : pfd.revents;
}

static int
test_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

/* A fresh scratch directory per test. */
static void
test_setup(void)
{
	snprintf(test_dir, sizeof test_dir, "%s/entropyd-sources.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	cr_assert_not_null(mkdtemp(test_dir), "mkdtemp: %s", strerror(errno));
}

static void
test_teardown(void)
{
	if (getuid() == 0 && geteuid() != 0)
		(void)seteuid(0);
	nftw(test_dir, test_rm, 8, FTW_DEPTH | FTW_PHYS);
}

/* Does the descriptor declare this option? Its default, or "(unset)". */
static const char *
test_option_default(const struct entropyd_source *source, const char *key)
{
	const struct entropyd_option *o;

	for (o = source->options; o != NULL && o->key != NULL; o++)
		if (strcmp(o->key, key) == 0)
			return o->default_value != NULL ? o->default_value : "(unset)";
	return NULL;
}

TestSuite(hwrng, .init = test_setup, .fini = test_teardown, .timeout = 20);
TestSuite(file, .init = test_setup, .fini = test_teardown, .timeout = 20);

Test(hwrng, descriptor)
{
	cr_assert_eq(hwrng_source.abi_major, ENTROPYD_SOURCE_ABI_MAJOR);
	cr_assert_eq(hwrng_source.abi_minor, ENTROPYD_SOURCE_ABI_MINOR);
	cr_assert_eq(hwrng_source.size, sizeof(struct entropyd_source));
	cr_assert_str_eq(hwrng_source.name, "hwrng");
	cr_assert(hwrng_source.flags & ENTROPYD_SOURCE_DEFAULT_ON);
	cr_assert_not(hwrng_source.flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST);
	cr_assert(hwrng_source.entropy_bits > 0.0 && hwrng_source.entropy_bits <= 8.0);
	cr_assert_str_eq(test_option_default(&hwrng_source, "device"), "/dev/hwrng");
	cr_assert_str_eq(test_option_default(&hwrng_source, "rng_current"),
	    "/sys/class/misc/hw_random/rng_current");
	cr_assert_null(test_option_default(&hwrng_source, "entropy"));
}

Test(hwrng, rng_current_none_is_unusable)
{
	test_write_file(test_path(0, "rng_current"), "none\n", 5);
	fake_set_option("rng_current", test_path(0, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert_eq(fake_n_unusable, 1);
	cr_assert_str_eq(fake_unusable, "no hardware RNG is current (rng_current: none)");
}

Test(hwrng, rng_current_empty_is_unusable)
{
	test_write_file(test_path(0, "rng_current"), "\n", 1);
	fake_set_option("rng_current", test_path(0, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert_str_eq(fake_unusable, "no hardware RNG is current (rng_current: empty)");
}

Test(hwrng, missing_device_is_unusable)
{
	fake_set_option("rng_current", test_path(1, "no-rng_current"));
	test_unusable_at(&hwrng_source, "device", test_path(0, "missing"),
	    "No such file or directory");
}

Test(hwrng, directory_is_unusable)
{
	test_unusable_at(&hwrng_source, "device", test_dir, "Is a directory");
}

Test(hwrng, unreadable_device_is_unusable)
{
	const char *device = test_path(0, "device");

	test_write_file(device, "x", 1);
	cr_assert_eq(chmod(device, 0), 0);
	if (geteuid() == 0) {
		/* root reads anything: become nobody for this (forked) test. */
		cr_assert_eq(chmod(test_dir, 0755), 0);
		cr_assert_eq(seteuid(65534), 0, "seteuid: %s", strerror(errno));
	}
	test_unusable_at(&hwrng_source, "device", device, "Permission denied");
}

Test(hwrng, empty_device_option_fails_configure)
{
	char err[256] = "";

	fake_set_option("device", "");
	fake_module.source = &hwrng_source;
	cr_assert_eq(hwrng_source.configure(&fake_module, fake_host(), err, sizeof err), -1);
	cr_assert_str_eq(err, "hwrng: empty device (use -O hwrng:device:PATH or -r PATH)");
}

Test(hwrng, regular_file_reads_then_eof_is_an_error)
{
	const char *device = test_path(0, "device");
	unsigned char data[64], buf[256];
	void *state = NULL;
	size_t i;

	for (i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 37 + 11);
	test_write_file(device, data, sizeof data);
	/* Another device given with -r does not depend on the kernel's hwrng. */
	test_write_file(test_path(1, "rng_current"), "none\n", 5);
	fake_set_option("device", device);
	fake_set_option("rng_current", test_path(1, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_eq(fake_n_unusable, 0, "unusable: %s", fake_unusable);
	cr_assert_eq(fake_n_instances, 1);
	cr_assert_str_eq(fake_instances[0].id, "");
	cr_assert_str_eq(fake_instances[0].device, device);

	cr_assert_eq(hwrng_source.open(&fake_instances[0], &state), 0);
	cr_assert_not_null(state);
	cr_assert_eq(hwrng_source.pollfd(state), -1);
	cr_assert_eq(hwrng_source.read(state, buf, sizeof buf), (ssize_t)sizeof data);
	cr_assert_arr_eq(buf, data, sizeof data);
	errno = 0;
	cr_assert_eq(hwrng_source.read(state, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EIO);
	cr_assert_not_null(strstr(fake_log, device), "log: %s", fake_log);
	cr_assert_not_null(strstr(fake_log, "end of file"), "log: %s", fake_log);
	hwrng_source.close(state);
}

Test(hwrng, read_error_keeps_errno)
{
	unsigned char buf[16];
	void *state = NULL;
	char want[4200];

	/* probe refuses a directory; open() does not look, read() fails. */
	fake_set_option("device", test_dir);
	fake_module.source = &hwrng_source;
	fake_probe(&hwrng_source);
	fake_host()->add_instance(&fake_module, "", test_dir, NULL);

	cr_assert_eq(hwrng_source.open(&fake_instances[0], &state), 0);
	errno = 0;
	cr_assert_eq(hwrng_source.read(state, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EISDIR);
	snprintf(want, sizeof want, "3 hwrng: %s: read: Is a directory\n", test_dir);
	cr_assert_not_null(strstr(fake_log, want), "log: %s", fake_log);
	hwrng_source.close(state);
}

Test(hwrng, open_failure_is_logged)
{
	void *state = NULL;
	char want[4200];

	fake_set_option("device", test_path(0, "device"));
	test_write_file(test_path(0, "device"), "x", 1);
	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_eq(unlink(test_path(0, "device")), 0);

	errno = 0;
	cr_assert_eq(hwrng_source.open(&fake_instances[0], &state), -1);
	cr_assert_eq(errno, ENOENT);
	snprintf(want, sizeof want, "3 hwrng: %s: open: No such file or directory\n",
	    test_path(0, "device"));
	cr_assert_str_eq(fake_log, want);
}

static void
test_on_signal(int sig)
{
}

/* A blocking read run in a thread, so the test can interrupt it. */
struct test_reader {
	const struct entropyd_source *source;
	void *state;
	unsigned char buf[64];
	ssize_t result;
	int saved_errno;
	volatile bool done;
};

static void *
test_reader_run(void *arg)
{
	struct test_reader *r = arg;

	r->result = r->source->read(r->state, r->buf, sizeof r->buf);
	r->saved_errno = errno;
	r->done = true;
	return NULL;
}

/* Install a handler without SA_RESTART, so a blocked read() sees EINTR. */
static void
test_catch_sigusr1(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = test_on_signal;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
}

/*
 * Wait up to wait_ms for the reader; if signal_ms >= 0, signal it every
 * signal_ms meanwhile (a signal sent before it blocks would be lost).
 */
static bool
test_reader_wait(pthread_t thread, struct test_reader *r, int wait_ms, int signal_ms)
{
	struct timespec pause = { 0, 10 * 1000000 };
	int waited_ms;

	for (waited_ms = 0; waited_ms < wait_ms && !r->done; waited_ms += 10) {
		if (signal_ms > 0 && waited_ms > 0 && waited_ms % signal_ms == 0)
			pthread_kill(thread, SIGUSR1);
		nanosleep(&pause, NULL);
	}
	return r->done;
}

Test(hwrng, signal_interrupts_a_blocked_read)
{
	const char *device = test_path(0, "fifo");
	struct test_reader r = { .source = &hwrng_source };
	pthread_t thread;
	int writer;
	bool stopped;

	test_catch_sigusr1();
	cr_assert_eq(mkfifo(device, 0600), 0);
	/* Hold the FIFO open for writing, so reads block instead of ending. */
	writer = open(device, O_RDWR | O_CLOEXEC);
	cr_assert_neq(writer, -1);
	fake_set_option("device", device);
	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_eq(hwrng_source.open(&fake_instances[0], &r.state), 0);

	/* Data first: read() returns what is there. */
	cr_assert_eq(write(writer, "abc", 3), 3);
	cr_assert_eq(hwrng_source.read(r.state, r.buf, sizeof r.buf), 3);
	cr_assert_arr_eq(r.buf, "abc", 3);

	/* Then nothing: read() blocks until the daemon's signal. */
	cr_assert_eq(pthread_create(&thread, NULL, test_reader_run, &r), 0);
	cr_assert_not(test_reader_wait(thread, &r, 100, -1), "read did not block");
	stopped = test_reader_wait(thread, &r, 3000, 50);
	if (!stopped) {
		/* It loops on EINTR: feed it so the thread can end, then fail. */
		cr_assert_eq(write(writer, "x", 1), 1);
		pthread_join(thread, NULL);
		cr_assert_fail("read() did not return on a signal");
	}
	pthread_join(thread, NULL);
	cr_assert_eq(r.result, ENTROPYD_READ_AGAIN);
	hwrng_source.close(r.state);
	close(writer);
}

/* The real kernel device, where there is one and we may read it. */
static void
test_need_real_hwrng(void)
{
	char current[128] = "", why[256] = "";
	FILE *f;
	int fd;

	if (access("/dev/hwrng", F_OK) == -1)
		snprintf(why, sizeof why, "no /dev/hwrng on this machine");
	else if ((f = fopen("/sys/class/misc/hw_random/rng_current", "r")) != NULL) {
		if (fgets(current, sizeof current, f) == NULL)
			current[0] = '\0';
		fclose(f);
		current[strcspn(current, "\n")] = '\0';
		if (current[0] == '\0' || strcmp(current, "none") == 0)
			snprintf(why, sizeof why, "no hardware RNG is current (rng_current: %s)",
			    current[0] != '\0' ? current : "empty");
	}
	if (why[0] == '\0') {
		if ((fd = open("/dev/hwrng", O_RDONLY | O_CLOEXEC)) == -1)
			snprintf(why, sizeof why, "cannot open /dev/hwrng (%s): needs root",
			    strerror(errno));
		else
			close(fd);
	}
	if (why[0] != '\0') {
		/* A skipped test does not reach .fini: clean up here. */
		test_teardown();
		cr_skip_test("%s", why);
	}
}

Test(hwrng, real_device)
{
	struct test_reader r = { .source = &hwrng_source };
	char current[128] = "", want[256];
	pthread_t thread;
	FILE *f;

	test_need_real_hwrng();
	test_catch_sigusr1();
	if ((f = fopen("/sys/class/misc/hw_random/rng_current", "r")) != NULL) {
		if (fgets(current, sizeof current, f) == NULL)
			current[0] = '\0';
		fclose(f);
		current[strcspn(current, "\n")] = '\0';
	}

	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_eq(fake_n_instances, 1);
	cr_assert_str_eq(fake_instances[0].id, "");
	cr_assert_str_eq(fake_instances[0].device, "/dev/hwrng");
	if (current[0] != '\0') {
		snprintf(want, sizeof want, "6 hwrng: current hwrng: %s", current);
		cr_assert_not_null(strstr(fake_log, want), "log: %s", fake_log);
	}

	cr_assert_eq(hwrng_source.open(&fake_instances[0], &r.state), 0);
	cr_assert_eq(hwrng_source.pollfd(r.state), -1);
	cr_assert_eq(pthread_create(&thread, NULL, test_reader_run, &r), 0);
	if (!test_reader_wait(thread, &r, 5000, -1)) {
		/* Stop it the way the daemon does, then fail. */
		test_reader_wait(thread, &r, 2000, 50);
		cr_assert(r.done, "read blocked and ignored signals");
		pthread_join(thread, NULL);
		cr_assert_fail("no bytes from /dev/hwrng within 5 s");
	}
	pthread_join(thread, NULL);
	cr_assert_gt(r.result, 0, "read: %zd (%s)", r.result, strerror(r.saved_errno));
	hwrng_source.close(r.state);
}

Test(hwrng, kernel_quality_sets_the_credit)
{
	test_need_real_hwrng();
	/* The real device, with a fake sysfs directory next to it. */
	test_write_file(test_path(0, "rng_current"), "fake_rng.0\n", 11);
	test_write_file(test_path(1, "rng_quality"), "512\n", 4);
	fake_set_option("rng_current", test_path(0, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_not_null(strstr(fake_log,
	    "6 hwrng: current hwrng: fake_rng.0 (kernel quality 512/1024): 4 bits per byte, "
	    "the quality its kernel driver declares (rng_quality)\n"), "log: %s", fake_log);
	cr_assert_float_eq(fake_instances[0].limit_bits, 4.0, 1e-12);
}

Test(hwrng, a_tpm_behind_it_is_credited_as_the_tpm)
{
	test_need_real_hwrng();
	test_write_file(test_path(0, "rng_current"), "tpm-rng-0\n", 10);
	test_write_file(test_path(1, "rng_quality"), "1024\n", 5);
	fake_set_option("rng_current", test_path(0, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_float_eq(fake_instances[0].limit_bits, HWRNG_TPM_BITS, 1e-12);
	cr_assert_not_null(strstr(fake_log, "current hwrng: tpm-rng-0 (kernel quality "
	    "1024/1024): 0 bits per byte, a TPM's DRBG"), "log: %s", fake_log);
}

Test(hwrng, credit_policy)
{
	const char *why;

	/* A TPM: the tpm source's figure, nothing unless vouched for there. */
	cr_expect(tpm_source.flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST);
	cr_expect_float_eq(hwrng_policy_bits("tpm-rng-0", 1024, &why), 0.0, 1e-12);
	cr_expect_float_eq(hwrng_policy_bits("tpm-rng-3", -1, &why), 0.0, 1e-12);
	cr_expect_not_null(strstr(why, "tpm"), "%s", why);
	/* virtio-rng: the host's generator, full credit whatever the quality says. */
	cr_expect_float_eq(hwrng_policy_bits("virtio_rng.0", 1024, &why), 8.0, 1e-12);
	cr_expect_float_eq(hwrng_policy_bits("virtio_rng.1", -1, &why), 8.0, 1e-12);
	/* Other hardware: what its driver declares. */
	cr_expect_float_eq(hwrng_policy_bits("bcm2835-rng", 1024, &why), 8.0, 1e-12);
	cr_expect_float_eq(hwrng_policy_bits("omap-rng", 700, &why), 700 * 8.0 / 1024, 1e-12);
	cr_expect_float_eq(hwrng_policy_bits("intel-rng", 0, &why), 0.0, 1e-12);
	cr_expect_float_eq(hwrng_policy_bits("amd-rng", -1, &why), 8.0, 1e-12,
	    "a kernel without rng_quality: as rngd assumes");
}

Test(hwrng, kernel_node_under_another_name_follows_rng_current)
{
	const char *link = test_path(0, "hwrng");

	/* Only stat() is needed here: the node's numbers make it the kernel's. */
	if (access("/dev/hwrng", F_OK) == -1) {
		test_teardown();
		cr_skip_test("no /dev/hwrng on this machine");
	}
	cr_assert_eq(symlink("/dev/hwrng", link), 0);
	test_write_file(test_path(1, "rng_current"), "none\n", 5);
	fake_set_option("device", link);
	fake_set_option("rng_current", test_path(1, "rng_current"));

	cr_assert_eq(fake_probe(&hwrng_source), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert_str_eq(fake_unusable, "no hardware RNG is current (rng_current: none)");
}

Test(file, descriptor)
{
	cr_assert_eq(file_source.abi_major, ENTROPYD_SOURCE_ABI_MAJOR);
	cr_assert_eq(file_source.abi_minor, ENTROPYD_SOURCE_ABI_MINOR);
	cr_assert_eq(file_source.size, sizeof(struct entropyd_source));
	cr_assert_str_eq(file_source.name, "file");
	cr_assert_not(file_source.flags & ENTROPYD_SOURCE_DEFAULT_ON);
	cr_assert(file_source.flags & ENTROPYD_SOURCE_CREDIT_ON_REQUEST);
	cr_assert_float_eq(file_source.entropy_bits, 8.0, 1e-9);
	cr_assert_str_eq(test_option_default(&file_source, "path"), "(unset)");
	cr_assert_null(test_option_default(&file_source, "entropy"));
}

Test(file, configure_needs_a_path)
{
	char err[256] = "";

	fake_module.source = &file_source;
	cr_assert_eq(file_source.configure(&fake_module, fake_host(), err, sizeof err), -1);
	cr_assert_str_eq(err, "file: no path given (use -O file:path:PATH)");

	fake_set_option("path", "");
	err[0] = '\0';
	cr_assert_eq(file_source.configure(&fake_module, fake_host(), err, sizeof err), -1);
	cr_assert_str_eq(err, "file: no path given (use -O file:path:PATH)");
}

Test(file, configure_accepts_a_path)
{
	char err[256] = "";

	fake_set_option("path", "/anything");
	fake_module.source = &file_source;
	cr_assert_eq(file_source.configure(&fake_module, fake_host(), err, sizeof err), 0);
	cr_assert_str_eq(err, "");
}

Test(file, probe_without_path_is_unusable)
{
	fake_module.source = &file_source;
	cr_assert_eq(file_source.probe(&fake_module, fake_host()), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert_str_eq(fake_unusable, "no path given (use -O file:path:PATH)");
}

Test(file, missing_path_is_unusable)
{
	test_unusable_at(&file_source, "path", test_path(0, "missing"),
	    "No such file or directory");
}

Test(file, directory_is_unusable)
{
	test_unusable_at(&file_source, "path", test_dir, "a directory, not a regular file or FIFO");
}

Test(file, character_device_is_unusable)
{
	test_unusable_at(&file_source, "path", "/dev/null",
	    "a character device, not a regular file or FIFO");
}

Test(file, regular_file_reads_to_eof)
{
	const char *path = test_path(0, "data");
	unsigned char data[100], buf[100];
	void *state = NULL;
	size_t got = 0;
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(255 - i * 3);
	test_write_file(path, data, sizeof data);
	fake_set_option("path", path);

	cr_assert_eq(fake_probe(&file_source), 1);
	cr_assert_eq(fake_n_unusable, 0, "unusable: %s", fake_unusable);
	cr_assert_str_eq(fake_instances[0].id, "");
	cr_assert_str_eq(fake_instances[0].device, path);
	cr_assert_eq(file_source.open(&fake_instances[0], &state), 0);
	cr_assert_eq(file_source.pollfd(state), -1);
	/* In odd-sized pieces, as a reader with a small buffer would. */
	while (got < sizeof data) {
		n = file_source.read(state, buf + got, 7);
		cr_assert_gt(n, 0, "read at %zu: %zd", got, n);
		cr_assert_leq((size_t)n, 7);
		got += (size_t)n;
	}
	cr_assert_arr_eq(buf, data, sizeof data);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), ENTROPYD_READ_EOF);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), ENTROPYD_READ_EOF);
	cr_assert_str_eq(fake_log, "");
	file_source.close(state);
}

Test(file, replaced_by_a_directory_fails_open)
{
	const char *path = test_path(0, "data");
	void *state = NULL;
	char want[4200];

	test_write_file(path, "x", 1);
	fake_set_option("path", path);
	cr_assert_eq(fake_probe(&file_source), 1);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0700), 0);

	errno = 0;
	cr_assert_eq(file_source.open(&fake_instances[0], &state), -1);
	cr_assert_eq(errno, EINVAL);
	snprintf(want, sizeof want, "3 file: %s: a directory, not a regular file or FIFO\n", path);
	cr_assert_str_eq(fake_log, want);
}

Test(file, fifo_stream)
{
	const char *path = test_path(0, "fifo");
	unsigned char buf[64];
	void *state = NULL;
	int fd, writer;

	cr_assert_eq(mkfifo(path, 0600), 0);
	fake_set_option("path", path);
	cr_assert_eq(fake_probe(&file_source), 1);
	cr_assert_str_eq(fake_instances[0].device, path);

	/* Opening with no writer must not block (the suite's timeout catches it). */
	cr_assert_eq(file_source.open(&fake_instances[0], &state), 0);
	fd = file_source.pollfd(state);
	cr_assert_geq(fd, 0);
	cr_assert_eq(test_poll(fd, 50), 0, "a FIFO with no writer yet is quiet");

	/* A writer connects but has not written: nothing now. */
	writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_neq(writer, -1, "open writer: %s", strerror(errno));
	cr_assert_eq(test_poll(fd, 50), 0);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), ENTROPYD_READ_AGAIN);

	/* It writes: poll wakes and read returns the bytes. */
	cr_assert_eq(write(writer, "entropy", 7), 7);
	cr_assert(test_poll(fd, 1000) & POLLIN);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), 7);
	cr_assert_arr_eq(buf, "entropy", 7);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), ENTROPYD_READ_AGAIN);

	/* It goes away: poll reports the hang-up and read asks for a reopen. */
	close(writer);
	cr_assert(test_poll(fd, 1000) & POLLHUP);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), ENTROPYD_READ_REOPEN);

	/* Reopened, the FIFO is quiet again until the next writer. */
	file_source.close(state);
	state = NULL;
	cr_assert_eq(file_source.open(&fake_instances[0], &state), 0);
	fd = file_source.pollfd(state);
	cr_assert_geq(fd, 0);
	cr_assert_eq(test_poll(fd, 50), 0, "a reopened FIFO reports a hang-up");
	writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_neq(writer, -1);
	cr_assert_eq(write(writer, "again", 5), 5);
	cr_assert(test_poll(fd, 1000) & POLLIN);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), 5);
	cr_assert_arr_eq(buf, "again", 5);
	close(writer);
	file_source.close(state);
	cr_assert_str_eq(fake_log, "");
}

/* A writer blocked in open() until a reader arrives. */
struct test_writer {
	const char *path;
	int fd;
	volatile bool opened;
};

static void *
test_writer_run(void *arg)
{
	struct test_writer *w = arg;

	w->fd = open(w->path, O_WRONLY | O_CLOEXEC);
	w->opened = true;
	return NULL;
}

Test(file, probe_leaves_a_waiting_writer_alone)
{
	struct test_writer w = { .path = test_path(0, "fifo"), .fd = -1 };
	struct timespec pause = { 0, 100 * 1000000 };
	pthread_t thread;
	unsigned char buf[8];
	void *state = NULL;
	int fd;

	cr_assert_eq(mkfifo(w.path, 0600), 0);
	fake_set_option("path", w.path);
	cr_assert_eq(pthread_create(&thread, NULL, test_writer_run, &w), 0);
	nanosleep(&pause, NULL);
	cr_assert_not(w.opened);

	/* Probing must not open the FIFO: that would wake the writer. */
	cr_assert_eq(fake_probe(&file_source), 1);
	nanosleep(&pause, NULL);
	cr_assert_not(w.opened, "probe woke a writer waiting on the FIFO");

	/* Opening the source does, and its bytes arrive. */
	cr_assert_eq(file_source.open(&fake_instances[0], &state), 0);
	pthread_join(thread, NULL);
	cr_assert_neq(w.fd, -1, "writer open: %s", strerror(errno));
	cr_assert_eq(write(w.fd, "ok", 2), 2);
	fd = file_source.pollfd(state);
	cr_assert(test_poll(fd, 1000) & POLLIN);
	cr_assert_eq(file_source.read(state, buf, sizeof buf), 2);
	close(w.fd);
	file_source.close(state);
}

/*
 * A VM generation change: the kernel's hwrng buffers (at most 128 bytes) may
 * hold bytes read before it, so the next 128 bytes are dropped, even across
 * reads, and the rest is handed on in order.
 */
Test(hwrng, forget_drops_what_the_kernel_may_have_buffered)
{
	const char *device = test_path(0, "device");
	unsigned char data[1000], buf[1000];
	void *state = NULL;
	size_t i;

	for (i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 37 + 11);
	test_write_file(device, data, sizeof data);
	test_write_file(test_path(1, "rng_current"), "none\n", 5);
	fake_set_option("device", device);
	fake_set_option("rng_current", test_path(1, "rng_current"));
	cr_assert(ENTROPYD_SOURCE_HAS(&hwrng_source, forget) && hwrng_source.forget != NULL);
	cr_assert_eq(fake_probe(&hwrng_source), 1);
	cr_assert_eq(hwrng_source.open(&fake_instances[0], &state), 0);
	cr_assert_eq(hwrng_source.read(state, buf, 100), 100);
	cr_assert_arr_eq(buf, data, 100);
	hwrng_source.forget(state);
	/* 100 come in, all dropped; the read goes on: 28 more dropped, 72 handed out. */
	cr_assert_eq(hwrng_source.read(state, buf, 100), 72,
	    "a read of only dropped bytes reads on instead of handing out nothing");
	cr_assert_arr_eq(buf, data + 228, 72);
	cr_assert_eq(hwrng_source.read(state, buf, 300), 300, "nothing more is dropped");
	cr_assert_arr_eq(buf, data + 300, 300);
	hwrng_source.close(state);
}
