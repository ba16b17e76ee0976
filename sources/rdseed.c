/* SPDX-License-Identifier: MIT */
/*
 * rdseed: the x86 RDSEED instruction. Reads compute rather than block, so
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

static int rdseed_insn(uint64_t *);

x86rng_step_fn rdseed_step = rdseed_insn;

static const struct entropyd_host *rdseed_host;
/* One CPU, one instance: its counters outlive a reopen, so a burst logs once. */
static struct x86rng rdseed_rng;

static const struct entropyd_option rdseed_options[] = {
	{ "cpuinfo", X86RNG_DEFAULT_CPUINFO, "file whose flags must list 'rdseed' (for testing)" },
	{ NULL, NULL, NULL }
};

/* Execute RDSEED once; only this function needs the instruction enabled. */
#if defined(__x86_64__)
__attribute__((target("rdseed")))
static int
rdseed_insn(uint64_t *out)
{
	unsigned long long v;
	int ok;

	ok = _rdseed64_step(&v);
	*out = v;
	return ok;
}
#else
static int
rdseed_insn(uint64_t *out)
{
	return 0;
}
#endif

/* Usable when CPUID and the kernel both say so and the sanity check passes. */
static int
rdseed_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	rdseed_host = host;
	return x86rng_probe(module, host, "RDSEED", "rdseed", x86rng_cpuid_rdseed(), rdseed_step,
	    X86RNG_RDSEED_RETRIES, true);
}

/* Run the sanity check again (a resume can break the unit), then read. */
static int
rdseed_open(struct entropyd_instance *inst, void **state)
{
	struct x86rng *r = &rdseed_rng;
	char why[256];

	if (rdseed_host == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!x86rng_sanity(rdseed_step, X86RNG_RDSEED_RETRIES, true, why, sizeof why)) {
		rdseed_host->log(inst, ENTROPYD_LOG_ERR, "RDSEED %s", why);
		errno = EIO;
		return -1;
	}
	r->insn = "RDSEED";
	r->step = rdseed_step;
	r->retries = X86RNG_RDSEED_RETRIES;
	r->seed_grade = true;
	r->host = rdseed_host;
	r->instance = inst;
	r->have_last = false;
	r->dry_reads = 0;
	r->recheck = false; /* open() just ran the check */
	*state = r;
	return 0;
}

static ssize_t
rdseed_read(void *state, void *buf, size_t len)
{
	return x86rng_fill(state, buf, len);
}

/* An instruction has no fd: the daemon reads from its own thread. */
static int
rdseed_pollfd(void *state)
{
	return -1;
}

/* The VM generation changed: no word from before is kept or compared with. */
static void
rdseed_forget(void *state)
{
	x86rng_forget(state);
}

static void
rdseed_close(void *state)
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
	.options = rdseed_options,
	.probe = rdseed_probe,
	.open = rdseed_open,
	.read = rdseed_read,
	.pollfd = rdseed_pollfd,
	.close = rdseed_close,
	.forget = rdseed_forget,
};
