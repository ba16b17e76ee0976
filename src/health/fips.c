/* SPDX-License-Identifier: MIT */
/*
 * The FIPS 140-2 tests without walking bits one at a time.
 *
 * Bits are read most significant first, so a block is taken as big-endian
 * 64-bit words (312 of them and half of a 313th).  For each k, the word
 * a_k = AND of the word shifted left by 0..k-1 (bits pulled in from the next
 * word) has a bit set where a window of k ones starts; OR-ing instead gives
 * c_k, clear where a window of k zeros starts.  A run of length L holds
 * L - k + 1 windows of length k, so with W_k windows in a block the runs of
 * length k or more number W_k - W_(k+1), and the runs of exactly k are the
 * difference of two of those: popcounts give every runs counter (and
 * W_1 is the monobit count).  Poker comes from a byte histogram (with
 * AVX-512, from bit planes).  The
 * longest run is measured only where a window of 11 equal bits starts; a
 * block without one (rare in good data) is walked run by run.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fips.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define FIPS_BITS (FIPS_BLOCK_BYTES * 8)
#define FIPS_WORDS ((FIPS_BLOCK_BYTES + 7) / 8)	/* the last one half full */
#define FIPS_BUCKETS 6		/* run lengths 1..5 and 6+ */
#define FIPS_LONG_RUN_BITS 26
#define FIPS_WINDOWS 7		/* windows 1..7 give the buckets */
#define FIPS_PROBE_BITS 11	/* runs this long are measured one by one */

#define FIPS_PROBE_SLACK 8	/* a vector pass stores 8 probes at a time */

/*
 * What one block's pass over its words adds up.  Probes say where windows
 * of FIPS_PROBE_BITS equal bits start, word by word.
 */
struct fips_sums {
	unsigned ones_windows[FIPS_WINDOWS + 1];	/* W_k of ones, [k] */
	unsigned mixed_windows[FIPS_WINDOWS + 1];	/* windows holding a 1 */
	unsigned nprobe;
	uint64_t probe_word[FIPS_WORDS + FIPS_PROBE_SLACK];
	uint64_t probe_ones[FIPS_WORDS + FIPS_PROBE_SLACK];	/* ones start */
	uint64_t probe_zeros[FIPS_WORDS + FIPS_PROBE_SLACK];	/* zeros start */
	bool have_nibbles;				/* nibbles counted too */
	unsigned nibbles[16];
	bool have_repeats;				/* repeats counted too */
	unsigned repeats;		/* words equal to the one before, in the block */
};

typedef void fips_sum_fn(const uint8_t *, struct fips_sums *);

static fips_sum_fn *fips_sum;
static pthread_once_t fips_once = PTHREAD_ONCE_INIT;

static void fips_choose(void);

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

