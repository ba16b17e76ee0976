/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_GENFILE_H
#define ENTROPYD_GENFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The generation file: what the daemon tells every local program about the
 * VM generation. One line, a UUID (lower-case, 36 characters) and a
 * newline, replaced whole (a new file renamed over the old one), so a
 * reader sees the old ID or the new one and never a part of either, and
 * inotify (IN_MOVED_TO on the directory) and the file's mtime say when it
 * changed. Mode 0644: any local user may read it.
 */

/* Names the generation file for entropyd and entropyctl when none is given. */
#define GENFILE_ENV "ENTROPYD_GENERATION_FILE"
/* Bytes of an ID: 128 bits. */
#define GENFILE_ID_BYTES 16
/* Characters of an ID as text, without its NUL: 8-4-4-4-12 hex digits. */
#define GENFILE_ID_CHARS 36
/* Characters of the file: the ID and its newline. */
#define GENFILE_BYTES (GENFILE_ID_CHARS + 1)

/* The generation file when none is given: $ENTROPYD_GENERATION_FILE, else RUNDIR's. */
const char *genfile_default(void);
/* id as UUID text into text (GENFILE_ID_CHARS + 1 bytes, NUL-terminated). */
void genfile_format(const uint8_t id[GENFILE_ID_BYTES], char *text);
/*
 * Whether text (len bytes, no NUL needed) is an ID as genfile_format
 * writes it, upper-case hex digits allowed; the lower-case form into
 * norm (GENFILE_ID_CHARS + 1 bytes) when it is and norm is not NULL.
 */
bool genfile_parse(const char *text, size_t len, char *norm);
/*
 * Replace the file at path with text and a newline, mode 0644: written to a
 * new file in the same directory, flushed, then renamed over path. 0, or -1
 * with errno (the old file is left as it was, the new one removed).
 */
int genfile_write(const char *path, const char *text);
/*
 * Read the ID the file at path holds into text (GENFILE_ID_CHARS + 1
 * bytes): 0; -1 with errno (ENOENT: no file; EINVAL: not one ID and a
 * newline).
 */
int genfile_read(const char *path, char *text);
/*
 * Wait until the file at path holds an ID other than after (inotify on its
 * directory: what any local user may do without the control socket): 1
 * with the new ID in text (GENFILE_ID_CHARS + 1 bytes), 0 once timeout_ms
 * passed (-1: no limit), -1 with errno (ENOENT: there is no file, or it
 * was removed: no daemon keeps it).
 */
int genfile_wait(const char *path, const char *after, int timeout_ms, char *text);

#endif
