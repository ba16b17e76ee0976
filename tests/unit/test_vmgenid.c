/* SPDX-License-Identifier: MIT */
/*
 * Clone detection's pure parts: the socket filter, run by the kernel on an
 * AF_UNIX datagram socket (the same program the uevent socket gets), the
 * text check it agrees with, and the sysfs probe on fake trees. The
 * listener itself is driven end to end by tests/integration/daemon-vmgenid.sh.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "vmgenid.h"

/* A uevent as the kernel sends it: "action@devpath\0" then the keys. */
static size_t
uevent(uint8_t *buf, size_t cap, const char *action, const char *devpath,
    const char *subsystem, const char *const *extra)
{
	size_t len = 0;
	int n;

	n = snprintf((char *)buf, cap, "%s@%s", action, devpath);
	len += (size_t)n + 1;
	n = snprintf((char *)buf + len, cap - len, "ACTION=%s", action);
	len += (size_t)n + 1;
	n = snprintf((char *)buf + len, cap - len, "DEVPATH=%s", devpath);
	len += (size_t)n + 1;
	n = snprintf((char *)buf + len, cap - len, "SUBSYSTEM=%s", subsystem);
	len += (size_t)n + 1;
	for (; extra != NULL && *extra != NULL; extra++) {
		n = snprintf((char *)buf + len, cap - len, "%s", *extra);
		len += (size_t)n + 1;
	}
	n = snprintf((char *)buf + len, cap - len, "SEQNUM=4711");
	len += (size_t)n + 1;
	cr_assert_lt(len, cap);
	return len;
}

/* A socket pair whose receiving end has the filter of scan bytes attached. */
static void
filtered_pair(int sv[2], size_t scan)
{
	static struct sock_filter prog[VMGENID_FILTER_MAX_INSNS];
	struct sock_fprog fprog;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	fprog.len = (unsigned short)vmgenid_filter(prog, scan);
	fprog.filter = prog;
	cr_assert_leq(fprog.len, VMGENID_FILTER_MAX_INSNS);
	cr_assert_eq(setsockopt(sv[1], SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog), 0,
	    "the kernel accepts the program (scan %zu): %s", scan, strerror(errno));
}

/* Whether the filter lets a datagram through (the kernel runs it on send). */
static bool
passes(int sv[2], const uint8_t *msg, size_t len)
{
	uint8_t got[8192];
	ssize_t n;

	cr_assert_eq(send(sv[0], msg, len, 0), (ssize_t)len);
	n = recv(sv[1], got, sizeof got, MSG_DONTWAIT);
	if (n == -1) {
		cr_assert(errno == EAGAIN || errno == EWOULDBLOCK);
		return false;
	}
	cr_assert_eq((size_t)n, len, "a datagram that passes is whole");
	cr_assert_arr_eq(got, msg, len);
	return true;
}

static const char *const vmgenid_key[] = { VMGENID_UEVENT_KEY, "DRIVER=vmgenid",
	"MODALIAS=acpi:VMGENCTR:VM_GEN_COUNTER:", NULL };

/* Every alignment of the key, on the buses the driver has lived on. */
Test(vmgenid, the_filter_passes_the_kernels_change_at_every_alignment)
{
	static const char *const prefixes[] = { "/devices/platform/",
		"/devices/LNXSYSTM:00/LNXSYBUS:00/", "/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A03:00/" };
	static const char *const subsystems[] = { "platform", "acpi", "acpi" };
	uint8_t msg[4096];
	char devpath[256];
	size_t i, pad, len;
	int sv[2];

	filtered_pair(sv, VMGENID_FILTER_SCAN_BYTES);
	for (i = 0; i < 3; i++)
		for (pad = 0; pad < 40; pad++) {
			snprintf(devpath, sizeof devpath, "%s%.*sVMGENCTR:00", prefixes[i], (int)pad,
			    "QEMUVGIDQEMUVGIDQEMUVGIDQEMUVGIDQEMUVGIDQEMUVGID");
			len = uevent(msg, sizeof msg, "change", devpath, subsystems[i], vmgenid_key);
			cr_assert(vmgenid_uevent_says_change(msg, len), "%s", devpath);
			cr_assert(passes(sv, msg, len), "the change of %s passes", devpath);
		}
	close(sv[0]);
	close(sv[1]);
}

