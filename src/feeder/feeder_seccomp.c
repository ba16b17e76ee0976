/* SPDX-License-Identifier: MIT */
/*
 * The feeder's system calls, the whole list. The filter is written out here
 * in classic BPF rather than built with libseccomp, so that it is exact,
 * readable in one place, and costs the feeder no library.
 *
 * Allowed: read and write (its signalfd, stderr, the plain write that mixes
 * host data into /dev/random), recvmsg/sendmsg/recvfrom/sendto on its
 * sockets (the worker's, the supervisor's, syslog's and systemd's), poll,
 * close, getrandom (is the CRNG ready), reaping the supervisor, clocks,
 * getpid (syslog), memory without PROT_EXEC (syslog's buffers), its own
 * signal stack, dup2 (stderr onto /dev/null once the daemon is up), futex
 * (the C library's and the sanitizers' locks, which spin when refused), exit;
 * ioctl only on the /dev/random descriptor and only RNDADDENTROPY,
 * RNDRESEEDCRNG and RNDGETENTCNT.
 * Killed at once: exec, ptrace, fork and clone, id and capability changes,
 * mounts, namespaces, modules, kexec, bpf, perf, keyrings, userfaultfd.
 * Everything else fails with EPERM (it opens nothing, makes no socket).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/random.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "feeder.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#define FEEDER_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define FEEDER_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FEEDER_ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FEEDER_ARCH AUDIT_ARCH_ARM
#elif defined(__riscv) && __riscv_xlen == 64
#define FEEDER_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FEEDER_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define FEEDER_ARCH AUDIT_ARCH_S390X
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS SECCOMP_RET_KILL
#endif

#ifdef FEEDER_ARCH
/* The low 32 bits of argument i (the kernel reads ioctl's fd and request as 32-bit). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FEEDER_ARG_LO(i) (offsetof(struct seccomp_data, args[i]) + 4)
#else
#define FEEDER_ARG_LO(i) offsetof(struct seccomp_data, args[i])
#endif

/* Allowed as they are. */
static const int feeder_allowed[] = {
	__NR_read, __NR_write, __NR_close, __NR_recvmsg, __NR_sendmsg,
#ifdef __NR_recvfrom
	__NR_recvfrom, __NR_sendto,
#endif
#ifdef __NR_socketcall
	__NR_socketcall, /* i386: send and recv go through it */
#endif
#ifdef __NR_poll
	__NR_poll,
#endif
#ifdef __NR_ppoll
	__NR_ppoll,
#endif
#ifdef __NR_ppoll_time64
	__NR_ppoll_time64,
#endif
	__NR_getrandom, __NR_wait4, __NR_waitid, __NR_clock_gettime,
#ifdef __NR_clock_gettime64
	__NR_clock_gettime64,
#endif
	__NR_gettimeofday, __NR_getpid, __NR_brk, __NR_munmap, __NR_fstat,
	__NR_futex,
#ifdef __NR_futex_time64
	__NR_futex_time64,
#endif
	__NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_restart_syscall,
	__NR_sigaltstack, /* the C runtime's and sanitizers' signal stacks */
#ifdef __NR_dup2
	__NR_dup2,
#endif
	__NR_dup3, /* stderr onto /dev/null once the daemon is up */
	__NR_exit, __NR_exit_group,
};

/* Fatal: nothing the feeder does, and each a way out of it. */
static const int feeder_killed[] = {
	__NR_execve, __NR_execveat, __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
	__NR_clone, __NR_clone3,
#ifdef __NR_fork
	__NR_fork, __NR_vfork,
#endif
	__NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid, __NR_setresuid,
	__NR_setresgid, __NR_setgroups, __NR_capset, __NR_unshare, __NR_setns,
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_init_module,
	__NR_finit_module, __NR_delete_module, __NR_kexec_load,
#ifdef __NR_kexec_file_load
	__NR_kexec_file_load,
#endif
	__NR_bpf, __NR_perf_event_open, __NR_userfaultfd, __NR_keyctl, __NR_add_key,
	__NR_request_key, __NR_personality, __NR_io_uring_setup,
};

