/* SPDX-License-Identifier: MIT */
#include <string.h>

#include <criterion/criterion.h>
#include <gcrypt.h>

#include "condition.h"
#include "fips.h"
#include "pipeline.h"
#include "reserve.h"

/* Fill with random bytes from libgcrypt's nonce generator. */
static void
random_bytes(uint8_t *buf, size_t len)
{
	condition_global_init();
	gcry_create_nonce(buf, len);
}

struct outputs {
	size_t n;
	unsigned credit;
	uint8_t last[CONDITION_OUTPUT_BYTES];
};

static void
collect(void *arg, const uint8_t *out, size_t len, unsigned credit_bits)
{
	struct outputs *o = arg;

	cr_assert_eq(len, CONDITION_OUTPUT_BYTES);
	memcpy(o->last, out, len);
	o->credit += credit_bits;
	o->n++;
}

Test(condition, units_per_output_follow_sp800_90b)
{
	cr_expect_eq(condition_units_per_output(8, 1), 40);
	cr_expect_eq(condition_units_per_output(4, 1), 80);
	cr_expect_eq(condition_units_per_output(6, 1), 54);   /* ceil(320 / 6) */
	cr_expect_eq(condition_units_per_output(0.5, 1), 640);
	cr_expect_eq(condition_units_per_output(1, 2), 320);  /* per raw sample */
	cr_expect_eq(condition_units_per_output(0, 1), CONDITION_UNCREDITED_BYTES);
}

Test(condition, output_only_after_320_assessed_bits)
{
	struct conditioner c;
	struct outputs o = { 0 };
	uint8_t in[80], want[32];

	random_bytes(in, sizeof in);
	condition_init(&c, 8, 1);
	condition_input(&c, in, 39, collect, &o);
	cr_expect_eq(o.n, 0, "39 bytes at 8 bits are 312 bits: no output yet");
	condition_input(&c, in + 39, 1, collect, &o);
	cr_assert_eq(o.n, 1);
	cr_expect_eq(o.credit, 256);
	gcry_md_hash_buffer(GCRY_MD_SHA256, want, in, 40);
	cr_expect_arr_eq(o.last, want, 32, "the output is SHA-256 of exactly the 40 input bytes");
	condition_free(&c);

	memset(&o, 0, sizeof o);
	condition_init(&c, 4, 1);
	condition_input(&c, in, 79, collect, &o);
	cr_expect_eq(o.n, 0);
	condition_input(&c, in + 79, 1, collect, &o);
	cr_expect_eq(o.n, 1, "80 bytes at 4 bits per byte make one output");
	condition_free(&c);
}

/* Outputs collected in order, to compare whole streams. */
struct output_log {
	size_t n;
	uint8_t out[64][CONDITION_OUTPUT_BYTES];
};

static void
log_output(void *arg, const uint8_t *out, size_t len, unsigned credit_bits)
{
	struct output_log *l = arg;

	cr_assert_lt(l->n, 64);
	cr_assert_eq(credit_bits, 256);
	memcpy(l->out[l->n++], out, len);
}

/*
 * Whatever the read sizes (whole outputs in one call, outputs split across
 * calls, both in one call), output i is SHA-256 of input bytes 40i..40i+39.
 */
Test(condition, outputs_do_not_depend_on_read_sizes)
{
	static const size_t sizes[] = { 40, 1, 39, 81, 7, 200, 33, 120, 19, 1000 };
	struct conditioner c;
	struct output_log l = { 0 };
	uint8_t in[2000], want[32];
	size_t off = 0, i;

	random_bytes(in, sizeof in);
	condition_init(&c, 8, 1);
	for (i = 0; off < sizeof in; i++) {
		size_t len = sizes[i % 10];

		if (len > sizeof in - off)
			len = sizeof in - off;
		condition_input(&c, in + off, len, log_output, &l);
		off += len;
	}
	cr_assert_eq(l.n, sizeof in / 40);
	cr_assert_eq(c.outputs, sizeof in / 40);
	for (i = 0; i < l.n; i++) {
		gcry_md_hash_buffer(GCRY_MD_SHA256, want, in + 40 * i, 40);
		cr_assert_arr_eq(l.out[i], want, 32, "output %zu", i);
	}
	condition_free(&c);
}

