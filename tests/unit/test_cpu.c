/* SPDX-License-Identifier: MIT */
/*
 * The CPU sources: rdrand and rdseed with the instruction replaced by a
 * scripted sequence, jitter's pure parts and its timestamp seam, --capture
 * parsing, and real-hardware runs that skip when the CPU lacks RDRAND or
 * RDSEED. Modules are driven through a fake host table as the daemon would.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <entropyd/source.h>
#include "fake_host.h"
#include "builtin.h"
#include "jitter.h"
#include "options.h"
#include "x86rng.h"

/* The scripted instruction: each step a word, or carry clear. */
struct test_step {
	uint64_t value;
	int carry;
};
static const struct test_step *test_script;
static size_t test_script_len, test_script_pos;
static uint64_t test_counter;

/* Play the script, then good distinct words (a counter mixed up) forever. */
static int
test_scripted(uint64_t *out)
{
	if (test_script_pos < test_script_len) {
		const struct test_step *s = &test_script[test_script_pos++];

		*out = s->value;
		return s->carry;
	}
	*out = ++test_counter * 0x9e3779b97f4a7c15ULL;
	return 1;
}

static void
test_play(const struct test_step *script, size_t len)
{
	test_script = script;
	test_script_len = len;
	test_script_pos = 0;
}

/* A struct x86rng around the scripted instruction. */
static void
test_rng(struct x86rng *r, bool seed_grade)
{
	memset(r, 0, sizeof *r);
	r->insn = seed_grade ? "RDSEED" : "RDRAND";
	r->step = test_scripted;
	r->retries = seed_grade ? X86RNG_RDSEED_RETRIES : X86RNG_RDRAND_RETRIES;
	r->seed_grade = seed_grade;
	r->host = fake_host();
	r->instance = &fake_instances[0];
}

#define W(v) { (v), 1 }
#define NOCARRY { 0, 0 }

Test(x86rng, sanity_passes_distinct_words)
{
	char why[256] = "";

	test_play(NULL, 0);
	cr_assert(x86rng_sanity(test_scripted, 10, false, why, sizeof why), "%s", why);
}

Test(x86rng, sanity_needs_five_changes)
{
	/* A A B B C C D E: changes at 2, 4, 6, 7 = 4 of 7. */
	static const struct test_step four[] = { W(1), W(1), W(2), W(2), W(3), W(3), W(4), W(5) };
	/* A B C C D D E F: changes 5 of 7. */
	static const struct test_step five[] = { W(1), W(2), W(3), W(3), W(4), W(4), W(5), W(6) };
	char why[256] = "";

	test_play(four, 8);
	cr_assert_not(x86rng_sanity(test_scripted, 10, false, why, sizeof why));
	cr_assert(strstr(why, "only 4 of 7 samples changed") != NULL, "%s", why);
	test_play(five, 8);
	cr_assert(x86rng_sanity(test_scripted, 10, false, why, sizeof why), "%s", why);
}

Test(x86rng, sanity_fails_on_constant_all_ones)
{
	static const struct test_step ones[8] = { W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX),
	    W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX) };
	char why[256] = "";

	test_play(ones, 8);
	cr_assert_not(x86rng_sanity(test_scripted, 10, false, why, sizeof why));
	cr_assert(strstr(why, "only 0 of 7") != NULL, "%s", why);
}

Test(x86rng, rdrand_retries_at_most_ten)
{
	static const struct test_step nine[] = { NOCARRY, NOCARRY, NOCARRY, NOCARRY, NOCARRY,
	    NOCARRY, NOCARRY, NOCARRY, NOCARRY, W(42) };
	static const struct test_step ten[] = { NOCARRY, NOCARRY, NOCARRY, NOCARRY, NOCARRY,
	    NOCARRY, NOCARRY, NOCARRY, NOCARRY, NOCARRY, W(42) };
	uint64_t v = 0;
	char why[256] = "";

	test_play(nine, 10);
	cr_assert_eq(x86rng_execute(test_scripted, 10, false, &v), X86RNG_WORD_GOOD);
	cr_assert_eq(v, 42);
	test_play(ten, 11);
	cr_assert_eq(x86rng_execute(test_scripted, 10, false, &v), X86RNG_WORD_NO_CARRY);
	cr_assert_eq(test_script_pos, 10, "executed %zu times", test_script_pos);
	test_play(ten, 11);
	cr_assert_not(x86rng_sanity(test_scripted, 10, false, why, sizeof why));
	cr_assert(strstr(why, "carry clear 10 times") != NULL, "%s", why);
}

