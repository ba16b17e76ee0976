/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_OPTIONS_H
#define ENTROPYD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One -O SOURCE:KEY:VALUE (VALUE may contain ':'). */
struct config_option {
	char *source;
	char *key;
	char *value;
};

/* Everything entropyd's command line says. */
struct config {
	bool foreground;          /* -f (-b clears it; default: background) */
	int verbose;              /* -d: 1, -q: -1, default 0 */
	bool list;                /* -l */
	char **exclude;           /* -x NAME, repeatable; "all" excludes every source */
	size_t n_exclude;
	char **include;           /* -n NAME, repeatable; wins over -x */
	size_t n_include;
	struct config_option *options; /* -O SOURCE:KEY:VALUE, in order given */
	size_t n_options;
	char *show_options;       /* -O SOURCE alone: print its options and exit 0 */
	char *random_device;      /* -o, default "/dev/random"; "-" is stdout */
	char *pid_file;           /* -p, default NULL (OPTIONS_DEFAULT_PIDFILE when backgrounded) */
	unsigned random_step_bytes;   /* -s, default 64, 1..4096 */
	unsigned fill_watermark_bits; /* -W, default 2048, 0..4096 */
	unsigned reseed_interval_s;   /* -R, default 60, 1..86400 */
	unsigned entropy_count_bits;  /* -e, default 8, 1..8 */
	bool test_mode;           /* -t (implies foreground, no kernel writes) */
	bool ignorefail;          /* -i */
	char *drop_privileges;    /* -D USER:GROUP */
	bool version;             /* -v */
	bool help;                /* -h */
	char *plugin_dir;         /* --plugin-dir, default PLUGINDIR */
	char *control_socket;     /* --control-socket, default RUNDIR "/entropyd.sock" */
	bool no_host_mix;         /* --no-host-mix: no uncredited host-unique data at start */
	bool no_reseed;           /* --no-reseed: no RNDRESEEDCRNG after a top-up */
	char *capture_source;     /* --capture SOURCE:COUNT:PATH, NULL when not given */
	unsigned long capture_count; /* 1..OPTIONS_MAX_CAPTURE */
	char *capture_path;
	bool capture_restarts;    /* --capture-restarts SOURCE:PATH instead */
	char *health_listen;      /* --health-listen ADDR:PORT, default NULL (no TCP) */
	bool rdseed_follows_rdrand; /* rdrand named in rngd's sense: rdseed added to its list */
	unsigned refill_bits;     /* --refill-bits, default 2048, 256..65536 */
	bool no_repeat_test;      /* --no-repeat-test: leave out the repeated-output test */
	/* The EGD broker for VM guests: off unless a socket or listener is given. */
	char **egd_sockets;       /* --egd-socket [NAME=]PATH, repeatable, as given */
	size_t n_egd_sockets;
	char **egd_listen;        /* --egd-listen ADDR:PORT, repeatable */
	size_t n_egd_listen;
	bool egd_listen_any;      /* --egd-listen-any: addresses other than loopback too */
	char *egd_group;          /* --egd-group GROUP: the sockets' group, NULL: the -D one */
	unsigned egd_rate_bytes;  /* --egd-rate, bytes a second per client, default 4096, 0: no limit */
	unsigned egd_share_percent; /* --egd-share, default 50, 1..100 */
	unsigned egd_max_clients; /* --egd-max-clients, default 256, 1..65536 */
	char *generation_file;    /* --generation-file, default genfile_default() */
	char *generation_hooks;   /* --generation-hooks, default OPTIONS_DEFAULT_HOOKS */
	unsigned generation_hook_timeout_s; /* --generation-hook-timeout, default 30, 1..3600 */
	double min_credit_bits;   /* --min-credit: a source credited less warns (default 0) */
	bool wait_for_device;     /* --wait-for-device: a named device may appear later */
};

