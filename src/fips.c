/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fips.h"

#define FIPS_BUCKETS 6		/* run lengths 1..5 and 6+ */
#define FIPS_LONG_RUN_BITS 26

/* Per byte value, bits most significant first. */
struct fips_byte {
	uint8_t lead;		/* length of the run starting at bit 7 */
	uint8_t trail;		/* length of the run ending at bit 0 */
	uint8_t interior[2][FIPS_BUCKETS]; /* runs wholly inside the byte */
};

static struct fips_byte fips_bytes[256];
/* Bucket of a run length 0..31 (lengths from 31 up share the last entry). */
static const uint8_t fips_bucket[32] = { 0, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 };
static pthread_once_t fips_once = PTHREAD_ONCE_INIT;

static void fips_build_tables(void);

static const struct {
	unsigned lo, hi;
} fips_runs_bounds[FIPS_BUCKETS] = {
	{ 2315, 2685 }, { 1114, 1386 }, { 527, 723 },
	{ 240, 384 }, { 103, 209 }, { 103, 209 },
};

static const char *const fips_names[FIPS_NTESTS] = {
	[FIPS_MONOBIT] = "Monobit",
	[FIPS_POKER] = "Poker",
	[FIPS_RUNS] = "Runs",
	[FIPS_LONG_RUN] = "Long run",
	[FIPS_CONTINUOUS] = "Continuous run",
};

static const char *const fips_keys[FIPS_NTESTS] = {
	[FIPS_MONOBIT] = "monobit",
	[FIPS_POKER] = "poker",
	[FIPS_RUNS] = "runs",
	[FIPS_LONG_RUN] = "long_run",
	[FIPS_CONTINUOUS] = "continuous",
};

/* Split every byte value into its leading, interior and trailing runs. */
static void
fips_build_tables(void)
{
	unsigned b, i, start, bit;

	for (b = 0; b < 256; b++) {
		struct fips_byte *fb = &fips_bytes[b];

		memset(fb, 0, sizeof *fb);
		start = 0;
		for (i = 1; i <= 8; i++) {
			bit = (b >> (8 - i)) & 1;
			if (i < 8 && ((b >> (7 - i)) & 1) == bit)
				continue;
			/* A run covers bits start..i-1 (counted from the top). */
			if (start == 0)
				fb->lead = (uint8_t)i;
			if (i == 8)
				fb->trail = (uint8_t)(i - start);
			if (start != 0 && i != 8)
				fb->interior[bit][i - start - 1]++;
			start = i;
		}
	}
}

/* Read an aligned 32-bit word as little-endian, whatever the host. */
static inline uint32_t
fips_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Count a finished run; note a long one. */
static inline void
fips_close_run(unsigned runs[2][FIPS_BUCKETS], unsigned *longest,
    unsigned bit, unsigned len)
{
	runs[bit][len >= FIPS_BUCKETS ? FIPS_BUCKETS - 1 : len - 1]++;
	if (len > *longest)
		*longest = len;
}

/* Seed the continuous test with the bootstrap word. */
void
fips_init(struct fips_ctx *ctx, const uint8_t bootstrap[FIPS_BOOTSTRAP_BYTES])
{
	pthread_once(&fips_once, fips_build_tables);
	ctx->last_word = fips_le32(bootstrap);
}

/* Run the five tests on one block; see fips.h. */
unsigned
fips_test_block(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES])
{
	unsigned hist[256] = { 0 }, runs[2][FIPS_BUCKETS] = { { 0 } };
	unsigned f[16] = { 0 }, longest = 0, ones = 0, mask = 0;
	unsigned i, j, b, bit, len, first, same, c, k;
	uint64_t word, poker = 0;
	uint32_t w, last;

	pthread_once(&fips_once, fips_build_tables);

	/* Monobit on 64-bit words; the byte order does not change a count. */
	for (i = 0; i + 8 <= FIPS_BLOCK_BYTES; i += 8) {
		memcpy(&word, block + i, 8);
		ones += (unsigned)__builtin_popcountll(word);
	}
	for (; i < FIPS_BLOCK_BYTES; i++)
		ones += (unsigned)__builtin_popcount(block[i]);
	if (ones <= 9725 || ones >= 10275)
		mask |= 1u << FIPS_MONOBIT;

	/*
	 * One pass over the bytes: a histogram (for poker and the runs inside
	 * each byte) and the run that stays open from byte to byte.
	 */
	bit = block[0] >> 7;
	len = 0;
	for (i = 0; i < FIPS_BLOCK_BYTES; i++) {
		b = block[i];
		hist[b]++;
		/*
		 * Whether the open run goes on into this byte is a coin toss on
		 * good data, so count the run that may end here without a
		 * branch: it is added with weight 0 when it goes on.
		 */
		first = b >> 7;
		same = first == bit;
		runs[bit][fips_bucket[len < 31 ? len : 31]] += !same;
		longest = len > longest ? len : longest;
		len = (same ? len : 0) + fips_bytes[b].lead;
		bit = first;
		if (b != 0 && b != 0xff) {
			fips_close_run(runs, &longest, bit, len);
			bit = b & 1;
			len = fips_bytes[b].trail;
		}
	}
	fips_close_run(runs, &longest, bit, len);

	for (b = 0; b < 256; b++) {
		if (hist[b] == 0)
			continue;
		f[b >> 4] += hist[b];
		f[b & 15] += hist[b];
		for (c = 0; c < 2; c++)
			for (k = 0; k < FIPS_BUCKETS; k++)
				runs[c][k] += hist[b] * fips_bytes[b].interior[c][k];
	}

	for (j = 0; j < 16; j++)
		poker += (uint64_t)f[j] * f[j];
	if (poker < 1563176 || poker > 1576928)
		mask |= 1u << FIPS_POKER;

	for (c = 0; c < 2; c++)
		for (k = 0; k < FIPS_BUCKETS; k++)
			if (runs[c][k] < fips_runs_bounds[k].lo ||
			    runs[c][k] > fips_runs_bounds[k].hi)
				mask |= 1u << FIPS_RUNS;
	if (longest >= FIPS_LONG_RUN_BITS)
		mask |= 1u << FIPS_LONG_RUN;

	/* Continuous test: aligned little-endian words, carried across blocks. */
	last = ctx->last_word;
	for (i = 0; i < FIPS_BLOCK_BYTES; i += 4) {
		w = fips_le32(block + i);
		if (w == last)
			mask |= 1u << FIPS_CONTINUOUS;
		last = w;
	}
	ctx->last_word = last;

	return mask;
}

/* rngtest's name for a test, as its report prints it. */
const char *
fips_test_name(enum fips_test test)
{
	if ((unsigned)test >= FIPS_NTESTS)
		return "unknown";
	return fips_names[test];
}

/* A lowercase key for a test, for labels and JSON. */
const char *
fips_test_key(enum fips_test test)
{
	if ((unsigned)test >= FIPS_NTESTS)
		return "unknown";
	return fips_keys[test];
}
