/* SPDX-License-Identifier: MIT */
/*
 * tpm: TPM2_GetRandom (or TPM 1.2 TPM_ORD_GetRandom) on /dev/tpmrm0,
 * /dev/tpm0 or a swtpm server socket. A request/response protocol: each
 * read() writes one command, waits for the answer with a time-out and reads
 * it, so pollfd() is -1 and the daemon calls read() from its reader thread.
 * Reads are bounded by a token bucket (max_rate) because a TPM is slow and
 * shared with the kernel's own hwrng thread and with other TPM users.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <entropyd/source.h>
#include "builtin.h"
#include "tpm_proto.h"

#define TPM_DEFAULT_DEVICE "/dev/tpmrm0"
#define TPM_FALLBACK_DEVICE "/dev/tpm0"
#define TPM_DEFAULT_MAX_RATE "256"
#define TPM_DEFAULT_TIMEOUT_MS "2000"
#define TPM_MAX_RATE_LIMIT 10000000ul /* bytes per second */
#define TPM_TIMEOUT_LIMIT_MS 600000ul
#define TPM_REQUEST_BYTES 64       /* the largest digest: no TPM returns more per call */
#define TPM_READ_MAX_BYTES 4096    /* the most one read() gathers */
#define TPM_RETRY_TRIES 8          /* RETRY/TESTING/YIELDED answers before giving up */
#define TPM_RETRY_FIRST_MS 10      /* first pause after one, doubling ... */
#define TPM_RETRY_MAX_MS 640       /* ... up to this */
#define TPM_RATE_WAIT_MAX_MS 1000  /* the longest one read() waits for tokens */

/* One open TPM. */
struct tpm_state {
	struct entropyd_instance *instance;
	char *device;
	int fd;
	bool socket;
	enum tpm_proto_version version;
	bool version_switched; /* the device answered as the other family once */
	bool startup_sent;
	bool stale;            /* an answer is owed for an interrupted command */
	unsigned timeout_ms;
	double rate;           /* bytes per second */
	double tokens;         /* bytes that may be read now */
	size_t burst;          /* the bucket's size, and what one read() gathers */
	uint64_t refill_ns;
	uint8_t resp[TPM_PROTO_RESPONSE_MAX];
};

static const struct entropyd_host *tpm_host;
static char tpm_probed_device[4096]; /* what probe() found, for open() */

static const struct entropyd_option tpm_options[] = {
	{ "device", TPM_DEFAULT_DEVICE,
	    "TPM character device or swtpm server socket (/dev/tpm0 if /dev/tpmrm0 is missing)" },
	{ "max_rate", TPM_DEFAULT_MAX_RATE, "the most bytes per second read from the TPM" },
	{ "timeout_ms", TPM_DEFAULT_TIMEOUT_MS,
	    "how long to wait for an answer before the TPM counts as hung" },
	{ NULL, NULL, NULL }
};

/* Parse a positive decimal option no larger than max; -1 when malformed. */
static long
tpm_number(const char *value, unsigned long max)
{
	unsigned long n;
	char *end;

	if (value == NULL || *value < '0' || *value > '9')
		return -1;
	errno = 0;
	n = strtoul(value, &end, 10);
	if (errno != 0 || *end != '\0' || n == 0 || n > max)
		return -1;
	return (long)n;
}

/* An option's value, or its default when the host has none. */
static const char *
tpm_option(struct entropyd_module *module, const char *key, const char *fallback)
{
	const char *value;

	value = tpm_host->option(module, key);
	return value != NULL ? value : fallback;
}

/*
 * The device to use: the option, except that the default /dev/tpmrm0 falls
 * back to /dev/tpm0 on kernels (or TPM 1.2 chips) without a resource manager.
 */
static const char *
tpm_device(struct entropyd_module *module)
{
	const char *device;
	struct stat st;

	device = tpm_option(module, "device", TPM_DEFAULT_DEVICE);
	if (strcmp(device, TPM_DEFAULT_DEVICE) == 0 && stat(device, &st) == -1 &&
	    stat(TPM_FALLBACK_DEVICE, &st) == 0)
		return TPM_FALLBACK_DEVICE;
	return device;
}

