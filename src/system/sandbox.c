/* SPDX-License-Identifier: MIT */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "sandbox.h"

#ifdef HAVE_SECCOMP
/*
 * What the running daemon needs: I/O on what it already holds, the event
 * loop, memory, threads (a reopened source may start a reader thread),
 * clocks, signals, syslog and the control socket's clients, device ioctls
 * (RNDADDENTROPY, TPM, usbfs, ALSA), opening devices and files again (a
 * re-probe), and netlink for USB hotplug. Not exec, not ptrace, not new
 * privileges, not mounts or modules.
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
	"sigaltstack", "tgkill", "tkill", "kill", "restart_syscall", "wait4", "arch_prctl",
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