/* Read an aligned 32-bit word as little-endian, whatever the host. */
static inline uint32_t
fips_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Word i of the block as a bit string, first bit in the top bit; 0 past the end. */
static inline uint64_t
fips_word(const uint8_t *block, unsigned i)
{
	uint64_t w;

	if (i + 1 < FIPS_WORDS) {
		memcpy(&w, block + 8 * i, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		return w;
	}
	if (i + 1 == FIPS_WORDS)
		return (uint64_t)((uint32_t)block[8 * i] << 24 |
		    (uint32_t)block[8 * i + 1] << 16 |
		    (uint32_t)block[8 * i + 2] << 8 | block[8 * i + 3]) << 32;
	return 0;
}

/*
 * Add one word's windows to the sums, n being the next word; keep a6/c6
 * (windows of 6) for the probe of the word after, which needs them.
 */
static inline __attribute__((always_inline)) void
fips_sum_word(struct fips_sums *s, unsigned *ow, unsigned *mw, unsigned first,
    unsigned i, uint64_t z, uint64_t n, uint64_t *a6, uint64_t *c6)
{
	uint64_t n1 = z << 1 | n >> 63, n2 = z << 2 | n >> 62;
	uint64_t n3 = z << 3 | n >> 61, n4 = z << 4 | n >> 60;
	uint64_t n5 = z << 5 | n >> 59, n6 = z << 6 | n >> 58;
	uint64_t a2 = z & n1, a3 = a2 & n2, a4 = a3 & n3, a5 = a4 & n4;
	uint64_t a6n = a5 & n5, a7 = a6n & n6;
	uint64_t c2 = z | n1, c3 = c2 | n2, c4 = c3 | n3, c5 = c4 | n4;
	uint64_t c6n = c5 | n5, c7 = c6n | n6;
	uint64_t pa, pc;

	ow[1] += (unsigned)__builtin_popcountll(z);
	ow[2] += (unsigned)__builtin_popcountll(a2);
	ow[3] += (unsigned)__builtin_popcountll(a3);
	ow[4] += (unsigned)__builtin_popcountll(a4);
	ow[5] += (unsigned)__builtin_popcountll(a5);
	ow[6] += (unsigned)__builtin_popcountll(a6n);
	ow[7] += (unsigned)__builtin_popcountll(a7);
	mw[2] += (unsigned)__builtin_popcountll(c2);
	mw[3] += (unsigned)__builtin_popcountll(c3);
	mw[4] += (unsigned)__builtin_popcountll(c4);
	mw[5] += (unsigned)__builtin_popcountll(c5);
	mw[6] += (unsigned)__builtin_popcountll(c6n);
	mw[7] += (unsigned)__builtin_popcountll(c7);

	/* Windows of 11 in the word before: 6 there, and 6 from 5 bits on. */
	if (i > first) {
		pa = *a6 & (*a6 << 5 | a6n >> 59);
		pc = *c6 | (*c6 << 5 | c6n >> 59);
		if ((pa | ~pc) != 0) {
			s->probe_word[s->nprobe] = i - 1;
			s->probe_ones[s->nprobe] = pa;
			s->probe_zeros[s->nprobe++] = ~pc;
		}
	}
	*a6 = a6n;
	*c6 = c6n;
}

/* Sum words first..the end (inlined into each CPU variant). */
static inline __attribute__((always_inline)) void
fips_sum_from(const uint8_t *block, struct fips_sums *s, unsigned first,
    unsigned *ow, unsigned *mw)
{
	uint64_t z, n, a6 = 0, c6 = 0;
	unsigned i;

	n = fips_word(block, first);
	for (i = first; i + 2 < FIPS_WORDS; i++) {
		z = n;
		memcpy(&n, block + 8 * (i + 1), 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		n = __builtin_bswap64(n);
#endif
		fips_sum_word(s, ow, mw, first, i, z, n, &a6, &c6);
	}
	z = n;
	n = fips_word(block, FIPS_WORDS - 1);
	fips_sum_word(s, ow, mw, first, FIPS_WORDS - 2, z, n, &a6, &c6);
	fips_sum_word(s, ow, mw, first, FIPS_WORDS - 1, n, 0, &a6, &c6);
	/* The last word's probe: what follows is padding (its zeros are false). */
	fips_sum_word(s, ow, mw, first, FIPS_WORDS, 0, 0, &a6, &c6);
}

/* One pass over the words of a block. */
static inline __attribute__((always_inline)) void
fips_sum_block(const uint8_t *block, struct fips_sums *s)
{
	unsigned ow[FIPS_WINDOWS + 1] = { 0 }, mw[FIPS_WINDOWS + 1] = { 0 };

	s->nprobe = 0;
	s->have_nibbles = false;
	s->have_repeats = false;
	fips_sum_from(block, s, 0, ow, mw);
	memcpy(s->ones_windows, ow, sizeof ow);
	memcpy(s->mixed_windows, mw, sizeof mw);
}

/* The pass built for any CPU. */
static void
fips_sum_generic(const uint8_t *block, struct fips_sums *s)
{
	fips_sum_block(block, s);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same pass with the POPCNT instruction. */
__attribute__((target("popcnt"))) static void
fips_sum_popcnt(const uint8_t *block, struct fips_sums *s)
{
	fips_sum_block(block, s);
}

#define FIPS_AVX512 "popcnt,avx512f,avx512bw,avx512vbmi2,avx512vpopcntdq"
#define FIPS_LANES 8
/* Whole words whose next word is whole too, eight at a time. */
#define FIPS_VECTOR_WORDS ((FIPS_WORDS - 2) / FIPS_LANES * FIPS_LANES)

#define FIPS_NIBBLE_FOLD 15	/* 64-byte chunks a nibble lane can count */

/*
 * Nibble counts and repeated words, 64 bytes at a time.  For each value v
 * a bit per nibble is set when the nibble equals v (one VPTERNLOG for each
 * value of the top two bits, then one per v matching the bottom two as
 * well) and added into a counter per nibble lane; every FIPS_NIBBLE_FOLD chunks,
 * before a lane can overflow, the lanes are folded into bytes and summed
 * (VPSADBW).  Aligned 32-bit words are compared with the word 4 bytes on.
 */
__attribute__((target(FIPS_AVX512))) static void
fips_nibbles_avx512(const uint8_t *block, struct fips_sums *s)
{
	const __m512i low = _mm512_set1_epi8(0x11);
	const __m512i nib = _mm512_set1_epi8(0x0f);
	__m512i x, s1, s2, s3, hi[4], lane[16], total[16], b;
	unsigned i, v, chunk, repeats = 0;

#pragma GCC unroll 16
	for (v = 0; v < 16; v++)
		total[v] = _mm512_setzero_si512();
	for (i = 0; i + 64 <= FIPS_BLOCK_BYTES; ) {
#pragma GCC unroll 16
		for (v = 0; v < 16; v++)
			lane[v] = _mm512_setzero_si512();
		for (chunk = 0; chunk < FIPS_NIBBLE_FOLD &&
		    i + 64 <= FIPS_BLOCK_BYTES; chunk++, i += 64) {
			x = _mm512_loadu_si512(block + i);
			/* The last chunk's next word is the block's last. */
			repeats += (unsigned)__builtin_popcount(
			    _mm512_cmpeq_epi32_mask(x,
			    _mm512_loadu_si512(block + i + 4)));
			s1 = _mm512_srli_epi64(x, 1);
			s2 = _mm512_srli_epi64(x, 2);
			s3 = _mm512_srli_epi64(x, 3);
			/* ternlog(a, b, mask): a bit of a and of b, either polarity. */
			hi[0] = _mm512_ternarylogic_epi64(s3, s2, low, 0x02);
			hi[1] = _mm512_ternarylogic_epi64(s3, s2, low, 0x08);
			hi[2] = _mm512_ternarylogic_epi64(s3, s2, low, 0x20);
			hi[3] = _mm512_ternarylogic_epi64(s3, s2, low, 0x80);
			/* ternlog(hi, s1, x): hi set, s1 and x as v's low bits. */
#define FIPS_NIBBLE(v)							\
			lane[v] = _mm512_add_epi8(lane[v],			\
			    _mm512_ternarylogic_epi64(hi[(v) >> 2], s1, x,	\
			    1 << (4 + ((v) & 3))))
			FIPS_NIBBLE(0); FIPS_NIBBLE(1); FIPS_NIBBLE(2);
			FIPS_NIBBLE(3); FIPS_NIBBLE(4); FIPS_NIBBLE(5);
			FIPS_NIBBLE(6); FIPS_NIBBLE(7); FIPS_NIBBLE(8);
			FIPS_NIBBLE(9); FIPS_NIBBLE(10); FIPS_NIBBLE(11);
			FIPS_NIBBLE(12); FIPS_NIBBLE(13); FIPS_NIBBLE(14);
			FIPS_NIBBLE(15);
#undef FIPS_NIBBLE
		}
#pragma GCC unroll 16
		for (v = 0; v < 16; v++) {
			b = _mm512_add_epi8(_mm512_and_si512(lane[v], nib),
			    _mm512_and_si512(_mm512_srli_epi16(lane[v], 4), nib));
			total[v] = _mm512_add_epi64(total[v],
			    _mm512_sad_epu8(b, _mm512_setzero_si512()));
		}
	}
#pragma GCC unroll 16
	for (v = 0; v < 16; v++)
		s->nibbles[v] = (unsigned)_mm512_reduce_add_epi64(total[v]);
	for (; i < FIPS_BLOCK_BYTES; i++) {
		s->nibbles[block[i] >> 4]++;
		s->nibbles[block[i] & 15]++;
	}
	s->have_nibbles = true;
	s->repeats = repeats;
	s->have_repeats = true;
}

/*
 * Eight words at a time with AVX-512: shifts across words (VPSHLDQ), vector
 * popcounts.  Each chunk's windows of 11 are found in the next round, when
 * the windows of 6 of the word after each lane are known (VALIGNQ), and
 * kept without a branch (VPCOMPRESSQ).  The last few words go through the
 * scalar pass.
 */
__attribute__((target(FIPS_AVX512))) static void
fips_sum_avx512(const uint8_t *block, struct fips_sums *s)
{
	const __m512i swap = _mm512_set_epi8(
	    56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55,
	    40, 41, 42, 43, 44, 45, 46, 47, 32, 33, 34, 35, 36, 37, 38, 39,
	    24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23,
	    8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
	const __m512i ones = _mm512_set1_epi64(-1);
	const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
	__m512i ow[FIPS_WINDOWS + 1], mw[FIPS_WINDOWS + 1];
	__m512i z, zn, n, a, c, pa, pz, a6, c6, a6p, c6p, m, mc;
	unsigned sow[FIPS_WINDOWS + 1] = { 0 }, smw[FIPS_WINDOWS + 1] = { 0 };
	unsigned i, k, nprobe = 0;
	__mmask8 hit;

	for (k = 0; k <= FIPS_WINDOWS; k++)
		ow[k] = mw[k] = _mm512_setzero_si512();
	a6p = c6p = _mm512_setzero_si512();
	zn = _mm512_shuffle_epi8(_mm512_loadu_si512(block), swap);
	/* Probes of the chunk before this one (none before the first). */
#define FIPS_PROBES(i, next_a6, next_c6) do {				\
		pa = _mm512_and_si512(a6p,					\
		    _mm512_shldi_epi64(a6p, (next_a6), 5));			\
		pz = _mm512_ternarylogic_epi64(c6p,			\
		    _mm512_shldi_epi64(c6p, (next_c6), 5), ones, 0x03);	\
		hit = _mm512_test_epi64_mask(_mm512_or_si512(pa, pz),	\
		    _mm512_or_si512(pa, pz));					\
		_mm512_storeu_si512(s->probe_word + nprobe,			\
		    _mm512_maskz_compress_epi64(hit, _mm512_add_epi64(iota,	\
		    _mm512_set1_epi64((long long)(i)))));			\
		_mm512_storeu_si512(s->probe_ones + nprobe,			\
		    _mm512_maskz_compress_epi64(hit, pa));			\
		_mm512_storeu_si512(s->probe_zeros + nprobe,		\
		    _mm512_maskz_compress_epi64(hit, pz));			\
		nprobe += (unsigned)__builtin_popcount(hit);		\
	} while (0)
	for (i = 0; i < FIPS_VECTOR_WORDS; i += FIPS_LANES) {
		z = zn;
		zn = _mm512_shuffle_epi8(_mm512_loadu_si512(block + 8 * i + 64),
		    swap);
		n = _mm512_alignr_epi64(zn, z, 1);
		ow[1] = _mm512_add_epi64(ow[1], _mm512_popcnt_epi64(z));
		a = c = z;
#define FIPS_STEP(k) do {						\
		__m512i sh = _mm512_shldi_epi64(z, n, (k) - 1);		\
		a = _mm512_and_si512(a, sh);				\
		c = _mm512_or_si512(c, sh);				\
		ow[k] = _mm512_add_epi64(ow[k], _mm512_popcnt_epi64(a));	\
		mw[k] = _mm512_add_epi64(mw[k], _mm512_popcnt_epi64(c));	\
	} while (0)
		FIPS_STEP(2);
		FIPS_STEP(3);
		FIPS_STEP(4);
		FIPS_STEP(5);
		FIPS_STEP(6);
		a6 = a;
		c6 = c;
		FIPS_STEP(7);
#undef FIPS_STEP
		/* Windows of 6 at the top of a word lie within the word. */
		if (i > 0)
			FIPS_PROBES(i - FIPS_LANES, _mm512_alignr_epi64(a6, a6p, 1),
			    _mm512_alignr_epi64(c6, c6p, 1));
		a6p = a6;
		c6p = c6;
	}
	/* The last chunk's: the word after it comes from the next load alone. */
	m = mc = n;
	for (k = 1; k < 6; k++) {
		__m512i sh = _mm512_slli_epi64(n, k);
		m = _mm512_and_si512(m, sh);
		mc = _mm512_or_si512(mc, sh);
	}
	FIPS_PROBES(FIPS_VECTOR_WORDS - FIPS_LANES, m, mc);
#undef FIPS_PROBES
	s->nprobe = nprobe;
	fips_sum_from(block, s, FIPS_VECTOR_WORDS, sow, smw);
	for (k = 1; k <= FIPS_WINDOWS; k++) {
		s->ones_windows[k] = sow[k] +
		    (unsigned)_mm512_reduce_add_epi64(ow[k]);
		s->mixed_windows[k] = smw[k] +
		    (unsigned)_mm512_reduce_add_epi64(mw[k]);
	}
	s->ones_windows[0] = s->mixed_windows[0] = 0;
	fips_nibbles_avx512(block, s);
}
#endif

/* Use AVX-512 or POPCNT where the CPU has them. */
static void
fips_choose(void)
{
	fips_sum = fips_sum_generic;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("popcnt"))
		fips_sum = fips_sum_popcnt;
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vbmi2") &&
	    __builtin_cpu_supports("avx512vpopcntdq"))
		fips_sum = fips_sum_avx512;
#endif
}

