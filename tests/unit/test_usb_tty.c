/* SPDX-License-Identifier: MIT */
/*
 * The usb source's device-free pieces: termios, DTR, OneRNG's commands and
 * TrueRNGpro's baud-rate knock, recorded through a fake table of tty calls
 * (a pty cannot show the knock: its speeds change faster than a reader can
 * look); finding keys in a fake sysfs; the udev rules cover every key.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "usb_tty.h"

/* What the fake tty saw. */
static struct termios rec_termios;
static unsigned rec_speeds[16];
static int rec_nspeeds, rec_modem_bits, rec_modem_errno, rec_drains;
static char rec_written[256];
static size_t rec_written_len;

static unsigned
rec_baud(speed_t s)
{
	switch (s) {
	case B110: return 110;
	case B300: return 300;
	case B4800: return 4800;
	case B9600: return 9600;
	case B115200: return 115200;
	default: return 0;
	}
}

static int
rec_tcgetattr(int fd, struct termios *t)
{
	*t = rec_termios;
	return 0;
}

static int
rec_tcsetattr(int fd, int when, const struct termios *t)
{
	rec_termios = *t;
	if (rec_nspeeds < 16)
		rec_speeds[rec_nspeeds++] = rec_baud(cfgetospeed(t));
	return 0;
}

static int
rec_modem(int fd, int bits)
{
	rec_modem_bits |= bits;
	if (rec_modem_errno != 0) {
		errno = rec_modem_errno;
		return -1;
	}
	return 0;
}

static long
rec_write(int fd, const void *buf, size_t len)
{
	/* Two bytes at a time: short writes must be finished. */
	if (len > 2)
		len = 2;
	memcpy(rec_written + rec_written_len, buf, len);
	rec_written_len += len;
	return (long)len;
}

static int
rec_tcdrain(int fd)
{
	rec_drains++;
	return 0;
}

static const struct usb_tty_ops rec_ops = {
	.tcgetattr = rec_tcgetattr,
	.tcsetattr = rec_tcsetattr,
	.modem_bits = rec_modem,
	.write = rec_write,
	.tcdrain = rec_tcdrain,
};

/* A cooked tty, as a fresh ttyACM is: canonical, echoing, flow control. */
static void
rec_reset(void)
{
	memset(&rec_termios, 0, sizeof rec_termios);
	rec_termios.c_lflag = ICANON | ECHO | ISIG | IEXTEN;
	rec_termios.c_iflag = IXON | IXOFF | ICRNL;
	rec_termios.c_oflag = OPOST | ONLCR;
	rec_termios.c_cflag = CRTSCTS | HUPCL | CS7;
	rec_termios.c_cc[VMIN] = 1;
	rec_nspeeds = rec_modem_bits = rec_modem_errno = rec_drains = 0;
	rec_written_len = 0;
	memset(rec_written, 0, sizeof rec_written);
}

TestSuite(usb_tty, .init = rec_reset);

Test(usb_tty, raw_mode_is_raw)
{
	cr_assert_eq(usb_tty_raw(&rec_ops, 3, 115200), 0);
	cr_assert_eq(rec_nspeeds, 1);
	cr_assert_eq(rec_speeds[0], 115200);
	cr_assert_eq(rec_termios.c_lflag & (ICANON | ECHO | ISIG | IEXTEN), 0);
	cr_assert_eq(rec_termios.c_oflag & OPOST, 0);
	cr_assert_eq(rec_termios.c_iflag & (IXON | IXOFF | ICRNL), 0);
	cr_assert_eq(rec_termios.c_cflag & (CRTSCTS | HUPCL), 0);
	cr_assert_eq(rec_termios.c_cflag & (CLOCAL | CREAD), CLOCAL | CREAD);
	cr_assert_eq(rec_termios.c_cflag & CSIZE, CS8);
	cr_assert_eq(rec_termios.c_cc[VMIN], 0);
	cr_assert_eq(rec_termios.c_cc[VTIME], 0);
}

Test(usb_tty, raw_mode_refuses_unknown_baud)
{
	cr_assert_eq(usb_tty_raw(&rec_ops, 3, 12345), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rec_nspeeds, 0);
}

Test(usb_tty, knock_is_110_300_110_then_the_mode)
{
	cr_assert_eq(usb_tty_knock(&rec_ops, 3, usb_tty_knock_baud("rng1white")), 0);
	cr_assert_eq(rec_nspeeds, 4);
	cr_assert_eq(rec_speeds[0], 110);
	cr_assert_eq(rec_speeds[1], 300);
	cr_assert_eq(rec_speeds[2], 110);
	cr_assert_eq(rec_speeds[3], 4800);
	cr_assert_eq(rec_termios.c_lflag & ICANON, 0, "the knock leaves the tty raw");
	cr_assert_eq(rec_written_len, 0, "the knock writes nothing");
}

