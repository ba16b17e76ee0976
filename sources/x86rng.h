/* SPDX-License-Identifier: MIT */
/*
 * What the rdrand and rdseed sources share: the CPU checks (CPUID and the
 * kernel's /proc/cpuinfo flags), the kernel's start-up sanity check, and
 * the read loop that retries carry-clear failures and rejects the known bad
 * outputs. The instruction itself is a function pointer so tests can
 * replace it with a scripted sequence.
 */
#ifndef ENTROPYD_X86RNG_H
#define ENTROPYD_X86RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <entropyd/source.h>

/* The kernel's check (arch/x86/kernel/cpu/rdrand.c): 8 samples, >= 5 changes. */
#define X86RNG_SANITY_SAMPLES 8
#define X86RNG_SANITY_CHANGES 5
/* Intel: 10 carry-clear RDRANDs in a row mean the hardware is broken. */
#define X86RNG_RDRAND_RETRIES 10
/* RDSEED fails transiently under load: retry with a pause, then back off. */
#define X86RNG_RDSEED_RETRIES 64
#define X86RNG_RDSEED_SPIN_RETRIES 8      /* plain pauses before sleeping */
#define X86RNG_RDSEED_MAX_SLEEP_NS 100000 /* longest sleep between retries */
/* RDSEED reads that got nothing, in a row, before the source is taken down. */
#define X86RNG_RDSEED_MAX_DRY_READS 100

#define X86RNG_DEFAULT_CPUINFO "/proc/cpuinfo"

/* One instruction execution: 1 with carry set (*out valid), 0 with carry clear. */
typedef int (*x86rng_step_fn)(uint64_t *out);

/* Test seams: the instruction each source executes (the real one by default). */
extern x86rng_step_fn rdrand_step;
extern x86rng_step_fn rdseed_step;

enum x86rng_word {
	X86RNG_WORD_GOOD,
	X86RNG_WORD_NO_CARRY, /* carry clear on every retry */
	X86RNG_WORD_BAD,      /* all zeros or all ones with carry set */
	X86RNG_WORD_REPEAT,   /* the same 64-bit word twice in a row */
};

/* One source's read loop, its counters, and where it logs. */
struct x86rng {
	const char *insn;           /* "RDRAND" or "RDSEED", for messages */
	x86rng_step_fn step;
	unsigned retries;
	bool seed_grade;            /* RDSEED: pause between retries, tolerate dry spells */
	const struct entropyd_host *host;
	struct entropyd_instance *instance;
	uint64_t last;              /* the previous word, for the repeat check */
	bool have_last;
	bool in_burst;              /* a failure was logged; quiet until a good read */
	unsigned dry_reads;         /* RDSEED reads in a row with nothing */
	bool recheck;               /* run the sanity check before the next read */
	uint64_t words;             /* good words delivered */
	uint64_t carry_failures;    /* executions with carry clear */
	uint64_t bad_words;         /* all-zero or all-ones words with carry set */
	uint64_t repeats;           /* words equal to the one before */
};

/* Whether CPUID says the CPU has RDRAND (01H:ECX[30]) or RDSEED (07H.0:EBX[18]). */
bool x86rng_cpuid_rdrand(void);
bool x86rng_cpuid_rdseed(void);
/* 1 when the first "flags" line of a cpuinfo file lists flag, 0 when not, -1 unreadable. */
int x86rng_cpuinfo_flag(const char *path, const char *flag);
/* Run the instruction once with retries: GOOD, NO_CARRY, or (from x86rng_word) worse. */
enum x86rng_word x86rng_execute(x86rng_step_fn, unsigned retries, bool pause, uint64_t *out);
/*
 * The kernel's sanity check: X86RNG_SANITY_SAMPLES words, each retried, and
 * at least X86RNG_SANITY_CHANGES changes between neighbours. On failure
 * writes why into why and returns false.
 */
bool x86rng_sanity(x86rng_step_fn, unsigned retries, bool pause, char *why, size_t whylen);
/*
 * The VM generation changed: forget the last word (kept for the repeat
 * check, it predates the change) and run the sanity check again before the
 * next read, since a restored machine may run on another CPU.
 */
void x86rng_forget(struct x86rng *);
/* One checked word: carry retries, then the bad-output and repeat checks. */
enum x86rng_word x86rng_word(struct x86rng *, uint64_t *out);
/*
 * Fill buf for the source's read(): len bytes, or (RDSEED in a dry spell)
 * fewer, or ENTROPYD_READ_AGAIN, or ENTROPYD_READ_ERROR with errno set (EIO:
 * the instruction keeps failing; EBADMSG: a known bad output) after one log
 * line per burst of failures. Nothing of a failed read is handed out.
 */
ssize_t x86rng_fill(struct x86rng *, void *buf, size_t len);
/* probe(): check CPUID, cpuinfo and the sanity check; 1 usable, 0 (unusable said) not. */
int x86rng_probe(struct entropyd_module *, const struct entropyd_host *, const char *insn,
    const char *flag, bool cpuid, x86rng_step_fn, unsigned retries, bool pause);

#endif