/* Choose a variant by name ("generic", "popcnt", "avx512"): 0, or -1 when this CPU lacks it. */
int
fips_use(const char *name)
{
	pthread_once(&fips_once, fips_choose);
	if (strcmp(name, "generic") == 0) {
		fips_sum = fips_sum_generic;
		return 0;
	}
#if defined(__x86_64__) && defined(__GNUC__)
	if (strcmp(name, "popcnt") == 0 && __builtin_cpu_supports("popcnt")) {
		fips_sum = fips_sum_popcnt;
		return 0;
	}
	if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vbmi2") &&
	    __builtin_cpu_supports("avx512vpopcntdq")) {
		fips_sum = fips_sum_avx512;
		return 0;
	}
#endif
	return -1;
}

/* Bit g of the block. */
static inline unsigned
fips_bit(const uint8_t *block, unsigned g)
{
	return (block[g / 8] >> (7 - g % 8)) & 1;
}

/* Length of the run of equal bits starting at bit g, up to the block's end. */
static unsigned
fips_run_at(const uint8_t *block, unsigned g)
{
	unsigned bit = fips_bit(block, g), start = g, i, off;
	uint64_t x;

	while (g < FIPS_BITS) {
		i = g / 64;
		off = g % 64;
		x = fips_word(block, i);
		x = (bit ? ~x : x) << off;
		if (x != 0) {
			g += (unsigned)__builtin_clzll(x);
			break;
		}
		g += 64 - off;
	}
	return (g < FIPS_BITS ? g : FIPS_BITS) - start;
}