Test(condition, discard_forgets_pending_input)
{
	struct conditioner c;
	struct outputs o = { 0 };
	uint8_t in[40], want[32];

	random_bytes(in, sizeof in);
	condition_init(&c, 8, 1);
	condition_input(&c, in, 20, collect, &o);
	condition_discard(&c);
	condition_input(&c, in, 40, collect, &o);
	cr_assert_eq(o.n, 1);
	gcry_md_hash_buffer(GCRY_MD_SHA256, want, in, 40);
	cr_expect_arr_eq(o.last, want, 32);
	condition_free(&c);
}

Test(condition, uncredited_input_is_output_uncredited)
{
	struct conditioner c;
	struct outputs o = { 0 };
	uint8_t in[128] = { 0 };

	condition_init(&c, 0, 1);
	condition_input(&c, in, sizeof in, collect, &o);
	cr_expect_eq(o.n, 2);
	cr_expect_eq(o.credit, 0);
	condition_free(&c);
}

Test(reserve, wraps_drops_oldest_and_wipes)
{
	struct reserve r;
	static uint8_t in[RESERVE_CAPACITY + 1000], out[RESERVE_CAPACITY];
	size_t i;

	for (i = 0; i < sizeof in; i++)
		in[i] = (uint8_t)(i * 7);
	reserve_init(&r);
	cr_expect(reserve_wants(&r));
	reserve_put(&r, in, 1000, 0);
	cr_expect_eq(reserve_take(&r, out, 600, NULL), 600);
	cr_expect_arr_eq(out, in, 600);
	reserve_put(&r, in + 1000, RESERVE_CAPACITY - 400 + 100, 0);
	cr_expect_eq(r.len, RESERVE_CAPACITY);
	cr_expect_eq(r.dropped, 100, "overflow drops exactly the excess");
	cr_expect(!reserve_wants(&r));
	cr_expect_eq(reserve_take(&r, out, sizeof out, NULL), RESERVE_CAPACITY);
	cr_expect_arr_eq(out, in + 700, RESERVE_CAPACITY, "the oldest bytes were dropped");
	for (i = 0; i < RESERVE_CAPACITY; i++)
		cr_assert_eq(r.ring[i], 0, "taken bytes are wiped from the ring");
	reserve_free(&r);
}

Test(reserve, carries_the_credit_put_in_and_never_more)
{
	struct reserve r;
	static uint8_t in[RESERVE_CAPACITY], out[RESERVE_CAPACITY];
	uint64_t credit, total = 0;
	size_t n;

	reserve_init(&r);
	/* Outputs of 32 bytes at 256 bits, as a credited conditioner gives them. */
	for (n = 0; n < 100; n++)
		reserve_put(&r, in, 32, 256);
	cr_expect_eq(r.credit_bits, 25600);
	cr_expect_eq(reserve_take(&r, out, 64, &credit), 64);
	cr_expect_eq(credit, 512, "a take carries exactly its bytes' share");
	cr_expect_eq(reserve_take(&r, out, 7, &credit), 7);
	cr_expect_eq(credit, 56);
	total = 512 + 56;
	while ((n = reserve_take(&r, out, 1000, &credit)) > 0)
		total += credit;
	cr_expect_eq(total, 25600, "everything put in comes out, and no more");
	cr_expect_eq(r.credit_bits, 0);

	/* Uncredited bytes mixed with credited ones never raise the credit. */
	reserve_put(&r, in, 100, 0);
	reserve_put(&r, in, 100, 800);
	cr_expect_eq(reserve_take(&r, out, 200, &credit), 200);
	cr_expect_eq(credit, 800);

	/* Overflow drops the oldest bytes with their share. */
	reserve_put(&r, in, RESERVE_CAPACITY, (uint64_t)RESERVE_CAPACITY * 8);
	reserve_put(&r, in, 1024, 0);
	cr_expect_eq(r.credit_bits, (uint64_t)(RESERVE_CAPACITY - 1024) * 8,
	    "the dropped bytes took their credit with them");
	reserve_clear(&r);
	cr_expect_eq(r.credit_bits, 0);
	reserve_free(&r);
}

