/* SPDX-License-Identifier: MIT */
/*
 * The pieces of the usb source that need no device: the table of known
 * keys, raw termios, DTR, OneRNG's commands, TrueRNGpro's baud-rate knock,
 * and finding a key's ttyACM in sysfs. The tty calls go through a table of
 * operations so tests can record them.
 */
#ifndef ENTROPYD_USB_TTY_H
#define ENTROPYD_USB_TTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

enum usb_tty_protocol {
	USB_TTY_NONE,       /* not a tty key (ChaosKey: libusb bulk endpoints) */
	USB_TTY_STREAM,     /* streams while DTR is set (TrueRNG v1-v3) */
	USB_TTY_KNOCK,      /* baud-rate knock chooses the mode (TrueRNGpro, V2) */
	USB_TTY_ONERNG,     /* cmdN / cmdO / cmdo / cmdw (OneRNG) */
};

/* One known key. */
struct usb_tty_model {
	const char *name;   /* in instance names and -O usb:model */
	uint16_t vid, pid;
	enum usb_tty_protocol protocol;
	const char *description;
};

/* The known keys, ending with a NULL name. */
extern const struct usb_tty_model usb_tty_models[];

/* The tty calls the helpers make (usb_tty_sys: the real ones). */
struct usb_tty_ops {
	int (*tcgetattr)(int, struct termios *);
	int (*tcsetattr)(int, int, const struct termios *);
	int (*modem_bits)(int fd, int set_bits); /* TIOCMBIS */
	long (*write)(int, const void *, size_t);
	int (*tcdrain)(int);
};
extern const struct usb_tty_ops usb_tty_sys;

#define USB_TTY_KNOCK_STEPS 4

const struct usb_tty_model *usb_tty_model_by_id(uint16_t vid, uint16_t pid);
const struct usb_tty_model *usb_tty_model_by_name(const char *);
/* A TrueRNGpro mode's name to its baud rate (0: unknown name). */
unsigned usb_tty_knock_baud(const char *mode);
/* The four speeds of the knock for a mode's baud rate. */
void usb_tty_knock_sequence(unsigned mode_baud, unsigned out[USB_TTY_KNOCK_STEPS]);
/* A OneRNG mode 0..7; -1 with err set for a mode that cannot be credited. */
int usb_tty_onerng_mode(const char *, char *err, size_t errlen);

/* Raw mode at baud: cfmakeraw, CLOCAL, no flow control, non-blocking reads. */
int usb_tty_raw(const struct usb_tty_ops *, int fd, unsigned baud);
/* Raise DTR: 0, 1 when the tty has no modem lines (a pty: ENOTTY), -1 on error. */
int usb_tty_dtr(const struct usb_tty_ops *, int fd);
/* TrueRNGpro: set 110, 300, 110 baud, then the mode's; ends in raw mode. */
int usb_tty_knock(const struct usb_tty_ops *, int fd, unsigned mode_baud);
/* OneRNG: choose the mode, then start ("cmdN\n", "cmdO\n"). */
int usb_tty_onerng_start(const struct usb_tty_ops *, int fd, int mode);
/* OneRNG: stop and flush ("cmdo\n", "cmdw\n"). */
int usb_tty_onerng_stop(const struct usb_tty_ops *, int fd);

/*
 * A device's string (n bytes, n < 0 for none) as part of an instance name:
 * cut to out's size, every byte but [A-Za-z0-9._-] made '_'; "" for none.
 */
void usb_tty_name_part(const unsigned char *in, int n, char *out, size_t len);

/* A key's tty found in sysfs. */
struct usb_tty_found {
	const struct usb_tty_model *model;
	char tty[64];   /* "ttyACM0" */
	char port[64];  /* the USB device's sysfs name, "1-2" */
};
/*
 * Look through SYSFS/class/tty/ttyACM* for known keys; calls fn for each.
 * Returns how many were found, or -1 when SYSFS/class/tty cannot be read.
 */
int usb_tty_find(const char *sysfs, void (*fn)(const struct usb_tty_found *, void *),
    void *arg);

#endif
