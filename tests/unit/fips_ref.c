/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <string.h>

#include "fips.h"
#include "fips_ref.h"

static const unsigned fips_ref_runs_lo[6] = { 2315, 1114, 527, 240, 103, 103 };
static const unsigned fips_ref_runs_hi[6] = { 2685, 1386, 723, 384, 209, 209 };

/* Bit n of the block, counting from the most significant bit of byte 0. */
static unsigned
fips_ref_bit(const uint8_t *block, unsigned n)
{
	return (block[n / 8] >> (7 - n % 8)) & 1;
}

/* Record a run that has just ended. */
static void
fips_ref_run(struct fips_ref_stats *st, unsigned bit, unsigned len)
{
	st->runs[bit][len > 6 ? 5 : len - 1]++;
	if (len > st->longest_run)
		st->longest_run = len;
}

/* Walk the block bit by bit and apply the bounds of FIPS 140-2. */
unsigned
fips_ref_test_block(uint32_t *last_word, const uint8_t *block,
    struct fips_ref_stats *st)
{
	unsigned n, i, bit, prev = 0, len = 0, nibble = 0, mask = 0;
	uint32_t word;

	memset(st, 0, sizeof *st);
	for (n = 0; n < FIPS_BLOCK_BYTES * 8; n++) {
		bit = fips_ref_bit(block, n);
		st->ones += bit;
		nibble = nibble << 1 | bit;
		if (n % 4 == 3) {
			st->nibbles[nibble]++;
			nibble = 0;
		}
		if (n > 0 && bit != prev) {
			fips_ref_run(st, prev, len);
			len = 0;
		}
		prev = bit;
		len++;
	}
	fips_ref_run(st, prev, len);

	for (i = 0; i < 16; i++)
		st->poker_sum += (uint64_t)st->nibbles[i] * st->nibbles[i];

	for (n = 0; n < FIPS_BLOCK_BYTES; n += 4) {
		word = block[n] + 256u * (block[n + 1] + 256u * (block[n + 2] +
		    256u * block[n + 3]));
		if (word == *last_word)
			st->repeats++;
		*last_word = word;
	}

	if (st->ones < 9726 || st->ones > 10274)
		mask |= 1u << FIPS_MONOBIT;
	if (st->poker_sum < 1563176 || st->poker_sum > 1576928)
		mask |= 1u << FIPS_POKER;
	for (bit = 0; bit < 2; bit++)
		for (i = 0; i < 6; i++)
			if (st->runs[bit][i] < fips_ref_runs_lo[i] ||
			    st->runs[bit][i] > fips_ref_runs_hi[i])
				mask |= 1u << FIPS_RUNS;
	if (st->longest_run >= 26)
		mask |= 1u << FIPS_LONG_RUN;
	if (st->repeats > 0)
		mask |= 1u << FIPS_CONTINUOUS;
	return mask;
}