/* Feed bootstrap + n blocks from gen into p. */
static void
feed_blocks(struct pipeline *p, unsigned n, int zero)
{
	static const uint8_t other[FIPS_BOOTSTRAP_BYTES] = { 0x5a, 0xa5, 0x5a, 0xa5 };
	static uint8_t block[FIPS_BLOCK_BYTES];
	struct fips_ctx ctx;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (zero)
			memset(block, 0, sizeof block);
		else {
			/*
			 * Random data fails FIPS 140-2 about 1 block in 1,300: draw
			 * again until the block passes on its own, so that a test
			 * counting on good blocks never meets that chance. (Its first
			 * word could still repeat the last one fed: 1 in 2^32.)
			 */
			do {
				random_bytes(block, sizeof block);
				fips_init(&ctx, other);
			} while (fips_test_block(&ctx, block) != 0);
		}
		pipeline_input(p, block, sizeof block);
	}
}

Test(pipeline, random_blocks_pass_and_are_conditioned)
{
	struct pipeline p;
	uint8_t boot[4];

	pipeline_init(&p, false, 0, 8);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	random_bytes(boot, 4);
	pipeline_input(&p, boot, 4);
	feed_blocks(&p, 4, 0);
	cr_expect_eq(p.count.blocks_tested, 4);
	pipeline_end_input(&p);
	cr_expect_eq(p.count.blocks_passed, 4, "blocks that pass on their own pass here too");
	/* 2500 bytes per block at 8 bits per byte: 62 outputs of 40 bytes, 20 carried over. */
	cr_expect_eq(p.count.bytes_conditioned,
	    (p.count.blocks_passed * FIPS_BLOCK_BYTES / 40) * 32);
	cr_expect_eq(p.reserve.len, p.count.bytes_conditioned);
	cr_expect_eq(p.reserve.credit_bits, p.count.bytes_conditioned * 8,
	    "full-entropy outputs carry 8 bits per byte, as the conditioner decided");
	cr_expect(pipeline_credited(&p));
	pipeline_free(&p);
}

Test(pipeline, credit_is_capped_per_byte_and_taken_with_the_bytes)
{
	struct pipeline p;
	uint8_t boot[4], out[64];
	unsigned credit;

	pipeline_init(&p, false, 0, 8);
	pipeline_cap_credit(&p, 3);
	random_bytes(boot, 4);
	pipeline_input(&p, boot, 4);
	feed_blocks(&p, 4, 0);
	cr_assert_gt(p.reserve.len, 64);
	cr_expect_eq(p.reserve.credit_bits, p.reserve.len * 3, "-e 3 caps every output byte");
	cr_expect_eq(pipeline_take(&p, out, 64, &credit), 64);
	cr_expect_eq(credit, 64 * 3);
	cr_expect_eq(p.count.bytes_taken, 64);
	cr_expect_eq(p.count.bits_credited, 0, "only the sink's note counts credit as given");
	pipeline_note_credit(&p, credit);
	cr_expect_eq(p.count.bits_credited, 192);
	pipeline_free(&p);
}

Test(pipeline, uncredited_source_carries_no_credit)
{
	struct pipeline p;
	uint8_t boot[4];

	pipeline_init(&p, false, 0, 0);
	random_bytes(boot, 4);
	pipeline_input(&p, boot, 4);
	feed_blocks(&p, 4, 0);
	cr_assert_gt(p.reserve.len, 0);
	cr_expect_eq(p.reserve.credit_bits, 0);
	pipeline_free(&p);
}

Test(pipeline, failed_blocks_are_discarded_and_suspend_at_the_limit)
{
	struct pipeline p;

	pipeline_init(&p, false, 0, 8);
	/* The subject is FIPS: the online estimate would lower the credit of zeros. */
	pipeline_estimating(&p, false);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	feed_blocks(&p, 1, 1); /* the first 4 zero bytes are the bootstrap */
	cr_expect_eq(p.count.blocks_failed, 0, "a block is not complete until 4 + 2500 bytes");
	feed_blocks(&p, PIPELINE_FAILURE_LIMIT - 1, 1);
	cr_expect_eq(p.count.blocks_failed, PIPELINE_FAILURE_LIMIT - 1);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_MONOBIT], PIPELINE_FAILURE_LIMIT - 1);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_CONTINUOUS], PIPELINE_FAILURE_LIMIT - 1);
	cr_expect_eq(p.reserve.len, 0, "nothing from a failed block reaches the reserve");
	cr_expect_eq(p.count.bytes_conditioned, 0);
	cr_expect(!pipeline_failing(&p));
	feed_blocks(&p, 1, 1);
	cr_expect(pipeline_failing(&p), "suspend at %d failures", PIPELINE_FAILURE_LIMIT);
	pipeline_restart(&p);
	cr_expect(pipeline_failing(&p), "a restart (a reconnect) keeps the score");
	pipeline_free(&p);
}

