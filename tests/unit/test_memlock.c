/* SPDX-License-Identifier: MIT */
/* Entropy buffers: page-aligned, locked where permitted, wiped on free. */
#include <sys/resource.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "memlock.h"
#include "reserve.h"

/* VmLck of this process in kB, from /proc/self/status. */
static long
vm_locked_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Whether this process may lock len more bytes. */
static int
may_lock(size_t len)
{
	struct rlimit rl;

	if (geteuid() == 0)
		return 1;
	return getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= len + 65536);
}

Test(memlock, reserve_ring_is_locked_when_permitted)
{
	struct reserve r;
	long before;

#ifdef ENTROPYD_SANITIZED
	cr_skip_test("a sanitizer build does not lock buffers");
#endif
	if (!may_lock(RESERVE_CAPACITY))
		cr_skip_test("RLIMIT_MEMLOCK is too low to lock a reserve here");
	before = vm_locked_kb();
	reserve_init(&r);
	cr_assert_eq((uintptr_t)r.ring % (uintptr_t)sysconf(_SC_PAGESIZE), 0, "page-aligned");
	cr_expect_eq(memlock_count(), 1);
	cr_expect_geq(vm_locked_kb() - before, RESERVE_CAPACITY / 1024, "VmLck grew by the ring");
	reserve_free(&r);
	cr_expect_eq(memlock_count(), 0);
	cr_expect_eq(vm_locked_kb(), before, "unlocked on free");
}

Test(memlock, buffer_is_zeroed_and_odd_sizes_work)
{
	uint8_t *p = memlock_alloc(100);
	size_t i;

	for (i = 0; i < 100; i++)
		cr_assert_eq(p[i], 0);
	memset(p, 0xa5, 100);
	memlock_free(p, 100);
	memlock_free(NULL, 100);
}