/* Check the options before probing. */
static int
tpm_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	const char *value;

	tpm_host = host;
	if (*tpm_option(module, "device", TPM_DEFAULT_DEVICE) == '\0') {
		snprintf(err, errlen, "tpm: empty device (use -O tpm:device:PATH)");
		return -1;
	}
	value = tpm_option(module, "max_rate", TPM_DEFAULT_MAX_RATE);
	if (tpm_number(value, TPM_MAX_RATE_LIMIT) == -1) {
		snprintf(err, errlen, "tpm: max_rate %s: not a byte rate from 1 to %lu", value,
		    TPM_MAX_RATE_LIMIT);
		return -1;
	}
	value = tpm_option(module, "timeout_ms", TPM_DEFAULT_TIMEOUT_MS);
	if (tpm_number(value, TPM_TIMEOUT_LIMIT_MS) == -1) {
		snprintf(err, errlen, "tpm: timeout_ms %s: not a time-out from 1 to %lu ms", value,
		    TPM_TIMEOUT_LIMIT_MS);
		return -1;
	}
	return 0;
}

/* Add the TPM as the one instance when its device or socket exists. */
static int
tpm_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	struct stat st;
	const char *device;

	tpm_host = host;
	device = tpm_device(module);
	if (stat(device, &st) == -1) {
		if (errno == ENOENT && strcmp(device, TPM_DEFAULT_DEVICE) == 0)
			host->unusable(module, "no TPM (%s and %s do not exist)", TPM_DEFAULT_DEVICE,
			    TPM_FALLBACK_DEVICE);
		else
			host->unusable(module, "%s: %s", device, strerror(errno));
		return 0;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISSOCK(st.st_mode)) {
		host->unusable(module, "%s: not a character device or a socket", device);
		return 0;
	}
	snprintf(tpm_probed_device, sizeof tpm_probed_device, "%s", device);
	if (host->add_instance(module, "", device, NULL) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "%s: cannot add an instance", device);
		return -1;
	}
	return 1;
}

/* Connect to a swtpm server socket. */
static int
tpm_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd, saved_errno;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		saved_errno = errno;
		close(fd);
		errno = saved_errno;
		return -1;
	}
	return fd;
}

/*
 * Open the device (non-blocking, so the kernel runs a command while we
 * poll for its answer with a time-out) or connect to the socket.
 */
static int
tpm_open(struct entropyd_instance *inst, void **state)
{
	struct entropyd_module *module;
	struct tpm_state *ts;
	struct stat st;
	const char *device;
	int saved_errno;

	if (tpm_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	module = tpm_host->instance_module(inst);
	device = *tpm_probed_device != '\0' ? tpm_probed_device : tpm_device(module);
	if ((ts = calloc(1, sizeof *ts)) == NULL || (ts->device = strdup(device)) == NULL) {
		free(ts);
		tpm_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s", device, strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	ts->instance = inst;
	ts->version = TPM_PROTO_V2;
	ts->timeout_ms = (unsigned)tpm_number(tpm_option(module, "timeout_ms",
	    TPM_DEFAULT_TIMEOUT_MS), TPM_TIMEOUT_LIMIT_MS);
	ts->rate = (double)tpm_number(tpm_option(module, "max_rate", TPM_DEFAULT_MAX_RATE),
	    TPM_MAX_RATE_LIMIT);
	if (ts->timeout_ms == (unsigned)-1 || ts->rate < 1.0) {
		/* configure() refused these already; only a host that skipped it gets here. */
		tpm_host->log(inst, ENTROPYD_LOG_ERR, "bad max_rate or timeout_ms option");
		free(ts->device);
		free(ts);
		errno = EINVAL;
		return -1;
	}
	ts->burst = ts->rate < TPM_READ_MAX_BYTES ? (size_t)ts->rate : TPM_READ_MAX_BYTES;
	ts->tokens = (double)ts->burst;
	ts->refill_ns = tpm_host->now_ns();

	ts->socket = stat(device, &st) == 0 && S_ISSOCK(st.st_mode);
	if (ts->socket)
		ts->fd = tpm_connect(device);
	else
		ts->fd = open(device, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (ts->fd == -1) {
		saved_errno = errno;
		tpm_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s: %s", device,
		    ts->socket ? "connect" : "open", strerror(saved_errno));
		free(ts->device);
		free(ts);
		errno = saved_errno;
		return -1;
	}
	if (ts->socket && fcntl(ts->fd, F_SETFL, fcntl(ts->fd, F_GETFL) | O_NONBLOCK) == -1) {
		saved_errno = errno;
		tpm_host->log(inst, ENTROPYD_LOG_ERR, "%s: fcntl: %s", device,
		    strerror(saved_errno));
		close(ts->fd);
		free(ts->device);
		free(ts);
		errno = saved_errno;
		return -1;
	}
	*state = ts;
	return 0;
}

/* Sleep; -1 when a signal (the daemon stopping the reader) cut it short. */
static int
tpm_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	return nanosleep(&ts, NULL);
}

/* Log an I/O failure and return ERROR with errno kept. */
static ssize_t
tpm_io_error(struct tpm_state *ts, const char *what)
{
	int saved_errno = errno;

	tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: %s: %s", ts->device, what,
	    strerror(saved_errno));
	errno = saved_errno;
	return ENTROPYD_READ_ERROR;
}

