/* SPDX-License-Identifier: MIT */
/*
 * file: a regular file or a FIFO, for tests and for feeding entropyd from
 * another program. Never credited unless the operator gives NAME:entropy.
 * A FIFO is polled by the daemon; a regular file is read from a thread
 * until its end, after which the source is drained.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>
#include "builtin.h"

/* One open file or FIFO. */
struct file_state {
	struct entropyd_instance *instance;
	char *path;
	int fd;
	bool fifo;
};

static const struct entropyd_host *file_host;

static const struct entropyd_option file_options[] = {
	{ "path", NULL, "the regular file or FIFO to read (required)" },
	{ NULL, NULL, NULL }
};

/* The path option, or NULL when none (or an empty one) was given. */
static const char *
file_path(struct entropyd_module *module)
{
	const char *path;

	path = file_host->option(module, "path");
	return path != NULL && *path != '\0' ? path : NULL;
}

/* What kind of file this is, for a message saying why it is refused. */
static const char *
file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "an unsupported kind of file";
}

/* Check the options before probing: a path is required. */
static int
file_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	file_host = host;
	if (file_path(module) == NULL) {
		snprintf(err, errlen, "file: no path given (use -O file:path:PATH)");
		return -1;
	}
	return 0;
}

/* Add the file as the one instance, or say why it cannot be used. */
static int
file_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	struct entropyd_instance *inst;
	struct stat st;
	const char *path;
	int fd;

	file_host = host;
	if ((path = file_path(module)) == NULL) {
		host->unusable(module, "no path given (use -O file:path:PATH)");
		return 0;
	}
	if (stat(path, &st) == -1) {
		host->unusable(module, "%s: %s", path, strerror(errno));
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			host->unusable(module, "%s: %s", path, strerror(errno));
			return 0;
		}
		close(fd);
	} else if (S_ISFIFO(st.st_mode)) {
		/*
		 * Opening and closing a FIFO here would wake a writer blocked
		 * in open() and then break its pipe: only check the access.
		 */
		if (access(path, R_OK) == -1) {
			host->unusable(module, "%s: %s", path, strerror(errno));
			return 0;
		}
	} else {
		host->unusable(module, "%s: %s, not a regular file or FIFO", path,
		    file_kind(st.st_mode));
		return 0;
	}

	if ((inst = host->add_instance(module, "", path, NULL)) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "%s: cannot add an instance", path);
		return -1;
	}
	return 1;
}

/*
 * Open the file. O_NONBLOCK always, so that opening a FIFO with no writer
 * does not block (nor one that replaced the file since probe); it is then
 * cleared for a regular file, where it means nothing anyway.
 */
static int
file_open(struct entropyd_instance *inst, void **state)
{
	struct file_state *fs;
	struct stat st;
	const char *path;
	int saved_errno, flags;

	if (file_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((path = file_path(file_host->instance_module(inst))) == NULL) {
		file_host->log(inst, ENTROPYD_LOG_ERR, "no path given (use -O file:path:PATH)");
		errno = EINVAL;
		return -1;
	}
	if ((fs = calloc(1, sizeof *fs)) == NULL || (fs->path = strdup(path)) == NULL) {
		free(fs);
		file_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s", path, strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	fs->instance = inst;
	if ((fs->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		saved_errno = errno;
		file_host->log(inst, ENTROPYD_LOG_ERR, "%s: open: %s", path,
		    strerror(saved_errno));
		goto fail;
	}
	if (fstat(fs->fd, &st) == -1) {
		saved_errno = errno;
		file_host->log(inst, ENTROPYD_LOG_ERR, "%s: fstat: %s", path,
		    strerror(saved_errno));
		goto fail;
	}
	if (S_ISFIFO(st.st_mode))
		fs->fifo = true;
	else if (S_ISREG(st.st_mode)) {
		if ((flags = fcntl(fs->fd, F_GETFL)) == -1 ||
		    fcntl(fs->fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
			saved_errno = errno;
			file_host->log(inst, ENTROPYD_LOG_ERR, "%s: fcntl: %s", path,
			    strerror(saved_errno));
			goto fail;
		}
	} else {
		saved_errno = EINVAL;
		file_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s, not a regular file or FIFO",
		    path, file_kind(st.st_mode));
		goto fail;
	}
	*state = fs;
	return 0;

fail:
	if (fs->fd != -1)
		close(fs->fd);
	free(fs->path);
	free(fs);
	errno = saved_errno;
	return -1;
}

/*
 * Read what is there. A regular file's end drains the source. A FIFO's end
 * means its writer went away: the daemon reopens it, and the new descriptor
 * stays quiet under poll() until the next writer connects (Linux reports
 * POLLHUP only once a writer has come and gone since the open).
 */
static ssize_t
file_read(void *state, void *buf, size_t len)
{
	struct file_state *fs = state;
	ssize_t n;
	int saved_errno;

	if ((n = read(fs->fd, buf, len)) > 0)
		return n;
	if (n == 0)
		return fs->fifo ? ENTROPYD_READ_REOPEN : ENTROPYD_READ_EOF;
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return ENTROPYD_READ_AGAIN;
	saved_errno = errno;
	file_host->log(fs->instance, ENTROPYD_LOG_ERR, "%s: read: %s", fs->path,
	    strerror(saved_errno));
	errno = saved_errno;
	return ENTROPYD_READ_ERROR;
}

/* A FIFO is polled by the daemon; a regular file is read from a thread. */
static int
file_pollfd(void *state)
{
	struct file_state *fs = state;

	return fs->fifo ? fs->fd : -1;
}

/* Close the file and free the instance's state. */
static void
file_close(void *state)
{
	struct file_state *fs = state;

	if (fs == NULL)
		return;
	close(fs->fd);
	free(fs->path);
	free(fs);
}

/* 8 bits per byte is only the ceiling: nothing is credited unless asked for. */
const struct entropyd_source file_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "file",
	.description = "a regular file or FIFO (testing, feeding from another program)",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.sample_bits = 0,
	.options = file_options,
	.probe = file_probe,
	.open = file_open,
	.read = file_read,
	.pollfd = file_pollfd,
	.close = file_close,
	.configure = file_configure,
};