Test(pipeline, good_blocks_forgive_failures)
{
	struct pipeline p;
	uint8_t boot[4] = { 1, 2, 3, 4 };

	pipeline_init(&p, false, 0, 8);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	pipeline_input(&p, boot, 4);
	p.failures.score = 3;
	p.failures.good_streak = PIPELINE_FORGIVE_BLOCKS - 1;
	feed_blocks(&p, 1, 0); /* one more good block */
	cr_assert_eq(p.count.blocks_passed, 1);
	cr_expect_eq(p.failures.score, 2, "one failure forgiven per %d good blocks",
	    PIPELINE_FORGIVE_BLOCKS);
	pipeline_free(&p);
}

Test(pipeline, a_failure_does_not_reset_the_good_count)
{
	struct pipeline p;
	uint8_t boot[4] = { 1, 2, 3, 4 };

	pipeline_init(&p, false, 0, 8);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	pipeline_input(&p, boot, 4);
	p.failures.score = 3;
	p.failures.good_streak = PIPELINE_FORGIVE_BLOCKS - 1;
	feed_blocks(&p, 1, 1); /* a failed block: the score rises, the count stays */
	cr_assert_eq(p.count.blocks_failed, 1);
	cr_expect_eq(p.failures.score, 4);
	cr_expect_eq(p.failures.good_streak, PIPELINE_FORGIVE_BLOCKS - 1,
	    "as in rngd, false alarms must not undo the good blocks seen");
	feed_blocks(&p, 1, 0);
	cr_assert_eq(p.count.blocks_passed, 1);
	cr_expect_eq(p.failures.score, 3, "the 1000th good block forgives one failure");
	pipeline_free(&p);
}

Test(pipeline, next_read_completes_a_block_until_warm)
{
	struct pipeline p;
	uint8_t boot[4] = { 1, 2, 3, 4 };
	size_t room, n;

	pipeline_init(&p, false, 0, 8);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	cr_expect_eq(pipeline_next_read(&p), FIPS_BOOTSTRAP_BYTES + FIPS_BLOCK_BYTES,
	    "after open: exactly the bootstrap word and the first block");
	cr_expect(!pipeline_read_ahead(&p));
	pipeline_input(&p, boot, 4);
	feed_blocks(&p, 1, 0);
	cr_assert_eq(p.count.blocks_tested, 1);
	cr_expect(p.warm);
	/* Warm: the most whole blocks whose output fits half the reserve's
	 * room, so that a second read goes on while the first is handled. */
	room = (RESERVE_CAPACITY - p.reserve.len + 31) / 32 * 40; /* 40 in per 32 out */
	n = pipeline_next_read(&p);
	cr_expect_eq(n % FIPS_BLOCK_BYTES, 0, "whole blocks");
	cr_expect_gt(n, FIPS_BLOCK_BYTES, "more than one block once warm");
	cr_expect_leq(2 * n, room, "two reads no more than refill the reserve");
	cr_expect_gt(2 * (n + FIPS_BLOCK_BYTES), room, "as many blocks as fit twice");
	cr_expect(pipeline_read_ahead(&p), "a full-entropy source reads ahead");
	/* Seven blocks in (14000 bytes out): room for one more read, not two. */
	feed_blocks(&p, 7, 0);
	cr_assert_eq(p.count.blocks_passed, 8);
	room = (RESERVE_CAPACITY - p.reserve.len + 31) / 32 * 40;
	cr_expect_lt(room, 2 * FIPS_BLOCK_BYTES);
	cr_expect_eq(pipeline_next_read(&p), FIPS_BLOCK_BYTES, "the block the room takes");
	cr_expect(!pipeline_read_ahead(&p), "two reads would overflow the reserve");
	pipeline_restart(&p);
	cr_expect_eq(pipeline_next_read(&p), FIPS_BOOTSTRAP_BYTES + FIPS_BLOCK_BYTES,
	    "a reopen starts small again");
	pipeline_free(&p);
}