/*
 * Wait for and read one answer into ts->resp: one read() from a device; from
 * a socket, reads until the size its header announces has arrived. Returns
 * the length, AGAIN when interrupted, or ERROR (logged).
 */
static ssize_t
tpm_receive(struct tpm_state *ts)
{
	struct pollfd pfd = { .fd = ts->fd, .events = POLLIN };
	size_t got = 0;
	uint32_t announced;
	ssize_t n;
	int r;

	for (;;) {
		if ((r = poll(&pfd, 1, (int)ts->timeout_ms)) == -1) {
			if (errno == EINTR)
				return ENTROPYD_READ_AGAIN;
			return tpm_io_error(ts, "poll");
		}
		if (r == 0) {
			tpm_host->log(ts->instance, ENTROPYD_LOG_ERR,
			    "%s: no answer within %u ms: the TPM hangs", ts->device, ts->timeout_ms);
			errno = ETIMEDOUT;
			return ENTROPYD_READ_ERROR;
		}
		n = read(ts->fd, ts->resp + got, sizeof ts->resp - got);
		if (n == -1) {
			if (errno == EINTR)
				return ENTROPYD_READ_AGAIN;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			/* A server gone with our command unread resets the connection. */
			if (ts->socket && errno == ECONNRESET)
				return tpm_io_error(ts, "the TPM closed the connection");
			return tpm_io_error(ts, "read");
		}
		if (n == 0) {
			tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: %s", ts->device,
			    ts->socket ? "the TPM closed the connection" : "unexpected end of file");
			errno = ts->socket ? ECONNRESET : EIO;
			return ENTROPYD_READ_ERROR;
		}
		got += (size_t)n;
		if (!ts->socket || got == sizeof ts->resp)
			return (ssize_t)got;
		announced = tpm_proto_announced_size(ts->resp, got);
		if (got >= 6 && (announced <= got || announced > sizeof ts->resp))
			return (ssize_t)got;
	}
}

/*
 * Send one command in one write() and read its answer. An answer still owed
 * for a command cut short by a signal is read and dropped first, so answers
 * never get out of step with commands.
 */
static ssize_t
tpm_transact(struct tpm_state *ts, const uint8_t *cmd, size_t cmdlen)
{
	ssize_t n;

	if (ts->stale) {
		if ((n = tpm_receive(ts)) < 0)
			return n;
		explicit_bzero(ts->resp, (size_t)n);
		ts->stale = false;
	}
	if (ts->socket)
		n = send(ts->fd, cmd, cmdlen, MSG_NOSIGNAL);
	else
		n = write(ts->fd, cmd, cmdlen);
	if (n == -1) {
		if (errno == EINTR)
			return ENTROPYD_READ_AGAIN;
		if (errno == EPIPE || errno == ECONNRESET)
			return tpm_io_error(ts, "the TPM closed the connection");
		return tpm_io_error(ts, "write");
	}
	if ((size_t)n != cmdlen) {
		tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: short write: %zd of %zu bytes",
		    ts->device, n, cmdlen);
		errno = EIO;
		return ENTROPYD_READ_ERROR;
	}
	ts->stale = true;
	if ((n = tpm_receive(ts)) >= 0)
		ts->stale = false;
	return n;
}

/* Send Startup(CLEAR); an answer that the TPM is started already is fine too. */
static ssize_t
tpm_startup(struct tpm_state *ts)
{
	struct tpm_proto_response r;
	uint8_t cmd[TPM_PROTO_COMMAND_MAX];
	char err[256], name[32];
	size_t cmdlen;
	ssize_t n;

	cmdlen = tpm_proto_startup(ts->version, cmd, sizeof cmd);
	if ((n = tpm_transact(ts, cmd, cmdlen)) < 0)
		return n;
	switch (tpm_proto_parse_header(ts->version, ts->resp, (size_t)n, &r, err, sizeof err)) {
	case TPM_PROTO_OK:
		tpm_host->log(ts->instance, ENTROPYD_LOG_INFO, "%s: %s started", ts->device,
		    tpm_proto_version_name(ts->version));
		return 0;
	case TPM_PROTO_RC:
		if (tpm_proto_rc_kind(ts->version, r.rc) == TPM_PROTO_RC_STARTUP)
			return 0; /* started meanwhile by someone else */
		tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: Startup(CLEAR) failed: %s",
		    ts->device, tpm_proto_rc_name(ts->version, r.rc, name, sizeof name));
		errno = EIO;
		return ENTROPYD_READ_ERROR;
	default:
		tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: Startup(CLEAR): %s", ts->device,
		    err);
		errno = EPROTO;
		return ENTROPYD_READ_ERROR;
	}
}

