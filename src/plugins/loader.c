/* SPDX-License-Identifier: MIT */
/*
 * Drop-in plugins: every *.so in the plugin directory, checked (an ELF
 * shared object, owned and writable as sshd demands) and handed to a host
 * process of its own; refused with one log line naming the file and why.
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "loader.h"
#include "hostproc_int.h"
#include "reader.h"
#include "registry.h"
#include "xmalloc.h"

/* One .so seen in the plugin directory: loaded, or refused with a reason. */
struct plugin {
	TAILQ_ENTRY(plugin) entry;
	char *path;
	struct hostproc *host; /* its process; NULL once refused */
	const struct entropyd_source *src;
	char *reason;        /* why it was refused, NULL when loaded */
	struct stat st;      /* a refused file is tried again once it changes */
	bool fresh;          /* loaded by the latest loader_load_dir() */
};

static TAILQ_HEAD(, plugin) plugins = TAILQ_HEAD_INITIALIZER(plugins);

static void loader_refuse(struct plugin *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Record and log, in one line, why a plugin is refused; unload it. */
static void
loader_refuse(struct plugin *p, const char *fmt, ...)
{
	va_list ap;

	free(p->reason);
	va_start(ap, fmt);
	if (vasprintf(&p->reason, fmt, ap) < 0)
		fatal("vasprintf");
	va_end(ap);
	log_warnx("plugin %s: refused: %s", p->path, p->reason);
	if (p->host != NULL)
		hostproc_free(p->host);
	p->host = NULL;
	p->src = NULL;
	p->fresh = false;
}

/* Whether the file starts like a shared object of this machine's kind. */
static bool
loader_is_shared_object(const char *path, const char **why)
{
	ElfW(Ehdr) eh;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		*why = strerror(errno);
		return false;
	}
	n = read(fd, &eh, sizeof eh);
	close(fd);
	if (n != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		*why = "not a shared object (no ELF header)";
		return false;
	}
	if (eh.e_type != ET_DYN) {
		*why = "not a shared object (an ELF file of another type)";
		return false;
	}
	return true;
}

/* Whether st is owned by root or the daemon's user and writable by no one else. */
static bool
loader_safe_stat(const struct stat *st, const char *what, char *why, size_t len)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len, "%s is owned by uid %u, not by root or the daemon's user", what,
		    (unsigned)st->st_uid);
		return false;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "%s is writable by %s (mode %04o)", what,
		    st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
		return false;
	}
	return true;
}

/*
 * Check a plugin as sshd checks its files: a regular file and its directory
 * (where a symbolic link leads), each owned by root or the daemon's user
 * and writable by no one else. The file is checked through fd, the one the
 * host loads, so it cannot be swapped in between.
 */
static bool
loader_file_safe(const char *path, int fd, char *why, size_t len)
{
	char *dir = realpath(path, NULL), *slash;
	struct stat st;
	bool ok;

	if (dir == NULL)
		dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "not a shared object (not a regular file)");
		free(dir);
		return false;
	}
	ok = loader_safe_stat(&st, "the file", why, len);
	if (slash != NULL)
		*slash = '\0';
	if (ok && stat(slash != NULL ? (*dir != '\0' ? dir : "/") : ".", &st) == -1) {
		snprintf(why, len, "its directory: %s", strerror(errno));
		ok = false;
	} else if (ok)
		ok = loader_safe_stat(&st, "its directory", why, len);
	free(dir);
	return ok;
}

/* Load one plugin in a host process and register its source, or refuse it. */
static void
loader_load(struct plugin *p)
{
	const struct entropyd_source *src;
	const char *why;
	char err[512];
	int fd;

	if (!loader_is_shared_object(p->path, &why)) {
		loader_refuse(p, "%s", why);
		return;
	}
	if ((fd = open(p->path, O_RDONLY | O_CLOEXEC)) == -1) {
		loader_refuse(p, "%s", strerror(errno));
		return;
	}
	if (!loader_file_safe(p->path, fd, err, sizeof err)) {
		close(fd);
		loader_refuse(p, "unsafe: %s", err);
		return;
	}
	if ((p->host = hostproc_start(p->path, fd, err, sizeof err)) == NULL) {
		loader_refuse(p, "%s", err);
		return;
	}
	src = hostproc_source(p->host);
	if (registry_add(src, p->path, err, sizeof err) == -1) {
		loader_refuse(p, "%s", err);
		return;
	}
	p->src = src;
	p->fresh = true;
	log_info("plugin %s: source %s (ABI %u.%u) loaded", p->path, src->name,
	    src->abi_major, src->abi_minor);
}