Test(pipeline, next_read_is_capped_and_block_aligned)
{
	struct pipeline p;
	uint8_t boot[4] = { 1, 2, 3, 4 }, half[1000] = { 0 };

	/* 1/64 bit per byte: 20480 input bytes per output, the room wants megabytes. */
	pipeline_init(&p, false, 0, 1.0 / 64);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	pipeline_input(&p, boot, 4);
	feed_blocks(&p, 1, 0);
	cr_assert_eq(p.count.blocks_tested, 1);
	cr_expect_eq(pipeline_next_read(&p),
	    PIPELINE_READ_MAX / FIPS_BLOCK_BYTES * FIPS_BLOCK_BYTES);
	cr_expect(pipeline_read_ahead(&p), "the reserve has room for many such reads");
	pipeline_input(&p, half, sizeof half);
	cr_expect_eq(pipeline_next_read(&p) % FIPS_BLOCK_BYTES, FIPS_BLOCK_BYTES - sizeof half,
	    "a read ends on a block boundary");
	cr_expect_leq(pipeline_next_read(&p), PIPELINE_READ_MAX);
	pipeline_free(&p);
}

Test(pipeline, raw_sources_read_fixed_pieces)
{
	struct pipeline p;

	pipeline_init(&p, true, 8, 0.5);
	cr_expect_eq(pipeline_next_read(&p), PIPELINE_RAW_READ);
	cr_expect(!pipeline_read_ahead(&p));
	pipeline_free(&p);
}

Test(pipeline, uncredited_source_still_flows)
{
	struct pipeline p;

	pipeline_init(&p, false, 0, 0);
	feed_blocks(&p, 3, 0);
	cr_expect(!pipeline_credited(&p));
	cr_expect_gt(p.count.blocks_passed, 0);
	/* One uncredited output per 64 input bytes; the rest waits in the hash. */
	cr_expect_eq(p.count.bytes_conditioned,
	    p.count.blocks_passed * FIPS_BLOCK_BYTES / CONDITION_UNCREDITED_BYTES * 32);
	pipeline_free(&p);
}

Test(pipeline, raw_samples_need_startup_and_rct_discards)
{
	struct pipeline p;
	static uint8_t samples[4096];
	size_t i;

	/* 4-bit samples credited 2 bits each: RCT cutoff 11. */
	pipeline_init(&p, true, 4, 2);
	/* The subject is RCT: the online estimate would lower the credit of a pattern. */
	pipeline_estimating(&p, false);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	cr_expect(!pipeline_started(&p));
	random_bytes(samples, sizeof samples);
	for (i = 0; i < sizeof samples; i++)
		samples[i] = (uint8_t)(i % 16); /* varied: no RCT/APT failure */
	pipeline_input(&p, samples, SP80090B_STARTUP_SAMPLES - 1);
	cr_expect(!pipeline_started(&p));
	cr_expect_eq(p.cond.units, 0, "start-up samples are not conditioned");
	pipeline_input(&p, samples, 1);
	cr_expect(pipeline_started(&p));
	pipeline_input(&p, samples, 100);
	cr_expect_eq(p.cond.units, 100, "samples after start-up are absorbed");
	memset(samples, 5, 11);
	pipeline_input(&p, samples, 11);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_RCT], 1);
	cr_expect_eq(p.cond.units, 0, "a health failure discards what was absorbed");
	cr_expect(!pipeline_started(&p), "and start-up begins again");
	pipeline_free(&p);
}

Test(pipeline, raw_output_passes_fips_before_the_reserve)
{
	struct pipeline p;
	static uint8_t samples[65536];
	size_t i;

	/* 8-bit samples at 8 bits: 40 samples per output. */
	pipeline_init(&p, true, 8, 8);
	for (i = 0; i < 4; i++) {
		random_bytes(samples, sizeof samples);
		pipeline_input(&p, samples, sizeof samples);
	}
	cr_expect_gt(p.count.blocks_tested, 0);
	cr_expect_eq(p.count.bytes_conditioned, p.count.blocks_passed * FIPS_BLOCK_BYTES,
	    "the reserve receives whole passing blocks of conditioned bytes");
	cr_expect_eq(p.reserve.credit_bits, p.reserve.len * 8,
	    "the conditioner's credit crosses FIPS blocks intact");
	cr_expect_eq(p.count.samples_discarded, SP80090B_STARTUP_SAMPLES);
	pipeline_free(&p);
}

