/* SPDX-License-Identifier: MIT */
/*
 * entropytest: rngtest's FIPS 140-2 report on a stream, and the SP 800-90B
 * entropy estimates of a file of samples (-e), with the daemon's own code.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "assess.h"
#include "clock.h"
#include "divsufsort_dl.h"
#include "estimate.h"
#include "fips.h"
#include "log.h"
#include "repeat.h"
#include "restart.h"
#include "sp80090b.h"
#include "xmalloc.h"

#define PREFIX "entropytest: "
#define ENTROPYTEST_BUF_BLOCKS 1600	/* blocks per read(): 4 MB, few system calls */
/* -e: the bit strings estimate_tuple() can sort, and what SP 800-90B wants. */
#define ENTROPYTEST_MAX_BITS (UINT64_C(1) << 31)
#define ENTROPYTEST_NIST_SAMPLES 1000000

/* Bandwidth of one kind of work: per-call extremes and the totals. */
struct entropytest_speed {
	double min_bps, max_bps;
	uint64_t bytes;
	uint64_t ns;
};

static struct {
	uint64_t blockcount, blockstats, timedstats_s;
	bool pipe;
	bool estimate;            /* --estimate: SP 800-90B 6.3 estimates, no FIPS */
	bool restart;             /* --restart: SP 800-90B 3.1.4 restart tests */
	bool repeat;            /* -r: the repeated-output test too */
	unsigned sample_bits;
	double min_entropy;
} opt;

static struct {
	uint64_t bytes_received, bytes_sent, good, bad;
	uint64_t failures[FIPS_NTESTS];
	struct entropytest_speed input, fips, output;
	uint64_t start_ns;
} stats;

static int entropytest_in = STDIN_FILENO;
static struct sp80090b entropytest_health;
/* -r: the daemon's repeated-output test over the same stream. */
static struct {
	struct repeat test;
	uint64_t boot_bytes;     /* stream bytes before the first block */
	uint64_t released;       /* stream bytes the test handed on */
	int64_t last_block;      /* the last block counted, -1 for none */
	uint64_t blocks;         /* blocks holding a repeated byte */
} entropytest_repeat = { .last_block = -1 };
static volatile sig_atomic_t entropytest_stop;
/* -e: the figures (large: kept out of the stack). */
static struct assess entropytest_assessment;
/* The samples of -e and -R, held here until exit (it may come from any check). */
static uint8_t *entropytest_input;

static void entropytest_usage(FILE *, int) __attribute__((noreturn));

static const struct option entropytest_longopts[] = {
	{ "blockcount", required_argument, NULL, 'c' },
	{ "blockstats", required_argument, NULL, 'b' },
	{ "estimate", no_argument, NULL, 'e' },
	{ "help", no_argument, NULL, 'h' },
	{ "min-entropy", required_argument, NULL, 'H' },
	{ "pipe", no_argument, NULL, 'p' },
	{ "repeat", no_argument, NULL, 'r' },
	{ "restart", no_argument, NULL, 'R' },
	{ "sample-bits", required_argument, NULL, 'w' },
	{ "timedstats", required_argument, NULL, 't' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Print the usage summary and exit. */
static void
entropytest_usage(FILE *f, int code)
{
	fprintf(f,
	    "usage: entropytest [-hprV] [-b n] [-c n] [-H bits] [-t n] [-w bits] [file]\n"
	    "       entropytest -e -w bits [file]\n"
	    "       entropytest -R -w bits [-H bits] [file]\n"
	    "Check random data with the FIPS 140-2 tests, as rngtest does; or, with -e,\n"
	    "assess the min-entropy of raw samples with SP 800-90B's ten non-IID\n"
	    "estimators, as NIST's ea_non_iid does.\n"
	    "\n"
	    "  -b, --blockstats=n     print statistics every n blocks\n"
	    "  -c, --blockcount=n     stop after n blocks (0: no limit)\n"
	    "  -e, --estimate         SP 800-90B 6.3 estimates of the samples and their\n"
	    "                         bit string, H_original and H_bitstring (with -w)\n"
	    "  -H, --min-entropy=H    SP 800-90B tests at H bits per sample; with -R,\n"
	    "                         the initial entropy estimate H_I\n"
	    "  -p, --pipe             copy passing blocks to standard output\n"
	    "  -r, --repeat           also test for repeats of recent output, as entropyd\n"
	    "                         does, and report them on one more line\n"
	    "  -R, --restart          SP 800-90B 3.1.4 restart tests of 1000 restarts of\n"
	    "                         1000 samples (with -w), as NIST's ea_restart runs them\n"
	    "  -t, --timedstats=n     print statistics every n seconds\n"
	    "  -w, --sample-bits=n    each byte is a sample of n bits (1-8)\n"
	    "  -h, --help             show this help\n"
	    "  -V, --version          show the version\n");
	exit(code);
}

/* Parse a count for a flag, or exit with EX_USAGE naming the flag. */
static uint64_t
entropytest_count(int flag, const char *arg)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || errno != 0 || arg[0] == '-' ||
	    n > INT_MAX)
		fatalc(EX_USAGE, "-%c: invalid number: %s", flag, arg);
	return n;
}

