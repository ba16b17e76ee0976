/* SPDX-License-Identifier: MIT */
/*
 * The generation file's format and how it is replaced: the one ID line, the
 * default path (shared by entropyd and entropyctl), an atomic write (new
 * file, fsync, rename) and a strict read.
 */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "genfile.h"

const char *
genfile_default(void)
{
	const char *s = getenv(GENFILE_ENV);

	return s != NULL && s[0] != '\0' ? s : RUNDIR "/generation";
}

void
genfile_format(const uint8_t id[GENFILE_ID_BYTES], char *text)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, n = 0;

	for (i = 0; i < GENFILE_ID_BYTES; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			text[n++] = '-';
		text[n++] = hex[id[i] >> 4];
		text[n++] = hex[id[i] & 15];
	}
	text[n] = '\0';
}

bool
genfile_parse(const char *text, size_t len, char *norm)
{
	char c, out[GENFILE_ID_CHARS + 1];
	size_t i;

	if (len != GENFILE_ID_CHARS)
		return false;
	for (i = 0; i < GENFILE_ID_CHARS; i++) {
		c = text[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[i] = c;
	}
	out[i] = '\0';
	if (norm != NULL)
		memcpy(norm, out, sizeof out);
	return true;
}

/* Write all of buf to fd; 0 or -1 with errno. */
static int
genfile_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int
genfile_write(const char *path, const char *text)
{
	char tmp[4096], line[GENFILE_BYTES + 1];
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
	mode_t mask;
	int fd, e, tries;

	/* A hidden name beside the file: on the same file system, and skipped by globs. */
	if (snprintf(tmp, sizeof tmp, "%.*s.%s.%ld.tmp", (int)dirlen, path, path + dirlen,
	    (long)getpid()) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(line, sizeof line, "%s\n", text);
	/* The mode is exact whatever the daemon's umask (the worker may not fchmod). */
	mask = umask(022);
	for (tries = 0; (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644)) == -1 && errno == EEXIST && tries < 1; tries++)
		unlink(tmp); /* left by a worker of this pid that died writing */
	umask(mask);
	if (fd == -1)
		return -1;
	e = genfile_write_all(fd, line, strlen(line)) == -1 || fsync(fd) == -1 ? errno : 0;
	/* close() ends the descriptor even when it fails. */
	if (close(fd) == -1 && e == 0)
		e = errno;
	if (e == 0 && rename(tmp, path) == -1)
		e = errno;
	if (e != 0) {
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int
genfile_read(const char *path, char *text)
{
	char buf[GENFILE_BYTES + 1];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) == -1 && errno == EINTR)
		;
	close(fd);
	if (n == -1)
		return -1;
	if (n != GENFILE_BYTES || buf[GENFILE_ID_CHARS] != '\n' ||
	    !genfile_parse(buf, GENFILE_ID_CHARS, text)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Milliseconds from now until deadline (CLOCK_MONOTONIC), 0 once past. */
static int
genfile_left_ms(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms <= 0 ? 0 : ms > 86400000 ? 86400000 : (int)ms;
}

int
genfile_wait(const char *path, const char *after, int timeout_ms, char *text)
{
	char dir[4096], events[4096];
	const char *slash = strrchr(path, '/');
	struct pollfd pfd = { .events = POLLIN };
	struct timespec deadline;
	int rc, e, n;

	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	if ((pfd.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) == -1)
		return -1;
	/* Watched before the first read: a rename between the two is not missed. */
	if (inotify_add_watch(pfd.fd, dir, IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE |
	    IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF) == -1) {
		e = errno;
		close(pfd.fd);
		errno = e;
		return -1;
	}
	for (;;) {
		if (genfile_read(path, text) == -1) {
			rc = -1;
			break;
		}
		if (strcmp(text, after) != 0) {
			rc = 1;
			break;
		}
		while ((n = poll(&pfd, 1, timeout_ms < 0 ? -1 : genfile_left_ms(&deadline))) == -1 &&
		    errno == EINTR)
			;
		if (n <= 0) {
			rc = n;
			break;
		}
		/* What changed matters not: the file is read again. */
		while (read(pfd.fd, events, sizeof events) > 0)
			;
	}
	e = errno;
	close(pfd.fd);
	errno = e;
	return rc;
}