Test(x86rng, known_bad_words_and_repeats_are_rejected)
{
	static const struct test_step script[] = { W(7), W(UINT64_MAX), W(0), W(8), W(8) };
	struct x86rng r;
	uint64_t v;

	test_rng(&r, false);
	test_play(script, 5);
	cr_assert_eq(x86rng_word(&r, &v), X86RNG_WORD_GOOD);
	cr_assert_eq(x86rng_word(&r, &v), X86RNG_WORD_BAD);
	cr_assert_eq(x86rng_word(&r, &v), X86RNG_WORD_BAD);
	cr_assert_eq(x86rng_word(&r, &v), X86RNG_WORD_GOOD);
	cr_assert_eq(x86rng_word(&r, &v), X86RNG_WORD_REPEAT);
	cr_assert_eq(r.bad_words, 2);
	cr_assert_eq(r.repeats, 1);
	cr_assert_eq(r.words, 2);
}

Test(x86rng, a_bad_word_fails_the_read_and_logs_once_per_burst)
{
	static const struct test_step bad[] = { W(1), W(2), W(UINT64_MAX) };
	uint8_t buf[64];
	struct x86rng r;
	ssize_t n;
	size_t i;

	fake_reset(&rdrand_source);
	test_rng(&r, false);
	test_play(bad, 3);
	memset(buf, 0x5a, sizeof buf);
	errno = 0;
	n = x86rng_fill(&r, buf, sizeof buf);
	cr_assert_eq(n, ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EBADMSG);
	for (i = 0; i < sizeof buf; i++)
		cr_assert_eq(buf[i], 0, "byte %zu of the failed read was handed out", i);
	cr_assert(strstr(fake_log, "RDRAND: known bad output 0xffffffffffffffff with carry set "
	    "(1 bad") != NULL, "%s", fake_log);
	cr_assert_eq(fake_n_log, 1);
	/* Still bad: counted, not logged again. */
	test_play((const struct test_step[]){ W(0) }, 1);
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(r.bad_words, 2);
	cr_assert_eq(fake_n_log, 1);
	/* A good read ends the burst; the next failure logs again. */
	test_play(NULL, 0);
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), (ssize_t)sizeof buf);
	test_play((const struct test_step[]){ W(5), W(5) }, 2);
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(fake_n_log, 2);
	cr_assert(strstr(fake_log, "repeated word 0x0000000000000005") != NULL, "%s", fake_log);
}

Test(x86rng, rdrand_carry_failure_fails_the_read)
{
	static const struct test_step script[] = { W(1), NOCARRY, NOCARRY, NOCARRY, NOCARRY,
	    NOCARRY, NOCARRY, NOCARRY, NOCARRY, NOCARRY, NOCARRY };
	uint8_t buf[32];
	struct x86rng r;

	fake_reset(&rdrand_source);
	test_rng(&r, false);
	test_play(script, 11);
	errno = 0;
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EIO);
	cr_assert(strstr(fake_log, "RDRAND: carry clear 10 times in a row") != NULL, "%s",
	    fake_log);
}

/* RDSEED: carry clear on every execution. */
static int
test_dry(uint64_t *out)
{
	return 0;
}

Test(x86rng, rdseed_hands_out_what_passed_then_waits_then_fails)
{
	static const struct test_step two[] = { W(11), W(12) };
	uint8_t buf[64];
	struct x86rng r;
	int i;

	fake_reset(&rdseed_source);
	test_rng(&r, true);
	test_play(two, 2);
	r.step = test_scripted;
	/* Two words, then the scripted tail is good forever: use a dry step instead. */
	cr_assert_eq(x86rng_fill(&r, buf, 16), 16);
	r.step = test_dry;
	for (i = 1; i < X86RNG_RDSEED_MAX_DRY_READS; i++)
		cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_AGAIN, "read %d", i);
	cr_assert_eq(fake_n_log, 0);
	errno = 0;
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EIO);
	cr_assert(strstr(fake_log, "RDSEED: carry clear 64 times") != NULL, "%s", fake_log);
}

Test(x86rng, rdseed_partial_read)
{
	static const struct test_step script[] = { W(21), W(22), W(23) };
	uint8_t buf[64];
	struct x86rng r;

	fake_reset(&rdseed_source);
	test_rng(&r, true);
	test_play(script, 3);
	r.step = test_scripted;
	cr_assert_eq(x86rng_fill(&r, buf, 24), 24);
	r.step = test_dry;
	cr_assert_eq(x86rng_fill(&r, buf, sizeof buf), ENTROPYD_READ_AGAIN);
}