/* Note how long `bytes` of work took. */
static void
entropytest_speed_add(struct entropytest_speed *sp, uint64_t bytes,
    uint64_t ns)
{
	double bps;

	if (ns == 0)
		ns = 1;
	bps = (double)bytes * 8e9 / (double)ns;
	if (sp->bytes == 0 || bps < sp->min_bps)
		sp->min_bps = bps;
	if (bps > sp->max_bps)
		sp->max_bps = bps;
	sp->bytes += bytes;
	sp->ns += ns;
}

/* One speed line, scaled to Ki/Mi/Gi... bits as rngtest scales it. */
static void
entropytest_speed_print(const char *what, const struct entropytest_speed *sp)
{
	static const char *const units[] = { "bits", "Kibits", "Mibits",
	    "Gibits", "Tibits", "Pibits", "Eibits" };
	double lo = sp->min_bps, hi = sp->max_bps, avg = 0;
	unsigned u = 0;

	if (sp->ns > 0)
		avg = (double)sp->bytes * 8e9 / (double)sp->ns;
	while (lo >= 1024 && avg >= 1024 && hi >= 1024 && u < 6) {
		lo /= 1024;
		avg /= 1024;
		hi /= 1024;
		u++;
	}
	fprintf(stderr, PREFIX "%s: (min=%.3f; avg=%.3f; max=%.3f)%s/s\n",
	    what, lo, avg, hi, units[u]);
}

/* Blocks with a repeated byte, less a short last block that was never tested. */
static uint64_t
entropytest_repeat_blocks(void)
{
	uint64_t n = entropytest_repeat.blocks;

	if (entropytest_repeat.last_block >= 0 &&
	    (uint64_t)entropytest_repeat.last_block >= stats.good + stats.bad)
		n--;
	return n;
}

