/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: what the usb source takes from a key and its surroundings
 * (sources/usb_tty.c): the option words naming models and modes, the
 * command frames written to a tty that accepts them a few bytes at a time
 * or fails part-way, a sysfs tree with hostile ids and names, and a USB
 * device's serial-number string made part of an instance name.
 */
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "usb_tty.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, consumed a byte at a time; 0 once it runs out. */
static const uint8_t *fuzz_in;
static size_t fuzz_left;
/* What the fake tty accepted, in order. */
static char fuzz_written[256];
static size_t fuzz_written_len;

static uint8_t
fuzz_byte(void)
{
	if (fuzz_left == 0)
		return 0;
	fuzz_left--;
	return *fuzz_in++;
}

/* termios calls fail when the next byte's low bit says so. */
static int
fuzz_tcgetattr(int fd, struct termios *t)
{
	(void)fd;
	memset(t, 0, sizeof *t);
	if (fuzz_byte() & 1) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int
fuzz_tcsetattr(int fd, int when, const struct termios *t)
{
	(void)fd;
	(void)when;
	(void)t;
	if (fuzz_byte() & 1) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static int
fuzz_modem_bits(int fd, int bits)
{
	static const int errs[] = { 0, ENOTTY, EINVAL, EIO };
	int e = errs[fuzz_byte() & 3];

	(void)fd;
	(void)bits;
	if (e == 0)
		return 0;
	errno = e;
	return -1;
}

/* A tty that takes a chosen number of bytes, or fails with a chosen errno. */
static long
fuzz_write(int fd, const void *buf, size_t len)
{
	static const int errs[] = { EINTR, EAGAIN, EIO };
	uint8_t b = fuzz_byte();
	size_t n;

	(void)fd;
	if (b >= 0xf0) {
		errno = errs[b % 3];
		return -1;
	}
	if (b >= 0xe0)
		return 0;
	n = b == 0 ? len : 1 + b % len;
	if (fuzz_written_len + n > sizeof fuzz_written)
		abort(); /* a command loop that never ends */
	memcpy(fuzz_written + fuzz_written_len, buf, n);
	fuzz_written_len += n;
	return (long)n;
}

static int
fuzz_tcdrain(int fd)
{
	(void)fd;
	return 0;
}

static const struct usb_tty_ops fuzz_ops = {
	.tcgetattr = fuzz_tcgetattr,
	.tcsetattr = fuzz_tcsetattr,
	.modem_bits = fuzz_modem_bits,
	.write = fuzz_write,
	.tcdrain = fuzz_tcdrain,
};

/* Option words: a model, a TrueRNGpro mode, a OneRNG mode. */
static void
fuzz_words(void)
{
	char word[64], err[128];
	size_t n = fuzz_left < sizeof word - 1 ? fuzz_left : sizeof word - 1;
	int mode;

	memcpy(word, fuzz_in, n);
	word[n] = '\0';
	(void)usb_tty_model_by_name(word);
	(void)usb_tty_knock_baud(word);
	err[0] = '\0';
	mode = usb_tty_onerng_mode(word, err, sizeof err);
	if (mode == -1 ? err[0] == '\0' : (mode != 0 && mode != 2 && mode != 6))
		abort(); /* a refusal without a reason, or an unwhitened mode let through */
}

/* Commands through a tty that accepts them in pieces: whole frames or an error. */
static void
fuzz_commands(void)
{
	static const unsigned bauds[] = { 300, 4800, 9600, 1234 };
	char want[32];
	int mode = fuzz_byte() % 8, rc;

	fuzz_written_len = 0;
	(void)usb_tty_dtr(&fuzz_ops, 0);
	(void)usb_tty_knock(&fuzz_ops, 0, bauds[fuzz_byte() & 3]);
	rc = usb_tty_onerng_start(&fuzz_ops, 0, mode);
	snprintf(want, sizeof want, "cmd%d\ncmdO\n", mode);
	if (rc == 0 && (fuzz_written_len != strlen(want) ||
	    memcmp(fuzz_written, want, fuzz_written_len) != 0))
		abort(); /* success must mean exactly both frames went out */
	fuzz_written_len = 0;
	if (usb_tty_onerng_stop(&fuzz_ops, 0) == 0 && (fuzz_written_len != 10 ||
	    memcmp(fuzz_written, "cmdo\ncmdw\n", 10) != 0))
		abort();
	if (fuzz_written_len > 10)
		abort(); /* more than stop and flush were written */
}

/* Each key found: the names handed on are terminated and in bounds. */
static void
fuzz_found(const struct usb_tty_found *f, void *arg)
{
	(void)arg;
	if (f->model == NULL || f->model->protocol == USB_TTY_NONE ||
	    memchr(f->tty, '\0', sizeof f->tty) == NULL ||
	    memchr(f->port, '\0', sizeof f->port) == NULL || strncmp(f->tty, "ttyACM", 6) != 0)
		abort();
}

/* Write a sysfs attribute of the chosen length from the input. */
static void
fuzz_attr(const char *path)
{
	uint8_t n = fuzz_byte() % 24;
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		return;
	while (n-- > 0)
		fputc(fuzz_byte(), f);
	fclose(f);
}

/* nftw: remove one entry, children first. */
static int
fuzz_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove the little tree fuzz_sysfs made. */
static void
fuzz_rm(const char *root)
{
	(void)nftw(root, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A sysfs tree of a few ttyACMs whose USB devices have hostile ids and names. */
static void
fuzz_sysfs(void)
{
	static char root[64];
	char path[512], dev[256], name[80];
	unsigned i, count = 1 + fuzz_byte() % 3, len, j;
	int found;

	if (root[0] == '\0')
		snprintf(root, sizeof root, "/tmp/fuzz_usb_tty.%ld", (long)getpid());
	fuzz_rm(root);
	snprintf(path, sizeof path, "%s/class/tty", root);
	if (mkdir(root, 0700) == -1 || mkdir(strcat(strcpy(dev, root), "/class"), 0700) == -1 ||
	    mkdir(path, 0700) == -1)
		return;
	for (i = 0; i < count; i++) {
		/* The USB device's directory name: any printable bytes but '/'. */
		len = 1 + fuzz_byte() % 70;
		for (j = 0; j < len; j++) {
			uint8_t c = fuzz_byte();
			name[j] = (char)(c < 0x21 || c > 0x7e || c == '/' || c == '\'' ? 'x' : c);
		}
		name[len] = '\0';
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		snprintf(dev, sizeof dev, "%s/%s", root, name);
		if (mkdir(dev, 0700) == -1)
			continue;
		snprintf(path, sizeof path, "%s/idVendor", dev);
		fuzz_attr(path);
		snprintf(path, sizeof path, "%s/idProduct", dev);
		fuzz_attr(path);
		snprintf(path, sizeof path, "%s/if", dev);
		mkdir(path, 0700);
		snprintf(path, sizeof path, "%s/class/tty/ttyACM%u", root, i);
		mkdir(path, 0700);
		snprintf(path, sizeof path, "%s/class/tty/ttyACM%u/device", root, i);
		snprintf(dev, sizeof dev, "%s/%s/if", root, name);
		(void)symlink(dev, path);
	}
	found = usb_tty_find(root, fuzz_found, NULL);
	if (found < 0 || (unsigned)found > count)
		abort();
	fuzz_rm(root);
}

/* A device's string as part of a name: only safe bytes, terminated, in bounds. */
static void
fuzz_name_part(void)
{
	char out[40];
	size_t i, len = 1 + fuzz_byte() % sizeof out;

	memset(out, 'X', sizeof out);
	usb_tty_name_part(fuzz_in, (int)fuzz_left - 128, out, len);
	if (memchr(out, '\0', len) == NULL)
		abort();
	for (i = 0; out[i] != '\0'; i++)
		if (strchr("._-", out[i]) == NULL && !(out[i] >= '0' && out[i] <= '9') &&
		    !(out[i] >= 'A' && out[i] <= 'Z') && !(out[i] >= 'a' && out[i] <= 'z'))
			abort();
}

/* Byte 0 picks the part: option words, command frames, sysfs, or a device string. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_in = data + 1;
	fuzz_left = size - 1;
	switch (data[0] % 4) {
	case 0:
		fuzz_words();
		break;
	case 1:
		fuzz_commands();
		break;
	case 2:
		fuzz_sysfs();
		break;
	default:
		fuzz_name_part();
		break;
	}
	return 0;
}
