/* SPDX-License-Identifier: MIT */
/*
 * The x86 random-number instructions as two sources, rdseed (seed grade)
 * and rdrand (DRBG output, credited at its floor): the CPU checks, the
 * kernel's sanity check, the read loop with its retries and bad-output
 * checks, and the descriptors. Reads compute rather than block, so
 * pollfd() is -1 and the daemon runs read() in its reader thread, only
 * while a reserve wants data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "builtin.h"
#include "x86rng.h"

/* Whether CPUID leaf 1 says RDRAND. */
bool
x86rng_cpuid_rdrand(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	return (c & (1u << 30)) != 0;
#else
	return false;
#endif
}

/* Whether CPUID leaf 7, subleaf 0 says RDSEED. */
bool
x86rng_cpuid_rdseed(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return false;
	__cpuid_count(7, 0, a, b, c, d);
	return (b & (1u << 18)) != 0;
#else
	return false;
#endif
}

int
x86rng_cpuinfo_flag(const char *path, const char *flag)
{
	char line[8192], *p, *tok, *save;
	FILE *f;
	int found = 0;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "flags", 5) != 0 || (p = strchr(line, ':')) == NULL)
			continue;
		for (tok = strtok_r(p + 1, " \t\n", &save); tok != NULL;
		    tok = strtok_r(NULL, " \t\n", &save))
			if (strcmp(tok, flag) == 0)
				found = 1;
		break; /* the kernel clears a bad flag on every CPU alike */
	}
	fclose(f);
	return found;
}

/* Wait a little before retrying RDSEED: pause first, then sleep longer each time. */
static void
x86rng_backoff(unsigned attempt)
{
	struct timespec ts = { 0, 0 };
	long ns;

	if (attempt < X86RNG_RDSEED_SPIN_RETRIES) {
#if defined(__x86_64__)
		_mm_pause();
#endif
		return;
	}
	ns = 1000L << (attempt - X86RNG_RDSEED_SPIN_RETRIES < 7 ?
	    attempt - X86RNG_RDSEED_SPIN_RETRIES : 7);
	ts.tv_nsec = ns < X86RNG_RDSEED_MAX_SLEEP_NS ? ns : X86RNG_RDSEED_MAX_SLEEP_NS;
	nanosleep(&ts, NULL);
}

enum x86rng_word
x86rng_execute(x86rng_step_fn step, unsigned retries, bool pause, uint64_t *out)
{
	unsigned i;

	for (i = 0; i < retries; i++) {
		if (step(out))
			return X86RNG_WORD_GOOD;
		if (pause)
			x86rng_backoff(i);
	}
	return X86RNG_WORD_NO_CARRY;
}

bool
x86rng_sanity(x86rng_step_fn step, unsigned retries, bool pause, char *why, size_t whylen)
{
	uint64_t sample = 0, prev = 0;
	unsigned i, changed = 0;

	for (i = 0; i < X86RNG_SANITY_SAMPLES; i++) {
		if (x86rng_execute(step, retries, pause, &sample) != X86RNG_WORD_GOOD) {
			snprintf(why, whylen, "sanity check: carry clear %u times in a row on "
			    "sample %u", retries, i + 1);
			return false;
		}
		if (i > 0 && sample != prev)
			changed++;
		prev = sample;
	}
	if (changed < X86RNG_SANITY_CHANGES) {
		snprintf(why, whylen, "sanity check: only %u of %u samples changed (at least %u "
		    "needed)", changed, X86RNG_SANITY_SAMPLES - 1, X86RNG_SANITY_CHANGES);
		return false;
	}
	return true;
}

