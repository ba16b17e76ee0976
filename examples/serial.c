/* SPDX-License-Identifier: MIT */
/*
 * serial: an example drop-in source for DIY noise generators that stream
 * random bytes over a (USB-)serial line, such as avalanche-noise boards
 * built around an Arduino. The line is put in raw mode at the baud rate
 * given; when the device goes away (unplugged, hung up) the daemon marks
 * the source absent and opens it again, with backoff, until it is back.
 *
 * Nothing is credited unless the operator, who knows the board, says how
 * much (-O serial:entropy:H, at most 8 bits per byte): a home-built noise
 * source has no assessment the daemon could trust by default.
 *
 * Build it outside the tree with the installed SDK:
 *	cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags entropyd) \
 *	    -o serial.so serial.c
 *	install -m 644 serial.so "$(pkg-config --variable=plugindir entropyd)"
 * and use it with: entropyd -n serial -O serial:device:/dev/ttyACM0 ...
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <entropyd/source.h>

/* One open serial line. */
struct serial_state {
	struct entropyd_instance *instance;
	char *device;
	int fd;
};

/* A baud rate and its termios constant. */
struct serial_speed {
	unsigned long baud;
	speed_t speed;
};

static const struct entropyd_host *serial_host;

static const struct serial_speed serial_speeds[] = {
	{ 9600, B9600 }, { 19200, B19200 }, { 38400, B38400 }, { 57600, B57600 },
	{ 115200, B115200 }, { 230400, B230400 }, { 460800, B460800 },
	{ 500000, B500000 }, { 921600, B921600 }, { 1000000, B1000000 },
	{ 2000000, B2000000 }, { 3000000, B3000000 }, { 4000000, B4000000 },
};

static const struct entropyd_option serial_options[] = {
	{ "device", NULL, "the serial device, e.g. /dev/ttyACM0 (required)" },
	{ "baud", "115200", "line speed: 9600 up to 4000000" },
	{ NULL, NULL, NULL }
};

/* The termios speed for a baud option, or (speed_t)-1. */
static speed_t
serial_speed(const char *value)
{
	unsigned long baud;
	char *end;
	size_t i;

	if (value == NULL || *value < '0' || *value > '9')
		return (speed_t)-1;
	errno = 0;
	baud = strtoul(value, &end, 10);
	if (errno != 0 || *end != '\0')
		return (speed_t)-1;
	for (i = 0; i < sizeof serial_speeds / sizeof serial_speeds[0]; i++)
		if (serial_speeds[i].baud == baud)
			return serial_speeds[i].speed;
	return (speed_t)-1;
}

/* The device option, or NULL when none (or an empty one) was given. */
static const char *
serial_device(struct entropyd_module *module)
{
	const char *device = serial_host->option(module, "device");

	return device != NULL && *device != '\0' ? device : NULL;
}

/* Check the options: a device is required and the baud rate must be one we know. */
static int
serial_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	const char *baud;

	serial_host = host;
	if (serial_device(module) == NULL) {
		snprintf(err, errlen, "serial: no device given (use -O serial:device:PATH)");
		return -1;
	}
	baud = host->option(module, "baud");
	if (serial_speed(baud) == (speed_t)-1) {
		snprintf(err, errlen, "serial: baud rate '%s' is not one of 9600, 19200, "
		    "38400, 57600, 115200, 230400, 460800, 500000, 921600, 1000000, 2000000, "
		    "3000000, 4000000", baud != NULL ? baud : "");
		return -1;
	}
	return 0;
}

/* Add the device as the one instance, or say why it cannot be used. */
static int
serial_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	struct stat st;
	const char *device;

	serial_host = host;
	if ((device = serial_device(module)) == NULL) {
		host->unusable(module, "no device given (use -O serial:device:PATH)");
		return 0;
	}
	if (stat(device, &st) == -1) {
		host->unusable(module, "%s: %s", device, strerror(errno));
		return 0;
	}
	if (!S_ISCHR(st.st_mode)) {
		host->unusable(module, "%s: not a character device", device);
		return 0;
	}
	if (host->add_instance(module, "", device, NULL) == NULL)
		return -1;
	return 1;
}

/* Open the line without becoming its controlling process, raw, at the baud rate. */
static int
serial_open(struct entropyd_instance *inst, void **state)
{
	struct entropyd_module *module = serial_host->instance_module(inst);
	struct serial_state *ss;
	struct termios tio;
	const char *device = serial_device(module);
	speed_t speed = serial_speed(serial_host->option(module, "baud"));
	int saved_errno;

	if (device == NULL || speed == (speed_t)-1) {
		errno = EINVAL;
		return -1;
	}
	if ((ss = calloc(1, sizeof *ss)) == NULL || (ss->device = strdup(device)) == NULL) {
		free(ss);
		errno = ENOMEM;
		return -1;
	}
	ss->instance = inst;
	if ((ss->fd = open(device, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		saved_errno = errno;
		serial_host->log(inst, ENTROPYD_LOG_ERR, "%s: open: %s", device,
		    strerror(saved_errno));
		goto fail;
	}
	if (tcgetattr(ss->fd, &tio) == -1) {
		saved_errno = errno;
		serial_host->log(inst, ENTROPYD_LOG_ERR, "%s: not a terminal: %s", device,
		    strerror(saved_errno));
		goto fail;
	}
	cfmakeraw(&tio);
	tio.c_cflag |= CREAD | CLOCAL;
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (cfsetispeed(&tio, speed) == -1 || cfsetospeed(&tio, speed) == -1 ||
	    tcsetattr(ss->fd, TCSANOW, &tio) == -1) {
		saved_errno = errno;
		serial_host->log(inst, ENTROPYD_LOG_ERR, "%s: cannot set raw mode: %s", device,
		    strerror(saved_errno));
		goto fail;
	}
	/* Bytes queued before raw mode may have been mangled: drop them. */
	tcflush(ss->fd, TCIFLUSH);
	*state = ss;
	return 0;

fail:
	if (ss->fd != -1)
		close(ss->fd);
	free(ss->device);
	free(ss);
	errno = saved_errno;
	return -1;
}

/* Read what the board sent; a hang-up makes the source absent until it is back. */
static ssize_t
serial_read(void *state, void *buf, size_t len)
{
	struct serial_state *ss = state;
	ssize_t n;
	int saved_errno;

	if ((n = read(ss->fd, buf, len)) > 0)
		return n;
	if (n == -1 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return ENTROPYD_READ_AGAIN;
	saved_errno = n == 0 ? EIO : errno;
	serial_host->log(ss->instance, ENTROPYD_LOG_WARNING, "%s: device gone (%s); "
	    "reconnecting", ss->device, strerror(saved_errno));
	errno = saved_errno;
	return ENTROPYD_READ_ERROR;
}

/* The daemon polls the line itself. */
static int
serial_pollfd(void *state)
{
	struct serial_state *ss = state;

	return ss->fd;
}

/* Close the line and free its state. */
static void
serial_close(void *state)
{
	struct serial_state *ss = state;

	if (ss == NULL)
		return;
	close(ss->fd);
	free(ss->device);
	free(ss);
}

static const struct entropyd_source serial_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "serial",
	.description = "a noise generator streaming random bytes over a serial line",
	.flags = ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 8.0,
	.sample_bits = 0,
	.options = serial_options,
	.probe = serial_probe,
	.open = serial_open,
	.read = serial_read,
	.pollfd = serial_pollfd,
	.close = serial_close,
	.configure = serial_configure,
};

/* The one exported symbol. */
const struct entropyd_source *
entropyd_source_entry(void)
{
	return &serial_source;
}
