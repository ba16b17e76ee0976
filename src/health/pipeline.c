/* SPDX-License-Identifier: MIT */
/*
 * One source instance's data path, free of I/O: the repeated-output test,
 * the raw-sample and FIPS 140-2 tests, SHA-256 conditioning and the
 * reserve, with the counters every report reads.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "xmalloc.h"

static void pipeline_fips_input(struct pipeline *, const uint8_t *, size_t, unsigned, bool);
static void pipeline_fips_block(struct pipeline *);
static void pipeline_failed(struct pipeline *, enum pipeline_test);
static void pipeline_to_reserve(void *, const uint8_t *, size_t, unsigned);
static void pipeline_to_fips(void *, const uint8_t *, size_t, unsigned);
static void pipeline_measure(struct pipeline *, const uint8_t *, size_t);

void
pipeline_init(struct pipeline *p, bool raw, unsigned sample_bits, double unit_bits)
{
	memset(p, 0, sizeof *p);
	p->raw = raw;
	p->unit_bits = unit_bits;
	p->sample_bytes = raw && sample_bits > 8 ? 2 : 1;
	p->sample_mask = raw && sample_bits < 32 ? (1u << sample_bits) - 1 : 0xff;
	p->claim_bits = unit_bits;
	p->credit_cap = 8;
	if (raw)
		sp80090b_init(&p->health, unit_bits > 0 ? unit_bits : 1, sample_bits);
	condition_init(&p->cond, unit_bits, p->sample_bytes);
	reserve_init(&p->reserve);
	failure_init(&p->failures);
	if (raw)
		repeat_init_samples(&p->repeat, p->sample_bytes, unit_bits);
	else
		repeat_init_bytes(&p->repeat);
	p->check_repeats = true;
	pipeline_estimating(p, true);
}

void
pipeline_free(struct pipeline *p)
{
	pipeline_estimating(p, false);
	condition_free(&p->cond);
	reserve_free(&p->reserve);
	repeat_free(&p->repeat);
	explicit_bzero(p->block, sizeof p->block);
}

void
pipeline_estimating(struct pipeline *p, bool on)
{
	if (on && p->est == NULL) {
		p->est = xmalloc(sizeof *p->est);
		/*
		 * Raw samples of their width, with every figure, over a sliding
		 * window, judged from SP 800-90B's start-up count on (before any is
		 * used). Bytes: the MCV over consecutive blocks, judged at each
		 * block's end (fewer bytes would make perfect ones look poor).
		 */
		if (p->raw)
			estimate_init(p->est, p->health.sample_bits, ESTIMATE_RAW_WINDOW, true,
			    false);
		else
			estimate_init_blocks(p->est, 8, ESTIMATE_BYTE_WINDOW);
	} else if (!on && p->est != NULL) {
		estimate_free(p->est);
		free(p->est);
		p->est = NULL;
	}
}

const struct estimate_result *
pipeline_estimate_result(const struct pipeline *p)
{
	return p->est != NULL && p->est->have_last ? &p->est->last : NULL;
}

void
pipeline_recredit(struct pipeline *p, double unit_bits)
{
	bool rose = unit_bits > p->unit_bits;

	p->unit_bits = unit_bits;
	condition_free(&p->cond);
	condition_init(&p->cond, unit_bits, p->sample_bytes);
	if (!rose)
		reserve_clear(&p->reserve);
	if (p->raw) {
		sp80090b_init(&p->health, unit_bits > 0 ? unit_bits : 1, p->health.sample_bits);
		/* Windows of REPEAT_WINDOW_BITS at the new credit; what the old held back goes. */
		p->count.samples_discarded += (p->repeat.pos - p->repeat.released) / p->sample_bytes;
		repeat_free(&p->repeat);
		repeat_init_samples(&p->repeat, p->sample_bytes, unit_bits);
		p->raw_repeating = false;
		p->carry_repeated = false;
	}
	/* The block being gathered carries the old credit: start the FIPS tests afresh. */
	p->bootstrap_len = 0;
	p->block_len = 0;
	p->block_credit = 0;
	p->warm = false;
	explicit_bzero(p->block, sizeof p->block);
}

double
pipeline_limit(struct pipeline *p, double bits)
{
	if (!(bits >= 0) || bits >= p->claim_bits)
		return p->claim_bits;
	p->claim_bits = bits;
	if (p->unit_bits > bits)
		pipeline_recredit(p, bits);
	return bits;
}

/*
 * The window has new figures: lower the credit when they support less
 * (estimate_next_credit; it is never raised again).
 */