/* The statistics report, line for line as rngtest prints it (and -r's line). */
static void
entropytest_report(void)
{
	int t;

	fprintf(stderr, PREFIX "bits received from input: %llu\n",
	    (unsigned long long)stats.bytes_received * 8);
	if (opt.pipe)
		fprintf(stderr, PREFIX "bits sent to output: %llu\n",
		    (unsigned long long)stats.bytes_sent * 8);
	fprintf(stderr, PREFIX "FIPS 140-2 successes: %llu\n",
	    (unsigned long long)stats.good);
	fprintf(stderr, PREFIX "FIPS 140-2 failures: %llu\n",
	    (unsigned long long)stats.bad);
	for (t = 0; t < FIPS_NTESTS; t++)
		fprintf(stderr, PREFIX "FIPS 140-2(2001-10-10) %s: %llu\n",
		    fips_test_name(t), (unsigned long long)stats.failures[t]);
	if (opt.repeat)
		fprintf(stderr, PREFIX "Repeated output (%zu or more bytes, up to %zu "
		    "back): %llu blocks\n", repeat_min_caught(&entropytest_repeat.test),
		    repeat_reach(&entropytest_repeat.test),
		    (unsigned long long)entropytest_repeat_blocks());
	if (opt.sample_bits) {
		fprintf(stderr, PREFIX "SP 800-90B RCT (cutoff %u): %llu failures\n",
		    entropytest_health.rct_cutoff,
		    (unsigned long long)entropytest_health.rct_failures);
		fprintf(stderr, PREFIX "SP 800-90B APT (window %u, cutoff %u): "
		    "%llu failures\n", entropytest_health.apt_window,
		    entropytest_health.apt_cutoff,
		    (unsigned long long)entropytest_health.apt_failures);
	}
	entropytest_speed_print("input channel speed", &stats.input);
	entropytest_speed_print("FIPS tests speed", &stats.fips);
	if (opt.pipe)
		entropytest_speed_print("output channel speed", &stats.output);
	fprintf(stderr, PREFIX "Program run time: %llu microseconds\n",
	    (unsigned long long)(clock_now_ns() - stats.start_ns) / 1000);
}

/* -r: count the blocks the repeat test marked bytes of. */
static void
entropytest_repeat_release(void *arg, const uint8_t *buf, size_t len, bool repeated)
{
	uint64_t from = entropytest_repeat.released, until = from + len, boot;
	int64_t first, last;

	entropytest_repeat.released = until;
	boot = entropytest_repeat.boot_bytes;
	if (!repeated || until <= boot)
		return;
	if (from < boot)
		from = boot;
	first = (int64_t)((from - boot) / FIPS_BLOCK_BYTES);
	last = (int64_t)((until - 1 - boot) / FIPS_BLOCK_BYTES);
	if (first <= entropytest_repeat.last_block)
		first = entropytest_repeat.last_block + 1;
	if (last >= first) {
		entropytest_repeat.blocks += (uint64_t)(last - first + 1);
		entropytest_repeat.last_block = last;
	}
}

/* Count bytes as taken from the input, and feed them to SP 800-90B and -r. */
static void
entropytest_consume(const uint8_t *p, size_t len)
{
	size_t i;

	if (opt.repeat)
		repeat_input(&entropytest_repeat.test, p, len, entropytest_repeat_release, NULL);
	stats.bytes_received += len;
	if (opt.sample_bits)
		for (i = 0; i < len; i++)
			sp80090b_sample(&entropytest_health, p[i]);
}

/* Read what is there, up to len bytes: >0, 0 at end of input, -1 to stop. */
static ssize_t
entropytest_read(uint8_t *buf, size_t len)
{
	uint64_t t0 = clock_now_ns();
	ssize_t r;

	for (;;) {
		if (entropytest_stop)
			return -1;
		r = read(entropytest_in, buf, len);
		if (r >= 0)
			break;
		if (errno != EINTR && errno != EAGAIN)
			fatalc(EX_IOERR, "error reading input: %s",
			    strerror(errno));
	}
	if (r > 0)
		entropytest_speed_add(&stats.input, (uint64_t)r,
		    clock_now_ns() - t0);
	return r;
}

/* Fill exactly len bytes; false at end of input (or on a signal). */
static bool
entropytest_fill(uint8_t *buf, size_t len, size_t *got)
{
	ssize_t r;

	*got = 0;
	while (*got < len) {
		r = entropytest_read(buf + *got, len - *got);
		if (r <= 0)
			return false;
		*got += (size_t)r;
	}
	return true;
}