/* Longest run starting where a probe saw a long window begin. */
static unsigned
fips_probe_longest(const uint8_t *block, unsigned word, uint64_t ones,
    uint64_t zeros)
{
	uint64_t z = fips_word(block, word), before, starts;
	unsigned longest = 0, len, g;

	/* Bit before the word: a run starting at bit 0 starts the block. */
	before = word > 0 ? fips_word(block, word - 1) & 1 : (z >> 63) ^ 1;
	starts = (z ^ (z >> 1 | before << 63));
	starts &= (ones & z) | (zeros & ~z);
	while (starts != 0) {
		g = word * 64 + (unsigned)__builtin_clzll(starts);
		if (g >= FIPS_BITS)
			break;
		len = fips_run_at(block, g);
		if (len > longest)
			longest = len;
		starts &= ~(UINT64_C(1) << 63 >> (g % 64));
	}
	return longest;
}

/* Longest run, the slow way: every run in turn. */
static unsigned
fips_walk_longest(const uint8_t *block)
{
	unsigned g, len, longest = 0;

	for (g = 0; g < FIPS_BITS; g += len) {
		len = fips_run_at(block, g);
		if (len > longest)
			longest = len;
	}
	return longest;
}

/* Length of the run of zeros that ends the block (0 if it ends in a 1). */
static unsigned
fips_trailing_zeros(const uint8_t *block)
{
	unsigned i = FIPS_BLOCK_BYTES - 1, n = 0;

	while (block[i] == 0) {
		n += 8;
		if (i-- == 0)
			return n;
	}
	return n + (unsigned)__builtin_ctz(block[i]);
}

