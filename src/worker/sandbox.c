/* SPDX-License-Identifier: MIT */
/*
 * The worker's seccomp allow-list, applied once sources are open: what the
 * loop, the sources and the control server need, and nothing that execs,
 * traces or reaches the kernel pool.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/random.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "sandbox.h"

#ifdef HAVE_SECCOMP
/*
 * What the running worker needs: I/O on what it already holds, the event
 * loop, memory, threads (a reopened source may start a reader thread),
 * clocks, signals to its own threads, syslog and the control socket's
 * clients, device ioctls (TPM, usbfs, ALSA, ttys), opening devices and files
 * again (a re-probe, a key plugged in), netlink for USB hotplug, and
 * reaping its own children (the plugin launcher it started, at its end). Not
 * exec, not ptrace, not new privileges, not mounts or modules, not signals
 * to other processes; sandbox_narrow() takes more away.
 */
static const char *const sandbox_allowed[] = {
	"read", "readv", "pread64", "write", "writev", "pwrite64", "close", "lseek",
	"open", "openat", "fstat", "newfstatat", "stat", "lstat", "statx", "statfs",
	"fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents64", "fcntl", "dup", "dup2", "dup3", "flock", "ftruncate", "fsync",
	"fdatasync", "unlink", "unlinkat", "rename", "renameat", "getcwd", "umask",
	"ioctl", "pipe", "pipe2", "eventfd2", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "poll", "ppoll", "select", "pselect6", "epoll_create",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	"socket", "socketpair", "connect", "accept", "accept4", "bind", "listen",
	"shutdown", "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg", "recvmmsg",
	"getsockopt", "setsockopt", "getsockname", "getpeername",
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mlock", "munlock",
	"clone", "clone3", "futex", "set_robust_list", "get_robust_list", "rseq",
	"set_tid_address", "sched_yield", "sched_getaffinity", "sched_setaffinity",
	"sched_getparam", "sched_getscheduler", "membarrier", "exit", "exit_group",
	"gettid", "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid",
	"getresuid", "getresgid", "getgroups", "capget", "prctl", "getrlimit",
	"prlimit64", "getrusage", "sysinfo", "uname", "getrandom",
	"clock_gettime", "clock_getres", "clock_nanosleep", "gettimeofday", "time",
	"nanosleep", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait",
	"sigaltstack", "tgkill", "restart_syscall", "arch_prctl", "wait4",
};

/* What kills the process outright: no way out of the daemon's own code. */
static const char *const sandbox_killed[] = {
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setgroups", "capset", "init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load", "mount", "umount2", "pivot_root", "chroot",
	"unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl",
	"add_key", "request_key", "personality",
};

/*
 * The kernel pool's privileged requests: the feeder's alone. The worker
 * holds no /dev/random and no capability; trying one of them anyway is fatal.
 */
static const unsigned long sandbox_random_ioctls[] = {
	RNDADDENTROPY, RNDADDTOENTCNT, RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG,
};

/* Address families a new socket may have: syslog, control clients, hotplug. */
static const int sandbox_families[] = { AF_UNIX, AF_NETLINK };

