/* SPDX-License-Identifier: MIT */
/*
 * The device-free pieces of the usb source: the table of known keys, raw
 * termios and DTR, OneRNG's commands, TrueRNGpro's baud-rate knock, and
 * finding a key's ttyACM in sysfs, through a table of tty operations tests
 * can record.
 */
#include <sys/ioctl.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "usb_tty.h"

static int usb_tty_sys_modem_bits(int, int);
static long usb_tty_sys_write(int, const void *, size_t);

const struct usb_tty_model usb_tty_models[] = {
	{ "chaoskey", 0x1d50, 0x60c6, USB_TTY_NONE, "Altus Metrum ChaosKey" },
	{ "truerng", 0x04d8, 0xf5fe, USB_TTY_STREAM, "ubld.it TrueRNG v1-v3" },
	{ "truerngpro", 0x16d0, 0x0aa0, USB_TTY_KNOCK, "ubld.it TrueRNGpro" },
	{ "truerngpro2", 0x04d8, 0xebb5, USB_TTY_KNOCK, "ubld.it TrueRNGpro V2" },
	{ "onerng", 0x1d50, 0x6086, USB_TTY_ONERNG, "Moonbase Otago OneRNG" },
	{ NULL, 0, 0, USB_TTY_NONE, NULL }
};

const struct usb_tty_ops usb_tty_sys = {
	.tcgetattr = tcgetattr,
	.tcsetattr = tcsetattr,
	.modem_bits = usb_tty_sys_modem_bits,
	.write = usb_tty_sys_write,
	.tcdrain = tcdrain,
};

/* TrueRNGpro modes that give whitened output, by the baud rate choosing them. */
static const struct {
	const char *name;
	unsigned baud;
} usb_tty_knock_modes[] = {
	{ "normal", 300 },    /* both generators, whitened and combined */
	{ "rng1white", 4800 }, /* generator 1 only, whitened */
	{ "rng2white", 9600 }, /* generator 2 only, whitened */
};

/* The baud rates termios knows that the keys use. */
static const struct {
	unsigned baud;
	speed_t speed;
} usb_tty_speeds[] = {
	{ 110, B110 }, { 300, B300 }, { 4800, B4800 }, { 9600, B9600 },
	{ 19200, B19200 }, { 38400, B38400 }, { 57600, B57600 }, { 115200, B115200 },
};

static int
usb_tty_sys_modem_bits(int fd, int bits)
{
	return ioctl(fd, TIOCMBIS, &bits);
}

static long
usb_tty_sys_write(int fd, const void *buf, size_t len)
{
	return (long)write(fd, buf, len);
}

const struct usb_tty_model *
usb_tty_model_by_id(uint16_t vid, uint16_t pid)
{
	const struct usb_tty_model *m;

	for (m = usb_tty_models; m->name != NULL; m++)
		if (m->vid == vid && m->pid == pid)
			return m;
	return NULL;
}

