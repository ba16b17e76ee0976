/* SPDX-License-Identifier: MIT */
/*
 * Host-unique data (machine-id, DMI UUID and serials, MAC addresses,
 * hostname) mixed into the pool uncredited at start, so clones of one image
 * do not share a pool state.
 */
#include <sys/utsname.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hostmix.h"

/* Files whose contents tell this machine from its clones. */
static const char *const hostmix_files[] = {
	"etc/machine-id",
	"var/lib/dbus/machine-id",
	"sys/class/dmi/id/product_uuid",
	"sys/class/dmi/id/product_serial",
	"sys/class/dmi/id/board_serial",
	"sys/class/dmi/id/chassis_serial",
	"proc/sys/kernel/random/boot_id",
	NULL,
};

/* Append "label=contents\n" (contents cut at the space left) to buf. */
static size_t
hostmix_append(uint8_t *buf, size_t len, size_t cap, const char *label, const char *path)
{
	char data[512];
	ssize_t n;
	int fd, w;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return len;
	n = read(fd, data, sizeof data - 1);
	close(fd);
	if (n <= 0)
		return len;
	data[n] = '\0';
	w = snprintf((char *)buf + len, cap - len, "%s=%s\n", label, data);
	if (w < 0)
		return len;
	return len + (size_t)w >= cap ? cap - 1 : len + (size_t)w;
}

size_t
hostmix_collect(const char *root, uint8_t *buf, size_t cap)
{
	char path[4096];
	struct utsname u;
	struct dirent *de;
	DIR *dir;
	size_t len = 0;
	int i, w;

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	for (i = 0; hostmix_files[i] != NULL; i++) {
		snprintf(path, sizeof path, "%s/%s", root, hostmix_files[i]);
		len = hostmix_append(buf, len, cap, hostmix_files[i], path);
	}
	snprintf(path, sizeof path, "%s/sys/class/net", root);
	if ((dir = opendir(path)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			if (de->d_name[0] == '.' || strcmp(de->d_name, "lo") == 0)
				continue;
			snprintf(path, sizeof path, "%s/sys/class/net/%s/address", root, de->d_name);
			len = hostmix_append(buf, len, cap, de->d_name, path);
		}
		closedir(dir);
	}
	if (uname(&u) == 0 && len + 1 < cap) {
		w = snprintf((char *)buf + len, cap - len, "hostname=%s\n", u.nodename);
		if (w > 0)
			len = len + (size_t)w >= cap ? cap - 1 : len + (size_t)w;
	}
	return len;
}
