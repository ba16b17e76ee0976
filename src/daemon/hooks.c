/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's generation hook runner: which files of the hook
 * directory may run (owner and mode of each, and of every directory above
 * it), running them one at a time with their environment and timeout, and
 * reporting each outcome. Driven by the supervisor's loop (hooks_reaped,
 * hooks_tick); it never waits itself.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "genfile.h"
#include "hooks.h"
#include "log.h"
#include "vmgenid.h"

/* Name endings of files a package manager leaves behind. */
static const char *const hooks_leftovers[] = {
	".dpkg-old", ".dpkg-dist", ".dpkg-new", ".dpkg-tmp", ".rpmnew", ".rpmsave",
};

static void hooks_start_next(struct hooks_run *);

/* Whether a name is no hook at all: hidden, a backup, a package manager's leftover. */
static bool
hooks_skipped_name(const char *name)
{
	size_t len = strlen(name), i, n;

	if (name[0] == '.' || len == 0 || name[len - 1] == '~' || strstr(name, ".ucf-") != NULL)
		return true;
	for (i = 0; i < sizeof hooks_leftovers / sizeof hooks_leftovers[0]; i++) {
		n = strlen(hooks_leftovers[i]);
		if (len > n && strcmp(name + len - n, hooks_leftovers[i]) == 0)
			return true;
	}
	return false;
}

/*
 * Whether a directory on a hook's path is safe: root's, writable by no one
 * else; one above the last may be writable by others when it is sticky.
 */
static bool
hooks_dir_ok(const char *path, bool last)
{
	struct stat st;

	if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return false;
	return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (!last && (st.st_mode & S_ISVTX));
}

/* Whether every directory from / down to real (absolute, no links: as realpath gives) is safe. */
static bool
hooks_path_safe(const char *real)
{
	char path[PATH_MAX];
	size_t len = strlen(real), i;

	if (real[0] != '/' || len >= sizeof path || !hooks_dir_ok("/", len == 1))
		return false;
	/* Each prefix that ends before a '/', and the whole. */
	for (i = 1; i < len; i++) {
		if (real[i + 1] != '/' && i + 1 != len)
			continue;
		memcpy(path, real, i + 1);
		path[i + 1] = '\0';
		if (!hooks_dir_ok(path, i + 1 == len))
			return false;
	}
	return true;
}

enum feedproto_hook_reason
hooks_check_dir(const char *dir)
{
	char real[PATH_MAX];

	if (realpath(dir, real) == NULL)
		return errno == ENOENT ? FEEDPROTO_HOOK_NONE : FEEDPROTO_HOOK_DIRECTORY;
	return hooks_path_safe(real) ? FEEDPROTO_HOOK_NONE : FEEDPROTO_HOOK_DIRECTORY;
}

/* The checks of the file itself: owner and mode. */
static enum feedproto_hook_reason
hooks_check_file(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return FEEDPROTO_HOOK_NOT_FILE;
	if (st->st_uid != 0)
		return FEEDPROTO_HOOK_OWNER;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return FEEDPROTO_HOOK_WRITABLE;
	return FEEDPROTO_HOOK_NONE;
}

enum feedproto_hook_reason
hooks_check_one(const char *dir, const char *name, char **path, bool *skip)
{
	char full[PATH_MAX], real[PATH_MAX], *slash;
	enum feedproto_hook_reason r;
	struct stat st;

	*path = NULL;
	*skip = false;
	if (hooks_skipped_name(name) ||
	    snprintf(full, sizeof full, "%s/%s", dir, name) >= (int)sizeof full) {
		*skip = true;
		return FEEDPROTO_HOOK_NONE;
	}
	if (lstat(full, &st) == -1 || S_ISDIR(st.st_mode)) {
		*skip = true; /* gone since the directory was read, or a directory */
		return FEEDPROTO_HOOK_NONE;
	}
	if (S_ISLNK(st.st_mode)) {
		/* A link: what it leads to, and every directory above that, must pass too. */
		if (realpath(full, real) == NULL || stat(real, &st) == -1)
			return FEEDPROTO_HOOK_LINK;
		if ((r = hooks_check_file(&st)) != FEEDPROTO_HOOK_NONE)
			return r;
		slash = strrchr(real, '/');
		*slash = '\0';
		if (!hooks_path_safe(real[0] != '\0' ? real : "/"))
			return FEEDPROTO_HOOK_DIRECTORY;
		*slash = '/';
	} else {
		if ((r = hooks_check_file(&st)) != FEEDPROTO_HOOK_NONE)
			return r;
		snprintf(real, sizeof real, "%s", full);
	}
	if (!(st.st_mode & S_IXUSR)) {
		*skip = true; /* not meant to run */
		return FEEDPROTO_HOOK_NONE;
	}
	*path = strdup(real);
	return *path != NULL ? FEEDPROTO_HOOK_NONE : FEEDPROTO_HOOK_EXEC;
}

