/* SPDX-License-Identifier: MIT */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/capability.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdint.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "sandbox.h"
#include "xmalloc.h"

/* What privdrop_prepare() resolved. */
static struct {
	bool prepared;
	char *user;
	char *group;
	uid_t uid;
	gid_t gid;
	gid_t *groups;       /* supplementary groups, the primary one first */
	int ngroups;
} privdrop;

/* Parse a decimal id; -1 if s is not one. */
static long long
privdrop_number(const char *s)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v >= UINT_MAX)
		return -1;
	return v;
}

/* Collect the user's groups from the group database, primary first. */
static void
privdrop_groups(const char *user)
{
	int n = 16;

	privdrop.groups = xcalloc((size_t)n, sizeof *privdrop.groups);
	if (user != NULL && getgrouplist(user, privdrop.gid, privdrop.groups, &n) == -1) {
		privdrop.groups = xreallocarray(privdrop.groups, (size_t)n,
		    sizeof *privdrop.groups);
		if (getgrouplist(user, privdrop.gid, privdrop.groups, &n) == -1)
			n = 0;
	} else if (user == NULL)
		n = 0;
	if (n <= 0) {
		privdrop.groups[0] = privdrop.gid;
		n = 1;
	}
	privdrop.ngroups = n;
}

int
privdrop_prepare(const char *spec, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	struct passwd *pw;
	struct group *gr;
	long long id;

	if (colon == NULL || colon == spec || colon[1] == '\0' || strchr(colon + 1, ':')) {
		snprintf(err, errlen, "-D %s: expected USER:GROUP", spec);
		return EX_USAGE;
	}
	privdrop.user = xstrdup(spec);
	privdrop.user[colon - spec] = '\0';
	privdrop.group = xstrdup(colon + 1);
	if ((pw = getpwnam(privdrop.user)) != NULL)
		privdrop.uid = pw->pw_uid;
	else if ((id = privdrop_number(privdrop.user)) != -1)
		privdrop.uid = (uid_t)id;
	else {
		snprintf(err, errlen, "-D %s: unknown user %s", spec, privdrop.user);
		return EX_NOUSER;
	}
	if ((gr = getgrnam(privdrop.group)) != NULL)
		privdrop.gid = gr->gr_gid;
	else if ((id = privdrop_number(privdrop.group)) != -1)
		privdrop.gid = (gid_t)id;
	else {
		snprintf(err, errlen, "-D %s: unknown group %s", spec, privdrop.group);
		return EX_NOUSER;
	}
	privdrop_groups(pw != NULL ? privdrop.user : NULL);
	privdrop.prepared = true;
	return 0;
}

bool
privdrop_prepared(void)
{
	return privdrop.prepared;
}

bool
privdrop_ids(uid_t *uid, gid_t *gid)
{
	if (!privdrop.prepared)
		return false;
	*uid = privdrop.uid;
	*gid = privdrop.gid;
	return true;
}

void
privdrop_bound(void)
{
	int cap;

	for (cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r == -1)
			break; /* past the kernel's last capability */
		if (r == 0 || cap == PRIVDROP_KEEP_CAP)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1)
			fatalc(EX_OSERR, "-D: cannot drop privileges: capability %d: %s%s",
			    cap, strerror(errno), errno == EPERM ? " (needs root)" : "");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		fatalc(EX_OSERR, "-D: clearing the ambient capabilities: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "-D: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
}

/* Set the kept capability, permitted and effective, and nothing else. */
static void
privdrop_capset(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof data);
	data[PRIVDROP_KEEP_CAP / 32].permitted = 1u << (PRIVDROP_KEEP_CAP % 32);
	data[PRIVDROP_KEEP_CAP / 32].effective = 1u << (PRIVDROP_KEEP_CAP % 32);
	if (syscall(SYS_capset, &hdr, data) == -1)
		fatalc(EX_OSERR, "-D: keeping only CAP_SYS_ADMIN: capset: %s", strerror(errno));
}

/* Read the identity and capabilities back: what was asked for, and no more. */
static void
privdrop_verify(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	uint64_t want = 1ull << PRIVDROP_KEEP_CAP, eff, perm, inh;

	if (getresuid(&ruid, &euid, &suid) == -1 || getresgid(&rgid, &egid, &sgid) == -1)
		fatalc(EX_OSERR, "-D: reading the ids back: %s", strerror(errno));
	if (ruid != privdrop.uid || euid != privdrop.uid || suid != privdrop.uid ||
	    rgid != privdrop.gid || egid != privdrop.gid || sgid != privdrop.gid)
		fatalc(EX_OSERR, "-D: the ids did not change to %s:%s", privdrop.user,
		    privdrop.group);
	if (privdrop.uid != 0 && (setresuid(0, 0, 0) == 0 || setegid(0) == 0))
		fatalc(EX_OSERR, "-D: root could be regained after the drop");
	memset(data, 0, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == -1)
		fatalc(EX_OSERR, "-D: capget: %s", strerror(errno));
	eff = data[0].effective | (uint64_t)data[1].effective << 32;
	perm = data[0].permitted | (uint64_t)data[1].permitted << 32;
	inh = data[0].inheritable | (uint64_t)data[1].inheritable << 32;
	if (eff != want || perm != want || inh != 0)
		fatalc(EX_OSERR, "-D: capabilities are not CAP_SYS_ADMIN alone (effective %#llx, "
		    "permitted %#llx, inheritable %#llx)", (unsigned long long)eff,
		    (unsigned long long)perm, (unsigned long long)inh);
}

void
privdrop_apply(void)
{
	char err[256];

	if (!privdrop.prepared)
		return;
	privdrop_bound();
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "-D: PR_SET_KEEPCAPS: %s", strerror(errno));
	if (setgroups((size_t)privdrop.ngroups, privdrop.groups) == -1)
		fatalc(EX_OSERR, "-D: setgroups: %s", strerror(errno));
	if (setresgid(privdrop.gid, privdrop.gid, privdrop.gid) == -1)
		fatalc(EX_OSERR, "-D: switching to group %s: %s", privdrop.group, strerror(errno));
	if (setresuid(privdrop.uid, privdrop.uid, privdrop.uid) == -1)
		fatalc(EX_OSERR, "-D: switching to user %s: %s", privdrop.user, strerror(errno));
	privdrop_capset();
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "-D: PR_SET_KEEPCAPS: %s", strerror(errno));
	privdrop_verify();
	log_info("running as %s:%s with CAP_SYS_ADMIN only", privdrop.user, privdrop.group);
	if (sandbox_apply(err, sizeof err) == -1)
		fatalc(EX_OSERR, "-D: %s", err);
	if (sandbox_available())
		log_info("system calls confined to the seccomp allow-list");
}

int
privdrop_socket_owner(const char *path)
{
	if (!privdrop.prepared)
		return 0;
	if (chown(path, privdrop.uid, privdrop.gid) == -1)
		return -1;
	return chmod(path, 0660);
}
