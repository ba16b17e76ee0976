/* SPDX-License-Identifier: MIT */
/* Test helper: receive sd_notify datagrams on a socket path and print one per line. */
#include <sys/socket.h>
#include <sys/un.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	char msg[1024];
	int fd, seconds;

	if (argc != 3 || strlen(argv[1]) >= sizeof sun.sun_path) {
		fprintf(stderr, "usage: notify-listen PATH SECONDS\n");
		return 64;
	}
	seconds = atoi(argv[2]);
	strcpy(sun.sun_path, argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		perror(argv[1]);
		return 71;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, seconds * 1000) == 1) {
		ssize_t n = recv(fd, msg, sizeof msg - 1, 0);

		if (n < 0)
			break;
		msg[n] = '\0';
		printf("%s\n", msg);
	}
	unlink(argv[1]);
	return 0;
}