Test(pipeline, two_byte_samples_split_across_reads)
{
	struct pipeline p;
	uint8_t s[3] = { 1, 2, 3 };

	pipeline_init(&p, true, 12, 4);
	pipeline_skip_repeats(&p); /* this test is about the other tests */
	pipeline_input(&p, s, 3);
	cr_expect_eq(p.count.samples_tested, 1);
	cr_expect(p.have_carry);
	pipeline_input(&p, s, 1);
	cr_expect_eq(p.count.samples_tested, 2);
	cr_expect(!p.have_carry);
	pipeline_free(&p);
}

/*
 * A VM generation change: everything held is counted and wiped; what comes
 * out afterwards is conditioned from fresh input only, behind a fresh
 * bootstrap word (the first 4 fresh bytes are never output).
 */
Test(pipeline, forget_wipes_what_is_held_and_only_fresh_input_comes_out)
{
	struct pipeline p;
	static uint8_t old[4 + 3 * FIPS_BLOCK_BYTES + 1000], fresh[4 + FIPS_BLOCK_BYTES + 512];
	uint8_t out[RESERVE_CAPACITY], want[CONDITION_OUTPUT_BYTES];
	size_t held, i, n, lookahead;
	unsigned credit;

	/* Uncredited: one output per 64 input bytes. */
	pipeline_init(&p, false, 0, 0);
	lookahead = repeat_min_caught(&p.repeat);
	random_bytes(old, sizeof old);
	pipeline_input(&p, old, sizeof old);
	cr_assert_gt(p.reserve.len, 0);
	cr_assert_eq(p.repeat.pos - p.repeat.released, lookahead,
	    "the repeat test holds back the newest bytes");
	cr_assert_eq(p.block_len, 1000 - lookahead, "a partial FIPS block is held");
	held = p.reserve.len + p.block_len + p.cond.units + lookahead;
	cr_assert_gt(p.cond.units, 0, "so is conditioner input not yet output");
	cr_expect_eq(pipeline_held(&p), held);
	cr_expect_eq(pipeline_forget(&p), held, "the bytes discarded are the bytes held");
	cr_expect_eq(pipeline_held(&p), 0);
	cr_expect_eq(p.reserve.len, 0);
	cr_expect_eq(p.reserve.credit_bits, 0);
	for (i = 0; i < RESERVE_CAPACITY; i++)
		cr_assert_eq(p.reserve.ring[i], 0, "the reserve is wiped");
	for (i = 0; i < sizeof p.block; i++)
		cr_assert_eq(p.block[i], 0, "the partial block is wiped");
	for (i = 0; i < lookahead; i++)
		cr_assert_eq(p.repeat.hold[i], 0, "the repeat test's hold-back is wiped");
	cr_expect_eq(pipeline_next_read(&p), 4 + FIPS_BLOCK_BYTES + lookahead,
	    "the next read completes a fresh bootstrap word and block past the hold-back");

	random_bytes(fresh, sizeof fresh);
	pipeline_input(&p, fresh, 4 + FIPS_BLOCK_BYTES + lookahead);
	cr_assert_eq(p.count.blocks_failed, 0);
	n = pipeline_take(&p, out, sizeof out, &credit);
	cr_assert_eq(n, FIPS_BLOCK_BYTES / CONDITION_UNCREDITED_BYTES * CONDITION_OUTPUT_BYTES);
	for (i = 0; i < n / CONDITION_OUTPUT_BYTES; i++) {
		gcry_md_hash_buffer(GCRY_MD_SHA256, want,
		    fresh + 4 + i * CONDITION_UNCREDITED_BYTES, CONDITION_UNCREDITED_BYTES);
		cr_assert_arr_eq(out + i * CONDITION_OUTPUT_BYTES, want, CONDITION_OUTPUT_BYTES,
		    "output %zu is SHA-256 of fresh input alone", i);
	}
	cr_expect_eq(pipeline_held(&p), FIPS_BLOCK_BYTES % CONDITION_UNCREDITED_BYTES + lookahead,
	    "only the fresh block's tail waits in the conditioner, and the fresh hold-back");
	pipeline_free(&p);
}

