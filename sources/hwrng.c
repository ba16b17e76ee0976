/* SPDX-License-Identifier: MIT */
/*
 * hwrng: the kernel's hw_random device, /dev/hwrng (virtio-rng, TPM, SoC
 * RNGs). Reads block and the device has no poll method (poll always says
 * readable), so pollfd() is -1 and the daemon reads from its own thread.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <entropyd/source.h>
#include "builtin.h"
#include "hwrng.h"

#define HWRNG_DEFAULT_DEVICE "/dev/hwrng"
#define HWRNG_DEFAULT_RNG_CURRENT "/sys/class/misc/hw_random/rng_current"
#define HWRNG_MISC_MAJOR 10  /* MISC_MAJOR */
#define HWRNG_MISC_MINOR 183 /* HWRNG_MINOR in <linux/miscdevice.h> */

/* One open device. */
struct hwrng_state {
	struct entropyd_instance *instance;
	char *device;
	int fd;
	size_t stale_bytes; /* still to drop after a VM generation change */
};

/*
 * What the kernel may hold from before a VM generation change: hw_random's
 * buffer and the driver's (virtio-rng prefetches one), each at most
 * max(32, SMP_CACHE_BYTES) = 64 bytes.
 */
#define HWRNG_STALE_BYTES 128

static const struct entropyd_host *hwrng_host;

static const struct entropyd_option hwrng_options[] = {
	{ "device", HWRNG_DEFAULT_DEVICE, "the hardware RNG device (rngd's -r PATH)" },
	{ "rng_current", HWRNG_DEFAULT_RNG_CURRENT,
	    "sysfs file naming the kernel's current hwrng (for testing)" },
	{ NULL, NULL, NULL }
};

/* The device option, or the default when the host has no value. */
static const char *
hwrng_device(struct entropyd_module *module)
{
	const char *device;

	device = hwrng_host->option(module, "device");
	return device != NULL ? device : HWRNG_DEFAULT_DEVICE;
}

/* Read the first line of a small (sysfs) file into buf, without trailing blanks. */
static int
hwrng_read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, saved_errno;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		n = read(fd, buf, len - 1);
	while (n == -1 && errno == EINTR);
	saved_errno = errno;
	close(fd);
	if (n == -1) {
		errno = saved_errno;
		return -1;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	n = (ssize_t)strlen(buf);
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	return 0;
}

/*
 * Is this the kernel's hw_random node, whose usefulness rng_current decides?
 * Another device given with -r (a tty, a test file) is taken as it is.
 */
static bool
hwrng_is_kernel_device(const char *device, const struct stat *st, bool exists)
{
	if (strcmp(device, HWRNG_DEFAULT_DEVICE) == 0)
		return true;
	return exists && S_ISCHR(st->st_mode) && major(st->st_rdev) == HWRNG_MISC_MAJOR &&
	    minor(st->st_rdev) == HWRNG_MISC_MINOR;
}

/* The quality (0..1024) the kernel's driver declares in rng_quality next to rng_current, or -1. */
static long
hwrng_quality(const char *rng_current)
{
	char path[4096], quality[32], *end;
	const char *slash;
	unsigned long q;
	int dirlen;

	/* rng_quality sits next to rng_current (Linux 5.18 and later). */
	slash = strrchr(rng_current, '/');
	dirlen = slash != NULL ? (int)(slash - rng_current + 1) : 0;
	snprintf(path, sizeof path, "%.*srng_quality", dirlen, rng_current);
	if (hwrng_read_line(path, quality, sizeof quality) == -1 ||
	    (q = strtoul(quality, &end, 10), *end != '\0' || end == quality) || q > 1024)
		return -1;
	return (long)q;
}

double
hwrng_policy_bits(const char *current, long quality, const char **why)
{
	if (strncmp(current, HWRNG_TPM_PREFIX, strlen(HWRNG_TPM_PREFIX)) == 0) {
		*why = "a TPM's DRBG, credited as the tpm source credits a TPM: nothing unless "
		    "vouched for there (-O tpm:entropy), so one chip is never counted twice";
		return HWRNG_TPM_BITS;
	}
	if (strncmp(current, HWRNG_VIRTIO_PREFIX, strlen(HWRNG_VIRTIO_PREFIX)) == 0) {
		*why = "the host's random number generator, which only the host (able to read "
		    "this machine's memory anyway) can predict";
		return 8.0;
	}
	if (quality >= 0 && quality < 1024) {
		*why = "the quality its kernel driver declares (rng_quality)";
		return (double)quality * 8.0 / 1024.0;
	}
	*why = "a hardware noise source that its kernel driver rates at full entropy";
	return 8.0;
}