/* What must not wake the daemon: anything but the kernel's key on a change. */
Test(vmgenid, the_filter_drops_everything_else)
{
	static const char *const synth[] = { "SYNTH_UUID=0", "SYNTH_ARG_NEW_VMGENID=1", NULL };
	static const char *const zero[] = { "NEW_VMGENID=0", NULL };
	static const char *const ten[] = { "NEW_VMGENID=10", NULL };
	static const char *const longer[] = { "NEW_VMGENIDX=1", NULL };
	static const char *const lower[] = { "new_vmgenid=1", NULL };
	static const char *const none[] = { "DRIVER=vmgenid", NULL };
	static const char *const value[] = { "INTERFACE=NEW_VMGENID=1", NULL };
	const char *dev = "/devices/platform/VMGENCTR:00";
	struct {
		const char *what;
		const char *action;
		const char *const *extra;
	} cases[] = {
		{ "an add with the key", "add", vmgenid_key },
		{ "a remove with the key", "remove", vmgenid_key },
		{ "a change without the key", "change", none },
		{ "a synthetic uevent's argument (root can write those)", "change", synth },
		{ "NEW_VMGENID=0", "change", zero },
		{ "NEW_VMGENID=10", "change", ten },
		{ "a longer key", "change", longer },
		{ "lower case", "change", lower },
		{ "the key as a value", "change", value },
	};
	uint8_t msg[4096];
	size_t i, len;
	int sv[2];

	filtered_pair(sv, VMGENID_FILTER_SCAN_BYTES);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		len = uevent(msg, sizeof msg, cases[i].action, dev, "platform", cases[i].extra);
		cr_expect_not(vmgenid_uevent_says_change(msg, len), "text check: %s", cases[i].what);
		cr_expect_not(passes(sv, msg, len), "filter: %s", cases[i].what);
	}
	/* The key without its closing NUL (the kernel always sends one). */
	len = uevent(msg, sizeof msg, "change", dev, "platform", none);
	memcpy(msg + len, VMGENID_UEVENT_KEY, strlen(VMGENID_UEVENT_KEY));
	len += strlen(VMGENID_UEVENT_KEY);
	cr_expect_not(vmgenid_uevent_says_change(msg, len), "an unterminated key");
	cr_expect_not(passes(sv, msg, len), "an unterminated key");
	/* Short datagrams end the program early. */
	cr_expect_not(passes(sv, (const uint8_t *)"change@", 7));
	cr_expect_not(passes(sv, (const uint8_t *)"chan", 4));
	cr_expect_not(vmgenid_uevent_says_change((const uint8_t *)"change@", 7));
	close(sv[0]);
	close(sv[1]);
}

/* udevd's re-broadcast (and umockdev's emulation) is "libudev" + a binary header. */
Test(vmgenid, a_libudev_message_is_not_the_kernels)
{
	uint8_t msg[1024];
	size_t len = 40, n;
	int sv[2];

	memset(msg, 0, sizeof msg);
	memcpy(msg, "libudev", 8);
	n = uevent(msg + len, sizeof msg - len, "change", "/devices/platform/VMGENCTR:00",
	    "platform", vmgenid_key);
	/* The properties, without the "action@devpath" line. */
	memmove(msg + len, msg + len + strlen("change@/devices/platform/VMGENCTR:00") + 1,
	    n - strlen("change@/devices/platform/VMGENCTR:00") - 1);
	len += n - strlen("change@/devices/platform/VMGENCTR:00") - 1;
	filtered_pair(sv, VMGENID_FILTER_SCAN_BYTES);
	cr_expect_not(vmgenid_uevent_says_change(msg, len));
	cr_expect_not(passes(sv, msg, len));
	close(sv[0]);
	close(sv[1]);
}

