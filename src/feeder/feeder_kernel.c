/* SPDX-License-Identifier: MIT */
/* The kernel's pool as the feeder reaches it: three ioctls and a write on /dev/random. */
#include <sys/ioctl.h>
#include <sys/random.h>

#include <linux/random.h>

#include <string.h>
#include <unistd.h>

#include "feeder.h"

/* Credit bytes to the kernel's pool: RNDADDENTROPY with the given count. */
static int
feeder_kernel_add(struct feeder *f, const uint8_t *buf, size_t len, unsigned credit_bits)
{
	/* The header and its flexible buffer, in words so that it is aligned. */
	uint32_t req[(sizeof(struct rand_pool_info) + FEEDPROTO_MAX_PAYLOAD) / sizeof(uint32_t)];
	struct rand_pool_info *info = (struct rand_pool_info *)(void *)req;
	int r;

	if (len > FEEDPROTO_MAX_PAYLOAD)
		return -1;
	info->entropy_count = (int)credit_bits;
	info->buf_size = (int)len;
	if (len > 0)
		memcpy(info->buf, buf, len);
	r = ioctl(f->random_fd, RNDADDENTROPY, info);
	explicit_bzero(req, sizeof(struct rand_pool_info) + len); /* what was written, no more */
	return r;
}

/* A plain write to /dev/random: mixed into the pool, credited nothing. */
static int
feeder_kernel_mix(struct feeder *f, const uint8_t *buf, size_t len)
{
	ssize_t n = write(f->random_fd, buf, len);

	return n == (ssize_t)len ? 0 : -1;
}

static int
feeder_kernel_reseed(struct feeder *f)
{
	return ioctl(f->random_fd, RNDRESEEDCRNG);
}

/* The CRNG is ready when getrandom() no longer blocks. */
static int
feeder_kernel_crng_ready(struct feeder *f)
{
	uint8_t b;

	if (getrandom(&b, 1, GRND_NONBLOCK) == 1) {
		explicit_bzero(&b, 1);
		return 1;
	}
	return 0;
}

static int
feeder_kernel_entropy_avail(struct feeder *f)
{
	int count;

	return ioctl(f->random_fd, RNDGETENTCNT, &count) == 0 ? count : 0;
}

const struct feeder_kernel_ops feeder_kernel_ops = {
	.add = feeder_kernel_add,
	.mix = feeder_kernel_mix,
	.reseed = feeder_kernel_reseed,
	.crng_ready = feeder_kernel_crng_ready,
	.entropy_avail = feeder_kernel_entropy_avail,
};
