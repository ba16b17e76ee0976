/* SPDX-License-Identifier: MIT */
/*
 * The daemon's processes, and what each may do.
 *
 * With the kernel sink the daemon is three processes:
 *
 *   feeder      the process that was started: its pid is the pidfile's and
 *               systemd's main pid.
 *               user: the -D user, else the one it was started as.
 *               capabilities: CAP_SYS_ADMIN alone (PRIVSEP_FEEDER_CAPS).
 *               system calls: the exact list of src/feeder/feeder_seccomp.c;
 *               not dumpable.
 *               holds: /dev/random, the pidfile's lock, the systemd socket.
 *               does: what the worker's frames ask, within the ceiling
 *               (src/feeder/feeder.c): nothing else.
 *   supervisor  forked by the feeder before the feeder drops anything.
 *               user: the one the daemon was started as.
 *               capabilities: those it was started with, less CAP_SYS_ADMIN,
 *               at most PRIVSEP_SUPERVISOR_CAPS (what a worker's start-up
 *               needs as root); no_new_privs.
 *               holds: nothing but the pidfile (it removes it at the end).
 *               reads: the feeder's frames, its children's exit statuses, and
 *               the worker's fixed-size HOOKS requests on a socket of their
 *               own.
 *               does: forks a worker, kills it when the feeder says so,
 *               passes SIGHUP and SIGUSR1 on (src/daemon/supervisor.c); runs
 *               the generation hooks a worker asks for, one at a time, once
 *               per generation ID (src/daemon/hooks.c).
 *   worker      forked by the supervisor, and again after each death.
 *               starts with the supervisor's powers and sets up as the daemon
 *               always did: binds the control socket (handing it to the -D
 *               user), opens the kernel log, then
 *               without -D: drops every capability before it opens a source
 *               or starts a thread (privsep_worker_setup), so no thread of
 *               it ever holds one; it keeps its user (as root, uid 0's owner
 *               access to root's device nodes) and no_new_privs; once set
 *               up, the seccomp allow-list of src/worker/sandbox.c;
 *               with -D: opens its sources with those powers, then switches
 *               to the user and its groups, no capability at all in any
 *               thread, the seccomp allow-list of src/worker/sandbox.c
 *               (privsep_worker_ready).
 *               holds: sources, reserves, the control socket; never
 *               /dev/random (on kernels before 5.18 a read-only descriptor of
 *               it, for poll() alone).
 *               does: everything else; it feeds the kernel by asking the
 *               feeder (src/worker/feedclient.c).
 *
 * With a file, FIFO or stdout sink, or -t, there is no feeder: the daemon is
 * one process, the worker alone, dropping as above (the seccomp allow-list
 * only with -D). Nothing there runs the generation hooks: no process of it
 * keeps the powers to start programs, and none may gain them for it.
 *
 * Why three: seccomp filters are inherited and can only narrow, so the
 * feeder, once confined to its exact list, can neither fork a worker nor
 * let one open devices; the supervisor is forked before that and keeps the
 * powers a worker starts with, so a restarted worker sets up exactly as the
 * first one did, while the supervisor itself parses nothing a worker or a
 * device wrote.
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include <linux/capability.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "daemonize.h"
#include "feedclient.h"
#include "feeder.h"
#include "hookclient.h"
#include "hostproc.h"
#include "log.h"
#include "notify.h"
#include "pidfile.h"
#include "privdrop.h"
#include "privsep.h"
#include "sandbox.h"
#include "supervisor.h"

/* The feeder's one capability: RNDADDENTROPY and RNDRESEEDCRNG need it. */
#define PRIVSEP_FEEDER_CAPS PRIVDROP_CAP(CAP_SYS_ADMIN)
/*
 * The most a supervisor keeps (as root): what a worker uses before its own
 * drop. Switching to the -D user (SETUID, SETGID, SETPCAP for the bounding
 * set), root's access to devices and files (DAC_OVERRIDE, DAC_READ_SEARCH,
 * FOWNER), handing the control socket over (CHOWN), locking the reserves
 * (IPC_LOCK), a --health-listen port below 1024 (NET_BIND_SERVICE), the
 * kernel log under kernel.dmesg_restrict, where clone detection reads
 * (SYSLOG), and ending a worker of another user (KILL).
 */
#define PRIVSEP_SUPERVISOR_CAPS (PRIVDROP_CAP(CAP_CHOWN) | PRIVDROP_CAP(CAP_DAC_OVERRIDE) | \
	PRIVDROP_CAP(CAP_DAC_READ_SEARCH) | PRIVDROP_CAP(CAP_FOWNER) | \
	PRIVDROP_CAP(CAP_IPC_LOCK) | PRIVDROP_CAP(CAP_KILL) | \
	PRIVDROP_CAP(CAP_NET_BIND_SERVICE) | PRIVDROP_CAP(CAP_SETGID) | \
	PRIVDROP_CAP(CAP_SETPCAP) | PRIVDROP_CAP(CAP_SETUID) | PRIVDROP_CAP(CAP_SYSLOG))
/* A worker keeps nothing. */
#define PRIVSEP_WORKER_CAPS 0

/* In a worker: the supervisor it was forked by (0 when there is no feeder). */
static pid_t privsep_supervisor;