static void
pipeline_follow_estimate(struct pipeline *p)
{
	double target = estimate_credit_target(p->claim_bits, p->est->last.min, p->raw);
	double next = estimate_next_credit(p->unit_bits, target);

	if (next == p->unit_bits)
		return;
	p->decided = p->est->last;
	p->have_decided = true;
	p->count.credit_lowered++;
	pipeline_recredit(p, next);
}

/*
 * Measure what a read delivered, before any of it is tested: each raw
 * sample (a two-byte sample split across reads is measured when its second
 * byte comes), or each byte; then follow the estimate when it has new
 * figures.
 */
static void
pipeline_measure(struct pipeline *p, const uint8_t *buf, size_t len)
{
	size_t i = 0;

	if (p->sample_bytes == 2) {
		if (p->have_carry && len > 0) {
			estimate_sample(p->est, (p->sample_carry | (uint32_t)buf[0] << 8) &
			    p->sample_mask);
			i = 1;
		}
		for (; i + 1 < len; i += 2)
			estimate_sample(p->est, (buf[i] | (uint32_t)buf[i + 1] << 8) &
			    p->sample_mask);
	} else if (p->raw) {
		for (; i < len; i++)
			estimate_sample(p->est, buf[i] & p->sample_mask);
	} else
		estimate_bytes(p->est, buf, len);
	if (estimate_refresh(p->est))
		pipeline_follow_estimate(p);
}

/* Start the tests afresh: new bootstrap word, empty block, start-up again. */
void
pipeline_restart(struct pipeline *p)
{
	p->bootstrap_len = 0;
	p->block_len = 0;
	p->block_credit = 0;
	p->warm = false;
	p->have_carry = false;
	p->block_repeated = false;
	p->raw_repeating = false;
	p->carry_repeated = false;
	explicit_bzero(p->block, sizeof p->block);
	condition_discard(&p->cond);
	repeat_discard(&p->repeat);
	if (p->raw)
		sp80090b_reset(&p->health);
}

size_t
pipeline_held(const struct pipeline *p)
{
	return p->reserve.len + p->block_len + p->cond.units * p->cond.unit_bytes +
	    (p->have_carry ? 1 : 0) + (size_t)(p->repeat.pos - p->repeat.released);
}

/* Wipe what is held: the next byte read starts a new bootstrap word and block. */
size_t
pipeline_forget(struct pipeline *p)
{
	size_t held = pipeline_held(p);

	reserve_clear(&p->reserve);
	condition_discard(&p->cond);
	repeat_discard(&p->repeat);
	explicit_bzero(p->block, sizeof p->block);
	explicit_bzero(p->bootstrap, sizeof p->bootstrap);
	p->block_len = 0;
	p->block_credit = 0;
	p->bootstrap_len = 0;
	p->warm = false;
	p->sample_carry = 0;
	p->have_carry = false;
	p->block_repeated = false;
	p->raw_repeating = false;
	p->carry_repeated = false;
	return held;
}

void
pipeline_skip_repeats(struct pipeline *p)
{
	p->check_repeats = false;
}

void
pipeline_suspended(struct pipeline *p)
{
	failure_suspended(&p->failures);
}

bool
pipeline_on_probation(const struct pipeline *p)
{
	return failure_on_probation(&p->failures);
}

/* Count a failed test and raise the failure score. */
static void
pipeline_failed(struct pipeline *p, enum pipeline_test test)
{
	p->count.test_failures[test]++;
}

/* A full block: test it, then condition it (bytes) or keep it (raw path). */
static void
pipeline_fips_block(struct pipeline *p)
{
	unsigned mask = fips_test_block(&p->fips, p->block);
	uint64_t credit = p->block_credit;
	int t;

	if (p->block_repeated)
		mask |= 1u << PIPELINE_TEST_REPEAT;
	p->block_repeated = false;
	p->block_len = 0;
	p->block_credit = 0;
	p->warm = true;
	p->count.blocks_tested++;
	failure_block(&p->failures, mask != 0);
	if (mask != 0) {
		for (t = 0; t < PIPELINE_NTESTS; t++)
			if (mask & (1u << t))
				pipeline_failed(p, (enum pipeline_test)t);
		p->count.blocks_failed++;
		explicit_bzero(p->block, sizeof p->block);
		return;
	}
	p->count.blocks_passed++;
	if (p->raw)
		pipeline_to_reserve(p, p->block, FIPS_BLOCK_BYTES, (unsigned)credit);
	else
		condition_input(&p->cond, p->block, FIPS_BLOCK_BYTES, pipeline_to_reserve, p);
	explicit_bzero(p->block, sizeof p->block);
}