/* Lexical order of names, byte by byte, whatever the locale. */
static int
hooks_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Report one outcome: to the log, then to the sink. */
static void
hooks_report(struct hooks_run *h, const struct hooks_entry *e, enum feedproto_hook_result result,
    enum feedproto_hook_reason reason, int exit_status, uint64_t duration_ns)
{
	struct feedproto_hook_ran ran = {
		.generation = h->req.generation, .result = (uint8_t)result,
		.reason = (uint8_t)reason, .exit_status = (uint8_t)exit_status,
		.duration_ms = (uint32_t)(duration_ns / 1000000u),
	};

	snprintf(ran.name, sizeof ran.name, "%s", e->name);
	switch (result) {
	case FEEDPROTO_HOOK_OK:
		log_info("generation hook %s: ok (%" PRIu32 " ms)", e->name, ran.duration_ms);
		break;
	case FEEDPROTO_HOOK_FAILED:
		if (reason == FEEDPROTO_HOOK_SIGNAL)
			log_warnx("generation hook %s: failed: killed by signal %d (%" PRIu32 " ms)",
			    e->name, exit_status, ran.duration_ms);
		else if (reason == FEEDPROTO_HOOK_EXEC)
			log_warnx("generation hook %s: failed: cannot be started", e->name);
		else
			log_warnx("generation hook %s: failed: exit status %d (%" PRIu32 " ms)",
			    e->name, exit_status, ran.duration_ms);
		break;
	case FEEDPROTO_HOOK_TIMEOUT:
		log_warnx("generation hook %s: killed at its timeout of %u s", e->name,
		    h->timeout_s);
		break;
	case FEEDPROTO_HOOK_REFUSED:
		log_warnx("generation hook %s/%s refused: %s (a hook must be root's and "
		    "writable by root alone, and so must every directory above it)", h->dir,
		    e->name, feedproto_hook_reason_text(reason));
		break;
	default:
		log_debug("generation hook %s: ready", e->name);
		break;
	}
	if (h->sink.ran != NULL)
		h->sink.ran(&ran, h->sink.arg);
}

/* Forget the entries of the last batch. */
static void
hooks_clear(struct hooks_run *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->entries[i].path);
	h->n = h->next = 0;
	h->ran = h->refused = 0;
}

/* Read and check the directory into the entries, in lexical order, each refused one marked why. */
static void
hooks_scan(struct hooks_run *h)
{
	struct dirent **names = NULL;
	struct hooks_entry *e;
	enum feedproto_hook_reason dir_reason = hooks_check_dir(h->dir), r;
	char *path;
	bool skip;
	int n, i;

	hooks_clear(h);
	if ((n = scandir(h->dir, &names, NULL, hooks_order)) == -1) {
		if (errno != ENOENT)
			log_warn("generation hooks: %s", h->dir);
		return;
	}
	for (i = 0; i < n; i++) {
		r = dir_reason;
		path = NULL;
		skip = false;
		if (r == FEEDPROTO_HOOK_NONE)
			r = hooks_check_one(h->dir, names[i]->d_name, &path, &skip);
		else
			skip = hooks_skipped_name(names[i]->d_name);
		if (!skip && strlen(names[i]->d_name) > FEEDPROTO_MAX_HOOK_NAME)
			r = FEEDPROTO_HOOK_NAME;
		if (!skip && h->n < HOOKS_MAX) {
			e = &h->entries[h->n++];
			snprintf(e->name, sizeof e->name, "%.*s", FEEDPROTO_MAX_HOOK_NAME,
			    names[i]->d_name);
			e->refused = r;
			e->path = r == FEEDPROTO_HOOK_NONE ? path : NULL;
			if (r != FEEDPROTO_HOOK_NONE)
				free(path);
		} else {
			if (!skip)
				log_warnx("generation hooks: %s/%s not looked at: only %d hooks are run",
				    h->dir, names[i]->d_name, HOOKS_MAX);
			free(path);
		}
		free(names[i]);
	}
	free(names);
}