enum x86rng_word
x86rng_word(struct x86rng *r, uint64_t *out)
{
	enum x86rng_word w;
	uint64_t v;

	if ((w = x86rng_execute(r->step, r->retries, r->seed_grade, &v)) != X86RNG_WORD_GOOD) {
		r->carry_failures++;
		return w;
	}
	if (v == 0 || v == UINT64_MAX) {
		r->bad_words++;
		*out = v;
		return X86RNG_WORD_BAD;
	}
	if (r->have_last && v == r->last) {
		r->repeats++;
		*out = v;
		return X86RNG_WORD_REPEAT;
	}
	r->last = v;
	r->have_last = true;
	r->words++;
	*out = v;
	return X86RNG_WORD_GOOD;
}

/* Log a failure once per burst of failed reads. */
static void
x86rng_report(struct x86rng *r, enum x86rng_word w, uint64_t v)
{
	if (r->in_burst)
		return;
	r->in_burst = true;
	if (w == X86RNG_WORD_NO_CARRY)
		r->host->log(r->instance, ENTROPYD_LOG_ERR, "%s: carry clear %u times in a row "
		    "(%llu failures so far); read discarded", r->insn, r->retries,
		    (unsigned long long)r->carry_failures);
	else
		r->host->log(r->instance, ENTROPYD_LOG_ERR, "%s: %s 0x%016llx with carry set "
		    "(%llu bad, %llu repeated so far); read discarded", r->insn,
		    w == X86RNG_WORD_BAD ? "known bad output" : "repeated word",
		    (unsigned long long)v, (unsigned long long)r->bad_words,
		    (unsigned long long)r->repeats);
}

void
x86rng_forget(struct x86rng *r)
{
	explicit_bzero(&r->last, sizeof r->last);
	r->have_last = false;
	r->recheck = true;
}

ssize_t
x86rng_fill(struct x86rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t done = 0, n;
	enum x86rng_word w = X86RNG_WORD_GOOD;
	uint64_t v = 0;
	char why[256];

	if (r->recheck) {
		r->recheck = false;
		if (!x86rng_sanity(r->step, r->retries, r->seed_grade, why, sizeof why)) {
			r->host->log(r->instance, ENTROPYD_LOG_ERR, "%s %s (after a VM generation "
			    "change)", r->insn, why);
			errno = EIO;
			return ENTROPYD_READ_ERROR;
		}
	}

	while (done < len) {
		if ((w = x86rng_word(r, &v)) != X86RNG_WORD_GOOD)
			break;
		n = len - done < sizeof v ? len - done : sizeof v;
		memcpy(p + done, &v, n);
		done += n;
	}
	if (done == len) {
		r->in_burst = false;
		r->dry_reads = 0;
		return (ssize_t)len;
	}
	if (w == X86RNG_WORD_NO_CARRY && r->seed_grade) {
		/* RDSEED ran dry under load: hand out what passed, or wait. */
		if (done > 0) {
			r->dry_reads = 0;
			return (ssize_t)done;
		}
		if (++r->dry_reads < X86RNG_RDSEED_MAX_DRY_READS)
			return ENTROPYD_READ_AGAIN;
	}
	/* A failure: nothing of this read leaves, and the core restarts the source. */
	explicit_bzero(buf, len);
	x86rng_report(r, w, v);
	r->dry_reads = 0;
	r->have_last = false;
	errno = w == X86RNG_WORD_NO_CARRY ? EIO : EBADMSG;
	return ENTROPYD_READ_ERROR;
}

