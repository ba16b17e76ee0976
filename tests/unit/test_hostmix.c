/* SPDX-License-Identifier: MIT */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "hostmix.h"

static char root[] = "/tmp/entropyd-hostmix.XXXXXX";

/* Write a file under the fake root, creating its directories. */
static void
put(const char *rel, const char *contents)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(contents, f);
	fclose(f);
}

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(root));
}

static void
teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return;
}

TestSuite(hostmix, .init = setup, .fini = teardown);

Test(hostmix, collects_what_tells_clones_apart)
{
	uint8_t buf[HOSTMIX_MAX_BYTES + 1];
	size_t len;

	put("etc/machine-id", "4f1c0a7e9b2d4c6e8a0b1c2d3e4f5a6b\n");
	put("sys/class/dmi/id/product_uuid", "1b4e28ba-2fa1-11d2-883f-0016d3cca427\n");
	put("sys/class/dmi/id/product_serial", "SER-42\n");
	put("sys/class/net/eth0/address", "52:54:00:12:34:56\n");
	put("sys/class/net/lo/address", "00:00:00:00:00:00\n");
	len = hostmix_collect(root, buf, HOSTMIX_MAX_BYTES);
	buf[len] = '\0';
	cr_expect(strstr((char *)buf, "etc/machine-id=4f1c0a7e9b2d4c6e8a0b1c2d3e4f5a6b") != NULL);
	cr_expect(strstr((char *)buf, "product_uuid=1b4e28ba-2fa1-11d2-883f-0016d3cca427") != NULL);
	cr_expect(strstr((char *)buf, "product_serial=SER-42") != NULL);
	cr_expect(strstr((char *)buf, "eth0=52:54:00:12:34:56") != NULL);
	cr_expect(strstr((char *)buf, "lo=") == NULL, "loopback's address is the same everywhere");
	cr_expect(strstr((char *)buf, "hostname=") != NULL);
}

Test(hostmix, two_clones_differ_only_in_their_ids)
{
	uint8_t one[HOSTMIX_MAX_BYTES], two[HOSTMIX_MAX_BYTES];
	size_t n1, n2;

	put("etc/machine-id", "aaaa\n");
	n1 = hostmix_collect(root, one, sizeof one);
	put("etc/machine-id", "bbbb\n");
	n2 = hostmix_collect(root, two, sizeof two);
	cr_expect_eq(n1, n2);
	cr_expect(memcmp(one, two, n1) != 0);
}

Test(hostmix, bounded_by_the_buffer)
{
	static char big[600];
	uint8_t buf[64];
	size_t len;

	memset(big, 'x', sizeof big - 1);
	put("etc/machine-id", big);
	len = hostmix_collect(root, buf, sizeof buf);
	cr_expect_lt(len, sizeof buf);
}