/*
 * One GetRandom for up to want bytes into dst: a count, AGAIN or ERROR
 * (logged). Handles Startup, busy answers and a TPM 1.2 behind the device.
 */
static ssize_t
tpm_get_random(struct tpm_state *ts, uint8_t *dst, size_t want)
{
	struct tpm_proto_response r;
	uint8_t cmd[TPM_PROTO_COMMAND_MAX];
	char err[256], namebuf[32];
	const char *name;
	unsigned tries = 0, pause_ms = TPM_RETRY_FIRST_MS;
	size_t cmdlen;
	ssize_t n;

	for (;;) {
		cmdlen = tpm_proto_get_random(ts->version, (uint16_t)want, cmd, sizeof cmd);
		if ((n = tpm_transact(ts, cmd, cmdlen)) < 0)
			return n;
		switch (tpm_proto_parse_get_random(ts->version, ts->resp, (size_t)n, want, &r, err,
		    sizeof err)) {
		case TPM_PROTO_OK:
			memcpy(dst, r.data, r.len);
			explicit_bzero(ts->resp, (size_t)n);
			return (ssize_t)r.len;
		case TPM_PROTO_OTHER_VERSION:
			if (ts->version_switched) {
				tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: GetRandom: %s",
				    ts->device, err);
				errno = EPROTO;
				return ENTROPYD_READ_ERROR;
			}
			ts->version = ts->version == TPM_PROTO_V2 ? TPM_PROTO_V12 : TPM_PROTO_V2;
			ts->version_switched = true;
			tpm_host->log(ts->instance, ENTROPYD_LOG_INFO, "%s: %s: speaking %s",
			    ts->device, err, tpm_proto_version_name(ts->version));
			continue;
		case TPM_PROTO_MALFORMED:
			tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: GetRandom: %s", ts->device,
			    err);
			errno = EPROTO;
			return ENTROPYD_READ_ERROR;
		case TPM_PROTO_RC:
			break;
		}
		name = tpm_proto_rc_name(ts->version, r.rc, namebuf, sizeof namebuf);
		switch (tpm_proto_rc_kind(ts->version, r.rc)) {
		case TPM_PROTO_RC_STARTUP:
			if (ts->startup_sent) {
				tpm_host->log(ts->instance, ENTROPYD_LOG_ERR,
				    "%s: GetRandom: %s even after Startup", ts->device, name);
				errno = EIO;
				return ENTROPYD_READ_ERROR;
			}
			ts->startup_sent = true;
			tpm_host->log(ts->instance, ENTROPYD_LOG_INFO,
			    "%s: GetRandom: %s: the TPM is not started; sending Startup(CLEAR)",
			    ts->device, name);
			if ((n = tpm_startup(ts)) < 0)
				return n;
			continue;
		case TPM_PROTO_RC_RETRY:
			if (++tries > TPM_RETRY_TRIES) {
				tpm_host->log(ts->instance, ENTROPYD_LOG_ERR,
				    "%s: GetRandom: still %s after %u tries", ts->device, name,
				    TPM_RETRY_TRIES);
				errno = EBUSY;
				return ENTROPYD_READ_ERROR;
			}
			tpm_host->log(ts->instance, ENTROPYD_LOG_DEBUG,
			    "%s: GetRandom: %s; asking again in %u ms", ts->device, name, pause_ms);
			if (tpm_sleep_ms(pause_ms) == -1)
				return ENTROPYD_READ_AGAIN;
			if (pause_ms < TPM_RETRY_MAX_MS)
				pause_ms *= 2;
			continue;
		case TPM_PROTO_RC_FATAL:
			tpm_host->log(ts->instance, ENTROPYD_LOG_ERR, "%s: GetRandom failed: %s",
			    ts->device, name);
			errno = EIO;
			return ENTROPYD_READ_ERROR;
		}
	}
}