/* The feeder: drop to CAP_SYS_ADMIN, confine, and serve until the end. */
static void __attribute__((noreturn))
privsep_feeder(struct sink *sink, pid_t supervisor, int supervisor_fd)
{
	struct feeder f;
	sigset_t set;
	char err[256];
	int signal_fd, rc;

	feeder_init(&f, &feeder_kernel_ops);
	f.random_fd = sink->fd;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (signal_fd = signalfd(-1, &set, SFD_CLOEXEC)) == -1)
		fatal("feeder: signals");
	signal(SIGPIPE, SIG_IGN);
	/*
	 * A background start waits on the worker's end of the readiness pipe,
	 * not ours; our stderr is the starting command's until the worker's
	 * HELLO, then /dev/null (opened now: the filter forbids it later).
	 */
	if (daemonize_release() &&
	    (f.quiet_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		fatal("feeder: /dev/null");
	privdrop_apply("feeder", PRIVSEP_FEEDER_CAPS);
	/* The worker may share our user: no ptrace, no /proc/PID/mem of ours. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		fatalc(EX_OSERR, "feeder: PR_SET_DUMPABLE: %s", strerror(errno));
	log_info("feeder: pid %ld holds %s; supervisor pid %ld", (long)getpid(), sink->path,
	    (long)supervisor);
	if ((rc = feeder_seccomp_apply(f.random_fd, err, sizeof err)) == -1)
		fatalc(EX_OSERR, "%s", err);
	if (rc == 1)
		log_warnx("%s", err);
	rc = feeder_run(&f, supervisor, supervisor_fd, signal_fd);
	/*
	 * _exit: under the filter nothing more may run at exit. A sanitizer
	 * build's leak check stops the world with ptrace, which the filter
	 * refuses; its failure report then waited forever on itself.
	 */
	fflush(NULL);
	_exit(rc);
}

/* A new worker's sink: requests to the feeder instead of /dev/random. */
static void
privsep_worker_sink(struct sink *sink, int fd)
{
	struct feedclient *c = feedclient_new(fd);

	privsep_supervisor = getppid();
	sink->ops = &feedclient_ops;
	sink->ops_arg = c;
	sink->feeder = c;
	/* Kernels before 5.18: poll() says when the pool is writable; no privilege needed. */
	if (!sink->modern && (sink->fd = open(sink->path, O_RDONLY | O_CLOEXEC)) == -1)
		log_warn("%s: opening it to poll", sink->path);
	notify_relay(feedclient_status, c);
}

void
privsep_worker_end(struct sink *sink)
{
	feedclient_free(sink->feeder);
	sink->feeder = NULL;
	sink->ops_arg = NULL;
}

void
privsep_split(struct sink *sink, struct pidfile *pf, const struct config *cfg)
{
	int chan[2], fd, hook_fd = -1;
	pid_t pid, feeder = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) == -1)
		fatal("privsep: socketpair");
	fflush(NULL);
	if ((pid = fork()) == -1)
		fatal("privsep: fork");
	if (pid != 0) {
		close(chan[1]);
		privsep_feeder(sink, pid, chan[0]);
	}
	/* The supervisor: nothing of the kernel's, and it ends with the feeder. */
	close(chan[0]);
	close(sink->fd);
	sink->fd = -1;
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 || getppid() != feeder)
		_exit(EX_OSERR);
	privdrop_limit("supervisor", PRIVSEP_SUPERVISOR_CAPS);
	fd = supervisor_run(chan[1], pf, cfg, &hook_fd);
	/* Here we are a worker; a plugin launcher started before the split is the supervisor's. */
	launch_inherited();
	privsep_worker_sink(sink, fd);
	hookclient_attach(hook_fd);
	log_debug("worker: pid %ld started", (long)getpid());
}

void
privsep_worker_setup(const struct config *cfg)
{
	if (privdrop_prepared())
		privdrop_bound_keep(PRIVSEP_WORKER_CAPS);
	else
		privdrop_limit("worker", PRIVSEP_WORKER_CAPS);
}

void
privsep_worker_ready(const struct config *cfg, struct sink *sink)
{
	char err[256];
	int rc;

	if (privdrop_prepared()) {
		privdrop_apply("worker", PRIVSEP_WORKER_CAPS);
		/* A change of user forgets the parent-death signal: ask again. */
		if (privsep_supervisor != 0 && (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) == -1 ||
		    getppid() != privsep_supervisor))
			fatalc(EX_SOFTWARE, "worker: the supervisor is gone");
	}
	/*
	 * Under a feeder the worker is always confined (as root too: it keeps
	 * uid 0's file access, not its system calls); alone, with -D.
	 */
	if (cfg->drop_privileges != NULL || sink->feeder != NULL) {
		rc = sandbox_apply(err, sizeof err);
		/* -D asked for the sandbox; without it a missing libseccomp is a warning. */
		if (rc == -1 || (rc == 1 && cfg->drop_privileges != NULL))
			fatalc(EX_OSERR, "%s: %s", cfg->drop_privileges != NULL ? "-D" : "worker",
			    err);
		if (rc == 1)
			log_warnx("worker: %s; running without the system-call allow-list "
			    "(and still without any capability)", err);
		else if (sandbox_available())
			log_info("worker: system calls confined to the seccomp allow-list");
	}
	if (sink->feeder != NULL &&
	    feedclient_request(sink->feeder, FEEDPROTO_HELLO, 0, NULL, 0, NULL) == -1)
		fatal("worker: saying HELLO to the feeder");
}