/* Raw samples: half a two-byte sample is held too; the start-up tests stay passed. */
Test(pipeline, forget_keeps_the_health_tests_of_a_raw_source)
{
	struct pipeline p;
	static uint8_t samples[2 * (SP80090B_STARTUP_SAMPLES + 200) + 1];
	size_t i, held;

	pipeline_init(&p, true, 12, 4);
	pipeline_estimating(&p, false); /* the made-up samples would measure low */
	pipeline_skip_repeats(&p);      /* and they repeat */
	for (i = 0; i + 1 < sizeof samples; i += 2) {
		samples[i] = (uint8_t)(i * 7);
		samples[i + 1] = (uint8_t)(i % 16);
	}
	samples[sizeof samples - 1] = 9;
	pipeline_input(&p, samples, sizeof samples);
	cr_assert(pipeline_started(&p));
	cr_assert(p.have_carry);
	/* 200 samples at 4 bits: two outputs (80 samples each) went on to FIPS. */
	cr_assert_eq(p.cond.units, 40);
	cr_assert_eq(p.bootstrap_len, 4);
	cr_assert_eq(p.block_len, 2 * CONDITION_OUTPUT_BYTES - 4);
	held = pipeline_held(&p);
	cr_expect_eq(held, p.block_len + 40 * 2 + 1);
	cr_expect_eq(pipeline_forget(&p), held);
	cr_expect(!p.have_carry);
	cr_expect_eq(p.cond.units, 0);
	cr_expect(pipeline_started(&p), "the source is as healthy as before the change");
	pipeline_free(&p);
}

/* Samples that repeat a short pattern with a little noise: MCV-happy, predictable. */
static void
patterned_samples(uint8_t *buf, size_t len)
{
	size_t i;

	random_bytes(buf, len);
	for (i = 0; i < len; i++)
		if (buf[i] % 8 != 0)
			buf[i] = (uint8_t)(i % 5 * 37);
}

Test(pipeline, a_raw_source_measuring_low_is_credited_what_it_measures)
{
	static uint8_t samples[4096];
	const struct estimate_result *r;
	struct pipeline p;
	double target;
	int i;

	/* 8-bit samples claiming 1/3 bit each, as jitter does. */
	pipeline_init(&p, true, 8, 1.0 / 3);
	pipeline_skip_repeats(&p); /* the pattern repeats: this test is about the estimate */
	cr_expect_null(pipeline_estimate_result(&p), "no figure before any sample");
	patterned_samples(samples, 1000);
	pipeline_input(&p, samples, 1000);
	cr_expect_float_eq(p.unit_bits, 1.0 / 3, 1e-12, "no figure from 1000 samples");
	patterned_samples(samples, sizeof samples);
	pipeline_input(&p, samples, sizeof samples);
	cr_assert_not_null(r = pipeline_estimate_result(&p));
	target = r->min / ESTIMATE_RAW_MARGIN;
	cr_expect(target < 1.0 / 3, "the pattern measures low: %g", r->min);
	cr_expect_float_eq(p.unit_bits, target * ESTIMATE_HEADROOM, 1e-12,
	    "lowered to what it measures, with headroom");
	cr_expect_float_eq(p.claim_bits, 1.0 / 3, 1e-12, "the claim stays");
	cr_expect_eq(p.count.credit_lowered, 1);
	cr_expect_eq(p.count.samples_discarded, 1000 + SP80090B_STARTUP_SAMPLES,
	    "lowered before any sample was used; start-up runs again at the new figure "
	    "(%llu discarded)", (unsigned long long)p.count.samples_discarded);
	cr_expect_eq(p.count.test_failures[PIPELINE_TEST_RCT] +
	    p.count.test_failures[PIPELINE_TEST_APT], 0);
	cr_expect_eq(p.cond.units_per_output, condition_units_per_output(p.unit_bits, 1));
	/* Good samples afterwards do not raise it again. */
	for (i = 0; i < 40; i++) {
		random_bytes(samples, sizeof samples);
		pipeline_input(&p, samples, sizeof samples);
	}
	cr_expect(pipeline_estimate_result(&p)->min > 2.0 / 3, "%g",
	    pipeline_estimate_result(&p)->min);
	cr_expect(p.unit_bits < 1.0 / 3, "never raised: %g", p.unit_bits);
	pipeline_free(&p);
}