/* A smaller filter (older kernels' option memory) looks through less, correctly. */
Test(vmgenid, every_scan_size_agrees_with_the_text_check_within_its_range)
{
	static const size_t scans[] = { 128, 256, 512, 1024 };
	uint8_t msg[4096];
	char devpath[600];
	size_t s, pad, len, at;
	int sv[2];

	for (s = 0; s < sizeof scans / sizeof scans[0]; s++) {
		filtered_pair(sv, scans[s]);
		for (pad = 0; pad < 500; pad += 7) {
			snprintf(devpath, sizeof devpath, "/devices/platform/%0*dVMGENCTR:00",
			    (int)pad, 0);
			len = uevent(msg, sizeof msg, "change", devpath, "platform", vmgenid_key);
			at = (size_t)((uint8_t *)memmem(msg, len, "\0NEW_VMGENID=1", 14) - msg);
			cr_assert(vmgenid_uevent_says_change(msg, len));
			if (at + 16 <= scans[s])
				cr_expect(passes(sv, msg, len), "scan %zu, key at %zu", scans[s], at);
			else if (at >= scans[s])
				cr_expect_not(passes(sv, msg, len), "scan %zu: a key at %zu is beyond",
				    scans[s], at);
		}
		close(sv[0]);
		close(sv[1]);
	}
}

/* This kernel takes the largest filter (128 kB option memory since Linux 6.9). */
Test(vmgenid, attach_takes_the_largest_filter_that_fits)
{
	int sv[2];
	size_t scan;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	scan = vmgenid_filter_attach(sv[1]);
	cr_expect_geq(scan, 128);
	cr_expect_leq(scan, VMGENID_FILTER_SCAN_BYTES);
	close(sv[0]);
	close(sv[1]);
}

static char root[] = "/tmp/entropyd-vmgenid.XXXXXX";

/* Create a file (and its directories) under the fake sysfs root. */
static void
put(const char *rel, const char *contents)
{
	char path[4096], cmd[8300];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(contents, f);
	fclose(f);
}

/* A symbolic link under the fake root (as sysfs binds a device to its driver). */
static void
link_to(const char *rel, const char *target)
{
	char path[4096], cmd[8300];

	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && ln -s '%s' '%s'", path, target,
	    path);
	cr_assert_eq(system(cmd), 0);
}

static void
fresh_root(void)
{
	char cmd[256];

	if (root[sizeof root - 7] != 'X') {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
		cr_assert_eq(system(cmd), 0);
		memcpy(root + sizeof root - 7, "XXXXXX", 6);
	}
	cr_assert_not_null(mkdtemp(root));
}