const struct usb_tty_model *
usb_tty_model_by_name(const char *name)
{
	const struct usb_tty_model *m;

	for (m = usb_tty_models; m->name != NULL; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

unsigned
usb_tty_knock_baud(const char *mode)
{
	size_t i;

	for (i = 0; i < sizeof usb_tty_knock_modes / sizeof usb_tty_knock_modes[0]; i++)
		if (strcmp(usb_tty_knock_modes[i].name, mode) == 0)
			return usb_tty_knock_modes[i].baud;
	return 0;
}

void
usb_tty_knock_sequence(unsigned mode_baud, unsigned out[USB_TTY_KNOCK_STEPS])
{
	out[0] = 110;
	out[1] = 300;
	out[2] = 110;
	out[3] = mode_baud;
}

/*
 * OneRNG modes: bit 0 turns the whitener off, bit 1 adds the RF noise, bit 2
 * turns the avalanche diode off. Only whitened modes with a noise source on
 * are accepted: 4 and 5 have no noise at all (4 would still look random),
 * and the unwhitened ones would need raw-sample assessment.
 */
int
usb_tty_onerng_mode(const char *s, char *err, size_t errlen)
{
	if (s[0] < '0' || s[0] > '7' || s[1] != '\0') {
		snprintf(err, errlen, "usb:onerng_mode: '%s' is not a mode 0..7", s);
		return -1;
	}
	switch (s[0]) {
	case '0':
	case '2':
	case '6':
		return s[0] - '0';
	case '4':
	case '5':
		snprintf(err, errlen, "usb:onerng_mode: mode %s turns every noise source off", s);
		return -1;
	default:
		snprintf(err, errlen, "usb:onerng_mode: mode %s is unwhitened; use 0, 2 or 6", s);
		return -1;
	}
}

/* A baud rate as a termios speed, B0 when unknown. */
static speed_t
usb_tty_speed(unsigned baud)
{
	size_t i;

	for (i = 0; i < sizeof usb_tty_speeds / sizeof usb_tty_speeds[0]; i++)
		if (usb_tty_speeds[i].baud == baud)
			return usb_tty_speeds[i].speed;
	return B0;
}

int
usb_tty_raw(const struct usb_tty_ops *ops, int fd, unsigned baud)
{
	struct termios t;
	speed_t speed = usb_tty_speed(baud);

	if (speed == B0) {
		errno = EINVAL;
		return -1;
	}
	if (ops->tcgetattr(fd, &t) == -1)
		return -1;
	cfmakeraw(&t);
	t.c_cflag |= CLOCAL | CREAD;
	t.c_cflag &= ~(tcflag_t)(CRTSCTS | HUPCL);
	t.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	cfsetispeed(&t, speed);
	cfsetospeed(&t, speed);
	return ops->tcsetattr(fd, TCSANOW, &t);
}

int
usb_tty_dtr(const struct usb_tty_ops *ops, int fd)
{
	if (ops->modem_bits(fd, TIOCM_DTR) == 0)
		return 0;
	if (errno == ENOTTY || errno == EINVAL)
		return 1;
	return -1;
}

int
usb_tty_knock(const struct usb_tty_ops *ops, int fd, unsigned mode_baud)
{
	unsigned seq[USB_TTY_KNOCK_STEPS];
	int i;

	usb_tty_knock_sequence(mode_baud, seq);
	for (i = 0; i < USB_TTY_KNOCK_STEPS; i++)
		if (usb_tty_raw(ops, fd, seq[i]) == -1)
			return -1;
	return 0;
}

/* Write a whole short command. */
static int
usb_tty_command(const struct usb_tty_ops *ops, int fd, const char *cmd)
{
	size_t len = strlen(cmd), off = 0;
	long n;

	while (off < len) {
		n = ops->write(fd, cmd + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

int
usb_tty_onerng_start(const struct usb_tty_ops *ops, int fd, int mode)
{
	char cmd[8];

	snprintf(cmd, sizeof cmd, "cmd%d\n", mode);
	if (usb_tty_command(ops, fd, cmd) == -1 || usb_tty_command(ops, fd, "cmdO\n") == -1)
		return -1;
	return 0;
}

int
usb_tty_onerng_stop(const struct usb_tty_ops *ops, int fd)
{
	int rc = 0;

	if (usb_tty_command(ops, fd, "cmdo\n") == -1)
		rc = -1;
	if (usb_tty_command(ops, fd, "cmdw\n") == -1)
		rc = -1;
	if (rc == 0)
		ops->tcdrain(fd);
	return rc;
}

void
usb_tty_name_part(const unsigned char *in, int n, char *out, size_t len)
{
	size_t i;

	if (len == 0)
		return;
	for (i = 0; n > 0 && i < (size_t)n && i + 1 < len; i++)
		out[i] = (in[i] >= '0' && in[i] <= '9') || (in[i] >= 'A' && in[i] <= 'Z') ||
		    (in[i] >= 'a' && in[i] <= 'z') || in[i] == '.' || in[i] == '_' ||
		    in[i] == '-' ? (char)in[i] : '_';
	out[i] = '\0';
}

/* Read a small sysfs file holding a 4-digit hex id. */
static int
usb_tty_read_hex(const char *path, uint16_t *out)
{
	char buf[16], *end;
	unsigned long v;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	v = strtoul(buf, &end, 16);
	if (end == buf || v > 0xffff)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int
usb_tty_find(const char *sysfs, void (*fn)(const struct usb_tty_found *, void *), void *arg)
{
	struct usb_tty_found found;
	struct dirent *de;
	char dir[PATH_MAX], path[PATH_MAX], real[PATH_MAX], *slash;
	uint16_t vid, pid;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof dir, "%s/class/tty", sysfs);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "ttyACM", 6) != 0 || strlen(de->d_name) >= sizeof found.tty)
			continue;
		/* device is the CDC interface; its parent is the USB device. */
		if ((size_t)snprintf(path, sizeof path, "%s/%s/device/..", dir, de->d_name) >=
		    sizeof path || realpath(path, real) == NULL)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/idVendor", real) >= sizeof path ||
		    usb_tty_read_hex(path, &vid) == -1)
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/idProduct", real) >= sizeof path ||
		    usb_tty_read_hex(path, &pid) == -1)
			continue;
		if ((found.model = usb_tty_model_by_id(vid, pid)) == NULL ||
		    found.model->protocol == USB_TTY_NONE)
			continue;
		slash = strrchr(real, '/');
		if (snprintf(found.port, sizeof found.port, "%s", slash != NULL ? slash + 1 : real) < 0)
			continue;
		memcpy(found.tty, de->d_name, strlen(de->d_name) + 1);
		fn(&found, arg);
		n++;
	}
	closedir(d);
	return n;
}