/* Write a cpuinfo-like file into a fresh temporary path. */
static const char *
test_cpuinfo_file(const char *flags)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof path, "/tmp/entropyd-cpuinfo.XXXXXX");
	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fprintf(f, "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: %s\n\n"
	    "processor\t: 1\nflags\t\t: %s\n", flags, flags);
	fclose(f);
	return path;
}

Test(x86rng, cpuinfo_flags)
{
	const char *p = test_cpuinfo_file("fpu sse2 rdrand rdseed_not");

	cr_assert_eq(x86rng_cpuinfo_flag(p, "rdrand"), 1);
	cr_assert_eq(x86rng_cpuinfo_flag(p, "rdseed"), 0);
	cr_assert_eq(x86rng_cpuinfo_flag(p, "fpu"), 1);
	unlink(p);
	cr_assert_eq(x86rng_cpuinfo_flag(p, "rdrand"), -1);
}

Test(x86rng, probe_says_why_not_when_the_kernel_cleared_the_flag)
{
	const char *p = test_cpuinfo_file("fpu sse2");

	if (!x86rng_cpuid_rdrand())
		cr_skip("this CPU has no RDRAND");
	fake_reset(&rdrand_source);
	fake_set_option("cpuinfo", p);
	cr_assert_eq(rdrand_source.probe(&fake_module, fake_host()), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert(strstr(fake_unusable, "lacks the 'rdrand' flag") != NULL, "%s", fake_unusable);
	unlink(p);
}

Test(x86rng, probe_and_open_refuse_a_unit_failing_the_sanity_check)
{
	static const struct test_step ones[10] = { W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX),
	    W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX),
	    W(UINT64_MAX), W(UINT64_MAX) };
	x86rng_step_fn real = rdrand_step;
	void *state = NULL;

	if (!x86rng_cpuid_rdrand() || x86rng_cpuinfo_flag("/proc/cpuinfo", "rdrand") != 1)
		cr_skip("this CPU has no usable RDRAND (CPUID or /proc/cpuinfo)");
	fake_reset(&rdrand_source);
	rdrand_step = test_scripted;
	test_play(ones, 10);
	cr_assert_eq(rdrand_source.probe(&fake_module, fake_host()), 0);
	cr_assert(strstr(fake_unusable, "RDRAND sanity check: only 0 of 7") != NULL, "%s",
	    fake_unusable);
	/* Good at probe, broken by open (a resume): open fails and says why. */
	test_play(NULL, 0);
	cr_assert_eq(rdrand_source.probe(&fake_module, fake_host()), 1);
	test_play(ones, 10);
	cr_assert_eq(rdrand_source.open(&fake_instances[0], &state), -1);
	cr_assert(strstr(fake_log, "sanity check") != NULL, "%s", fake_log);
	rdrand_step = real;
}

/* Probe, open and read a real instruction source; skip without the CPU feature. */
static void
test_real(const struct entropyd_source *src, bool cpuid, const char *flag)
{
	uint64_t words[512];
	void *state = NULL;
	ssize_t n;
	size_t i, zero = 0;

	if (!cpuid)
		cr_skip("this CPU has no %s (CPUID)", flag);
	if (x86rng_cpuinfo_flag("/proc/cpuinfo", flag) != 1)
		cr_skip("the kernel does not list '%s' in /proc/cpuinfo", flag);
	fake_reset(src);
	cr_assert_eq(src->probe(&fake_module, fake_host()), 1, "%s", fake_unusable);
	cr_assert_eq(src->pollfd == NULL ? 0 : src->open(&fake_instances[0], &state), 0, "%s",
	    fake_log);
	cr_assert_eq(src->pollfd(state), -1, "a reader thread is needed");
	do
		n = src->read(state, words, sizeof words);
	while (n == ENTROPYD_READ_AGAIN);
	cr_assert_gt(n, 0, "%s", fake_log);
	for (i = 0; i < (size_t)n / 8; i++)
		zero += words[i] == 0 || words[i] == UINT64_MAX;
	cr_assert_eq(zero, 0);
	cr_assert_neq(words[0], words[1]);
	src->close(state);
}

Test(hardware, rdrand_reads)
{
	test_real(&rdrand_source, x86rng_cpuid_rdrand(), "rdrand");
}

Test(hardware, rdseed_reads)
{
	test_real(&rdseed_source, x86rng_cpuid_rdseed(), "rdseed");
}

Test(hardware, descriptors_claim_what_the_man_page_says)
{
	cr_assert_float_eq(rdseed_source.entropy_bits, 8.0, 1e-9);
	cr_assert_float_eq(rdrand_source.entropy_bits, 1.0 / 64, 1e-9);
	cr_assert_float_eq(jitter_source.entropy_bits, 1.0 / 3, 1e-9);
	cr_assert(jitter_source.flags & ENTROPYD_SOURCE_RAW_SAMPLES);
	cr_assert_eq(jitter_source.sample_bits, 8);
}