Test(pipeline, a_raw_source_measuring_well_keeps_its_claim)
{
	static uint8_t samples[4096];
	struct pipeline p;
	int i;

	pipeline_init(&p, true, 8, 1.0 / 3);
	for (i = 0; i < 64; i++) {
		random_bytes(samples, sizeof samples);
		pipeline_input(&p, samples, sizeof samples);
	}
	cr_assert_not_null(pipeline_estimate_result(&p));
	/*
	 * Uniform bytes measure over 7 bits, but in about one window in 300
	 * the lag predictor (6.3.8) is right 3 times in a row, and its bound
	 * on the longest run gives 5.65 bits, as NIST's tool would: far above
	 * the claim all the same.
	 */
	cr_expect(pipeline_estimate_result(&p)->min > 5, "%g", pipeline_estimate_result(&p)->min);
	cr_expect_float_eq(p.unit_bits, 1.0 / 3, 1e-12, "never above the claim");
	cr_expect_eq(p.count.credit_lowered, 0);
	cr_expect_eq(pipeline_estimate_result(&p)->samples, ESTIMATE_RAW_WINDOW);
	pipeline_free(&p);
}

Test(pipeline, a_credit_lowered_midway_drops_what_the_old_figure_credited)
{
	static uint8_t buf[ESTIMATE_BYTE_WINDOW];
	struct pipeline p;

	/* Whitened bytes at 8 bits: the MCV of perfect bytes over the window is about 7.2. */
	pipeline_init(&p, false, 0, 8);
	random_bytes(buf, sizeof buf);
	pipeline_input(&p, buf, sizeof buf);
	random_bytes(buf, sizeof buf);
	pipeline_input(&p, buf, sizeof buf);
	cr_assert_not_null(pipeline_estimate_result(&p));
	cr_expect_float_eq(p.unit_bits, 8, 1e-12, "perfect bytes keep the claim (%g)",
	    pipeline_estimate_result(&p)->min);
	cr_expect_gt(p.reserve.len, 0);
	/* One byte in ten zero: FIPS passes most blocks, the MCV does not. */
	random_bytes(buf, sizeof buf);
	for (size_t i = 0; i < sizeof buf; i += 10)
		buf[i] = 0;
	pipeline_input(&p, buf, sizeof buf);
	cr_expect(p.unit_bits < 6, "lowered: %g", p.unit_bits);
	cr_expect_float_eq(p.unit_bits, pipeline_estimate_result(&p)->min * ESTIMATE_HEADROOM,
	    1e-12, "bytes: the estimate itself, with headroom");
	cr_expect_eq(p.count.credit_lowered, 1);
	cr_expect_eq(p.reserve.len, 0, "nothing credited at 8 bits per byte is left");
	pipeline_free(&p);
}

Test(pipeline, limit_lowers_the_claim_and_keeps_counters_and_estimates)
{
	static uint8_t samples[4096];
	struct pipeline p;
	uint64_t read;

	pipeline_init(&p, true, 8, 1.0 / 3);
	random_bytes(samples, sizeof samples);
	pipeline_input(&p, samples, sizeof samples);
	read = p.count.bytes_read;
	cr_expect_float_eq(pipeline_limit(&p, 0.5), 1.0 / 3, 1e-12, "never raised");
	cr_expect_float_eq(pipeline_limit(&p, -1), 1.0 / 3, 1e-12, "nonsense ignored");
	cr_expect_float_eq(pipeline_limit(&p, 0.1), 0.1, 1e-12);
	cr_expect_float_eq(p.claim_bits, 0.1, 1e-12);
	cr_expect_float_eq(p.unit_bits, 0.1, 1e-12);
	cr_expect_eq(p.count.bytes_read, read);
	cr_expect_not_null(pipeline_estimate_result(&p), "the window is kept");
	cr_expect(!pipeline_started(&p), "the health tests start afresh at the new figure");
	cr_expect_eq(p.count.credit_lowered, 0, "a module's limit is not the estimate's");
	pipeline_free(&p);
}

Test(pipeline, estimating_off_never_lowers)
{
	static uint8_t samples[4096];
	struct pipeline p;

	pipeline_init(&p, true, 8, 1.0 / 3);
	pipeline_estimating(&p, false);
	patterned_samples(samples, sizeof samples);
	pipeline_input(&p, samples, sizeof samples);
	cr_expect_null(pipeline_estimate_result(&p));
	cr_expect_float_eq(p.unit_bits, 1.0 / 3, 1e-12);
	pipeline_free(&p);
}