int
x86rng_probe(struct entropyd_module *module, const struct entropyd_host *host,
    const char *insn, const char *flag, bool cpuid, x86rng_step_fn step, unsigned retries,
    bool pause)
{
	const char *cpuinfo;
	char why[256];
	int has;

#if !defined(__x86_64__)
	host->unusable(module, "not an x86-64 CPU");
	return 0;
#endif
	if (!cpuid) {
		host->unusable(module, "CPUID says this CPU has no %s", insn);
		return 0;
	}
	if ((cpuinfo = host->option(module, "cpuinfo")) == NULL)
		cpuinfo = X86RNG_DEFAULT_CPUINFO;
	if ((has = x86rng_cpuinfo_flag(cpuinfo, flag)) == -1) {
		host->unusable(module, "%s: %s", cpuinfo, strerror(errno));
		return 0;
	}
	if (has == 0) {
		host->unusable(module, "CPUID has %s but %s lacks the '%s' flag (the kernel "
		    "cleared it: known bad or disabled)", insn, cpuinfo, flag);
		return 0;
	}
	if (!x86rng_sanity(step, retries, pause, why, sizeof why)) {
		host->unusable(module, "%s %s", insn, why);
		return 0;
	}
	if (host->add_instance(module, "", insn, NULL) == NULL) {
		host->module_log(module, ENTROPYD_LOG_ERR, "cannot add an instance");
		return -1;
	}
	return 1;
}

/* What tells the two sources apart; each has one instance (one CPU). */
struct x86rng_kind {
	const char *insn, *flag;      /* "RDSEED", "rdseed" */
	bool (*cpuid)(void);
	x86rng_step_fn *step;         /* the test seam in force */
	unsigned retries;
	bool seed_grade;
	const struct entropyd_host *host;
	struct x86rng rng;            /* its counters outlive a reopen: a burst logs once */
};

static int x86rng_rdrand_insn(uint64_t *);
static int x86rng_rdseed_insn(uint64_t *);

x86rng_step_fn rdrand_step = x86rng_rdrand_insn;
x86rng_step_fn rdseed_step = x86rng_rdseed_insn;

static struct x86rng_kind x86rng_rdrand = {
	.insn = "RDRAND", .flag = "rdrand", .cpuid = x86rng_cpuid_rdrand, .step = &rdrand_step,
	.retries = X86RNG_RDRAND_RETRIES, .seed_grade = false,
};
static struct x86rng_kind x86rng_rdseed = {
	.insn = "RDSEED", .flag = "rdseed", .cpuid = x86rng_cpuid_rdseed, .step = &rdseed_step,
	.retries = X86RNG_RDSEED_RETRIES, .seed_grade = true,
};

static const struct entropyd_option x86rng_rdrand_options[] = {
	{ "cpuinfo", X86RNG_DEFAULT_CPUINFO, "file whose flags must list 'rdrand' (for testing)" },
	{ NULL, NULL, NULL }
};
static const struct entropyd_option x86rng_rdseed_options[] = {
	{ "cpuinfo", X86RNG_DEFAULT_CPUINFO, "file whose flags must list 'rdseed' (for testing)" },
	{ NULL, NULL, NULL }
};

/* Execute RDRAND or RDSEED once; only these functions need the instructions enabled. */
#if defined(__x86_64__)
__attribute__((target("rdrnd")))
static int
x86rng_rdrand_insn(uint64_t *out)
{
	unsigned long long v;
	int ok;

	ok = _rdrand64_step(&v);
	*out = v;
	return ok;
}

__attribute__((target("rdseed")))
static int
x86rng_rdseed_insn(uint64_t *out)
{
	unsigned long long v;
	int ok;

	ok = _rdseed64_step(&v);
	*out = v;
	return ok;
}
#else
static int
x86rng_rdrand_insn(uint64_t *out)
{
	return 0;
}

static int
x86rng_rdseed_insn(uint64_t *out)
{
	return 0;
}
#endif

/* Usable when CPUID and the kernel both say so and the sanity check passes. */
static int
x86rng_kind_probe(struct x86rng_kind *k, struct entropyd_module *module,
    const struct entropyd_host *host)
{
	k->host = host;
	return x86rng_probe(module, host, k->insn, k->flag, k->cpuid(), *k->step, k->retries,
	    k->seed_grade);
}

