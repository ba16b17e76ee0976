/* SPDX-License-Identifier: MIT */
/*
 * rdrand: the x86 RDRAND instruction. Reads compute rather than block, so
 * pollfd() is -1 and the daemon runs read() in its reader thread, only
 * while a reserve wants data.
 */
#include <errno.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <entropyd/source.h>
#include "builtin.h"
#include "x86rng.h"

static int rdrand_insn(uint64_t *);

x86rng_step_fn rdrand_step = rdrand_insn;

static const struct entropyd_host *rdrand_host;
/* One CPU, one instance: its counters outlive a reopen, so a burst logs once. */
static struct x86rng rdrand_rng;

static const struct entropyd_option rdrand_options[] = {
	{ "cpuinfo", X86RNG_DEFAULT_CPUINFO, "file whose flags must list 'rdrand' (for testing)" },
	{ NULL, NULL, NULL }
};

/* Execute RDRAND once; only this function needs the instruction enabled. */
#if defined(__x86_64__)
__attribute__((target("rdrnd")))
static int
rdrand_insn(uint64_t *out)
{
	unsigned long long v;
	int ok;

	ok = _rdrand64_step(&v);
	*out = v;
	return ok;
}
#else
static int
rdrand_insn(uint64_t *out)
{
	return 0;
}
#endif

/* Usable when CPUID and the kernel both say so and the sanity check passes. */
static int
rdrand_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	rdrand_host = host;
	return x86rng_probe(module, host, "RDRAND", "rdrand", x86rng_cpuid_rdrand(), rdrand_step,
	    X86RNG_RDRAND_RETRIES, false);
}

/* Run the sanity check again (a resume can break the unit), then read. */
static int
rdrand_open(struct entropyd_instance *inst, void **state)
{
	struct x86rng *r = &rdrand_rng;
	char why[256];

	if (rdrand_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!x86rng_sanity(rdrand_step, X86RNG_RDRAND_RETRIES, false, why, sizeof why)) {
		rdrand_host->log(inst, ENTROPYD_LOG_ERR, "RDRAND %s", why);
		errno = EIO;
		return -1;
	}
	r->insn = "RDRAND";
	r->step = rdrand_step;
	r->retries = X86RNG_RDRAND_RETRIES;
	r->seed_grade = false;
	r->host = rdrand_host;
	r->instance = inst;
	r->have_last = false;
	r->dry_reads = 0;
	r->recheck = false; /* open() just ran the check */
	*state = r;
	return 0;
}

static ssize_t
rdrand_read(void *state, void *buf, size_t len)
{
	return x86rng_fill(state, buf, len);
}

/* An instruction has no fd: the daemon reads from its own thread. */
static int
rdrand_pollfd(void *state)
{
	return -1;
}

/* The VM generation changed: no word from before is kept or compared with. */
static void
rdrand_forget(void *state)
{
	x86rng_forget(state);
}

static void
rdrand_close(void *state)
{
	struct x86rng *r = state;

	r->have_last = false;
	r->last = 0;
}

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
	.options = rdrand_options,
	.probe = rdrand_probe,
	.open = rdrand_open,
	.read = rdrand_read,
	.pollfd = rdrand_pollfd,
	.close = rdrand_close,
	.forget = rdrand_forget,
};