/*
 * Token bucket: add what the elapsed time earned (up to the bucket's size),
 * then wait until want bytes may be read. -1 when not yet (the wait was cut
 * short by a signal or reached its cap): the caller returns AGAIN.
 */
static int
tpm_rate_wait(struct tpm_state *ts, size_t want)
{
	uint64_t now = tpm_host->now_ns();
	double missing;
	unsigned wait_ms;

	ts->tokens += (double)(now - ts->refill_ns) * ts->rate / 1e9;
	ts->refill_ns = now;
	if (ts->tokens > (double)ts->burst)
		ts->tokens = (double)ts->burst;
	if (ts->tokens >= (double)want)
		return 0;
	missing = (double)want - ts->tokens;
	wait_ms = (unsigned)(missing * 1000.0 / ts->rate) + 1;
	if (wait_ms > TPM_RATE_WAIT_MAX_MS) {
		tpm_sleep_ms(TPM_RATE_WAIT_MAX_MS);
		return -1;
	}
	if (tpm_sleep_ms(wait_ms) == -1)
		return -1;
	return tpm_rate_wait(ts, want);
}

/*
 * Gather one bucketful (at most len bytes) with as many GetRandom calls as
 * it takes. Blocks in poll() or a rate wait; a signal returns AGAIN.
 */
static ssize_t
tpm_read(void *state, void *buf, size_t len)
{
	struct tpm_state *ts = state;
	uint8_t *out = buf;
	size_t want, got = 0;
	ssize_t n;

	want = len < ts->burst ? len : ts->burst;
	if (want == 0)
		return ENTROPYD_READ_AGAIN;
	if (tpm_rate_wait(ts, want) == -1)
		return ENTROPYD_READ_AGAIN;
	while (got < want) {
		n = tpm_get_random(ts, out + got, want - got < TPM_REQUEST_BYTES ? want - got :
		    TPM_REQUEST_BYTES);
		if (n == ENTROPYD_READ_AGAIN && got > 0)
			break;
		if (n < 0) {
			explicit_bzero(buf, got);
			return n;
		}
		got += (size_t)n;
	}
	ts->tokens -= (double)got;
	return (ssize_t)got;
}

/* A request/response protocol: the daemon reads from its thread. */
static int
tpm_pollfd(void *state)
{
	return -1;
}

/*
 * The VM generation changed: nothing of a response outlives its read, but
 * wipe the buffer anyway. (A virtual TPM restored with the snapshot starts
 * from the same state in every clone: that is the operator's to judge.)
 */
static void
tpm_forget(void *state)
{
	struct tpm_state *ts = state;

	explicit_bzero(ts->resp, sizeof ts->resp);
}

/* Close the device or socket and free the state. */
static void
tpm_close(void *state)
{
	struct tpm_state *ts = state;

	if (ts == NULL)
		return;
	close(ts->fd);
	explicit_bzero(ts->resp, sizeof ts->resp);
	free(ts->device);
	free(ts);
}

/*
 * Credit policy (entropyd(8), CREDIT POLICY): nothing unless the operator
 * vouches for the chip with -O tpm:entropy:H, H at most 4 bits per byte.
 * What a TPM returns is the output of its SP 800-90A DRBG, and a DRBG
 * guarantees no more fresh entropy per byte than its security strength
 * over what it outputs between reseeds. The TCG leaves the reseed interval
 * to the vendor, and the reference implementation (and libtpms, swtpm's
 * engine) reseeds once every 2^20 requests of up to 2^16 bytes: a
 * guarantee of practically nothing. A chip documented to reseed for every
 * GetRandom (prediction resistance) guarantees its 256-bit strength per
 * request of at most 64 bytes, the largest digest it answers with: 4 bits
 * per byte, the ceiling. The bytes are still read, tested and conditioned
 * (a -o sink takes them) but the kernel is fed only credited data. The
 * hwrng source never credits a TPM (tpm-rng), so one chip is never counted
 * twice.
 */
const struct entropyd_source tpm_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "tpm",
	.description = "TPM 2.0 / 1.2 GetRandom (/dev/tpmrm0, /dev/tpm0 or a swtpm socket)",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON | ENTROPYD_SOURCE_CREDIT_ON_REQUEST,
	.entropy_bits = 4.0,
	.sample_bits = 0,
	.options = tpm_options,
	.probe = tpm_probe,
	.open = tpm_open,
	.read = tpm_read,
	.pollfd = tpm_pollfd,
	.close = tpm_close,
	.configure = tpm_configure,
	.forget = tpm_forget,
};