/*
 * Log the current hwrng and hold the instance to what the credit policy
 * gives it (entropyd(8), CREDIT POLICY): only ever lowered.
 */
static void
hwrng_apply_policy(struct entropyd_instance *inst, const char *rng_current, const char *name)
{
	long q = hwrng_quality(rng_current);
	const char *why;
	double bits = hwrng_policy_bits(name, q, &why);

	if (q >= 0)
		hwrng_host->log(inst, ENTROPYD_LOG_INFO, "current hwrng: %s (kernel quality "
		    "%ld/1024): %g bits per byte, %s", name, q, bits, why);
	else
		hwrng_host->log(inst, ENTROPYD_LOG_INFO, "current hwrng: %s: %g bits per byte, %s",
		    name, bits, why);
	if (bits < hwrng_source.entropy_bits && ENTROPYD_HOST_HAS(hwrng_host, limit_entropy) &&
	    hwrng_host->limit_entropy != NULL)
		hwrng_host->limit_entropy(inst, bits);
}

/* Check the options before probing: the device must be named. */
static int
hwrng_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	const char *device;

	hwrng_host = host;
	device = hwrng_device(module);
	if (*device == '\0') {
		snprintf(err, errlen, "hwrng: empty device (use -O hwrng:device:PATH or -r PATH)");
		return -1;
	}
	return 0;
}

/* Add the device as the one instance, or say why it cannot be used. */
static int
hwrng_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	struct entropyd_instance *inst;
	struct stat st;
	const char *device, *rng_current;
	char current[128];
	bool exists, have_current = false;
	int fd, stat_errno;

	hwrng_host = host;
	device = hwrng_device(module);
	if (*device == '\0') {
		host->unusable(module, "no device given");
		return 0;
	}
	exists = stat(device, &st) == 0;
	stat_errno = errno;
	if (!exists && stat_errno != ENOENT && stat_errno != ENOTDIR) {
		host->unusable(module, "%s: %s", device, strerror(stat_errno));
		return 0;
	}

	/* The kernel keeps /dev/hwrng even with no RNG behind it: ask sysfs. */
	rng_current = host->option(module, "rng_current");
	if (rng_current == NULL)
		rng_current = HWRNG_DEFAULT_RNG_CURRENT;
	if (hwrng_is_kernel_device(device, &st, exists) && *rng_current != '\0') {
		if (hwrng_read_line(rng_current, current, sizeof current) == 0) {
			if (*current == '\0') {
				host->unusable(module,
				    "no hardware RNG is current (rng_current: empty)");
				return 0;
			}
			if (strcmp(current, "none") == 0) {
				host->unusable(module,
				    "no hardware RNG is current (rng_current: none)");
				return 0;
			}
			have_current = true;
		} else if (errno != ENOENT)
			host->module_log(module, ENTROPYD_LOG_WARNING, "%s: %s", rng_current,
			    strerror(errno));
	}

	if (!exists) {
		host->unusable(module, "%s: %s", device, strerror(stat_errno));
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		host->unusable(module, "%s: %s", device, strerror(EISDIR));
		return 0;
	}
	/* O_NONBLOCK: a test FIFO must not hang the probe. */
	if ((fd = open(device, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		host->unusable(module, "%s: %s", device, strerror(errno));
		return 0;
	}
	close(fd);

	if ((inst = host->add_instance(module, "", device, NULL)) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "%s: cannot add an instance", device);
		return -1;
	}
	if (have_current)
		hwrng_apply_policy(inst, rng_current, current);
	return 1;
}