Test(jitter, stuck_by_derivatives)
{
	struct jitter_deriv d = { 0, 0 };

	/* Prime: 100, 130 (d2 30), 175 (d2 45, d3 15). */
	jitter_stuck(&d, 100);
	jitter_stuck(&d, 130);
	cr_assert_not(jitter_stuck(&d, 175));
	cr_assert(jitter_stuck(&d, 175), "1st derivative equal: 2nd is zero");
	cr_assert_not(jitter_stuck(&d, 260));
	cr_assert(jitter_stuck(&d, 345), "2nd derivative equal (85, 85): 3rd is zero");
	cr_assert(jitter_stuck(&d, 0), "a zero delta");
	cr_assert_not(jitter_stuck(&d, 1000));
}

Test(jitter, fold)
{
	cr_assert_eq(jitter_fold(0x0102030405060708ULL), 0x08);
	cr_assert_eq(jitter_fold(0xff), 0xff);
	cr_assert_eq(jitter_fold(0xff00000000000000ULL), 0xff);
	cr_assert_eq(jitter_fold(0x1234), 0x12 ^ 0x34);
}

Test(jitter, oversampling_credits_one_over_osr_per_delta)
{
	struct jitter_emit e;
	uint8_t out = 0;
	unsigned osr, i, emitted;

	jitter_emit_init(&e, 3);
	cr_assert(jitter_emit_sample(&e, 0x5a, &out));
	cr_assert_eq(out, 0x5a);
	jitter_emit_init(&e, 6);
	cr_assert_not(jitter_emit_sample(&e, 0x0f, &out));
	cr_assert(jitter_emit_sample(&e, 0xf1, &out));
	cr_assert_eq(out, 0x0f ^ 0xf1, "the two deltas are folded into one sample");
	/* Samples emitted x 1/3 bit = deltas x 1/osr, for every osr. */
	for (osr = 3; osr <= JITTER_MAX_OSR; osr++) {
		jitter_emit_init(&e, osr);
		for (i = emitted = 0; i < 3 * osr * 10; i++)
			emitted += jitter_emit_sample(&e, (uint8_t)i, &out);
		cr_assert_eq(emitted * osr, i * 3, "osr %u: %u samples from %u deltas", osr,
		    emitted, i);
	}
}

Test(jitter, stuck_cutoff)
{
	cr_assert_eq(jitter_stuck_cutoff(3), 61);
	cr_assert_eq(jitter_stuck_cutoff(1), 21);
}

/* Timestamps with pseudo-random increments (a good clock). */
static void
test_good_stamps(uint64_t *s, size_t n)
{
	uint64_t x = 88172645463325252ULL;
	size_t i;

	s[0] = 1000000;
	for (i = 1; i <= n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s[i] = s[i - 1] + 2000 + (x % 997);
	}
}

#define TEST_STAMPS 8192

/* Timestamps whose deltas alternate between two values, every fourth one noisy if asked. */
static void
test_alternating_stamps(uint64_t *s, size_t n, bool noisy)
{
	uint64_t x = 88172645463325252ULL;
	size_t i;

	s[0] = 1000000;
	for (i = 1; i <= n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s[i] = s[i - 1] + (noisy && i % 4 == 0 ? 2000 + x % 997 : i % 2 ? 2000 : 3000);
	}
}

Test(jitter, startup_verdict)
{
	static uint64_t s[TEST_STAMPS + 1];
	struct jitter_verdict v;
	char why[256] = "";
	size_t i;

	test_good_stamps(s, TEST_STAMPS);
	cr_assert(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why), "%s", why);
	cr_expect_eq(v.samples, JITTER_STARTUP_SAMPLES, "stops once it can judge");
	cr_expect(v.est.min > 2.0 / 3, "varied deltas measure well: %g", v.est.min);
	cr_expect_float_eq(v.supported, 1.0 / 3, 1e-12, "the whole claim");
	/* A coarse clock: every delta the same tick. */
	for (i = 1; i <= TEST_STAMPS; i++)
		s[i] = s[0] + i * 4000000;
	cr_assert_not(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why));
	cr_assert(strstr(why, "stuck") != NULL, "%s", why);
	/* Backwards. */
	test_good_stamps(s, TEST_STAMPS);
	s[500] = s[499] - 1;
	cr_assert_not(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why));
	cr_assert(strstr(why, "backwards") != NULL, "%s", why);
	/* Good, but stuck 61 times in a row in the middle (osr 3). */
	test_good_stamps(s, TEST_STAMPS);
	for (i = 301; i <= 300 + 62; i++)
		s[i] = s[i - 1] + 5000;
	for (; i <= TEST_STAMPS; i++)
		s[i] = s[i - 1] + 2000 + (i * 7919) % 997;
	cr_assert_not(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why));
	cr_assert(strstr(why, "61 stuck samples in a row") != NULL, "%s", why);
	/* Too few stamps to judge: refused, never passed by default. */
	test_good_stamps(s, TEST_STAMPS);
	cr_assert_not(jitter_assess(s, 500, 3, 1.0 / 3, &v, why, sizeof why));
	cr_assert(strstr(why, "only") != NULL, "%s", why);
}

