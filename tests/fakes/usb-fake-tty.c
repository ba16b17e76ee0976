/* SPDX-License-Identifier: MIT */
/*
 * A fake CDC-ACM noise key on a pseudo-terminal, for tests of the usb
 * source. It writes the slave's path to PTSFILE and logs what it sees to
 * LOGFILE, one line each: "raw" when the tty went raw, "speed N" for each
 * baud rate seen, "cmd X" for each command, "unexpected X" for a command
 * out of place, "streaming" and "stopped".
 *
 *   usb-fake-tty [-s] [-b BAUD] [-m MODE] truerng|truerngpro|onerng PTSFILE LOGFILE
 *
 * truerng streams once the tty is raw; truerngpro once it is raw at BAUD;
 * onerng after "cmdMODE\n" then "cmdO\n", until "cmdo\n". -s sends stuck
 * bytes (all 0x55) instead of random ones. Runs until killed.
 */
#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static FILE *log_file;

/* Log a line, "WHAT" or "WHAT ARG", and flush it, so the test sees it at once. */
static void
say(const char *what, const char *arg)
{
	fprintf(log_file, "%s%s%s\n", what, *arg != '\0' ? " " : "", arg);
	fflush(log_file);
}

/* A termios speed as a baud rate. */
static unsigned
baud_of(speed_t s)
{
	static const struct { speed_t s; unsigned b; } t[] = {
		{ B110, 110 }, { B300, 300 }, { B1200, 1200 }, { B4800, 4800 }, { B9600, 9600 },
		{ B19200, 19200 }, { B38400, 38400 }, { B57600, 57600 }, { B115200, 115200 },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].s == s)
			return t[i].b;
	return 0;
}

/* The master sees the slave's termios: log raw mode and speed changes. */
static void
watch_termios(int master, bool *raw, unsigned *last_baud)
{
	struct termios t;
	char num[16];
	unsigned baud;

	if (tcgetattr(master, &t) == -1)
		return;
	if (!*raw && !(t.c_lflag & ICANON) && !(t.c_oflag & OPOST)) {
		*raw = true;
		say("raw", "");
	}
	baud = baud_of(cfgetospeed(&t));
	if (baud != *last_baud) {
		snprintf(num, sizeof num, "%u", baud);
		say("speed", num);
		*last_baud = baud;
	}
}

int
main(int argc, char **argv)
{
	char line[64], expect_mode[16] = "cmd0", tmp[4096], buf[4096];
	const char *model;
	struct termios t;
	unsigned want_baud = 300, last_baud = 0;
	size_t line_len = 0;
	bool stuck = false, raw = false, started = false, streaming = false;
	int c, master, slave, mode_ok = 0;
	FILE *f;

	while ((c = getopt(argc, argv, "sb:m:")) != -1) {
		switch (c) {
		case 's':
			stuck = true;
			break;
		case 'b':
			want_baud = (unsigned)atoi(optarg);
			break;
		case 'm':
			snprintf(expect_mode, sizeof expect_mode, "cmd%s", optarg);
			break;
		default:
			return 64;
		}
	}
	if (argc - optind != 3)
		return 64;
	alarm(600); /* a safety net: the test ends it by PID long before */
	model = argv[optind];
	if ((log_file = fopen(argv[optind + 2], "w")) == NULL)
		return 73;
	/*
	 * Non-blocking: once the daemon stops reading, a blocking write would
	 * hang on a full slave queue and the fake would never read the daemon's
	 * closing commands.
	 */
	if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK)) == -1 || grantpt(master) == -1 ||
	    unlockpt(master) == -1)
		return 71;
	/* Hold the slave open, so the master reads no EIO before the daemon comes. */
	if ((slave = open(ptsname(master), O_RDWR | O_NOCTTY)) == -1)
		return 71;
	/* Not raw: only echo off, so the fake's own bytes do not come back. */
	tcgetattr(slave, &t);
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
	tcsetattr(slave, TCSANOW, &t);
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[optind + 1]);
	if ((f = fopen(tmp, "w")) == NULL)
		return 73;
	fprintf(f, "%s\n", ptsname(master));
	fclose(f);
	rename(tmp, argv[optind + 1]);
	memset(buf, 0x55, sizeof buf);

	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		ssize_t n;

		watch_termios(master, &raw, &last_baud);
		if (!streaming && raw && ((strcmp(model, "truerng") == 0) ||
		    (strcmp(model, "truerngpro") == 0 && last_baud == want_baud) ||
		    (strcmp(model, "onerng") == 0 && started))) {
			streaming = true;
			say("streaming", "");
		}
		if (streaming)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, 10) == -1 && errno != EINTR)
			return 71;
		if (pfd.revents & POLLIN) {
			if ((n = read(master, tmp, sizeof tmp)) <= 0)
				continue;
			/* The daemon changed termios before it wrote: log that first. */
			watch_termios(master, &raw, &last_baud);
			for (ssize_t i = 0; i < n; i++) {
				if (tmp[i] != '\n' && line_len < sizeof line - 1) {
					line[line_len++] = tmp[i];
					continue;
				}
				line[line_len] = '\0';
				line_len = 0;
				if (strcmp(model, "onerng") != 0) {
					say("unexpected", line);
					continue;
				}
				say("cmd", line);
				if (!mode_ok && strcmp(line, expect_mode) == 0)
					mode_ok = 1;
				else if (mode_ok == 1 && strcmp(line, "cmdO") == 0) {
					started = true;
					mode_ok = 2;
				} else if (started && strcmp(line, "cmdo") == 0) {
					started = streaming = false;
					mode_ok = 0;
					say("stopped", "");
				} else if (strcmp(line, "cmdw") != 0)
					say("unexpected", line);
			}
		}
		if (streaming && (pfd.revents & POLLOUT)) {
			if (!stuck && getrandom(buf, sizeof buf, 0) != (ssize_t)sizeof buf)
				return 71;
			if (write(master, buf, sizeof buf) == -1 && errno != EAGAIN)
				return 71;
		}
	}
}