/*
 * Start a hook: a clean environment, its own process group, stdin from
 * /dev/null, the signal mask and dispositions of a fresh process. The pid,
 * or -1 with errno (posix_spawn reports a failed exec here).
 */
static pid_t
hooks_spawn(const struct hooks_run *h, const struct hooks_entry *e)
{
	char generation[64], id[32 + GENFILE_ID_CHARS], trigger[64], idtext[GENFILE_ID_CHARS + 1];
	char *const argv[] = { (char *)e->name, NULL };
	char *const envp[] = { (char *)"PATH=" HOOKS_PATH, generation, id, trigger, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t defaults;
	pid_t pid = -1;
	int rc;

	genfile_format(h->req.id, idtext);
	snprintf(generation, sizeof generation, "ENTROPYD_GENERATION=%" PRIu64, h->req.generation);
	snprintf(id, sizeof id, "ENTROPYD_GENERATION_ID=%s", idtext);
	snprintf(trigger, sizeof trigger, "ENTROPYD_TRIGGER=%s",
	    vmgenid_trigger_name((enum vmgenid_trigger)h->req.trigger));
	/* What the daemon ignores stays ignored across exec: not in a hook. */
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGUSR1);
	sigaddset(&defaults, SIGUSR2);
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
		errno = rc;
		return -1;
	}
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		errno = rc;
		return -1;
	}
	if ((rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY,
	    0)) == 0 && (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0 &&
	    (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&attr, &h->child_mask)) == 0 &&
	    (rc = posix_spawnattr_setsigdefault(&attr, &defaults)) == 0)
		rc = posix_spawn(&pid, e->path, &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return pid;
}

/* The batch ended: say so, then start the request that waited, if any. */
static void
hooks_finish(struct hooks_run *h)
{
	uint64_t generation = h->req.generation;

	h->active = false;
	if (h->sink.done != NULL)
		h->sink.done(generation, h->ran, h->refused, h->sink.arg);
	hooks_clear(h);
	if (h->waiting) {
		h->waiting = false;
		hooks_request(h, &h->waiting_req);
	}
}

/* Start the next hook that may run, reporting refused ones on the way; finish at the end. */
static void
hooks_start_next(struct hooks_run *h)
{
	struct hooks_entry *e;
	pid_t pid;

	while (h->next < h->n) {
		e = &h->entries[h->next++];
		if (e->refused != FEEDPROTO_HOOK_NONE) {
			h->refused++;
			hooks_report(h, e, FEEDPROTO_HOOK_REFUSED, e->refused, 0, 0);
			continue;
		}
		h->started_ns = clock_now_ns();
		if ((pid = hooks_spawn(h, e)) == -1) {
			log_warn("generation hook %s: %s", e->name, e->path);
			h->ran++;
			hooks_report(h, e, FEEDPROTO_HOOK_FAILED, FEEDPROTO_HOOK_EXEC, 0, 0);
			continue;
		}
		h->pid = pid;
		h->killed = false;
		h->deadline_ns = h->started_ns + (uint64_t)h->timeout_s * 1000000000u;
		return;
	}
	hooks_finish(h);
}

void
hooks_init(struct hooks_run *h, const char *dir, unsigned timeout_s,
    const struct hooks_sink *sink, const sigset_t *child_mask)
{
	memset(h, 0, sizeof *h);
	h->dir = dir;
	h->timeout_s = timeout_s;
	if (sink != NULL)
		h->sink = *sink;
	if (child_mask != NULL)
		h->child_mask = *child_mask;
	else
		sigemptyset(&h->child_mask);
}