Test(usb_tty, knock_modes)
{
	cr_assert_eq(usb_tty_knock_baud("normal"), 300);
	cr_assert_eq(usb_tty_knock_baud("rng1white"), 4800);
	cr_assert_eq(usb_tty_knock_baud("rng2white"), 9600);
	cr_assert_eq(usb_tty_knock_baud("raw"), 0);
	cr_assert_eq(usb_tty_knock_baud(""), 0);
}

Test(usb_tty, dtr_is_raised_and_enotty_is_not_fatal)
{
	cr_assert_eq(usb_tty_dtr(&rec_ops, 3), 0);
	cr_assert_eq(rec_modem_bits, TIOCM_DTR);
	rec_modem_errno = ENOTTY;
	cr_assert_eq(usb_tty_dtr(&rec_ops, 3), 1);
	rec_modem_errno = EIO;
	cr_assert_eq(usb_tty_dtr(&rec_ops, 3), -1);
}

Test(usb_tty, onerng_start_and_stop)
{
	cr_assert_eq(usb_tty_onerng_start(&rec_ops, 3, 2), 0);
	cr_assert_str_eq(rec_written, "cmd2\ncmdO\n");
	rec_written_len = 0;
	memset(rec_written, 0, sizeof rec_written);
	cr_assert_eq(usb_tty_onerng_stop(&rec_ops, 3), 0);
	cr_assert_str_eq(rec_written, "cmdo\ncmdw\n");
	cr_assert_eq(rec_drains, 1);
}

Test(usb_tty, onerng_modes)
{
	char err[128];

	cr_assert_eq(usb_tty_onerng_mode("0", err, sizeof err), 0);
	cr_assert_eq(usb_tty_onerng_mode("2", err, sizeof err), 2);
	cr_assert_eq(usb_tty_onerng_mode("6", err, sizeof err), 6);
	cr_assert_eq(usb_tty_onerng_mode("4", err, sizeof err), -1);
	cr_assert(strstr(err, "noise source off") != NULL, "%s", err);
	cr_assert_eq(usb_tty_onerng_mode("5", err, sizeof err), -1);
	cr_assert_eq(usb_tty_onerng_mode("1", err, sizeof err), -1);
	cr_assert(strstr(err, "unwhitened") != NULL, "%s", err);
	cr_assert_eq(usb_tty_onerng_mode("7", err, sizeof err), -1);
	cr_assert_eq(usb_tty_onerng_mode("8", err, sizeof err), -1);
	cr_assert_eq(usb_tty_onerng_mode("00", err, sizeof err), -1);
	cr_assert_eq(usb_tty_onerng_mode("", err, sizeof err), -1);
}

Test(usb_tty, models_by_id_and_name)
{
	cr_assert_str_eq(usb_tty_model_by_id(0x1d50, 0x60c6)->name, "chaoskey");
	cr_assert_eq(usb_tty_model_by_id(0x1d50, 0x60c6)->protocol, USB_TTY_NONE);
	cr_assert_eq(usb_tty_model_by_id(0x04d8, 0xf5fe)->protocol, USB_TTY_STREAM);
	cr_assert_eq(usb_tty_model_by_id(0x16d0, 0x0aa0)->protocol, USB_TTY_KNOCK);
	cr_assert_eq(usb_tty_model_by_id(0x04d8, 0xebb5)->protocol, USB_TTY_KNOCK);
	cr_assert_eq(usb_tty_model_by_id(0x1d50, 0x6086)->protocol, USB_TTY_ONERNG);
	cr_assert_null(usb_tty_model_by_id(0x1234, 0x5678));
	cr_assert_eq(usb_tty_model_by_name("onerng"), usb_tty_model_by_id(0x1d50, 0x6086));
	cr_assert_null(usb_tty_model_by_name("OneRNG"));
}

/* Write a small file. */
static void
put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A USB device with one CDC interface and its ttyACM, as sysfs shows them. */
static void
fake_acm(const char *sys, const char *port, const char *tty, const char *vid, const char *pid)
{
	char dev[PATH_MAX], intf[PATH_MAX], cls[PATH_MAX], link[PATH_MAX];

	cr_assert_lt(snprintf(dev, sizeof dev, "%s/devices/usb1/%s", sys, port), (int)sizeof dev);
	cr_assert_lt(snprintf(intf, sizeof intf, "%s/%s:1.0", dev, port), (int)sizeof intf);
	cr_assert_eq(mkdir(dev, 0755), 0);
	cr_assert_eq(mkdir(intf, 0755), 0);
	put(dev, "idVendor", vid);
	put(dev, "idProduct", pid);
	cr_assert_lt(snprintf(cls, sizeof cls, "%s/class/tty/%s", sys, tty), (int)sizeof cls);
	cr_assert_eq(mkdir(cls, 0755), 0);
	cr_assert_lt(snprintf(link, sizeof link, "%s/device", cls), (int)sizeof link);
	cr_assert_eq(symlink(intf, link), 0);
}