/* Nibble counts from a byte histogram (two, so neighbours do not wait on each other). */
static void
fips_poker_histogram(const uint8_t *block, unsigned f[16])
{
	uint16_t hist[2][256];
	unsigned row, i, j, k;

	memset(hist, 0, sizeof hist);
	memset(f, 0, 16 * sizeof f[0]);
	for (i = 0; i < FIPS_BLOCK_BYTES; i += 2) {
		hist[0][block[i]]++;
		hist[1][block[i + 1]]++;
	}
	for (i = 0; i < 16; i++) {
		row = 0;
		for (j = 0; j < 16; j++) {
			k = hist[0][16 * i + j] + hist[1][16 * i + j];
			row += k;
			f[j] += k;
		}
		f[i] += row;
	}
}

/* Seed the continuous test with the bootstrap word. */
void
fips_init(struct fips_ctx *ctx, const uint8_t bootstrap[FIPS_BOOTSTRAP_BYTES])
{
	pthread_once(&fips_once, fips_choose);
	ctx->last_word = fips_le32(bootstrap);
}

/* Count the block's statistics; see fips.h. */
unsigned
fips_block_stats(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES],
    struct fips_stats *st)
{
	unsigned f[16], i, k, t, longest, len;
	unsigned ones_ge[FIPS_WINDOWS], zeros_ge[FIPS_WINDOWS];
	unsigned w0[FIPS_WINDOWS + 1], repeats = 0;
	struct fips_sums s;
	uint64_t poker = 0;