/*
 * Gather bytes into FIPS blocks, the first four as the bootstrap word. On
 * the raw path the bytes are conditioner output carrying credit_bits: each
 * block collects the share of its bytes, so the credit decided by the
 * conditioner reaches the reserve unchanged (the bootstrap word's share is
 * never output, so never credited). A repeated byte fails its block.
 */
static void
pipeline_fips_input(struct pipeline *p, const uint8_t *buf, size_t len, unsigned credit_bits,
    bool repeated)
{
	size_t total = len, done = 0;

	while (len > 0) {
		size_t n;

		if (p->bootstrap_len < FIPS_BOOTSTRAP_BYTES) {
			n = FIPS_BOOTSTRAP_BYTES - p->bootstrap_len;
			if (n > len)
				n = len;
			memcpy(p->bootstrap + p->bootstrap_len, buf, n);
			p->bootstrap_len += n;
			if (p->bootstrap_len == FIPS_BOOTSTRAP_BYTES)
				fips_init(&p->fips, p->bootstrap);
		} else {
			n = FIPS_BLOCK_BYTES - p->block_len;
			if (n > len)
				n = len;
			memcpy(p->block + p->block_len, buf, n);
			p->block_len += n;
			p->block_repeated |= repeated;
			/* Shares by cumulative rounding: they add up to credit_bits. */
			p->block_credit += (uint64_t)credit_bits * (done + n) / total -
			    (uint64_t)credit_bits * done / total;
			if (p->block_len == FIPS_BLOCK_BYTES)
				pipeline_fips_block(p);
		}
		buf += n;
		len -= n;
		done += n;
	}
}

/*
 * Conditioner output on the byte path, or a passed block on the raw path,
 * with the credit the conditioner gave it, within the operator's cap.
 */
static void
pipeline_to_reserve(void *arg, const uint8_t *out, size_t len, unsigned credit_bits)
{
	struct pipeline *p = arg;
	uint64_t cap = (uint64_t)p->credit_cap * len;

	reserve_put(&p->reserve, out, len, credit_bits < cap ? credit_bits : cap);
	p->count.bytes_conditioned += len;
}

/* Conditioner output on the raw path goes on to FIPS. */
static void
pipeline_to_fips(void *arg, const uint8_t *out, size_t len, unsigned credit_bits)
{
	pipeline_fips_input(arg, out, len, credit_bits, false);
}

/* Raw samples: health-test each; condition the runs of samples that passed. */
static void
pipeline_raw_input(struct pipeline *p, const uint8_t *buf, size_t len)
{
	size_t sb = p->sample_bytes, i, start = 0;

	if (p->have_carry && len > 0) {
		/* A two-byte sample split across reads: finish it alone. */
		uint8_t pair[2] = { p->sample_carry, buf[0] };

		p->have_carry = false;
		pipeline_raw_input(p, pair, 2);
		explicit_bzero(pair, sizeof pair);
		buf++;
		len--;
	}
	if (len % sb) {
		p->sample_carry = buf[len - 1];
		p->have_carry = true;
		len--;
	}
	for (i = 0; i < len; i += sb) {
		uint32_t s = sb == 2 ? buf[i] | (uint32_t)buf[i + 1] << 8 : buf[i];
		bool was_ready = sp80090b_ready(&p->health);
		enum sp80090b_result r = sp80090b_sample(&p->health, s & p->sample_mask);

		p->count.samples_tested++;
		if (r != SP80090B_PASS) {
			/* Nothing absorbed since the last output may be used. */
			pipeline_failed(p, r == SP80090B_RCT_FAIL ? PIPELINE_TEST_RCT : PIPELINE_TEST_APT);
			failure_sample(&p->failures);
			p->count.samples_discarded += (i - start) / sb + 1 + p->cond.units;
			condition_discard(&p->cond);
			start = i + sb;
		} else if (!was_ready) {
			p->count.samples_discarded++;
			start = i + sb;
		}
	}
	if (start < len)
		condition_input(&p->cond, buf + start, len - start, pipeline_to_fips, p);
}

/*
 * Raw samples the repeat test marked: discarded with whatever the
 * conditioner absorbed since its last output, one failure per repeated
 * stretch. Sample boundaries are kept (a half sample is carried on).
 */