Test(jitter, startup_refuses_a_clock_whose_samples_repeat_in_a_pattern)
{
	static uint64_t s[TEST_STAMPS + 1];
	struct jitter_verdict v;
	char why[512] = "";

	/*
	 * Deltas alternating 2000, 3000 (a coarse counter between two ticks):
	 * never stuck (the second and third differences are not zero), varied
	 * enough for the MCV, but every sample is the one two back.
	 */
	test_alternating_stamps(s, TEST_STAMPS, false);
	cr_assert_not(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why));
	cr_expect(strstr(why, "too coarse") != NULL && strstr(why, "Lag") != NULL, "%s", why);
	cr_expect(v.est.mcv >= 0.8, "the MCV alone is fooled: %g", v.est.mcv);
	cr_expect(v.supported < JITTER_MIN_BITS, "%g", v.supported);
}

Test(jitter, startup_lowers_the_credit_a_coarse_clock_cannot_support)
{
	static uint64_t s[TEST_STAMPS + 1];
	struct jitter_verdict v;
	char why[512] = "";

	/* The same pattern with every fourth delta noisy: some entropy, less than 2/3 bit. */
	test_alternating_stamps(s, TEST_STAMPS, true);
	cr_assert(jitter_assess(s, TEST_STAMPS, 3, 1.0 / 3, &v, why, sizeof why), "%s", why);
	cr_expect(v.supported < 1.0 / 3 && v.supported >= JITTER_MIN_BITS, "%g", v.supported);
	cr_expect_float_eq(v.supported, v.est.min / ESTIMATE_RAW_MARGIN, 1e-12,
	    "half the estimate: %g of %g", v.supported, v.est.min);
}

Test(jitter, option_parsing)
{
	unsigned osr = 0;
	size_t mem = 0;
	uint64_t hz = 1;

	cr_assert_eq(jitter_parse_osr("3", &osr), 0);
	cr_assert_eq(osr, 3);
	cr_assert_eq(jitter_parse_osr("64", &osr), 0);
	cr_assert_eq(jitter_parse_osr("2", &osr), -1, "below 3 would raise the credit");
	cr_assert_eq(jitter_parse_osr("65", &osr), -1);
	cr_assert_eq(jitter_parse_osr("3x", &osr), -1);
	cr_assert_eq(jitter_parse_osr("", &osr), -1);
	cr_assert_eq(jitter_parse_osr("-3", &osr), -1);
	cr_assert_eq(jitter_parse_memsize("64k", &mem), 0);
	cr_assert_eq(mem, 65536);
	cr_assert_eq(jitter_parse_memsize("1M", &mem), 0);
	cr_assert_eq(mem, 1 << 20);
	cr_assert_eq(jitter_parse_memsize("4096", &mem), 0);
	cr_assert_eq(mem, 4096);
	cr_assert_eq(jitter_parse_memsize("5000", &mem), -1, "not a power of 2");
	cr_assert_eq(jitter_parse_memsize("2048", &mem), -1, "below the minimum");
	cr_assert_eq(jitter_parse_memsize("512M", &mem), -1, "above the maximum");
	cr_assert_eq(jitter_parse_memsize("64kb", &mem), -1);
	cr_assert_eq(jitter_parse_memsize("", &mem), -1);
	cr_assert_eq(jitter_parse_hz("24M", &hz), 0);
	cr_assert_eq(hz, 24000000);
	cr_assert_eq(jitter_parse_hz("19200k", &hz), 0);
	cr_assert_eq(hz, 19200000);
	cr_assert_eq(jitter_parse_hz("1G", &hz), 0);
	cr_assert_eq(hz, 1000000000);
	cr_assert_eq(jitter_parse_hz("0", &hz), 0);
	cr_assert_eq(hz, 0, "off");
	cr_assert_eq(jitter_parse_hz("999", &hz), -1, "below 1 kHz");
	cr_assert_eq(jitter_parse_hz("2G", &hz), -1, "above 1 GHz");
	cr_assert_eq(jitter_parse_hz("24MHz", &hz), -1);
	cr_assert_eq(jitter_parse_hz("-24M", &hz), -1);
	cr_assert_eq(jitter_parse_hz("", &hz), -1);
}