#define FEEDER_MAX_INSNS 160

struct feeder_bpf {
	struct sock_filter insn[FEEDER_MAX_INSNS];
	unsigned short n;
};

/* Append one instruction (the program is sized for the lists above). */
static void
feeder_emit(struct feeder_bpf *b, struct sock_filter i)
{
	if (b->n < FEEDER_MAX_INSNS)
		b->insn[b->n] = i;
	b->n++;
}

#define FEEDER_STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define FEEDER_JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define FEEDER_RET(action) FEEDER_STMT(BPF_RET | BPF_K, (action))
#define FEEDER_EPERM (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define FEEDER_LOAD(off) FEEDER_STMT(BPF_LD | BPF_W | BPF_ABS, (off))

/* "If the call is nr, return action"; the accumulator holds the call's number. */
static void
feeder_emit_each(struct feeder_bpf *b, const int *nrs, size_t n, uint32_t action)
{
	size_t i;

	for (i = 0; i < n; i++) {
		feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i], 0, 1));
		feeder_emit(b, FEEDER_RET(action));
	}
}

/* Build the filter; false when it did not fit. */
static bool
feeder_build(struct feeder_bpf *b, int random_fd)
{
	b->n = 0;
	/* Another architecture's calls have other numbers: refuse them all. */
	feeder_emit(b, FEEDER_LOAD(offsetof(struct seccomp_data, arch)));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FEEDER_ARCH, 1, 0));
	feeder_emit(b, FEEDER_RET(SECCOMP_RET_KILL_PROCESS));
	feeder_emit(b, FEEDER_LOAD(offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
	/* x32 calls share the architecture value: refuse them. */
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
	feeder_emit(b, FEEDER_RET(SECCOMP_RET_KILL_PROCESS));
#endif
	feeder_emit_each(b, feeder_allowed, sizeof feeder_allowed / sizeof feeder_allowed[0],
	    SECCOMP_RET_ALLOW);
	/* ioctl: on /dev/random, and only the three requests (jumps count the lines below). */
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 8));
	feeder_emit(b, FEEDER_LOAD(FEEDER_ARG_LO(0)));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)random_fd, 0, 4));
	feeder_emit(b, FEEDER_LOAD(FEEDER_ARG_LO(1)));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RNDADDENTROPY, 3, 0));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RNDRESEEDCRNG, 2, 0));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RNDGETENTCNT, 1, 0));
	feeder_emit(b, FEEDER_RET(FEEDER_EPERM));
	feeder_emit(b, FEEDER_RET(SECCOMP_RET_ALLOW));
	/* Memory for syslog's buffers, never executable. */
#ifdef __NR_mmap2
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap2, 0, 4));
#else
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 4));
#endif
	feeder_emit(b, FEEDER_LOAD(FEEDER_ARG_LO(2)));
	feeder_emit(b, FEEDER_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1));
	feeder_emit(b, FEEDER_RET(FEEDER_EPERM));
	feeder_emit(b, FEEDER_RET(SECCOMP_RET_ALLOW));
	feeder_emit_each(b, feeder_killed, sizeof feeder_killed / sizeof feeder_killed[0],
	    SECCOMP_RET_KILL_PROCESS);
	feeder_emit(b, FEEDER_RET(FEEDER_EPERM));
	return b->n <= FEEDER_MAX_INSNS;
}

int
feeder_seccomp_apply(int random_fd, char *err, size_t errlen)
{
	struct feeder_bpf b;
	struct sock_fprog prog;

	if (!feeder_build(&b, random_fd)) {
		snprintf(err, errlen, "feeder: the seccomp filter does not fit (%u instructions)",
		    b.n);
		return -1;
	}
	prog.len = b.n;
	prog.filter = b.insn;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == -1) {
		snprintf(err, errlen, "feeder: seccomp: %s", strerror(errno));
		return -1;
	}
	return 0;
}
#else
int
feeder_seccomp_apply(int random_fd, char *err, size_t errlen)
{
	snprintf(err, errlen, "feeder: no seccomp filter for this architecture");
	return 1;
}
#endif