	pthread_once(&fips_once, fips_choose);
	fips_sum(block, &s);

	/* Windows of zeros: those wholly in the block, less those holding a 1. */
	t = fips_trailing_zeros(block);
	s.mixed_windows[1] = s.ones_windows[1];
	for (k = 1; k <= FIPS_WINDOWS; k++)
		w0[k] = (FIPS_BITS + 1 - k) - (s.mixed_windows[k] -
		    (k - 1 > t ? k - 1 - t : 0));
	for (k = 1; k < FIPS_WINDOWS; k++) {
		ones_ge[k] = s.ones_windows[k] - s.ones_windows[k + 1];
		zeros_ge[k] = w0[k] - w0[k + 1];
	}
	st->ones = s.ones_windows[1];
	for (k = 1; k < FIPS_BUCKETS; k++) {
		st->runs[1][k - 1] = ones_ge[k] - ones_ge[k + 1];
		st->runs[0][k - 1] = zeros_ge[k] - zeros_ge[k + 1];
	}
	st->runs[1][FIPS_BUCKETS - 1] = ones_ge[FIPS_BUCKETS];
	st->runs[0][FIPS_BUCKETS - 1] = zeros_ge[FIPS_BUCKETS];

	longest = 0;
	for (i = 0; i < s.nprobe; i++) {
		len = fips_probe_longest(block, (unsigned)s.probe_word[i],
		    s.probe_ones[i], s.probe_zeros[i]);
		if (len > longest)
			longest = len;
	}
	if (longest < FIPS_PROBE_BITS)
		longest = fips_walk_longest(block);
	st->longest_run = longest;

	/* Poker. */
	if (s.have_nibbles)
		memcpy(f, s.nibbles, sizeof f);
	else
		fips_poker_histogram(block, f);
	for (i = 0; i < 16; i++)
		poker += (uint64_t)f[i] * f[i];
	st->poker_sum = poker;

	/* Continuous test: aligned little-endian words, carried across blocks. */
	repeats = fips_le32(block) == ctx->last_word;
	if (s.have_repeats)
		repeats += s.repeats;
	else
		for (i = 4; i < FIPS_BLOCK_BYTES; i += 4)
			repeats += fips_le32(block + i) ==
			    fips_le32(block + i - 4);
	ctx->last_word = fips_le32(block + FIPS_BLOCK_BYTES - 4);
	st->repeats = repeats;

	return fips_stats_mask(st);
}

/* The failure mask of a block's statistics. */
unsigned
fips_stats_mask(const struct fips_stats *st)
{
	unsigned mask = 0, c, k;

	if (st->ones <= 9725 || st->ones >= 10275)
		mask |= 1u << FIPS_MONOBIT;
	if (st->poker_sum < 1563176 || st->poker_sum > 1576928)
		mask |= 1u << FIPS_POKER;
	for (c = 0; c < 2; c++)
		for (k = 0; k < FIPS_BUCKETS; k++)
			if (st->runs[c][k] < fips_runs_bounds[k].lo ||
			    st->runs[c][k] > fips_runs_bounds[k].hi)
				mask |= 1u << FIPS_RUNS;
	if (st->longest_run >= FIPS_LONG_RUN_BITS)
		mask |= 1u << FIPS_LONG_RUN;
	if (st->repeats > 0)
		mask |= 1u << FIPS_CONTINUOUS;
	return mask;
}

/* Run the five tests on one block; see fips.h. */
unsigned
fips_test_block(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES])
{
	struct fips_stats st;

	return fips_block_stats(ctx, block, &st);
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
