/* SPDX-License-Identifier: MIT */
/*
 * vmclock's structure as the device's read() gives it, from files holding
 * it (this machine's QEMU has no vmclock device): the VM generation counter
 * where the flags and size say it is there, and every way it may not be;
 * then the watcher on a loop, reading a file named as the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "log.h"
#include "vmclock.h"

/* A page as the hypervisor fills it: little-endian, version 1. */
static void
page(uint8_t *p, size_t len, uint32_t size, uint64_t flags, uint32_t seq, uint64_t counter)
{
	size_t i;

	memset(p, 0, len);
	for (i = 0; i < 4; i++) {
		p[VMCLOCK_OFF_MAGIC + i] = (uint8_t)(VMCLOCK_MAGIC >> (8 * i));
		p[VMCLOCK_OFF_SIZE + i] = (uint8_t)(size >> (8 * i));
		p[VMCLOCK_OFF_SEQ_COUNT + i] = (uint8_t)(seq >> (8 * i));
	}
	p[VMCLOCK_OFF_VERSION] = 1;
	for (i = 0; i < 8; i++) {
		p[VMCLOCK_OFF_FLAGS + i] = (uint8_t)(flags >> (8 * i));
		p[VMCLOCK_OFF_VM_GENERATION_COUNTER + i] = (uint8_t)(counter >> (8 * i));
	}
	/* The fields in between hold a clock's values: none of them is read. */
	memset(p + 40, 0x5a, 64);
}

/* Write a page into a file and read it back as the daemon does. */
static enum vmclock_status
parse_file(const uint8_t *p, size_t len, struct vmclock_reading *r)
{
	char path[] = "/tmp/entropyd-vmclock.XXXXXX";
	uint8_t back[4096];
	int fd = mkstemp(path);
	ssize_t n;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, p, len), (ssize_t)len);
	n = pread(fd, back, VMCLOCK_BYTES, 0);
	close(fd);
	unlink(path);
	cr_assert_geq(n, 0);
	return vmclock_parse(back, (size_t)n, r);
}

Test(vmclock, the_counter_of_a_whole_page)
{
	uint8_t p[4096];
	struct vmclock_reading r;

	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 42, 0x0102030405060708ull);
	cr_assert_eq(parse_file(p, sizeof p, &r), VMCLOCK_OK);
	cr_expect_eq(r.vm_generation_counter, 0x0102030405060708ull);
	cr_expect_eq(r.seq_count, 42);
	cr_expect_not(r.notifications);
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT |
	    VMCLOCK_FLAG_NOTIFICATION_PRESENT | 1, 44, 7);
	cr_assert_eq(parse_file(p, sizeof p, &r), VMCLOCK_OK);
	cr_expect_eq(r.vm_generation_counter, 7);
	cr_expect(r.notifications, "the device says it notifies");
}

Test(vmclock, no_counter_where_the_flag_or_size_says_so)
{
	uint8_t p[4096];
	struct vmclock_reading r;

	page(p, sizeof p, 4096, VMCLOCK_FLAG_NOTIFICATION_PRESENT, 2, 9);
	cr_expect_eq(parse_file(p, sizeof p, &r), VMCLOCK_NO_COUNTER, "flag clear");
	/* An older structure ends before the counter: its size says so. */
	page(p, sizeof p, VMCLOCK_OFF_VM_GENERATION_COUNTER, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT,
	    2, 9);
	cr_expect_eq(parse_file(p, sizeof p, &r), VMCLOCK_NO_COUNTER, "size before the counter");
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 2, 9);
	cr_expect_eq(parse_file(p, VMCLOCK_BYTES - 1, &r), VMCLOCK_NO_COUNTER,
	    "a read that ends before the counter");
}

Test(vmclock, what_is_no_vmclock_structure)
{
	uint8_t p[4096];
	struct vmclock_reading r;

	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 2, 9);
	cr_expect_eq(parse_file(p, VMCLOCK_OFF_FLAGS + 7, &r), VMCLOCK_SHORT);
	cr_expect_eq(vmclock_parse(p, 0, &r), VMCLOCK_SHORT);
	p[VMCLOCK_OFF_MAGIC] ^= 1;
	cr_expect_eq(parse_file(p, sizeof p, &r), VMCLOCK_BAD_MAGIC);
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 2, 9);
	p[VMCLOCK_OFF_VERSION] = 2;
	cr_expect_eq(parse_file(p, sizeof p, &r), VMCLOCK_BAD_VERSION);
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 3, 9);
	cr_expect_eq(parse_file(p, sizeof p, &r), VMCLOCK_BUSY, "an odd seq_count: mid-update");
	cr_expect_str_neq(vmclock_status_text(VMCLOCK_BUSY), "ok");
}

static unsigned changed_calls;

static void
changed(void)
{
	changed_calls++;
}

/* The watcher reads a file named as the device: its counter, then a change of it (synced). */
Test(vmclock, the_watcher_reads_a_file_as_the_device)
{
	char path[] = "/tmp/entropyd-vmclock.XXXXXX", what[512];
	struct event_base *base = event_base_new();
	uint8_t p[4096];
	int fd = mkstemp(path);

	log_init("test_vmclock", LOG_TO_STDERR, -1);
	cr_assert_geq(fd, 0);
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 2, 5);
	cr_assert_eq(pwrite(fd, p, sizeof p, 0), (ssize_t)sizeof p);
	setenv(VMCLOCK_PATH_ENV, path, 1);
	cr_assert_not_null(base);
	cr_assert_eq(event_base_priority_init(base, 2), 0);
	cr_assert_eq(vmclock_start(base, changed), 0);
	cr_expect(vmclock_watching());
	vmclock_describe(what, sizeof what);
	cr_expect(strstr(what, "vmclock counter 5") != NULL, "%s", what);
	/* Another trigger saw a restore: the counter moved with it and is taken as seen. */
	page(p, sizeof p, 4096, VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT, 4, 6);
	cr_assert_eq(pwrite(fd, p, sizeof p, 0), (ssize_t)sizeof p);
	vmclock_sync();
	vmclock_describe(what, sizeof what);
	cr_expect(strstr(what, "vmclock counter 6") != NULL, "%s", what);
	cr_expect_eq(changed_calls, 0, "a sync reports nothing");
	vmclock_stop();
	cr_expect_not(vmclock_watching());
	/* No counter in it: not watched at all. */
	page(p, sizeof p, 4096, 0, 2, 5);
	cr_assert_eq(pwrite(fd, p, sizeof p, 0), (ssize_t)sizeof p);
	cr_expect_eq(vmclock_start(base, changed), -1);
	cr_expect_not(vmclock_watching());
	close(fd);
	unlink(path);
	unsetenv(VMCLOCK_PATH_ENV);
	event_base_free(base);
}