/* A stuck clock: the same increment every time. */
static uint64_t test_fake_now;
static uint64_t
test_stuck_clock(void)
{
	return test_fake_now += 4000000;
}

Test(jitter, a_coarse_clock_fails_startup_cleanly)
{
	char err[256] = "";
	void *state = NULL;

	fake_reset(&jitter_source);
	jitter_clock_override = test_stuck_clock;
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0, "%s",
	    err);
	cr_assert_eq(jitter_source.probe(&fake_module, fake_host()), 0);
	cr_assert_eq(fake_n_instances, 0);
	cr_assert(strstr(fake_unusable, "start-up:") != NULL &&
	    strstr(fake_unusable, "too coarse or stuck") != NULL, "%s", fake_unusable);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), -1);
	cr_assert(strstr(fake_log, "start-up:") != NULL, "%s", fake_log);
	jitter_clock_override = NULL;
}

/* A good clock that turns stuck once the test says so. */
static bool test_go_stuck;
static uint64_t
test_turning_clock(void)
{
	static uint64_t x = 88172645463325252ULL;

	if (test_go_stuck)
		return test_fake_now += 3000;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return test_fake_now += 2000 + x % 997;
}

Test(jitter, a_clock_going_stuck_fails_the_read)
{
	uint8_t buf[1024];
	char err[256] = "";
	void *state = NULL;

	fake_reset(&jitter_source);
	jitter_clock_override = test_turning_clock;
	test_go_stuck = false;
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_assert_eq(jitter_source.read(state, buf, sizeof buf), (ssize_t)sizeof buf);
	test_go_stuck = true;
	errno = 0;
	cr_assert_eq(jitter_source.read(state, buf, sizeof buf), ENTROPYD_READ_ERROR);
	cr_assert_eq(errno, EIO);
	cr_assert(strstr(fake_log, "61 stuck samples in a row") != NULL, "%s", fake_log);
	jitter_source.close(state);
	jitter_clock_override = NULL;
}

/* configure() with one option set: its return, err filled. */
static int
test_configure(const char *key, const char *value, char *err, size_t errlen)
{
	fake_reset(&jitter_source);
	fake_set_option(key, value);
	err[0] = '\0';
	return jitter_source.configure(&fake_module, fake_host(), err, errlen);
}

Test(jitter, bad_options_are_refused)
{
	char err[256];

	cr_assert_eq(test_configure("osr", "5", err, sizeof err), 0, "%s", err);
	cr_assert_eq(test_configure("memsize", "1M", err, sizeof err), 0, "%s", err);
	cr_assert_eq(test_configure("clock", "monotonic_raw", err, sizeof err), 0, "%s", err);
	cr_assert_eq(test_configure("osr", "2", err, sizeof err), -1);
	cr_assert(strstr(err, "-O jitter:osr: '2'") != NULL, "%s", err);
	cr_assert_eq(test_configure("memsize", "3000", err, sizeof err), -1);
	cr_assert(strstr(err, "-O jitter:memsize: '3000'") != NULL, "%s", err);
	if (sysconf(_SC_LEVEL1_DCACHE_SIZE) > 4096) {
		cr_assert_eq(test_configure("memsize", "4096", err, sizeof err), -1);
		cr_assert(strstr(err, "below the L1 data cache") != NULL, "%s", err);
	}
	cr_assert_eq(test_configure("clock", "sundial", err, sizeof err), -1);
	cr_assert(strstr(err, "-O jitter:clock: 'sundial'") != NULL, "%s", err);
	cr_assert_eq(test_configure("quantize_hz", "24M", err, sizeof err), 0, "%s", err);
	cr_assert_eq(test_configure("quantize_hz", "24MHz", err, sizeof err), -1);
	cr_assert(strstr(err, "-O jitter:quantize_hz: '24MHz'") != NULL, "%s", err);
	/* Quantizing cuts monotonic_raw: another clock with it is refused. */
	fake_reset(&jitter_source);
	fake_set_option("quantize_hz", "24M");
	fake_set_option("clock", "monotonic_coarse");
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), -1);
	cr_assert(strstr(err, "does not go with -O jitter:clock:monotonic_coarse") != NULL, "%s",
	    err);
}