/* Run the sanity check again (a resume can break the unit), then read. */
static int
x86rng_kind_open(struct x86rng_kind *k, struct entropyd_instance *inst, void **state)
{
	struct x86rng *r = &k->rng;
	char why[256];

	if (k->host == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!x86rng_sanity(*k->step, k->retries, k->seed_grade, why, sizeof why)) {
		k->host->log(inst, ENTROPYD_LOG_ERR, "%s %s", k->insn, why);
		errno = EIO;
		return -1;
	}
	r->insn = k->insn;
	r->step = *k->step;
	r->retries = k->retries;
	r->seed_grade = k->seed_grade;
	r->host = k->host;
	r->instance = inst;
	r->have_last = false;
	r->dry_reads = 0;
	r->recheck = false; /* open() just ran the check */
	*state = r;
	return 0;
}

static int
x86rng_rdrand_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	return x86rng_kind_probe(&x86rng_rdrand, module, host);
}

static int
x86rng_rdseed_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	return x86rng_kind_probe(&x86rng_rdseed, module, host);
}

static int
x86rng_rdrand_open(struct entropyd_instance *inst, void **state)
{
	return x86rng_kind_open(&x86rng_rdrand, inst, state);
}

static int
x86rng_rdseed_open(struct entropyd_instance *inst, void **state)
{
	return x86rng_kind_open(&x86rng_rdseed, inst, state);
}

static ssize_t
x86rng_read(void *state, void *buf, size_t len)
{
	return x86rng_fill(state, buf, len);
}

/* An instruction has no fd: the daemon reads from its own thread. */
static int
x86rng_pollfd(void *state)
{
	return -1;
}

/* The VM generation changed: no word from before is kept or compared with. */
static void
x86rng_forget_state(void *state)
{
	x86rng_forget(state);
}

static void
x86rng_close(void *state)
{
	struct x86rng *r = state;

	r->have_last = false;
	r->last = 0;
}

/*
 * entropy_bits: 8 bits per byte. RDSEED returns the output of the
 * conditioner that seeds the DRBG, which Intel and AMD specify as full
 * entropy (an SP 800-90B/C compliant entropy source, not DRBG output). The
 * FIPS tests, the bad-output checks and the conditioner's 320-in-256-out
 * accounting still apply on top.
 */
const struct entropyd_source rdseed_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "rdseed",
	.description = "x86 RDSEED instruction (seed grade, 8 bits per byte)",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON,
	.entropy_bits = 8.0,
	.sample_bits = 0,
	.options = x86rng_rdseed_options,
	.probe = x86rng_rdseed_probe,
	.open = x86rng_rdseed_open,
	.read = x86rng_read,
	.pollfd = x86rng_pollfd,
	.close = x86rng_close,
	.forget = x86rng_forget_state,
};

/*
 * Credit policy (entropyd(8), CREDIT POLICY), the rule for every DRBG:
 * its security strength over the most it may output between reseeds, as
 * the maker documents it. entropy_bits: 1/64 bit per byte. RDRAND is the
 * output of an AES-128
 * CTR_DRBG that Intel documents as reseeded from the conditioned noise
 * source at least every 511 128-bit blocks (8176 bytes). A reseed adds at
 * most the DRBG's 128-bit security strength, so the fresh entropy that can
 * be guaranteed is 128 bits per 8176 bytes, just over 1/64 bit per byte;
 * everything between reseeds is deterministic. We credit exactly that
 * floor (0.015625): the conditioner then absorbs 20480 RDRAND bytes per
 * full-entropy 32-byte output, which costs about 50 us at RDRAND's rate.
 */
const struct entropyd_source rdrand_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "rdrand",
	.description = "x86 RDRAND instruction (DRBG output, credited 1/64 bit per byte)",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON,
	.entropy_bits = 1.0 / 64,
	.sample_bits = 0,
	.options = x86rng_rdrand_options,
	.probe = x86rng_rdrand_probe,
	.open = x86rng_rdrand_open,
	.read = x86rng_read,
	.pollfd = x86rng_pollfd,
	.close = x86rng_close,
	.forget = x86rng_forget_state,
};