#define OPTIONS_DEFAULT_PIDFILE "/run/entropyd.pid"
/* The generation hooks: $ENTROPYD_GENERATION_HOOKS, else this directory. */
#define OPTIONS_HOOKS_ENV "ENTROPYD_GENERATION_HOOKS"
#define OPTIONS_DEFAULT_HOOKS HOOKSDIR
#define OPTIONS_DEFAULT_HOOK_TIMEOUT_S 30u
#define OPTIONS_MAX_HOOK_TIMEOUT_S 3600u
#define OPTIONS_DEFAULT_RANDOM_DEVICE "/dev/random"
/* The per-source option every source has: its assessed entropy, lowered. */
#define OPTIONS_ENTROPY_KEY "entropy"
/* The per-source option every source has: seconds without data before it is stalled. */
#define OPTIONS_STALL_TIMEOUT_KEY "stall_timeout"
#define OPTIONS_STALL_TIMEOUT_DEFAULT_S 10u
#define OPTIONS_STALL_TIMEOUT_MAX_S 86400u
/* The largest estimate -O NAME:entropy:H takes (a raw sample is <= 16 bits). */
#define OPTIONS_MAX_ENTROPY_BITS 16
/* The most raw samples --capture writes (SP 800-90B wants 1,000,000). */
#define OPTIONS_MAX_CAPTURE 1000000000ul
/* The EGD broker's limits and defaults. */
#define OPTIONS_EGD_RATE_DEFAULT 4096u
#define OPTIONS_EGD_RATE_MAX 1000000000u
#define OPTIONS_EGD_SHARE_DEFAULT 50u
#define OPTIONS_EGD_MAX_CLIENTS_DEFAULT 256u
#define OPTIONS_EGD_MAX_CLIENTS_MAX 65536u
/* The longest NAME of --egd-socket NAME=PATH. */
#define OPTIONS_EGD_NAME_MAX 63
/* --capture-restarts: SP 800-90B 3.1.4's 1000 restarts of 1000 samples. */
#define OPTIONS_CAPTURE_RESTARTS 1000ul
#define OPTIONS_CAPTURE_RESTART_SAMPLES 1000ul

/*
 * Parse the command line into cfg (defaults first). -r PATH becomes the
 * option hwrng:device:PATH. -x rdrand or -n rdrand in rngd's sense (rdseed
 * named nowhere, no -x all) adds rdseed to the same list. Returns 0, or EX_USAGE with one line in err
 * naming the flag and what is wrong (cfg is then left freed and zeroed).
 * Prints nothing; may be called again (getopt is reset each time).
 */
int options_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen);
/* Print --help to f. */
void options_usage(FILE *f);
/* Free everything cfg holds and zero it; safe on a config parse failed on. */
void options_free(struct config *cfg);
/*
 * Parse the value of -O NAME:entropy:H: a plain decimal number from 0 to
 * OPTIONS_MAX_ENTROPY_BITS (no sign, exponent or junk). 0 or -1. Whether H
 * lowers the source's own estimate is for the caller to check.
 */
int options_entropy_bits(const char *s, double *bits);
/*
 * The devices named on the command line (-r PATH, -O SOURCE:device:PATH)
 * must exist at start, unless --wait-for-device says they come by hotplug.
 * 0, or EX_NOINPUT with one line in err naming the flag and the path (and
 * the errno in *errnum).
 */
int options_check_devices(const struct config *, int *errnum, char *err, size_t errlen);
/*
 * Parse the value of -O NAME:stall_timeout:SECONDS: a whole number from 0
 * (never stalled) to OPTIONS_STALL_TIMEOUT_MAX_S. 0 or -1.
 */
int options_stall_timeout(const char *s, unsigned *seconds);
/*
 * Split --health-listen ADDR:PORT (a numeric IPv4 address, or an IPv6 one
 * in brackets) into the address and a port from 1 to 65535. 0 or -1.
 */
int options_listen_addr(const char *s, char *addr, size_t addrlen, unsigned *port);
/* Whether ADDR:PORT (as options_listen_addr takes it) is on loopback: 127.0.0.0/8 or ::1. */
bool options_listen_loopback(const char *s);
/*
 * Split --egd-socket [NAME=]PATH: the name (empty when none was given)
 * into name (OPTIONS_EGD_NAME_MAX + 1 bytes) and the path. 0 or -1.
 */
int options_egd_socket(const char *s, char *name, const char **path);

#endif