/* A clock of alternating deltas, every fourth noisy: start-up lowers the credit. */
static uint64_t
test_patterned_clock(void)
{
	static uint64_t x = 88172645463325252ULL, i;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	i++;
	return test_fake_now += i % 4 == 0 ? 2000 + x % 997 : i % 2 ? 2000 : 3000;
}

Test(jitter, open_lowers_the_credit_to_what_start_up_measured)
{
	char err[256] = "";
	void *state = NULL;

	fake_reset(&jitter_source);
	jitter_clock_override = test_patterned_clock;
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_expect(fake_instances[0].limit_bits > 0 && fake_instances[0].limit_bits < 1.0 / 3,
	    "limit_entropy(%g)", fake_instances[0].limit_bits);
	cr_expect(strstr(fake_log, "too coarse for 0.333 bits per sample") != NULL, "%s",
	    fake_log);
	jitter_source.close(state);
	/* A good clock keeps the claim: limit_entropy is not called. */
	fake_reset(&jitter_source);
	jitter_clock_override = test_turning_clock;
	test_go_stuck = false;
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_expect_eq(fake_instances[0].limit_bits, -1, "%g", fake_instances[0].limit_bits);
	cr_expect(strstr(fake_log, "start-up: the clock steps by") != NULL, "%s", fake_log);
	jitter_source.close(state);
	jitter_clock_override = NULL;
}

Test(jitter, a_coarse_counter_grows_the_work_until_the_samples_support_the_claim)
{
	uint8_t buf[1024];
	char err[256] = "";
	void *state = NULL;

	/* A 24 MHz counter (monotonic_raw cut to its ticks): the work of level 0
	 * spans some 25 ticks and its samples hold a hundredth of a bit. */
	fake_reset(&jitter_source);
	fake_set_option("quantize_hz", "24M");
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0, "%s",
	    err);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_expect(strstr(fake_log, "(quantized), too coarse for the work: it grew") != NULL, "%s",
	    fake_log);
	cr_expect(strstr(fake_log, "memory accesses over a") != NULL, "%s", fake_log);
	/* Whatever it reached, what it credits is what its samples support. */
	cr_expect(fake_instances[0].limit_bits == -1 || (fake_instances[0].limit_bits > 0 &&
	    fake_instances[0].limit_bits < 1.0 / 3), "limit %g", fake_instances[0].limit_bits);
	cr_assert_eq(jitter_source.read(state, buf, sizeof buf), (ssize_t)sizeof buf);
	jitter_source.close(state);
}

Test(jitter, real_clock_delivers_samples)
{
	uint8_t buf[1024];
	unsigned seen[256] = { 0 }, distinct = 0;
	void *state = NULL;
	ssize_t n;
	size_t i;

	fake_reset(&jitter_source);
	cr_assert_eq(jitter_source.probe(&fake_module, fake_host()), 1, "%s", fake_unusable);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_assert_eq(jitter_source.pollfd(state), -1);
	n = jitter_source.read(state, buf, sizeof buf);
	cr_assert_eq(n, (ssize_t)sizeof buf, "%s", fake_log);
	for (i = 0; i < sizeof buf; i++)
		if (seen[buf[i]]++ == 0)
			distinct++;
	/*
	 * The work is the same every time, so on a quiet core the deltas take
	 * few values (about ten in a row of 1024 here); what they are worth is
	 * judged by start-up and the online estimates, not by this count.
	 */
	cr_assert_gt(distinct, 4, "only %u distinct samples in 1024", distinct);
	cr_assert(strstr(fake_log, "start-up: the clock steps by") != NULL, "%s", fake_log);
	jitter_source.close(state);
}

Test(capture, option_parsing)
{
	char *argv[] = { "entropyd", "--capture", NULL, NULL };
	struct config cfg;
	char err[256];

	argv[2] = "jitter:1000:/tmp/x:y";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), 0, "%s", err);
	cr_assert_str_eq(cfg.capture_source, "jitter");
	cr_assert_eq(cfg.capture_count, 1000);
	cr_assert_str_eq(cfg.capture_path, "/tmp/x:y");
	options_free(&cfg);
	argv[2] = "jitter";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	cr_assert(strstr(err, "expected SOURCE:COUNT:PATH") != NULL, "%s", err);
	argv[2] = "jitter:0:/tmp/x";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	cr_assert(strstr(err, "'0' is not a sample count") != NULL, "%s", err);
	argv[2] = "jitter:1e3:/tmp/x";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	argv[2] = "jitter:-5:/tmp/x";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	argv[2] = "jitter:2000000000:/tmp/x";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	argv[2] = "Jitter:5:/tmp/x";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	cr_assert(strstr(err, "source name") != NULL, "%s", err);
	argv[2] = "jitter:5:";
	cr_assert_eq(options_parse(&cfg, 3, argv, err, sizeof err), EX_USAGE);
	cr_assert(strstr(err, "the path is empty") != NULL, "%s", err);
}

