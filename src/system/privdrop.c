/* SPDX-License-Identifier: MIT */
/*
 * Privileges: -D USER:GROUP resolved early, capabilities kept or dropped
 * for each process of the split, the bounding set emptied, and the switch
 * of user; a failure to drop is fatal.
 */
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

/* The capabilities this process holds (permitted). */
static uint64_t
privdrop_held(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == -1)
		fatalc(EX_OSERR, "capget: %s", strerror(errno));
	return data[0].permitted | (uint64_t)data[1].permitted << 32;
}

/*
 * Empty the bounding set but for keep (needs CAP_SETPCAP); a failure is
 * fatal when must, else the rest of the set stays.
 */
static void
privdrop_bound_to(uint64_t keep, bool must)
{
	int cap;

	for (cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r == -1)
			break; /* past the kernel's last capability */
		if (r == 0 || (keep & PRIVDROP_CAP(cap)) != 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (!must)
				return;
			fatalc(EX_OSERR, "-D: cannot drop privileges: capability %d: %s%s",
			    cap, strerror(errno), errno == EPERM ? " (needs root)" : "");
		}
	}
}

/* Clear the ambient set (kernels without one say EINVAL). */
static void
privdrop_ambient(const char *who)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
		fatalc(EX_OSERR, "%s: clearing the ambient capabilities: %s", who, strerror(errno));
}

/* Set keep, permitted and effective, and nothing else. */
static void
privdrop_capset(const char *who, uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof data);
	data[0].permitted = data[0].effective = (uint32_t)keep;
	data[1].permitted = data[1].effective = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data) == -1)
		fatalc(EX_OSERR, "%s: capset: %s", who, strerror(errno));
}

/* Read the capabilities back: keep, and no more. */
static void
privdrop_verify_caps(const char *who, uint64_t want)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	uint64_t eff, perm, inh;

	memset(data, 0, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == -1)
		fatalc(EX_OSERR, "%s: capget: %s", who, strerror(errno));
	eff = data[0].effective | (uint64_t)data[1].effective << 32;
	perm = data[0].permitted | (uint64_t)data[1].permitted << 32;
	inh = data[0].inheritable | (uint64_t)data[1].inheritable << 32;
	if (eff != want || perm != want || inh != 0)
		fatalc(EX_OSERR, "%s: capabilities are not what was kept (effective %#llx, "
		    "permitted %#llx, inheritable %#llx, wanted %#llx)", who,
		    (unsigned long long)eff, (unsigned long long)perm, (unsigned long long)inh,
		    (unsigned long long)want);
}

/* Read the identity back: what -D asked for, and no way back to root. */
static void
privdrop_verify_ids(void)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	if (getresuid(&ruid, &euid, &suid) == -1 || getresgid(&rgid, &egid, &sgid) == -1)
		fatalc(EX_OSERR, "-D: reading the ids back: %s", strerror(errno));
	if (ruid != privdrop.uid || euid != privdrop.uid || suid != privdrop.uid ||
	    rgid != privdrop.gid || egid != privdrop.gid || sgid != privdrop.gid)
		fatalc(EX_OSERR, "-D: the ids did not change to %s:%s", privdrop.user,
		    privdrop.group);
	if (privdrop.uid != 0 && (setresuid(0, 0, 0) == 0 || setegid(0) == 0))
		fatalc(EX_OSERR, "-D: root could be regained after the drop");
}

/* No exec can ever grant more, and the process is done changing. */
static void
privdrop_no_new_privs(const char *who)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "%s: PR_SET_NO_NEW_PRIVS: %s", who, strerror(errno));
}

void
privdrop_bound_keep(uint64_t keep)
{
	privdrop_bound_to(keep, true);
	privdrop_ambient("-D");
	privdrop_no_new_privs("-D");
}

void
privdrop_bound(void)
{
	privdrop_bound_keep(PRIVDROP_CAP(CAP_SYS_ADMIN));
}

/* "CAP_SYS_ADMIN only", "no capabilities", or the set in hex. */
static const char *
privdrop_describe(uint64_t caps, char *buf, size_t len)
{
	if (caps == 0)
		snprintf(buf, len, "no capabilities");
	else if (caps == PRIVDROP_CAP(CAP_SYS_ADMIN))
		snprintf(buf, len, "CAP_SYS_ADMIN only");
	else
		snprintf(buf, len, "capabilities %#llx", (unsigned long long)caps);
	return buf;
}

void
privdrop_limit(const char *who, uint64_t keep)
{
	uint64_t held = privdrop_held();
	char caps[64];

	keep &= held;
	if ((held & PRIVDROP_CAP(CAP_SETPCAP)) != 0)
		privdrop_bound_to(keep, false);
	privdrop_ambient(who);
	privdrop_capset(who, keep);
	privdrop_verify_caps(who, keep);
	privdrop_no_new_privs(who);
	log_info("%s: running as uid %ld with %s", who, (long)getuid(),
	    privdrop_describe(keep, caps, sizeof caps));
}

void
privdrop_apply(const char *who, uint64_t keep)
{
	char caps[64];

	if (!privdrop.prepared) {
		privdrop_limit(who, keep);
		return;
	}
	privdrop_bound_to(keep, true);
	privdrop_ambient("-D");
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "-D: PR_SET_KEEPCAPS: %s", strerror(errno));
	if (setgroups((size_t)privdrop.ngroups, privdrop.groups) == -1)
		fatalc(EX_OSERR, "-D: setgroups: %s", strerror(errno));
	if (setresgid(privdrop.gid, privdrop.gid, privdrop.gid) == -1)
		fatalc(EX_OSERR, "-D: switching to group %s: %s", privdrop.group, strerror(errno));
	if (setresuid(privdrop.uid, privdrop.uid, privdrop.uid) == -1)
		fatalc(EX_OSERR, "-D: switching to user %s: %s", privdrop.user, strerror(errno));
	privdrop_capset("-D", keep);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "-D: PR_SET_KEEPCAPS: %s", strerror(errno));
	privdrop_verify_ids();
	privdrop_verify_caps("-D", keep);
	privdrop_no_new_privs("-D");
	log_info("%s: running as %s:%s with %s", who, privdrop.user, privdrop.group,
	    privdrop_describe(keep, caps, sizeof caps));
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