/* Write all of buf to standard output. */
static void
entropytest_write(const uint8_t *buf, size_t len)
{
	uint64_t t0 = clock_now_ns();
	size_t off = 0;
	ssize_t r;

	while (off < len) {
		r = write(STDOUT_FILENO, buf + off, len - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fatalc(EX_IOERR, "error writing to output: %s",
			    r < 0 ? strerror(errno) : "write returned 0");
		off += (size_t)r;
	}
	stats.bytes_sent += len;
	entropytest_speed_add(&stats.output, len, clock_now_ns() - t0);
}

/* SIGINT and SIGTERM end the run; the report is still printed. */
static void
entropytest_signal(int sig)
{
	entropytest_stop = sig;
}

/* Parse the command line into opt; open the input file if one is named. */
static void
entropytest_options(int argc, char **argv)
{
	bool have_h = false, have_fips_flag = false;
	char *end;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":b:c:eH:hprRt:Vw:",
	    entropytest_longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			opt.blockstats = entropytest_count(ch, optarg);
			have_fips_flag = true;
			break;
		case 'c':
			opt.blockcount = entropytest_count(ch, optarg);
			have_fips_flag = true;
			break;
		case 'e':
			opt.estimate = true;
			break;
		case 'H':
			errno = 0;
			opt.min_entropy = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    !(opt.min_entropy > 0 && opt.min_entropy <= 8))
				fatalc(EX_USAGE, "-H: invalid min-entropy: %s",
				    optarg);
			have_h = true;
			break;
		case 'h':
			entropytest_usage(stdout, EX_OK);
		case 'p':
			opt.pipe = true;
			have_fips_flag = true;
			break;
		case 'r':
			opt.repeat = true;
			break;
		case 'R':
			opt.restart = true;
			break;
		case 't':
			opt.timedstats_s = entropytest_count(ch, optarg);
			have_fips_flag = true;
			break;
		case 'V':
			printf("entropytest %s\n", PACKAGE_VERSION);
			exit(EX_OK);
		case 'w':
			opt.sample_bits = (unsigned)entropytest_count(ch, optarg);
			if (opt.sample_bits < 1 || opt.sample_bits > 8)
				fatalc(EX_USAGE, "-w: sample bits must be 1 to 8: %s",
				    optarg);
			break;
		case ':':
			fatalc(EX_USAGE, "option %s needs a value",
			    argv[optind - 1]);
		default:
			if (optopt != 0)
				fatalc(EX_USAGE, "unknown option -%c", optopt);
			fatalc(EX_USAGE, "unknown option %s", argv[optind - 1]);
		}
	}
	if (opt.estimate && opt.restart)
		fatalc(EX_USAGE, "-e and -R are two different assessments: choose one");
	if (opt.estimate && (have_h || have_fips_flag || opt.repeat))
		fatalc(EX_USAGE, "-e takes only -w: it runs no FIPS or health tests");
	if (opt.restart && (have_fips_flag || opt.repeat))
		fatalc(EX_USAGE, "-R takes only -w and -H: it runs no FIPS or health tests");
	if ((opt.estimate || opt.restart) && opt.sample_bits == 0)
		fatalc(EX_USAGE, "-%c needs the sample width: -w bits", opt.estimate ? 'e' : 'R');
	if (!opt.estimate && !opt.restart && have_h != (opt.sample_bits != 0))
		fatalc(EX_USAGE, "-w and -H go together");
	if (have_h && opt.min_entropy > opt.sample_bits)
		fatalc(EX_USAGE, "-H: %g bits is more than a %u-bit sample holds",
		    opt.min_entropy, opt.sample_bits);
	if (argc - optind > 1)
		fatalc(EX_USAGE, "too many arguments: %s", argv[optind + 1]);
	if (argc - optind == 1 && strcmp(argv[optind], "-") != 0) {
		entropytest_in = open(argv[optind], O_RDONLY | O_CLOEXEC);
		if (entropytest_in == -1)
			fatalc(EX_NOINPUT, "%s: %s", argv[optind],
			    strerror(errno));
	}
}

/* Where the test loop is between batches of blocks. */
static struct {
	uint8_t out[ENTROPYTEST_BUF_BLOCKS * FIPS_BLOCK_BYTES];
	size_t pending;           /* passed blocks not yet written (-p) */
	uint64_t blocks, since_stats, last_stats;
} loop;

/*
 * Test whole blocks (at most ENTROPYTEST_BUF_BLOCKS); false when -c was
 * reached. The FIPS speed is timed per batch, not per block: two clock
 * reads per 1.7 us block cost more than a tenth of the run.
 */