/* Add one rule per name; names this architecture lacks are skipped. */
static int
sandbox_add(scmp_filter_ctx ctx, uint32_t action, const char *const *names, size_t n,
    char *err, size_t errlen)
{
	size_t i;
	int nr, rc;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(names[i])) == __NR_SCMP_ERROR)
			continue;
		if (strcmp(names[i], "socket") == 0)
			continue; /* added with its argument filter below */
		if ((rc = seccomp_rule_add(ctx, action, nr, 0)) < 0) {
			snprintf(err, errlen, "seccomp: %s: %s", names[i], strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* One rule of the narrowing filter; false (err set) when libseccomp refused it. */
static bool
sandbox_narrow_rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
    struct scmp_arg_cmp cmp, char *err, size_t errlen)
{
	int nr = seccomp_syscall_resolve_name(name), rc;

	if (nr == __NR_SCMP_ERROR)
		return true; /* not on this architecture */
	if ((rc = seccomp_rule_add_array(ctx, action, nr, 1, &cmp)) < 0) {
		snprintf(err, errlen, "seccomp: %s: %s", name, strerror(-rc));
		return false;
	}
	return true;
}

/*
 * A second filter that takes away what the allow-list lets through whole
 * (filters stack, the stricter answer wins): the random ioctls (fatal),
 * memory both writable and executable, or made executable later, new
 * processes (clone only makes threads; clone3 says ENOSYS, so the C library
 * uses clone), and signals to any process but this one.
 */
static int
sandbox_narrow(char *err, size_t errlen)
{
	const scmp_datum_t wx = PROT_WRITE | PROT_EXEC;
	scmp_filter_ctx ctx;
	size_t i;
	int rc;
	bool ok;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp: cannot set up a filter");
		return -1;
	}
	ok = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) == 0;
	for (i = 0; ok && i < sizeof sandbox_random_ioctls / sizeof sandbox_random_ioctls[0]; i++)
		ok = sandbox_narrow_rule(ctx, SCMP_ACT_KILL_PROCESS, "ioctl",
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, sandbox_random_ioctls[i]), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "mmap",
	    SCMP_A2(SCMP_CMP_MASKED_EQ, wx, wx), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "mmap2",
	    SCMP_A2(SCMP_CMP_MASKED_EQ, wx, wx), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "mprotect",
	    SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "pkey_mprotect",
	    SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone",
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0), err, errlen);
	ok = ok && sandbox_narrow_rule(ctx, SCMP_ACT_ERRNO(EPERM), "tgkill",
	    (struct scmp_arg_cmp){ .arg = 0, .op = SCMP_CMP_NE,
	    .datum_a = (scmp_datum_t)getpid(), .datum_b = 0 }, err, errlen);
	if (ok && (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0 &&
	    rc != -EDOM) {
		snprintf(err, errlen, "seccomp: clone3: %s", strerror(-rc));
		ok = false;
	}
	if (ok && (rc = seccomp_load(ctx)) < 0) {
		snprintf(err, errlen, "seccomp: %s", strerror(-rc));
		ok = false;
	}
	seccomp_release(ctx);
	return ok ? 0 : -1;
}

bool
sandbox_available(void)
{
	return true;
}

int
sandbox_apply(char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	/* First: once the allow-list is in, seccomp() itself is refused. */
	if (sandbox_narrow(err, errlen) == -1) {
		/* Nothing was loaded when the library itself is missing. */
		if (sandbox_dl_error()[0] != '\0') {
			snprintf(err, errlen, "seccomp: %s", sandbox_dl_error());
			return 1;
		}
		return -1;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL) {
		snprintf(err, errlen, "seccomp: cannot set up a filter");
		return -1;
	}
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0)
		goto fail;
	if (sandbox_add(ctx, SCMP_ACT_ALLOW, sandbox_allowed,
	    sizeof sandbox_allowed / sizeof sandbox_allowed[0], err, errlen) == -1 ||
	    sandbox_add(ctx, SCMP_ACT_KILL_PROCESS, sandbox_killed,
	    sizeof sandbox_killed / sizeof sandbox_killed[0], err, errlen) == -1) {
		seccomp_release(ctx);
		return -1;
	}
	for (i = 0; i < sizeof sandbox_families / sizeof sandbox_families[0]; i++) {
		/* Spelt out: SCMP_A0() leaves datum_b to the compiler. */
		struct scmp_arg_cmp family = { .arg = 0, .op = SCMP_CMP_EQ,
		    .datum_a = (scmp_datum_t)sandbox_families[i], .datum_b = 0 };

		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, family)) < 0)
			goto fail;
	}
	if ((rc = seccomp_load(ctx)) < 0)
		goto fail;
	seccomp_release(ctx);
	return 0;
fail:
	snprintf(err, errlen, "seccomp: %s", strerror(-rc));
	seccomp_release(ctx);
	return -1;
}
#else
bool
sandbox_available(void)
{
	return false;
}

int
sandbox_apply(char *err, size_t errlen)
{
	return 0;
}
#endif
