/* SPDX-License-Identifier: MIT */
/*
 * A test-only drop-in source whose behaviour a test changes while the daemon
 * runs: the first word of the file named by -O faulty:control:PATH.
 *   good    /dev/urandom (the default, and when the file is missing)
 *   stuck   the same 32-bit word over and over
 *   ones    all-ones words
 *   eio     every other read fails with EIO; the others are good
 *   short   good bytes, 1 to 7 at a time
 *   stall   blocks in read() until the mode changes (a signal interrupts it)
 *   vanish  the read fails, and open() fails until the mode changes
 *   cheat   what a hostile plugin in the worker could try: write a frame of
 *           its own to the feeder's socket (found among the process's
 *           descriptors), 64 zero bytes credited 9 bits each, then read good
 *           bytes
 * read() blocks (no pollfd), so the daemon drives it from a reader thread.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>

struct faulty {
	int fd;
	unsigned long reads;
};

static const struct entropyd_host *faulty_host;
static const char *faulty_control;

static const struct entropyd_option faulty_options[] = {
	{ "control", NULL, "the file whose first word is the mode" },
	{ NULL, NULL, NULL }
};

/* The current mode, read afresh from the control file. */
static void
faulty_mode(char *mode, size_t len)
{
	ssize_t n = -1;
	int fd;

	if (faulty_control != NULL && (fd = open(faulty_control, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, mode, len - 1);
		close(fd);
	}
	if (n <= 0)
		n = 0;
	mode[n] = '\0';
	mode[strcspn(mode, " \t\r\n")] = '\0';
	if (mode[0] == '\0')
		strcpy(mode, "good");
}

/* Remember the host table and the control file. */
static int
faulty_configure(struct entropyd_module *m, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	faulty_host = host;
	faulty_control = host->option(m, "control");
	return 0;
}

/* One instance. */
static int
faulty_probe(struct entropyd_module *m, const struct entropyd_host *host)
{
	faulty_host = host;
	faulty_control = host->option(m, "control");
	return host->add_instance(m, "", faulty_control != NULL ? faulty_control : "(none)",
	    NULL) == NULL ? -1 : 1;
}

/* Open /dev/urandom, unless the source has vanished. */
static int
faulty_open(struct entropyd_instance *inst, void **state)
{
	struct faulty *f;
	char mode[32];

	faulty_mode(mode, sizeof mode);
	if (strcmp(mode, "vanish") == 0) {
		errno = ENODEV;
		return -1;
	}
	if ((f = calloc(1, sizeof *f)) == NULL)
		return -1;
	if ((f->fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

/* Fill buf with one 32-bit word repeated. */
static void
faulty_fill(void *buf, size_t len, uint32_t word)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(word >> (8 * (i % 4)));
}

/*
 * Send every SOCK_SEQPACKET socket of the process an ADD frame (the layout
 * of src/proto/feedproto.h, built by hand as an attacker would) crediting 64
 * zero bytes with 9 bits each.
 */
static void
faulty_cheat(void)
{
	uint8_t frame[16 + 64] = { 2, 0, 0, 0, 64, 0, 0, 0, 9 * 64 & 0xff, 9 * 64 >> 8 };
	int fd, type;
	socklen_t len;

	for (fd = 3; fd < 1024; fd++) {
		len = sizeof type;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET)
			(void)send(fd, frame, sizeof frame, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
}

/* Read according to the mode. */
static ssize_t
faulty_read(void *state, void *buf, size_t len)
{
	struct faulty *f = state;
	char mode[32];
	ssize_t n;

	f->reads++;
	faulty_mode(mode, sizeof mode);
	if (len > 4096)
		len = 4096;
	if (strcmp(mode, "stuck") == 0) {
		faulty_fill(buf, len, 0x5a17c3e9u);
		return (ssize_t)len;
	}
	if (strcmp(mode, "ones") == 0) {
		faulty_fill(buf, len, 0xffffffffu);
		return (ssize_t)len;
	}
	if (strcmp(mode, "vanish") == 0 || (strcmp(mode, "eio") == 0 && f->reads % 2 == 0)) {
		errno = strcmp(mode, "vanish") == 0 ? ENODEV : EIO;
		return ENTROPYD_READ_ERROR;
	}
	if (strcmp(mode, "stall") == 0) {
		for (;;) {
			if (poll(NULL, 0, 50) == -1 && errno == EINTR)
				return ENTROPYD_READ_AGAIN;
			faulty_mode(mode, sizeof mode);
			if (strcmp(mode, "stall") != 0)
				return ENTROPYD_READ_AGAIN;
		}
	}
	if (strcmp(mode, "short") == 0)
		len = 1 + (size_t)(f->reads % 7);
	if (strcmp(mode, "cheat") == 0)
		faulty_cheat();
	n = read(f->fd, buf, len);
	return n > 0 ? n : ENTROPYD_READ_ERROR;
}

/* No descriptor: read() blocks, from a reader thread. */
static int
faulty_pollfd(void *state)
{
	return -1;
}

/* Close it and free the state. */
static void
faulty_close(void *state)
{
	struct faulty *f = state;

	close(f->fd);
	free(f);
}

static const struct entropyd_source faulty_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "faulty",
	.description = "a test source whose faults a control file switches",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.options = faulty_options,
	.probe = faulty_probe,
	.open = faulty_open,
	.read = faulty_read,
	.pollfd = faulty_pollfd,
	.close = faulty_close,
	.configure = faulty_configure,
};

const struct entropyd_source *
entropyd_source_entry(void)
{
	return &faulty_source;
}