/*
 * A VM generation change: the word kept for the repeat check predates it
 * and is never compared with again, and the sanity check runs again before
 * the next read (a restored machine may run on another CPU).
 */
Test(x86rng, forget_drops_the_last_word_and_checks_the_unit_again)
{
	static const struct test_step once[2] = { W(0x1234567890abcdefULL),
	    W(0x1234567890abcdefULL) };
	static const struct test_step ones[10] = { W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX),
	    W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX), W(UINT64_MAX),
	    W(UINT64_MAX), W(UINT64_MAX) };
	struct test_step again[9];
	struct x86rng r;
	uint64_t word;
	size_t i;

	fake_reset(&rdrand_source);
	test_rng(&r, false);
	/* Without a change, the same word twice in a row is refused. */
	test_play(once, 2);
	cr_assert_eq(x86rng_fill(&r, &word, 8), 8);
	cr_assert_eq(x86rng_fill(&r, &word, 8), ENTROPYD_READ_ERROR);
	/* With one in between: 8 sanity words, then the old word is a first word. */
	test_play(once, 1);
	cr_assert_eq(x86rng_fill(&r, &word, 8), 8);
	x86rng_forget(&r);
	for (i = 0; i < 8; i++)
		again[i] = (struct test_step)W((i + 1) * 0x9e3779b97f4a7c15ULL);
	again[8] = (struct test_step)W(0x1234567890abcdefULL);
	test_play(again, 9);
	cr_assert_eq(x86rng_fill(&r, &word, 8), 8, "%s", fake_log);
	cr_assert_eq(word, 0x1234567890abcdefULL);
	cr_assert_eq(test_script_pos, 9, "the sanity check ran first");
	/* A unit broken after the change: the next read fails and says why. */
	x86rng_forget(&r);
	test_play(ones, 10);
	cr_assert_eq(x86rng_fill(&r, &word, 8), ENTROPYD_READ_ERROR);
	cr_assert(strstr(fake_log, "after a VM generation change") != NULL, "%s", fake_log);
	cr_assert(ENTROPYD_SOURCE_HAS(&rdrand_source, forget) && rdrand_source.forget != NULL);
	cr_assert(ENTROPYD_SOURCE_HAS(&rdseed_source, forget) && rdseed_source.forget != NULL);
}

/* A clock whose sequence restarts on request: the test replays it. */
static uint64_t replay_now, replay_x;
static uint64_t
test_replay_clock(void)
{
	replay_x ^= replay_x << 13;
	replay_x ^= replay_x >> 7;
	replay_x ^= replay_x << 17;
	return replay_now += 2000 + replay_x % 997;
}

static void
test_replay_from_start(void)
{
	replay_now = 1000000;
	replay_x = 88172645463325252ULL;
}

/*
 * A VM generation change: after forget() the samples depend only on what is
 * timed from then on. One state with a history (a sample's worth of credit
 * carried at osr 4, derivatives, hash and buffer state) and the same state
 * without it give the same samples from the same timings.
 */
Test(jitter, forget_leaves_nothing_of_before_in_the_samples)
{
	uint8_t first[64], second[64], history[333];
	char err[256] = "";
	void *state = NULL;

	fake_reset(&jitter_source);
	fake_set_option("osr", "4");
	jitter_clock_override = test_replay_clock;
	test_replay_from_start();
	cr_assert_eq(jitter_source.configure(&fake_module, fake_host(), err, sizeof err), 0, "%s",
	    err);
	cr_assert_eq(jitter_source.open(&fake_instances[0], &state), 0, "%s", fake_log);
	cr_assert(ENTROPYD_SOURCE_HAS(&jitter_source, forget) && jitter_source.forget != NULL);
	test_replay_from_start();
	jitter_source.forget(state);
	cr_assert_eq(jitter_source.read(state, first, sizeof first), (ssize_t)sizeof first);
	/* An odd number of samples at osr 4 leaves credit carried into the next one. */
	cr_assert_eq(jitter_source.read(state, history, sizeof history), (ssize_t)sizeof history);
	test_replay_from_start();
	jitter_source.forget(state);
	cr_assert_eq(jitter_source.read(state, second, sizeof second), (ssize_t)sizeof second);
	cr_expect_arr_eq(first, second, sizeof first,
	    "the same timings after forget() give the same samples, whatever came before");
	jitter_source.close(state);
	jitter_clock_override = NULL;
}