/* Plugins are files named *.so, hidden ones aside. */
static int
loader_filter(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return d->d_name[0] != '.' && len > 3 && strcmp(d->d_name + len - 3, ".so") == 0;
}

/* The record of a path, or NULL. */
static struct plugin *
loader_find(const char *path)
{
	struct plugin *p;

	TAILQ_FOREACH(p, &plugins, entry)
		if (strcmp(p->path, path) == 0)
			return p;
	return NULL;
}

/* Load every *.so in dir not seen before (a changed refused one again). */
int
loader_load_dir(const char *dir)
{
	struct dirent **names;
	struct plugin *p;
	struct stat st;
	char *path;
	int i, n, added = 0;

	TAILQ_FOREACH(p, &plugins, entry)
		p->fresh = false;
	if ((n = scandir(dir, &names, loader_filter, alphasort)) == -1) {
		if (errno == ENOENT)
			log_debug("plugin directory %s: none", dir);
		else
			log_warn("plugin directory %s", dir);
		return 0;
	}
	launch_prepare();
	for (i = 0; i < n; i++) {
		xasprintf(&path, "%s/%s", dir, names[i]->d_name);
		free(names[i]);
		if (stat(path, &st) == -1) {
			log_debug("plugin %s: %s", path, strerror(errno));
			free(path);
			continue;
		}
		if ((p = loader_find(path)) != NULL) {
			/* Loaded ones stay; a refused one is tried again once replaced. */
			if (p->reason == NULL || (p->st.st_dev == st.st_dev &&
			    p->st.st_ino == st.st_ino && p->st.st_size == st.st_size &&
			    p->st.st_mtim.tv_sec == st.st_mtim.tv_sec &&
			    p->st.st_mtim.tv_nsec == st.st_mtim.tv_nsec)) {
				free(path);
				continue;
			}
			free(path);
			free(p->reason);
			p->reason = NULL;
		} else {
			p = xcalloc(1, sizeof *p);
			p->path = path;
			TAILQ_INSERT_TAIL(&plugins, p, entry);
		}
		p->st = st;
		if (!S_ISREG(st.st_mode)) {
			loader_refuse(p, "not a shared object (not a regular file)");
			continue;
		}
		loader_load(p);
		if (p->reason == NULL)
			added++;
	}
	free(names);
	return added;
}

/* SIGHUP: load new plugins, then select and configure their sources. */
int
loader_reload(const struct config *cfg)
{
	struct entropyd_module *m;
	struct plugin *p;
	char err[512];
	int added;

	added = loader_load_dir(cfg->plugin_dir);
	TAILQ_FOREACH(p, &plugins, entry) {
		if (!p->fresh || (m = registry_find(p->src->name)) == NULL)
			continue;
		if (registry_enable(m, cfg, err, sizeof err) == -1) {
			loader_init_failed(m, err);
			added--;
		}
	}
	return added;
}

/* A plugin's configure() failed: unregister its source, then refuse it. */
void
loader_init_failed(struct entropyd_module *m, const char *why)
{
	struct plugin *p = m->path != NULL ? loader_find(m->path) : NULL;

	if (p == NULL)
		fatalx("%s: not a plugin", m->src->name);
	registry_remove_module(m);
	loader_refuse(p, "init failed: %s", why);
}

/* -l: the directory, then each plugin: its source, or why it was refused. */
void
loader_print_list(const char *dir, FILE *f)
{
	struct plugin *p;

	fprintf(f, "plugin directory: %s\n", dir);
	TAILQ_FOREACH(p, &plugins, entry) {
		if (p->reason != NULL)
			fprintf(f, "refused plugin %s: %s\n", p->path, p->reason);
		else
			fprintf(f, "plugin %s: source %s\n", p->path, p->src->name);
	}
}

/* Unload every plugin; the registry must hold none of their sources. */
void
loader_free(void)
{
	struct plugin *p;

	reader_reap();
	while ((p = TAILQ_FIRST(&plugins)) != NULL) {
		TAILQ_REMOVE(&plugins, p, entry);
		if (p->host != NULL)
			hostproc_free(p->host);
		free(p->path);
		free(p->reason);
		free(p);
	}
	hostproc_free_all();
}
