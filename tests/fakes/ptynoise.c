/* SPDX-License-Identifier: MIT */
/*
 * ptynoise LINK: a stand-in for a USB-serial noise board. Opens a
 * pseudo-terminal, points the symlink LINK at its terminal side, and writes
 * everything read from stdin into it; then waits to be killed, which hangs
 * the line up as an unplugged board would.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct termios tio;
	char buf[4096], *tmp, *name;
	ssize_t n, off, w;
	int master, slave;

	if (argc != 2) {
		fprintf(stderr, "usage: ptynoise LINK <noise\n");
		return 64;
	}
	if ((master = posix_openpt(O_RDWR | O_NOCTTY)) == -1 || grantpt(master) == -1 ||
	    unlockpt(master) == -1 || (name = ptsname(master)) == NULL) {
		perror("ptynoise: pty");
		return 71;
	}
	/* Hold the terminal side open, raw, so nothing is echoed or cooked. */
	if ((slave = open(name, O_RDWR | O_NOCTTY)) == -1 || tcgetattr(slave, &tio) == -1) {
		perror("ptynoise: open terminal side");
		return 71;
	}
	cfmakeraw(&tio);
	tcsetattr(slave, TCSANOW, &tio);
	if (asprintf(&tmp, "%s.tmp", argv[1]) == -1 || (unlink(tmp), symlink(name, tmp)) == -1 ||
	    rename(tmp, argv[1]) == -1) {
		perror("ptynoise: link");
		return 73;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof buf)) > 0)
		for (off = 0; off < n; off += w)
			if ((w = write(master, buf + off, (size_t)(n - off))) == -1) {
				if (errno == EINTR) {
					w = 0;
					continue;
				}
				perror("ptynoise: write");
				return 74;
			}
	for (;;)
		pause();
}
