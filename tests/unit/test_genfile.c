/* SPDX-License-Identifier: MIT */
/*
 * The generation file: the ID's text both ways, the atomic replacement (a
 * reader racing thousands of writes never sees anything but a whole ID,
 * and each write is a rename that inotify reports), its mode whatever the
 * umask, and the wait on it that users without the control socket use.
 */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "genfile.h"

/* The writes a reader races (each one a new file, flushed, renamed). */
#define GENFILE_WRITES 1000

static char dir[] = "/tmp/entropyd-genfile.XXXXXX";
static char path[64];

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/generation", dir);
}

static void
teardown(void)
{
	unlink(path);
	rmdir(dir);
}

TestSuite(genfile, .init = setup, .fini = teardown);

/* An ID whose bytes are all b (then made distinct by i). */
static void
id_text(uint8_t b, unsigned i, char *text)
{
	uint8_t id[GENFILE_ID_BYTES];

	memset(id, b, sizeof id);
	id[0] = (uint8_t)i;
	id[1] = (uint8_t)(i >> 8);
	genfile_format(id, text);
}

Test(genfile, format_and_parse)
{
	static const uint8_t id[GENFILE_ID_BYTES] = {
		0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x80, 0x01, 0x02, 0x03, 0x04, 0x05,
		0x06, 0x07,
	};
	char text[GENFILE_ID_CHARS + 1], norm[GENFILE_ID_CHARS + 1];

	genfile_format(id, text);
	cr_expect_str_eq(text, "12345678-9abc-4def-8001-020304050607");
	cr_expect(genfile_parse(text, strlen(text), norm));
	cr_expect_str_eq(norm, text);
	cr_expect(genfile_parse("12345678-9ABC-4DEF-8001-020304050607", 36, norm),
	    "upper-case hex is an ID");
	cr_expect_str_eq(norm, text, "and is given back in lower case");
	cr_expect_not(genfile_parse("12345678-9abc-4def-8001-02030405060", 35, NULL));
	cr_expect_not(genfile_parse("12345678-9abc-4def-8001-0203040506070", 37, NULL));
	cr_expect_not(genfile_parse("123456789abc-4def-8001-0203-04050607", 36, NULL),
	    "dashes where they belong");
	cr_expect_not(genfile_parse("12345678-9abc-4def-8001-02030405060g", 36, NULL));
	cr_expect_not(genfile_parse("12345678-9abc-4def-8001-02030405060\n", 36, NULL));
}

Test(genfile, write_read_and_mode_whatever_the_umask)
{
	char text[GENFILE_ID_CHARS + 1], back[GENFILE_ID_CHARS + 1], buf[64];
	struct stat st;
	mode_t old = umask(077);
	int fd;

	id_text(0xab, 1, text);
	cr_assert_eq(genfile_write(path, text), 0, "%s", strerror(errno));
	umask(old);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
	cr_assert_eq(genfile_read(path, back), 0);
	cr_expect_str_eq(back, text);
	fd = open(path, O_RDONLY);
	cr_assert_eq(read(fd, buf, sizeof buf), GENFILE_BYTES, "the ID and a newline, no more");
	close(fd);
	cr_expect_eq(buf[GENFILE_ID_CHARS], '\n');
	/* Nothing is left beside it. */
	snprintf(buf, sizeof buf, "%s/.generation.%ld.tmp", dir, (long)getpid());
	cr_expect_eq(access(buf, F_OK), -1);
}

Test(genfile, read_refuses_what_is_not_one_id)
{
	char text[GENFILE_ID_CHARS + 1];
	FILE *f;

	cr_expect_eq(genfile_read(path, text), -1);
	cr_expect_eq(errno, ENOENT);
	f = fopen(path, "w");
	fputs("12345678-9abc-4def-8001-0203", f);
	fclose(f);
	cr_expect_eq(genfile_read(path, text), -1, "a part of an ID");
	cr_expect_eq(errno, EINVAL);
	f = fopen(path, "w");
	fputs("12345678-9abc-4def-8001-020304050607\nmore\n", f);
	fclose(f);
	cr_expect_eq(genfile_read(path, text), -1, "more than one line");
}

/* What a writer thread did: done once it wrote them all, failed if a write failed. */
static atomic_bool writer_done, writer_failed;

/* Write GENFILE_WRITES IDs, as fast as it goes. */
static void *
writer(void *arg)
{
	char text[GENFILE_ID_CHARS + 1];
	unsigned i;

	for (i = 1; i <= GENFILE_WRITES; i++) {
		id_text((uint8_t)i, i, text);
		if (genfile_write(path, text) == -1)
			writer_failed = true;
	}
	writer_done = true;
	return NULL;
}