/* Open the device for blocking reads (O_RDWR would give EINVAL). */
static int
hwrng_open(struct entropyd_instance *inst, void **state)
{
	struct hwrng_state *hs;
	const char *device;
	int saved_errno;

	if (hwrng_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	device = hwrng_device(hwrng_host->instance_module(inst));
	if ((hs = calloc(1, sizeof *hs)) == NULL || (hs->device = strdup(device)) == NULL) {
		free(hs);
		hwrng_host->log(inst, ENTROPYD_LOG_ERR, "%s: %s", device, strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	hs->instance = inst;
	/* Never block the daemon's loop in open() (a FIFO given with -r would). */
	if ((hs->fd = open(device, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1 ||
	    fcntl(hs->fd, F_SETFL, fcntl(hs->fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		saved_errno = errno;
		if (hs->fd != -1)
			close(hs->fd);
		hwrng_host->log(inst, ENTROPYD_LOG_ERR, "%s: open: %s", device,
		    strerror(saved_errno));
		free(hs->device);
		free(hs);
		errno = saved_errno;
		return -1;
	}
	*state = hs;
	return 0;
}

/*
 * Read what the device has, blocking until it has some. A signal (the daemon
 * stopping its reader thread) returns AGAIN rather than reading on. hw_random
 * never ends, so an end of file is a device error.
 */
static ssize_t
hwrng_read(void *state, void *buf, size_t len)
{
	struct hwrng_state *hs = state;
	ssize_t n;
	size_t drop;
	int saved_errno;

	while ((n = read(hs->fd, buf, len)) > 0) {
		if (hs->stale_bytes == 0)
			return n;
		/* Bytes the kernel buffered before the VM generation changed. */
		drop = hs->stale_bytes < (size_t)n ? hs->stale_bytes : (size_t)n;
		hs->stale_bytes -= drop;
		explicit_bzero(buf, drop);
		if (drop < (size_t)n) {
			memmove(buf, (uint8_t *)buf + drop, (size_t)n - drop);
			explicit_bzero((uint8_t *)buf + (size_t)n - drop, drop);
			return n - (ssize_t)drop;
		}
	}
	if (n == 0) {
		hwrng_host->log(hs->instance, ENTROPYD_LOG_ERR, "%s: unexpected end of file",
		    hs->device);
		errno = EIO;
		return ENTROPYD_READ_ERROR;
	}
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return ENTROPYD_READ_AGAIN;
	saved_errno = errno;
	hwrng_host->log(hs->instance, ENTROPYD_LOG_ERR, "%s: read: %s", hs->device,
	    strerror(saved_errno));
	errno = saved_errno;
	return ENTROPYD_READ_ERROR;
}

/* The VM generation changed: drop what the kernel buffered before it. */
static void
hwrng_forget(void *state)
{
	struct hwrng_state *hs = state;

	hs->stale_bytes = HWRNG_STALE_BYTES;
}

/* hw_random has no poll method: the daemon must read from a thread. */
static int
hwrng_pollfd(void *state)
{
	return -1;
}

/* Close the device and free the instance's state. */
static void
hwrng_close(void *state)
{
	struct hwrng_state *hs = state;

	if (hs == NULL)
		return;
	close(hs->fd);
	free(hs->device);
	free(hs);
}

/*
 * entropy_bits: 8 bits per byte, the ceiling, for the kernel's hwrng as the
 * credit policy (entropyd(8), CREDIT POLICY) judges what stands behind it:
 * probe() reads rng_current and lowers the instance for a TPM (tpm-rng-N:
 * the TPM's figure, nothing by default, so the tpm and hwrng sources never
 * both credit one chip) and for a driver that declares a quality below
 * 1024 (rng_quality); virtio-rng (the host's generator) and full-quality
 * hardware keep 8. A device given with -r that is not the kernel's node is
 * taken as it is. The daemon's FIPS tests, conditioner accounting and
 * online MCV estimate apply on top.
 */
const struct entropyd_source hwrng_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "hwrng",
	.description = "kernel hardware RNG (/dev/hwrng: virtio-rng, TPM, SoC RNGs)",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON,
	.entropy_bits = 8.0,
	.sample_bits = 0,
	.options = hwrng_options,
	.probe = hwrng_probe,
	.open = hwrng_open,
	.read = hwrng_read,
	.pollfd = hwrng_pollfd,
	.close = hwrng_close,
	.configure = hwrng_configure,
	.forget = hwrng_forget,
};