static void
remove_root(void)
{
	char cmd[256];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(probe, .init = fresh_root, .fini = remove_root);

/* Linux 6.10 and later: a platform driver (Firecracker's VMGENCTR, device tree). */
Test(probe, bound_to_the_platform_driver)
{
	struct vmgenid_probe p;

	put("bus/acpi/devices/VMGENCTR:00/modalias", "acpi:VMGENCTR:VM_GEN_COUNTER:\n");
	put("bus/platform/drivers/vmgenid/bind", "");
	put("bus/platform/drivers/vmgenid/uevent", "");
	link_to("bus/platform/drivers/vmgenid/module", "../../../../module/vmgenid");
	link_to("bus/platform/drivers/vmgenid/VMGENCTR:00", "../../../../devices/platform/VMGENCTR:00");
	vmgenid_probe(root, &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_BOUND);
	cr_expect_str_eq(p.name, "VMGENCTR:00");
	cr_expect_str_eq(p.bus, "platform");
}

/* Linux 5.18 to 6.9: an ACPI driver (QEMU's QEMUVGID with the VM_GEN_COUNTER id). */
Test(probe, bound_to_the_acpi_driver)
{
	struct vmgenid_probe p;

	put("bus/acpi/devices/QEMUVGID:00/modalias", "acpi:QEMUVGID:VM_GEN_COUNTER:\n");
	link_to("bus/acpi/drivers/vmgenid/QEMUVGID:00", "../../../../devices/LNXSYSTM:00/QEMUVGID:00");
	vmgenid_probe(root, &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_BOUND);
	cr_expect_str_eq(p.name, "QEMUVGID:00");
	cr_expect_str_eq(p.bus, "acpi");
}

/* A device the kernel does not watch: found by its ACPI ids, not armed. */
Test(probe, unbound_devices_by_acpi_id)
{
	struct vmgenid_probe p;

	put("bus/acpi/devices/PNP0A03:00/modalias", "acpi:PNP0A03:\n");
	put("bus/acpi/devices/Hyper_V_Gen_Counter_V1:00/modalias",
	    "acpi:Hyper_V_Gen_Counter_V1:VM_Gen_Counter:\n");
	/* The driver is loaded, but nothing is bound: its directory has only "module". */
	link_to("bus/platform/drivers/vmgenid/module", "../../../../module/vmgenid");
	vmgenid_probe(root, &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_UNBOUND);
	cr_expect_str_eq(p.name, "Hyper_V_Gen_Counter_V1:00");
}

Test(probe, unbound_by_name)
{
	struct vmgenid_probe p;

	put("bus/acpi/devices/VMGENCTR:00/hid", "VMGENCTR\n");
	vmgenid_probe(root, &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_UNBOUND);
	cr_expect_str_eq(p.name, "VMGENCTR:00");
}

Test(probe, no_device)
{
	struct vmgenid_probe p;

	put("bus/acpi/devices/PNP0A03:00/modalias", "acpi:PNP0A03:\n");
	put("bus/acpi/devices/LNXSYSTM:00/modalias", "acpi:LNXSYSTM:\n");
	vmgenid_probe(root, &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_NONE);
	vmgenid_probe("/nonexistent", &p);
	cr_expect_eq(p.device, VMGENID_DEVICE_NONE, "no sysfs at all: none");
}

/* -l: one line, from the root ENTROPYD_SYSFS_ROOT names. */
Test(probe, the_list_line_follows_the_sysfs_root)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	setenv(VMGENID_SYSFS_ENV, root, 1);
	cr_assert_str_eq(vmgenid_sysfs_root(), root);
	f = open_memstream(&text, &len);
	vmgenid_print(f);
	fclose(f);
	cr_expect_not_null(strstr(text, "clone detection: not available: no VM generation ID "
	    "device"), "%s", text);
	cr_expect_not_null(strstr(text, "entropyctl vmgenid"));
	free(text);
	link_to("bus/platform/drivers/vmgenid/VMGENCTR:00", "../../../../devices/platform/VMGENCTR:00");
	f = open_memstream(&text, &len);
	vmgenid_print(f);
	fclose(f);
	cr_expect_not_null(strstr(text, "clone detection: VM generation ID device VMGENCTR:00"),
	    "%s", text);
	free(text);
	unsetenv(VMGENID_SYSFS_ENV);
	cr_expect_str_eq(vmgenid_sysfs_root(), "/sys");
}

/* The kernel log: only the kernel's own notice, from the kernel facility. */
Test(vmgenid, the_kernel_log_notice_and_forgeries)
{
	static const struct {
		const char *record;
		bool change, forged;
	} cases[] = {
		{ "5,1234,12796114,-;random: crng reseeded due to virtual machine fork\n", true, false },
		{ "5,7,1,-,caller=T1;random: crng reseeded due to virtual machine fork\n", true, false },
		{ "5,7,1,c;random: crng reseeded due to virtual machine fork\n SUBSYSTEM=x\n", true,
		    false },
		/* What a process writing "<5>..." to /dev/kmsg gets: the user facility. */
		{ "13,1235,12796200,-;random: crng reseeded due to virtual machine fork\n", false, true },
		{ "85,1236,12796300,-;random: crng reseeded due to virtual machine fork\n", false, true },
		{ "5,1237,1,-;random: crng reseeded\n", false, false },
		{ "5,1238,1,-;random: crng reseeded due to virtual machine fork (not quite)\n", false,
		    false },
		{ "5,1239,1,-;xrandom: crng reseeded due to virtual machine fork\n", false, false },
		{ "random: crng reseeded due to virtual machine fork\n", false, false },
		{ "5;random: crng reseeded due to virtual machine fork\n", false, false },
		{ "", false, false },
	};
	size_t i;
	bool forged;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_expect_eq(vmgenid_kmsg_says_change(cases[i].record, strlen(cases[i].record),
		    &forged), cases[i].change, "%s", cases[i].record);
		cr_expect_eq(forged, cases[i].forged, "forged: %s", cases[i].record);
	}
}