void
hooks_request(struct hooks_run *h, const struct feedproto_hooks *req)
{
	char id[GENFILE_ID_CHARS + 1];

	genfile_format(req->id, id);
	if (req->trigger >= VMGENID_NTRIGGERS) {
		log_warnx("generation hooks: a request for generation %" PRIu64 " names no "
		    "trigger (%" PRIu32 "); refused", req->generation, req->trigger);
		return;
	}
	/* Once per change: the same ID again (a request repeated or replayed) is refused. */
	if ((h->have_last && memcmp(h->last_id, req->id, sizeof h->last_id) == 0) ||
	    (h->waiting && memcmp(h->waiting_req.id, req->id, sizeof req->id) == 0)) {
		log_warnx("generation hooks: generation %s had its hooks already; not run again", id);
		return;
	}
	if (h->active) {
		if (h->waiting)
			log_info("generation hooks: generation %" PRIu64 " replaces %" PRIu64 ", which "
			    "waited for the hooks running", req->generation, h->waiting_req.generation);
		h->waiting = true;
		h->waiting_req = *req;
		return;
	}
	h->req = *req;
	h->have_last = true;
	memcpy(h->last_id, req->id, sizeof h->last_id);
	h->active = true;
	hooks_scan(h);
	log_info("generation %" PRIu64 " (%s, %s): running %zu generation hook%s from %s",
	    req->generation, id, vmgenid_trigger_name((enum vmgenid_trigger)req->trigger), h->n,
	    h->n == 1 ? "" : "s", h->dir);
	hooks_start_next(h);
}

void
hooks_check(struct hooks_run *h)
{
	uint32_t ready = 0, refused = 0;
	size_t i;

	if (h->active)
		return; /* a batch runs: its outcomes are the report */
	memset(&h->req, 0, sizeof h->req);
	hooks_scan(h);
	for (i = 0; i < h->n; i++) {
		if (h->entries[i].refused != FEEDPROTO_HOOK_NONE) {
			refused++;
			hooks_report(h, &h->entries[i], FEEDPROTO_HOOK_REFUSED, h->entries[i].refused, 0, 0);
		} else {
			ready++;
			hooks_report(h, &h->entries[i], FEEDPROTO_HOOK_READY, FEEDPROTO_HOOK_NONE, 0, 0);
		}
	}
	hooks_clear(h);
	if (h->sink.done != NULL)
		h->sink.done(0, ready, refused, h->sink.arg);
}

bool
hooks_reaped(struct hooks_run *h, pid_t pid, int status)
{
	struct hooks_entry *e;
	uint64_t took;

	if (h->pid == 0 || pid != h->pid)
		return false;
	e = &h->entries[h->next - 1];
	took = clock_now_ns() - h->started_ns;
	h->pid = 0;
	h->ran++;
	if (h->killed)
		hooks_report(h, e, FEEDPROTO_HOOK_TIMEOUT, FEEDPROTO_HOOK_NONE, 0, took);
	else if (WIFSIGNALED(status))
		hooks_report(h, e, FEEDPROTO_HOOK_FAILED, FEEDPROTO_HOOK_SIGNAL, WTERMSIG(status), took);
	else
		hooks_report(h, e, WEXITSTATUS(status) == 0 ? FEEDPROTO_HOOK_OK : FEEDPROTO_HOOK_FAILED,
		    FEEDPROTO_HOOK_NONE, WEXITSTATUS(status), took);
	hooks_start_next(h);
	return true;
}

int
hooks_timeout_ms(const struct hooks_run *h)
{
	uint64_t now = clock_now_ns();

	if (h->pid == 0 || h->killed)
		return -1;
	if (now >= h->deadline_ns)
		return 0;
	return (int)((h->deadline_ns - now + 999999u) / 1000000u);
}

void
hooks_tick(struct hooks_run *h)
{
	if (h->pid == 0 || h->killed || clock_now_ns() < h->deadline_ns)
		return;
	/* The group: what the hook started goes with it. */
	kill(-h->pid, SIGKILL);
	kill(h->pid, SIGKILL);
	h->killed = true;
}

void
hooks_abort(struct hooks_run *h)
{
	if (h->pid != 0) {
		kill(-h->pid, SIGKILL);
		kill(h->pid, SIGKILL);
	}
	h->pid = 0;
	h->active = false;
	h->waiting = false;
	hooks_clear(h);
}