static bool
entropytest_blocks(struct fips_ctx *ctx, const uint8_t *in, size_t nblocks)
{
	uint64_t t0 = clock_now_ns();
	size_t b, tested = 0;
	unsigned mask;
	bool more = true;
	int t;

	for (b = 0; b < nblocks && more; b++) {
		const uint8_t *block = in + b * FIPS_BLOCK_BYTES;

		entropytest_consume(block, FIPS_BLOCK_BYTES);
		mask = fips_test_block(ctx, block);
		tested++;
		if (mask == 0) {
			stats.good++;
			if (opt.pipe) {
				memcpy(loop.out + loop.pending, block,
				    FIPS_BLOCK_BYTES);
				loop.pending += FIPS_BLOCK_BYTES;
			}
		} else {
			stats.bad++;
			for (t = 0; t < FIPS_NTESTS; t++)
				if (mask & 1u << t)
					stats.failures[t]++;
		}
		if (opt.blockcount && ++loop.blocks >= opt.blockcount)
			more = false;
		else if ((opt.blockstats && ++loop.since_stats >= opt.blockstats) ||
		    (opt.timedstats_s && clock_now_ns() -
		    loop.last_stats > opt.timedstats_s * 1000000000u)) {
			entropytest_speed_add(&stats.fips,
			    tested * FIPS_BLOCK_BYTES, clock_now_ns() - t0);
			entropytest_write(loop.out, loop.pending);
			loop.pending = 0;
			entropytest_report();
			loop.last_stats = t0 = clock_now_ns();
			loop.since_stats = 0;
			tested = 0;
		}
	}
	if (tested > 0)
		entropytest_speed_add(&stats.fips, tested * FIPS_BLOCK_BYTES,
		    clock_now_ns() - t0);
	entropytest_write(loop.out, loop.pending);
	loop.pending = 0;
	return more;
}

/*
 * A regular file is tested in place through a mapping, without the kernel
 * copying it into a buffer; the read() loop then takes over at the first
 * byte not in whole blocks (a short last block, or what was appended).
 * The input speed is the time to fault each batch in. False when -c was
 * reached; true also when the input cannot be mapped (nothing was used).
 */