static void
pipeline_raw_repeated(struct pipeline *p, size_t len)
{
	size_t sb = p->sample_bytes, samples;

	if (!p->raw_repeating) {
		p->raw_repeating = true;
		pipeline_failed(p, PIPELINE_TEST_REPEAT);
		failure_sample(&p->failures);
	}
	samples = p->cond.units;
	condition_discard(&p->cond);
	if (p->have_carry && len > 0) {
		p->have_carry = false;
		samples++;
		len--;
	}
	samples += len / sb;
	if (len % sb) {
		p->have_carry = true;
		p->carry_repeated = true;
	}
	p->count.samples_discarded += samples;
}

/* Bytes the repeat test let through, marked or not, on to the tests. */
static void
pipeline_repeat_release(void *arg, const uint8_t *buf, size_t len, bool repeated)
{
	struct pipeline *p = arg;

	if (!p->raw) {
		pipeline_fips_input(p, buf, len, 0, repeated);
		return;
	}
	if (repeated) {
		pipeline_raw_repeated(p, len);
		return;
	}
	p->raw_repeating = false;
	if (p->have_carry && p->carry_repeated && len > 0) {
		/* The rest of a half sample that was repeated: discard it too. */
		p->have_carry = p->carry_repeated = false;
		p->count.samples_discarded++;
		buf++;
		len--;
	}
	pipeline_raw_input(p, buf, len);
}

void
pipeline_input(struct pipeline *p, const uint8_t *buf, size_t len)
{
	p->count.bytes_read += len;
	if (p->est != NULL)
		pipeline_measure(p, buf, len);
	if (p->check_repeats)
		repeat_input(&p->repeat, buf, len, pipeline_repeat_release, p);
	else if (p->raw)
		pipeline_raw_input(p, buf, len);
	else
		pipeline_fips_input(p, buf, len, 0, false);
}

void
pipeline_end_input(struct pipeline *p)
{
	if (p->check_repeats)
		repeat_flush(&p->repeat, pipeline_repeat_release, p);
}

void
pipeline_cap_credit(struct pipeline *p, unsigned bits_per_byte)
{
	p->credit_cap = bits_per_byte < 8 ? bits_per_byte : 8;
}

size_t
pipeline_take(struct pipeline *p, uint8_t *buf, size_t len, unsigned *credit_bits)
{
	uint64_t credit;
	size_t n = reserve_take(&p->reserve, buf, len, &credit);

	p->count.bytes_taken += n;
	*credit_bits = (unsigned)credit;
	return n;
}

void
pipeline_note_credit(struct pipeline *p, unsigned bits)
{
	p->count.bits_credited += bits;
}

bool
pipeline_failing(const struct pipeline *p)
{
	return failure_over_limit(&p->failures);
}

bool
pipeline_credited(const struct pipeline *p)
{
	return p->unit_bits > 0;
}

bool
pipeline_started(const struct pipeline *p)
{
	return !p->raw || sp80090b_ready(&p->health);
}

/* Input bytes that refill the reserve's free room (whole outputs, rounded up). */
static size_t
pipeline_room_input(const struct pipeline *p)
{
	size_t room = RESERVE_CAPACITY - p->reserve.len;
	size_t outputs = (room + CONDITION_OUTPUT_BYTES - 1) / CONDITION_OUTPUT_BYTES;
	size_t per_output = p->cond.units_per_output * p->cond.unit_bytes;

	return outputs * per_output; /* at most 512 outputs of a few kB: no overflow */
}

size_t
pipeline_next_read(const struct pipeline *p)
{
	size_t next, want;

	if (p->raw)
		return PIPELINE_RAW_READ;
	next = FIPS_BOOTSTRAP_BYTES - p->bootstrap_len + FIPS_BLOCK_BYTES - p->block_len;
	if (p->check_repeats)
		next += repeat_lag(&p->repeat);
	if (!p->warm)
		return next;
	/* Half the room: a reader thread's second read then fits too, and
	 * goes on while the loop handles the first (pipeline_read_ahead). */
	want = pipeline_room_input(p) / 2;
	if (want > PIPELINE_READ_MAX)
		want = PIPELINE_READ_MAX;
	if (want <= next)
		return next;
	return next + (want - next) / FIPS_BLOCK_BYTES * FIPS_BLOCK_BYTES;
}

bool
pipeline_read_ahead(const struct pipeline *p)
{
	return !p->raw && p->warm && pipeline_room_input(p) >= 2 * pipeline_next_read(p);
}

const char *
pipeline_test_key(enum pipeline_test t)
{
	if (t == PIPELINE_TEST_RCT)
		return "rct";
	if (t == PIPELINE_TEST_APT)
		return "apt";
	if (t == PIPELINE_TEST_REPEAT)
		return "repeat";
	return fips_test_key((enum fips_test)t);
}