/* After a pause, write the ID arg (or remove the file: NULL). */
static void *
late_writer(void *arg)
{
	usleep(200000);
	if (arg != NULL ? genfile_write(path, arg) == -1 : unlink(path) == -1)
		writer_failed = true;
	return NULL;
}

/*
 * A thread writes GENFILE_WRITES IDs as fast as it can; meanwhile this one
 * reads the file as fast as it can. Every read must find a whole ID: never
 * a short or empty file, never no file (the rename replaces it in one
 * step).
 */
Test(genfile, a_reader_never_sees_a_partial_file)
{
	char text[GENFILE_ID_CHARS + 1], seen[GENFILE_ID_CHARS + 1];
	unsigned reads = 0, bad = 0, changes = 0;
	pthread_t t;

	id_text(0x11, 0, text);
	cr_assert_eq(genfile_write(path, text), 0);
	memcpy(seen, text, sizeof seen);
	cr_assert_eq(pthread_create(&t, NULL, writer, NULL), 0);
	while (!writer_done) {
		reads++;
		if (genfile_read(path, text) == -1)
			bad++;
		else if (strcmp(text, seen) != 0) {
			changes++;
			memcpy(seen, text, sizeof seen);
		}
	}
	pthread_join(t, NULL);
	cr_assert_not(writer_failed, "the writer succeeded");
	cr_expect_eq(bad, 0, "%u of %u reads found no whole ID", bad, reads);
	cr_expect_gt(changes, 0, "the reads saw the file change (%u reads)", reads);
	cr_expect_eq(genfile_read(path, text), 0);
	id_text((uint8_t)GENFILE_WRITES, GENFILE_WRITES, seen);
	cr_expect_str_eq(text, seen, "the last write is what stays");
}

Test(genfile, each_write_is_a_rename_into_place)
{
	char text[GENFILE_ID_CHARS + 1];
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	struct inotify_event *ev;
	struct stat before, after;
	bool moved_to = false;
	ssize_t n, off;
	int fd;

	id_text(0x22, 1, text);
	cr_assert_eq(genfile_write(path, text), 0);
	cr_assert_eq(stat(path, &before), 0);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_geq(inotify_add_watch(fd, dir, IN_MOVED_TO | IN_MODIFY), 0);
	id_text(0x33, 2, text);
	cr_assert_eq(genfile_write(path, text), 0);
	cr_assert_eq(stat(path, &after), 0);
	cr_expect_neq(before.st_ino, after.st_ino, "a new file took the old one's name");
	n = read(fd, u.buf, sizeof u.buf);
	for (off = 0; n > 0 && off < n; off += (ssize_t)sizeof *ev + ev->len) {
		ev = (struct inotify_event *)(void *)(u.buf + off);
		if ((ev->mask & IN_MOVED_TO) && ev->len > 0 && strcmp(ev->name, "generation") == 0)
			moved_to = true;
		if ((ev->mask & IN_MODIFY) && ev->len > 0)
			cr_expect_str_neq(ev->name, "generation", "the file itself is never written");
	}
	cr_expect(moved_to, "inotify says IN_MOVED_TO for the file's name");
	close(fd);
}

Test(genfile, wait_sees_a_change_and_a_removal)
{
	char first[GENFILE_ID_CHARS + 1], second[GENFILE_ID_CHARS + 1], got[GENFILE_ID_CHARS + 1];
	pthread_t t;

	id_text(0x44, 1, first);
	id_text(0x55, 2, second);
	cr_assert_eq(genfile_write(path, first), 0);
	cr_expect_eq(genfile_wait(path, second, 0, got), 1, "another ID already: at once");
	cr_expect_str_eq(got, first);
	cr_expect_eq(genfile_wait(path, first, 0, got), 0, "the same ID and no time: not changed");
	/* A writer thread, once this waits (the wait has no time limit). */
	cr_assert_eq(pthread_create(&t, NULL, late_writer, second), 0);
	cr_expect_eq(genfile_wait(path, first, -1, got), 1);
	cr_expect_str_eq(got, second);
	pthread_join(t, NULL);
	cr_assert_eq(pthread_create(&t, NULL, late_writer, NULL), 0);
	cr_expect_eq(genfile_wait(path, second, -1, got), -1, "the file went: no daemon");
	cr_expect_eq(errno, ENOENT);
	pthread_join(t, NULL);
	cr_expect_not(writer_failed);
}