static bool
entropytest_mapped(struct fips_ctx *ctx)
{
	const size_t batch = ENTROPYTEST_BUF_BLOCKS * FIPS_BLOCK_BYTES;
	struct stat st;
	off_t pos;
	size_t len, off;
	uint8_t *map;
	bool more = true;

	if (fstat(entropytest_in, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (pos = lseek(entropytest_in, 0, SEEK_CUR)) == -1 ||
	    st.st_size - pos < (off_t)FIPS_BLOCK_BYTES ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return true;
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, entropytest_in, 0);
	if (map == MAP_FAILED)
		return true;
	(void)madvise(map, len, MADV_SEQUENTIAL);
	for (off = (size_t)pos; more && !entropytest_stop &&
	    len - off >= FIPS_BLOCK_BYTES; ) {
		size_t n = len - off < batch ? len - off : batch;
		uint64_t t0 = clock_now_ns();

		n -= n % FIPS_BLOCK_BYTES;
#ifdef MADV_POPULATE_READ
		(void)madvise(map + (off & ~(size_t)4095),
		    n + (off & 4095), MADV_POPULATE_READ);
#endif
		entropytest_speed_add(&stats.input, n,
		    clock_now_ns() - t0);
		more = entropytest_blocks(ctx, map + off, n / FIPS_BLOCK_BYTES);
		off += n;
	}
	munmap(map, len);
	if (lseek(entropytest_in, (off_t)off, SEEK_SET) == -1)
		fatalc(EX_IOERR, "error seeking input: %s", strerror(errno));
	return more;
}

/*
 * Test blocks until the input ends, the block count is reached or a signal
 * arrives.  Bytes count as received when they are used, so -c stops at the
 * same byte as rngtest though reads are large.
 */
static void
entropytest_loop(struct fips_ctx *ctx)
{
	static uint8_t in[ENTROPYTEST_BUF_BLOCKS * FIPS_BLOCK_BYTES];
	size_t have = 0, used;
	ssize_t r;

	loop.last_stats = clock_now_ns();
	if (!entropytest_mapped(ctx))
		return;
	for (;;) {
		r = entropytest_read(in + have, sizeof in - have);
		if (r <= 0) {
			if (r == 0 && !opt.pipe)
				fprintf(stderr, PREFIX "entropy source exhausted!\n");
			entropytest_consume(in, have);	/* a short last block */
			break;
		}
		have += (size_t)r;
		used = (have / FIPS_BLOCK_BYTES) * FIPS_BLOCK_BYTES;
		if (!entropytest_blocks(ctx, in, used / FIPS_BLOCK_BYTES))
			return;
		memmove(in, in + used, have - used);
		have -= used;
	}
}

/*
 * One figure in the NIST tools' -v words: "\tNAME[ (which)] = H / WIDTH
 * bit(s)", WIDTH the string's symbol width (1 for the estimators of binary
 * strings alone).
 */
static void
entropytest_figure(const struct assess_string *s, const char *which, enum assess_test t,
    unsigned bits)
{
	unsigned width = t == ASSESS_COLLISION || t == ASSESS_MARKOV ||
	    t == ASSESS_COMPRESSION ? 1 : bits;

	if (s->run && s->h[t] >= 0.0)
		printf("\t%s%s = %f / %u bit(s)\n", assess_test_name(t), which, s->h[t], width);
}

/*
 * Two strings' figures in the NIST tools' order: each estimator on a, then
 * on b; T-Tuple of both before LRS of both.
 */
static void
entropytest_figures(const struct assess_string *a, const char *a_which, unsigned a_bits,
    const struct assess_string *b, const char *b_which, unsigned b_bits)
{
	int t;

	for (t = 0; t < ASSESS_TESTS; t++) {
		if (t == ASSESS_TUPLE) {
			entropytest_figure(a, a_which, ASSESS_TUPLE, a_bits);
			entropytest_figure(b, b_which, ASSESS_TUPLE, b_bits);
			entropytest_figure(a, a_which, ASSESS_LRS, a_bits);
			entropytest_figure(b, b_which, ASSESS_LRS, b_bits);
			t = ASSESS_LRS;
			continue;
		}
		entropytest_figure(a, a_which, (enum assess_test)t, a_bits);
		entropytest_figure(b, b_which, (enum assess_test)t, b_bits);
	}
}

/* Say on standard error why a string's tuple estimates did not run. */
static bool
entropytest_tuple_missing(const struct assess_string *s, const char *which)
{
	if (!s->run || s->tuple_why == NULL)
		return false;
	fprintf(stderr, PREFIX "T-Tuple and LRS estimates (%s) not run: %s (%s); "
	    "the figures below leave them out\n", which, s->tuple_why, divsufsort_dl_error());
	return true;
}

/* The whole input into memory: its samples, and how many. */
static uint8_t *
entropytest_slurp(uint64_t *n)
{
	size_t len = 0, cap = 1 << 20;
	uint8_t *buf = xmalloc(cap);
	ssize_t r;

	while ((r = entropytest_read(buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
	}
	*n = len;
	return buf;
}

/* The whole input as samples of -w bits (NULL after a signal); exit 65 on a wider one. */
static uint8_t *
entropytest_samples(uint64_t *n)
{
	uint8_t *samples = entropytest_input = entropytest_slurp(n);
	uint64_t i;

	if (entropytest_stop)
		return NULL;
	for (i = 0; i < *n; i++)
		if (samples[i] >> opt.sample_bits != 0)
			fatalc(EX_DATAERR, "sample %llu (0x%02x) does not fit in %u bits (-w)",
			    (unsigned long long)i, samples[i], opt.sample_bits);
	return samples;
}

/*
 * -e: every input byte is one sample of -w bits (the --capture format, and
 * ea_non_iid's): the ten SP 800-90B 6.3 estimates over the whole input, on
 * the samples and on their bit string, printed as ea_non_iid -v prints them.
 */
static int
entropytest_estimates(void)
{
	const struct assess_string *lit = &entropytest_assessment.literal,
	    *bits = &entropytest_assessment.bits;
	unsigned b = opt.sample_bits;
	uint64_t n;
	uint8_t *samples;
	bool missing;

	samples = entropytest_samples(&n);
	if (samples == NULL)
		return EXIT_FAILURE;
	if (n < ESTIMATE_MIN_SAMPLES)
		fatalc(EX_DATAERR, "%llu samples: at least %d are needed (NIST's tool wants "
		    "1000000)", (unsigned long long)n, ESTIMATE_MIN_SAMPLES);
	if (n * b >= ENTROPYTEST_MAX_BITS)
		fatalc(EX_DATAERR, "%llu samples of %u bits: at most %llu bits can be assessed",
		    (unsigned long long)n, b, (unsigned long long)ENTROPYTEST_MAX_BITS - 1);
	if (n < ENTROPYTEST_NIST_SAMPLES)
		fprintf(stderr, PREFIX "%llu samples: SP 800-90B assesses at least %d\n",
		    (unsigned long long)n, ENTROPYTEST_NIST_SAMPLES);
	if (assess_run(samples, n, b, divsufsort_dl_sort, &entropytest_assessment) != 0) {
		/* ea_non_iid stops here too: "Symbol alphabet consists of 1 symbol". */
		printf("%llu samples of %u bits, all the same value: no entropy\n",
		    (unsigned long long)n, b);
		printf("\nH_original: %f\n", 0.0);
		return EXIT_SUCCESS;
	}
	printf("%llu samples of %u bits, %u distinct values%s\n\n", (unsigned long long)n, b,
	    entropytest_assessment.alphabet, lit->binary && b > 1 ?
	    " (taken as binary, as ea_non_iid takes them)" : "");
	missing = entropytest_tuple_missing(bits, "bit string");
	missing = entropytest_tuple_missing(lit, "samples") || missing;
	/* ea_non_iid's order: each estimator on the bit string, then the samples. */
	entropytest_figures(bits, " (bit string)", 1, lit, "", b);
	printf("\nH_original: %f\n", entropytest_assessment.h_original);
	if (bits->run) {
		printf("H_bitstring: %f\n", entropytest_assessment.h_bitstring);
		printf("min(H_original, %u X H_bitstring): %f\n", b,
		    entropytest_assessment.h_assessed);
	}
	return missing ? EX_UNAVAILABLE : EXIT_SUCCESS;
}

/*
 * -R: 1000 restarts of 1000 samples (row i: restart i, as --capture-restarts
 * writes them and ea_restart reads them): the sanity check, the literal
 * estimators on the rows and on the columns, and the validation, printed
 * as ea_restart -v prints them. H_I is -H's, else what -e finds on the
 * same samples in order.
 */
static int
entropytest_restart(void)
{
	static struct restart r;
	unsigned b = opt.sample_bits;
	uint64_t n;
	uint8_t *samples;
	double h_i = opt.min_entropy;
	bool missing;

	samples = entropytest_samples(&n);
	if (samples == NULL)
		return EXIT_FAILURE;
	if (n != RESTART_SAMPLES)
		fatalc(EX_DATAERR, "%llu samples: restart data is %d restarts of %d samples",
		    (unsigned long long)n, RESTART_ROWS, RESTART_COLS);
	if (h_i == 0.0) {
		if (assess_run(samples, n, b, divsufsort_dl_sort, &entropytest_assessment) != 0)
			fatalc(EX_DATAERR, "all the samples are the same value: no entropy");
		h_i = entropytest_assessment.h_assessed;
		printf("H_I taken from the samples in order (entropytest -e): give the "
		    "sequential estimate with -H\n");
	}
	if (restart_run(samples, b, h_i, divsufsort_dl_sort, &r) != 0)
		fatalc(EX_DATAERR, "all the samples are the same value: no entropy");
	printf("H_I: %f\n", r.h_i);
	printf("ALPHA: %.17g, X_cutoff: %u\n", r.alpha, r.cutoff);
	printf("X_r: %u, X_c: %u (the most common value's count in a row, in a column)\n",
	    r.x_rows, r.x_cols);
	printf("X_max: %u\n", r.x_max);
	if (!r.sane) {
		printf("\n*** Restart Sanity Check Failed ***\n");
		return EXIT_FAILURE;
	}
	printf("\nRestart Sanity Check Passed...\n\n");
	missing = entropytest_tuple_missing(&r.rows, "rows");
	missing = entropytest_tuple_missing(&r.cols, "columns") || missing;
	entropytest_figures(&r.rows, " (Rows)", b, &r.cols, " (Cols)", b);
	printf("\nH_r: %f\nH_c: %f\nH_I: %f\n\n", r.h_r, r.h_c, r.h_i);
	if (!r.valid) {
		printf("*** min(H_r, H_c) < H_I/2, Validation Testing Failed ***\n");
		return EXIT_FAILURE;
	}
	printf("Validation Test Passed...\n\nmin(H_r, H_c, H_I): %f\n", r.h_min);
	return missing ? EX_UNAVAILABLE : EXIT_SUCCESS;
}

/* Bootstrap, test blocks, report; exit 1 unless every block passed. */
int
main(int argc, char **argv)
{
	struct fips_ctx ctx;
	struct sigaction sa;
	uint8_t boot[2 * FIPS_BOOTSTRAP_BYTES];
	size_t want = FIPS_BOOTSTRAP_BYTES, got;
	bool bad;
	int rc;

	log_init("entropytest", LOG_TO_STDERR, 0);
	entropytest_options(argc, argv);
	stats.start_ns = clock_now_ns();
	if (opt.estimate || opt.restart) {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
		/* The estimators each take and free tables of the input's size:
		 * kept in the heap for the next one, they are not faulted in
		 * afresh each time (a few per cent of the run). Not on huge
		 * pages: their random lookups gained under 2 %, but a 2 MiB page
		 * that another program has just freed can cost a virtual machine
		 * 1.5 ms to fault in (after ea_non_iid, 10 % of the run). */
		mallopt(M_MMAP_THRESHOLD, 1 << 30);
		mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
		rc = opt.estimate ? entropytest_estimates() : entropytest_restart();
		free(entropytest_input);
		return rc;
	}
	if (opt.sample_bits)
		sp80090b_init(&entropytest_health, opt.min_entropy,
		    opt.sample_bits);
	if (opt.repeat)
		repeat_init_bytes(&entropytest_repeat.test);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = entropytest_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (!opt.pipe)
		fprintf(stderr, "entropytest %s\n\n" PREFIX
		    "starting FIPS tests...\n", PACKAGE_VERSION);

	/* Like rngtest, pipe mode also throws away 4 bytes before the bootstrap. */
	if (opt.pipe)
		want += FIPS_BOOTSTRAP_BYTES;
	if (!entropytest_fill(boot, want, &got)) {
		if (!opt.pipe && !entropytest_stop)
			fprintf(stderr, PREFIX "entropy source exhausted!\n");
		return EXIT_FAILURE;
	}
	entropytest_repeat.boot_bytes = want;
	entropytest_consume(boot, want);
	fips_init(&ctx, boot + want - FIPS_BOOTSTRAP_BYTES);

	entropytest_loop(&ctx);
	if (opt.repeat)
		repeat_flush(&entropytest_repeat.test, entropytest_repeat_release, NULL);
	entropytest_report();

	bad = stats.bad > 0 || stats.good == 0;
	if (opt.repeat && entropytest_repeat_blocks() > 0)
		bad = true;
	if (opt.sample_bits && (entropytest_health.rct_failures > 0 ||
	    entropytest_health.apt_failures > 0))
		bad = true;
	return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
