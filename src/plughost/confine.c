/* SPDX-License-Identifier: MIT */
/*
 * The powers of a plugin host: the daemon's user and group, no capability,
 * no_new_privs, and a seccomp allow-list, applied before the plugin loads.
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/capability.h>
#include <linux/sched.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "confine.h"

/* Take uid and gid (and uid's groups) when they differ from ours. */
static int
confine_identity(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct passwd *pw;
	gid_t groups[64];
	int n = 64;

	if (getuid() == uid && geteuid() == uid && getgid() == gid && getegid() == gid)
		return 0;
	if ((pw = getpwuid(uid)) == NULL || getgrouplist(pw->pw_name, gid, groups, &n) == -1) {
		groups[0] = gid;
		n = 1;
	}
	if (setgroups((size_t)n, groups) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1) {
		snprintf(err, errlen, "cannot take uid %u, gid %u: %s", (unsigned)uid,
		    (unsigned)gid, strerror(errno));
		return -1;
	}
	return 0;
}

/* Give up every capability: bounding and ambient sets, then the rest. */
static int
confine_capabilities(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int cap;

	for (cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r == -1)
			break; /* past the kernel's last capability */
		if (r == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 && errno != EPERM) {
			snprintf(err, errlen, "capability %d: %s", cap, strerror(errno));
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL) {
		snprintf(err, errlen, "ambient capabilities: %s", strerror(errno));
		return -1;
	}
	/* Already none (a non-root host): capset may itself be filtered (systemd's ~@privileged). */
	memset(data, 0xff, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == 0 && !data[0].effective && !data[1].effective &&
	    !data[0].permitted && !data[1].permitted && !data[0].inheritable &&
	    !data[1].inheritable)
		return 0;
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	memset(data, 0xff, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == -1 || data[0].effective || data[1].effective ||
	    data[0].permitted || data[1].permitted || data[0].inheritable || data[1].inheritable) {
		snprintf(err, errlen, "capabilities remain after dropping them");
		return -1;
	}
	return 0;
}

#ifdef HAVE_SECCOMP
/* What a plugin may do: see confine.h. */
static const char *const confine_allowed[] = {
	"read", "readv", "pread64", "preadv", "write", "writev", "pwrite64", "close", "lseek",
	"open", "openat", "fstat", "newfstatat", "stat", "lstat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "fcntl",
	"dup", "dup2", "dup3", "flock", "fsync", "fdatasync", "getcwd", "umask",
	"pipe", "pipe2", "eventfd2", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	"poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "inotify_init1", "inotify_add_watch",
	"inotify_rm_watch", "socketpair", "connect", "bind", "shutdown", "sendto", "sendmsg",
	"sendmmsg", "recvfrom", "recvmsg", "recvmmsg", "getsockopt", "setsockopt", "getsockname",
	"getpeername", "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mlock",
	"munlock", "futex", "set_robust_list", "get_robust_list", "rseq", "set_tid_address",
	"sched_yield", "sched_getaffinity", "sched_getparam", "sched_getscheduler", "membarrier",
	"exit", "exit_group", "gettid", "getpid", "getppid", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "getgroups", "capget", "prctl", "getrlimit",
	"prlimit64", "getrusage", "sysinfo", "uname", "getrandom", "clock_gettime",
	"clock_getres", "clock_nanosleep", "gettimeofday", "time", "nanosleep", "rt_sigaction",
	"rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack", "restart_syscall",
	"arch_prctl", "sched_setaffinity",
};

/* What kills the host: ways out of the sandbox. */
static const char *const confine_killed[] = {
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "setuid",
	"setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "capset",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "mount",
	"umount2", "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open",
	"userfaultfd", "keyctl", "add_key", "request_key", "personality", "kill",
};

/* The ioctl type of the random driver (RNDADDENTROPY is _IOW('R', 3, int[2])). */
#define CONFINE_RANDOM_IOCTL_TYPE 0x52u

/* Address families a plugin's sockets may have. */
static const int confine_families[] = { AF_UNIX, AF_NETLINK };

/* One rule per name; names this architecture lacks are skipped. */
static int
confine_add(scmp_filter_ctx ctx, uint32_t action, const char *const *names, size_t n)
{
	size_t i;
	int nr, rc;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(names[i])) == __NR_SCMP_ERROR)
			continue;
		if ((rc = seccomp_rule_add(ctx, action, nr, 0)) < 0)
			return rc;
	}
	return 0;
}

/* Build and load the filter. 0, or a negative errno. */
static int
confine_filter(void)
{
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL)
		return -ENOMEM;
	/* The host has one thread yet: no TSYNC needed (valgrind lacks it). */
	if ((rc = confine_add(ctx, SCMP_ACT_ALLOW, confine_allowed,
	    sizeof confine_allowed / sizeof confine_allowed[0])) < 0 ||
	    (rc = confine_add(ctx, SCMP_ACT_KILL_PROCESS, confine_killed,
	    sizeof confine_killed / sizeof confine_killed[0])) < 0)
		goto out;
	/* Threads only: a clone without CLONE_THREAD is a new process. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD))) < 0 ||
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
		goto out;
	/* Signals to its own threads only (raise, abort, pthread_kill). An
	 * equality ignores datum_b: given as 0, so every field is set. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
	    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0))) < 0)
		goto out;
	/*
	 * ioctl, but none of type 'R' (the random driver's): one rule per bit
	 * of the type byte, each allowing the types that differ from 'R' there.
	 */
	for (i = 8; i < 16; i++)
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 1u << i, (CONFINE_RANDOM_IOCTL_TYPE << 8 ^ 0xff00u) &
		    (1u << i)))) < 0)
			goto out;
	for (i = 0; i < sizeof confine_families / sizeof confine_families[0]; i++)
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)confine_families[i], 0))) < 0)
			goto out;
	rc = seccomp_load(ctx);
out:
	seccomp_release(ctx);
	return rc;
}

bool
confine_seccomp_available(void)
{
	return true;
}
#else
bool
confine_seccomp_available(void)
{
	return false;
}
#endif

int
confine_apply(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct rlimit none = { 0, 0 };

	if (confine_identity(uid, gid, err, errlen) == -1 ||
	    confine_capabilities(err, errlen) == -1)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	setrlimit(RLIMIT_CORE, &none);
#ifdef HAVE_SECCOMP
	{
		const char *preload = getenv("LD_PRELOAD");
		int rc = confine_filter();

		/* Valgrind refuses seccomp filters: its runs go without one. */
		if (rc < 0 && preload != NULL && strstr(preload, "vgpreload") != NULL)
			return 1;
		if (rc < 0) {
			snprintf(err, errlen, "seccomp: %s", strerror(-rc));
			return -1;
		}
	}
#endif
	return 0;
}