static int found_n;
static struct usb_tty_found found[4];

static void
collect(const struct usb_tty_found *f, void *arg)
{
	if (found_n < 4)
		found[found_n++] = *f;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

Test(usb_tty, find_in_sysfs)
{
	char sys[] = "/tmp/entropyd-usb-sysfs.XXXXXX", path[PATH_MAX];

	cr_assert_not_null(mkdtemp(sys));
	snprintf(path, sizeof path, "%s/devices", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/devices/usb1", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/class", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/class/tty", sys);
	mkdir(path, 0755);
	fake_acm(sys, "1-2", "ttyACM0", "1d50\n", "6086\n");     /* OneRNG */
	fake_acm(sys, "1-3", "ttyACM1", "1234\n", "5678\n");     /* a modem */
	fake_acm(sys, "1-4", "ttyACM2", "1d50\n", "60c6\n");     /* ChaosKey id: not a tty key */
	fake_acm(sys, "1-5.1", "ttyACM3", "16d0\n", "0aa0\n");   /* TrueRNGpro behind a hub */
	snprintf(path, sizeof path, "%s/class/tty/ttyS0", sys);
	mkdir(path, 0755);
	found_n = 0;
	cr_assert_eq(usb_tty_find(sys, collect, NULL), 2);
	cr_assert_eq(found_n, 2);
	if (strcmp(found[0].tty, "ttyACM3") == 0) {
		struct usb_tty_found t = found[0];

		found[0] = found[1];
		found[1] = t;
	}
	cr_assert_str_eq(found[0].tty, "ttyACM0");
	cr_assert_str_eq(found[0].port, "1-2");
	cr_assert_str_eq(found[0].model->name, "onerng");
	cr_assert_str_eq(found[1].tty, "ttyACM3");
	cr_assert_str_eq(found[1].port, "1-5.1");
	cr_assert_str_eq(found[1].model->name, "truerngpro");
	nftw(sys, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	cr_assert_eq(usb_tty_find("/nonexistent", collect, NULL), -1);
}

Test(usb_tty, udev_rules_cover_every_key)
{
	const struct usb_tty_model *m;
	const char *srcdir = getenv("top_srcdir");
	char path[PATH_MAX], line[512], want[64];
	FILE *f;

	snprintf(path, sizeof path, "%s/contrib/60-entropyd-usb.rules", srcdir ? srcdir : ".");
	for (m = usb_tty_models; m->name != NULL; m++) {
		int group = 0, mm = 0;

		cr_assert_not_null(f = fopen(path, "r"), "%s", path);
		snprintf(want, sizeof want, "ATTR%s{idVendor}==\"%04x\", ATTR%s{idProduct}==\"%04x\"",
		    m->protocol == USB_TTY_NONE ? "" : "S", m->vid,
		    m->protocol == USB_TTY_NONE ? "" : "S", m->pid);
		while (fgets(line, sizeof line, f) != NULL) {
			if (line[0] == '#' || strstr(line, want) == NULL)
				continue;
			if (strstr(line, "GROUP=\"entropyd\"") && strstr(line, "MODE=\"0660\""))
				group++;
			if (strstr(line, "ENV{ID_MM_DEVICE_IGNORE}=\"1\""))
				mm++;
		}
		fclose(f);
		cr_assert_eq(group, 1, "%s: one rule giving the group access (%s)", m->name, want);
		if (m->protocol != USB_TTY_NONE)
			cr_assert_geq(mm, 1, "%s: ModemManager is kept off", m->name);
	}
}

Test(usb_tty, name_part_keeps_safe_bytes_and_fits)
{
	static const unsigned char serial[] = "TEST 42/a.b_c-d\xff";
	char out[32];

	usb_tty_name_part(serial, (int)sizeof serial - 1, out, sizeof out);
	cr_expect_str_eq(out, "TEST_42_a.b_c-d_");
	usb_tty_name_part(serial, (int)sizeof serial - 1, out, 5);
	cr_expect_str_eq(out, "TEST", "cut to the buffer");
	usb_tty_name_part(serial, -1, out, sizeof out);
	cr_expect_str_eq(out, "", "no string: empty");
	usb_tty_name_part(serial, 0, out, sizeof out);
	cr_expect_str_eq(out, "");
}
