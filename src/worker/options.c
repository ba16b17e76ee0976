/* SPDX-License-Identifier: MIT */
/*
 * The command line: rngd-style flags and entropyd's own, parsed into a
 * struct config with one clear message for what is wrong, and --help.
 */
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "control_socket.h"
#include "genfile.h"
#include "options.h"
#include "xmalloc.h"

/* Values for the long-only options, outside the range of any short letter. */
enum {
	OPT_PLUGIN_DIR = 256,
	OPT_CONTROL_SOCKET,
	OPT_NO_HOST_MIX,
	OPT_NO_RESEED,
	OPT_CAPTURE,
	OPT_CAPTURE_RESTARTS,
	OPT_HEALTH_LISTEN,
	OPT_USE_SLOW_SOURCES,
	OPT_REFILL_BITS,
	OPT_NO_REPEAT_TEST,
	OPT_GENERATION_FILE,
	OPT_GENERATION_HOOKS,
	OPT_GENERATION_HOOK_TIMEOUT,
	OPT_MIN_CREDIT,
	OPT_WAIT_FOR_DEVICE,
	OPT_EGD_SOCKET,
	OPT_EGD_LISTEN,
	OPT_EGD_LISTEN_ANY,
	OPT_EGD_GROUP,
	OPT_EGD_RATE,
	OPT_EGD_SHARE,
	OPT_EGD_MAX_CLIENTS,
};

/* Leading '+': stop at the first non-option, never permute argv; ':': report
 * a missing argument as ':' rather than '?'. */
static const char short_options[] = "+:fbdqlx:n:O:o:r:p:s:W:R:e:tiD:vh";

static const struct option long_options[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "background", no_argument, NULL, 'b' },
	{ "debug", no_argument, NULL, 'd' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "list", no_argument, NULL, 'l' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "include", required_argument, NULL, 'n' },
	{ "option", required_argument, NULL, 'O' },
	{ "random-device", required_argument, NULL, 'o' },
	{ "rng-device", required_argument, NULL, 'r' },
	{ "pid-file", required_argument, NULL, 'p' },
	{ "random-step", required_argument, NULL, 's' },
	{ "fill-watermark", required_argument, NULL, 'W' },
	{ "force-reseed", required_argument, NULL, 'R' },
	{ "entropy-count", required_argument, NULL, 'e' },
	{ "test", no_argument, NULL, 't' },
	{ "ignorefail", no_argument, NULL, 'i' },
	{ "drop-privileges", required_argument, NULL, 'D' },
	{ "version", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
	{ "control-socket", required_argument, NULL, OPT_CONTROL_SOCKET },
	{ "no-host-mix", no_argument, NULL, OPT_NO_HOST_MIX },
	{ "no-reseed", no_argument, NULL, OPT_NO_RESEED },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "capture-restarts", required_argument, NULL, OPT_CAPTURE_RESTARTS },
	{ "health-listen", required_argument, NULL, OPT_HEALTH_LISTEN },
	/* rngd 6's spellings with an equivalent here. */
	{ "use-slow-sources", no_argument, NULL, OPT_USE_SLOW_SOURCES },
	{ "usage", no_argument, NULL, 'h' },
	{ "refill-bits", required_argument, NULL, OPT_REFILL_BITS },
	{ "no-repeat-test", no_argument, NULL, OPT_NO_REPEAT_TEST },
	{ "generation-file", required_argument, NULL, OPT_GENERATION_FILE },
	{ "generation-hooks", required_argument, NULL, OPT_GENERATION_HOOKS },
	{ "generation-hook-timeout", required_argument, NULL, OPT_GENERATION_HOOK_TIMEOUT },
	{ "min-credit", required_argument, NULL, OPT_MIN_CREDIT },
	{ "wait-for-device", no_argument, NULL, OPT_WAIT_FOR_DEVICE },
	{ "egd-socket", required_argument, NULL, OPT_EGD_SOCKET },
	{ "egd-listen", required_argument, NULL, OPT_EGD_LISTEN },
	{ "egd-listen-any", no_argument, NULL, OPT_EGD_LISTEN_ANY },
	{ "egd-group", required_argument, NULL, OPT_EGD_GROUP },
	{ "egd-rate", required_argument, NULL, OPT_EGD_RATE },
	{ "egd-share", required_argument, NULL, OPT_EGD_SHARE },
	{ "egd-max-clients", required_argument, NULL, OPT_EGD_MAX_CLIENTS },
	{ NULL, 0, NULL, 0 },
};

/* Write one error line into err; always returns EX_USAGE. */
static int __attribute__((format(printf, 3, 4)))
usage_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return EX_USAGE;
}

/* The long option whose val is val, or NULL. */
static const struct option *
long_option_by_val(int val)
{
	const struct option *o;

	for (o = long_options; o->name != NULL; o++) {
		if (o->val == val)
			return o;
	}
	return NULL;
}

/* The index in long_options of the option whose val is val, or -1. */
static int
long_index_by_val(int val)
{
	const struct option *o = long_option_by_val(val);

	return o != NULL ? (int)(o - long_options) : -1;
}

/*
 * How to name an option in a message: as the user spelt it, "--name" when
 * getopt matched a long option, "-c" otherwise.
 */
static void
flag_name(char *buf, size_t len, int val, int longindex)
{
	const struct option *o;

	if (longindex >= 0) {
		snprintf(buf, len, "--%s", long_options[longindex].name);
		return;
	}
	if (val > 0 && val < 256) {
		snprintf(buf, len, "-%c", val);
		return;
	}
	o = long_option_by_val(val);
	snprintf(buf, len, "--%s", o != NULL ? o->name : "?");
}

/* Parse a decimal number in [min, max]: digits only, no sign, no junk. */
static int
parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *out)
{
	unsigned long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A source or key name: [a-z0-9_]+. */
static int
valid_name(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_'))
			return 0;
	}
	return 1;
}

/* A number alone: how rngd 6 also names sources (its deprecated index). */
static int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Whether name is among the n names of a list. */
static bool
list_has(char *const *list, size_t n, const char *name)
{
	while (n-- > 0)
		if (strcmp(list[n], name) == 0)
			return true;
	return false;
}

/* Append a copy of value to a string list. */
static void
list_append(char ***list, size_t *n, const char *value)
{
	*list = xreallocarray(*list, *n + 1, sizeof **list);
	(*list)[(*n)++] = xstrdup(value);
}

/* Free a string list and its strings. */
static void
list_free(char **list, size_t n)
{
	while (n-- > 0)
		free(list[n]);
	free(list);
}

/* Append one SOURCE:KEY:VALUE option, copying each part. */
static void
option_append(struct config *cfg, const char *source, size_t source_len, const char *key,
    size_t key_len, const char *value)
{
	struct config_option *o;

	cfg->options = xreallocarray(cfg->options, cfg->n_options + 1, sizeof *cfg->options);
	o = &cfg->options[cfg->n_options++];
	o->source = xmalloc(source_len + 1);
	memcpy(o->source, source, source_len);
	o->source[source_len] = '\0';
	o->key = xmalloc(key_len + 1);
	memcpy(o->key, key, key_len);
	o->key[key_len] = '\0';
	o->value = xstrdup(value);
}

/* Replace a heap string with a copy of value. */
static void
set_string(char **field, const char *value)
{
	free(*field);
	*field = xstrdup(value);
}

/*
 * Parse an entropy estimate (-O NAME:entropy:H): a plain decimal number, at
 * least 0 and at most 16 (a raw sample is at most 16 bits wide). Whether it
 * lowers the source's own estimate is for the caller, who knows the source.
 */
int
options_entropy_bits(const char *s, double *bits)
{
	double v;
	char *end;
	size_t i;

	if (s[0] == '\0')
		return -1;
	/* strtod also takes signs, hex, exponents, "inf" and "nan": refuse them. */
	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || end == s || !isfinite(v) || v < 0 ||
	    v > OPTIONS_MAX_ENTROPY_BITS)
		return -1;
	*bits = v;
	return 0;
}

/* Parse a stall timeout in whole seconds (0: never). */
int
options_stall_timeout(const char *s, unsigned *seconds)
{
	return parse_unsigned(s, 0, OPTIONS_STALL_TIMEOUT_MAX_S, seconds);
}

/* Split IPV4:PORT or [IPV6]:PORT. */
int
options_listen_addr(const char *s, char *addr, size_t addrlen, unsigned *port)
{
	const char *colon, *start = s, *end;
	unsigned char bin[sizeof(struct in6_addr)];
	size_t len;

	if (*s == '[') {
		start = s + 1;
		if ((end = strchr(start, ']')) == NULL || end[1] != ':')
			return -1;
		colon = end + 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return -1;
		end = colon;
	}
	len = (size_t)(end - start);
	if (len == 0 || len >= addrlen)
		return -1;
	memcpy(addr, start, len);
	addr[len] = '\0';
	/* IPv6 only in brackets, so that the port is never part of the address. */
	if (inet_pton(start == s ? AF_INET : AF_INET6, addr, bin) != 1)
		return -1;
	return parse_unsigned(colon + 1, 1, 65535, port);
}

/* Loopback: 127.0.0.0/8 or ::1. */
bool
options_listen_loopback(const char *s)
{
	char addr[64];
	unsigned port;
	struct in_addr a4;
	struct in6_addr a6;

	if (options_listen_addr(s, addr, sizeof addr, &port) != 0)
		return false;
	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* A socket's name: letters, digits, '_', '-' and '.', as a metric label takes it plainly. */
static bool
egd_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > OPTIONS_EGD_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* NAME=PATH when what comes before the first '=' holds no '/'; else PATH alone. */
int
options_egd_socket(const char *s, char *name, const char **path)
{
	const char *eq = strchr(s, '=');
	size_t len;

	name[0] = '\0';
	*path = s;
	if (eq != NULL && memchr(s, '/', (size_t)(eq - s)) == NULL) {
		len = (size_t)(eq - s);
		if (!egd_name_ok(s, len))
			return -1;
		memcpy(name, s, len);
		name[len] = '\0';
		*path = eq + 1;
	}
	return **path == '\0' ? -1 : 0;
}

/* Handle one -O argument: SOURCE alone, or SOURCE:KEY:VALUE. */
static int
parse_source_option(struct config *cfg, const char *flag, const char *arg, char *err,
    size_t errlen)
{
	const char *colon1, *colon2, *value;
	double bits;
	unsigned seconds;

	colon1 = strchr(arg, ':');
	if (colon1 == NULL) {
		if (!valid_name(arg, strlen(arg)))
			return usage_error(err, errlen,
			    "%s: '%s' is not a source name (lower-case letters, digits, '_')", flag,
			    arg);
		set_string(&cfg->show_options, arg);
		return 0;
	}
	colon2 = strchr(colon1 + 1, ':');
	if (colon2 == NULL || colon1 == arg || colon2 == colon1 + 1)
		return usage_error(err, errlen, "%s: '%s' is not valid, expected SOURCE:KEY:VALUE",
		    flag, arg);
	if (!valid_name(arg, (size_t)(colon1 - arg)))
		return usage_error(err, errlen,
		    "%s: '%s': the source name may only hold lower-case letters, digits and '_'",
		    flag, arg);
	if (!valid_name(colon1 + 1, (size_t)(colon2 - colon1 - 1)))
		return usage_error(err, errlen,
		    "%s: '%s': the key may only hold lower-case letters, digits and '_'", flag,
		    arg);
	value = colon2 + 1;
	if ((size_t)(colon2 - colon1 - 1) == strlen(OPTIONS_ENTROPY_KEY) &&
	    strncmp(colon1 + 1, OPTIONS_ENTROPY_KEY, strlen(OPTIONS_ENTROPY_KEY)) == 0 &&
	    options_entropy_bits(value, &bits) != 0)
		return usage_error(err, errlen,
		    "%s: '%s': entropy must be a number of bits from 0 to %d", flag, arg,
		    OPTIONS_MAX_ENTROPY_BITS);
	if ((size_t)(colon2 - colon1 - 1) == strlen(OPTIONS_STALL_TIMEOUT_KEY) &&
	    strncmp(colon1 + 1, OPTIONS_STALL_TIMEOUT_KEY, strlen(OPTIONS_STALL_TIMEOUT_KEY)) == 0 &&
	    options_stall_timeout(value, &seconds) != 0)
		return usage_error(err, errlen,
		    "%s: '%s': stall_timeout must be whole seconds from 0 (never) to %u", flag, arg,
		    OPTIONS_STALL_TIMEOUT_MAX_S);
	option_append(cfg, arg, (size_t)(colon1 - arg), colon1 + 1,
	    (size_t)(colon2 - colon1 - 1), value);
	return 0;
}

/* Check -D USER:GROUP: exactly one ':' with a name on either side. */
static int
valid_user_group(const char *s)
{
	const char *colon = strchr(s, ':');

	return colon != NULL && colon != s && colon[1] != '\0' && strchr(colon + 1, ':') == NULL;
}

/*
 * Say what getopt refused. optopt tells the cases apart: an unknown short
 * letter (no long option has it as its value), a long option given a value it
 * does not take (optopt is that option's value), or an unknown or ambiguous
 * long option (optopt 0; getopt has then stepped past it, so arg is it).
 */
static int
unknown_option(const char *arg, int optopt_val, char *err, size_t errlen)
{
	const struct option *o;
	size_t len, matches = 0;

	o = optopt_val != 0 ? long_option_by_val(optopt_val) : NULL;
	if (o != NULL)
		return usage_error(err, errlen, "--%s: does not take a value", o->name);
	if (optopt_val > 0 && optopt_val < 256)
		return usage_error(err, errlen, "unrecognized option '-%c'", optopt_val);
	if (arg == NULL || strncmp(arg, "--", 2) != 0)
		return usage_error(err, errlen, "unrecognized option '%s'", arg ? arg : "?");
	len = strcspn(arg + 2, "=");
	for (o = long_options; o->name != NULL; o++) {
		if (strncmp(o->name, arg + 2, len) == 0)
			matches++;
	}
	if (matches > 1)
		return usage_error(err, errlen, "option '--%.*s' is ambiguous", (int)len, arg + 2);
	return usage_error(err, errlen, "unrecognized option '--%.*s'", (int)len, arg + 2);
}

/* Parse --capture SOURCE:COUNT:PATH (PATH may hold ':'). */
static int
parse_capture(struct config *cfg, const char *flag, const char *arg, char *err, size_t errlen)
{
	const char *colon1 = strchr(arg, ':'), *colon2;
	unsigned long count;
	char *end;

	if (colon1 == NULL || (colon2 = strchr(colon1 + 1, ':')) == NULL)
		return usage_error(err, errlen, "%s: '%s' is not valid, expected SOURCE:COUNT:PATH",
		    flag, arg);
	if (!valid_name(arg, (size_t)(colon1 - arg)))
		return usage_error(err, errlen,
		    "%s: '%s': the source name may only hold lower-case letters, digits and '_'",
		    flag, arg);
	errno = 0;
	count = strtoul(colon1 + 1, &end, 10);
	if (colon1[1] < '0' || colon1[1] > '9' || end != colon2 || errno != 0 || count == 0 ||
	    count > OPTIONS_MAX_CAPTURE)
		return usage_error(err, errlen, "%s: '%.*s' is not a sample count from 1 to %lu",
		    flag, (int)(colon2 - colon1 - 1), colon1 + 1, OPTIONS_MAX_CAPTURE);
	if (colon2[1] == '\0')
		return usage_error(err, errlen, "%s: the path is empty", flag);
	free(cfg->capture_source);
	cfg->capture_source = xmalloc((size_t)(colon1 - arg) + 1);
	memcpy(cfg->capture_source, arg, (size_t)(colon1 - arg));
	cfg->capture_source[colon1 - arg] = '\0';
	cfg->capture_count = count;
	set_string(&cfg->capture_path, colon2 + 1);
	return 0;
}

/* ADDR:PORT of --health-listen or --egd-listen: 0, or EX_USAGE with err set. */
static int
check_listen(const char *flag, const char *arg, char *err, size_t errlen)
{
	char addr[64];
	unsigned port;

	if (options_listen_addr(arg, addr, sizeof addr, &port) == 0)
		return 0;
	return usage_error(err, errlen, "%s: '%s' is not ADDR:PORT (a numeric IPv4 or [IPv6] "
	    "address and a port from 1 to 65535)", flag, arg);
}

/* Whether another --egd-socket has the name of s. */
static bool
egd_name_taken(const struct config *cfg, const char *name)
{
	char other[OPTIONS_EGD_NAME_MAX + 1];
	const char *path;
	size_t i;

	for (i = 0; i < cfg->n_egd_sockets; i++)
		if (options_egd_socket(cfg->egd_sockets[i], other, &path) == 0 &&
		    strcmp(other, name) == 0)
			return true;
	return false;
}

/* The EGD broker's options; 0 or EX_USAGE. */
static int
parse_egd(struct config *cfg, int c, const char *flag, const char *arg, char *err,
    size_t errlen)
{
	char name[OPTIONS_EGD_NAME_MAX + 1];
	const char *path;

	switch (c) {
	case OPT_EGD_SOCKET:
		if (options_egd_socket(arg, name, &path) != 0)
			return usage_error(err, errlen, "%s: '%s' is not [NAME=]PATH (a NAME of up to "
			    "%d letters, digits, '_', '-' or '.', and a path)", flag, arg,
			    OPTIONS_EGD_NAME_MAX);
		if (name[0] != '\0' && egd_name_taken(cfg, name))
			return usage_error(err, errlen, "%s: the name '%s' is given twice", flag, name);
		list_append(&cfg->egd_sockets, &cfg->n_egd_sockets, arg);
		break;
	case OPT_EGD_LISTEN:
		if (check_listen(flag, arg, err, errlen) != 0)
			return EX_USAGE;
		list_append(&cfg->egd_listen, &cfg->n_egd_listen, arg);
		break;
	case OPT_EGD_LISTEN_ANY:
		cfg->egd_listen_any = true;
		break;
	case OPT_EGD_GROUP:
		if (arg[0] == '\0')
			return usage_error(err, errlen, "%s: the group is empty", flag);
		set_string(&cfg->egd_group, arg);
		break;
	case OPT_EGD_RATE:
		if (parse_unsigned(arg, 0, OPTIONS_EGD_RATE_MAX, &cfg->egd_rate_bytes) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number of bytes a second "
			    "from 0 (no limit) to %u", flag, arg, OPTIONS_EGD_RATE_MAX);
		break;
	case OPT_EGD_SHARE:
		if (parse_unsigned(arg, 1, 100, &cfg->egd_share_percent) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a percentage from 1 to 100",
			    flag, arg);
		break;
	default:
		if (parse_unsigned(arg, 1, OPTIONS_EGD_MAX_CLIENTS_MAX, &cfg->egd_max_clients) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number from 1 to %u", flag,
			    arg, OPTIONS_EGD_MAX_CLIENTS_MAX);
		break;
	}
	return 0;
}

/* --egd-listen on an address other than loopback needs --egd-listen-any too. */
static int
check_egd_listen(const struct config *cfg, char *err, size_t errlen)
{
	size_t i;

	if (cfg->egd_listen_any)
		return 0;
	for (i = 0; i < cfg->n_egd_listen; i++)
		if (!options_listen_loopback(cfg->egd_listen[i]))
			return usage_error(err, errlen, "--egd-listen: %s is not a loopback address: "
			    "anyone who reaches it could take the guests' entropy (give "
			    "--egd-listen-any as well to allow it)", cfg->egd_listen[i]);
	return 0;
}

/*
 * -W as rngd takes it: bits (0..4096), or N% of the pool's 4096 bits. 0 or
 * -1.
 */
static int
parse_watermark(const char *arg, unsigned *bits)
{
	size_t len = strlen(arg);
	unsigned percent;
	char number[8];

	if (len < 2 || arg[len - 1] != '%')
		return parse_unsigned(arg, 0, 4096, bits);
	if (len - 1 >= sizeof number)
		return -1;
	memcpy(number, arg, len - 1);
	number[len - 1] = '\0';
	if (parse_unsigned(number, 0, 100, &percent) != 0)
		return -1;
	*bits = (percent * 4096u + 50u) / 100u;
	return 0;
}

/* Whether word is a number that follows -t (or --test) on the command line: rngd's -t N. */
static bool
rngd_feed_interval(int argc, char **argv, const char *word)
{
	int i;

	if (word[0] < '0' || word[0] > '9' || word[strspn(word, "0123456789")] != '\0')
		return false;
	for (i = 1; i + 1 < argc; i++)
		if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--test") == 0) &&
		    strcmp(argv[i + 1], word) == 0)
			return true;
	return false;
}

/* Parse --capture-restarts SOURCE:PATH (PATH may hold ':'). */
static int
parse_capture_restarts(struct config *cfg, const char *flag, const char *arg, char *err,
    size_t errlen)
{
	const char *colon = strchr(arg, ':');

	if (colon == NULL || colon[1] == '\0')
		return usage_error(err, errlen, "%s: '%s' is not valid, expected SOURCE:PATH",
		    flag, arg);
	if (!valid_name(arg, (size_t)(colon - arg)))
		return usage_error(err, errlen,
		    "%s: '%s': the source name may only hold lower-case letters, digits and '_'",
		    flag, arg);
	free(cfg->capture_source);
	cfg->capture_source = xmalloc((size_t)(colon - arg) + 1);
	memcpy(cfg->capture_source, arg, (size_t)(colon - arg));
	cfg->capture_source[colon - arg] = '\0';
	cfg->capture_count = OPTIONS_CAPTURE_RESTARTS * OPTIONS_CAPTURE_RESTART_SAMPLES;
	cfg->capture_restarts = true;
	set_string(&cfg->capture_path, colon + 1);
	return 0;
}

/* Handle one option that getopt recognised; 0 or EX_USAGE. */
static int
apply_option(struct config *cfg, int c, const char *flag, const char *arg, char *err,
    size_t errlen)
{
	switch (c) {
	case 'f':
		cfg->foreground = true;
		break;
	case 'b':
		cfg->foreground = false;
		break;
	case 'd':
		cfg->verbose = 1;
		break;
	case 'q':
		cfg->verbose = -1;
		break;
	case 'l':
		cfg->list = true;
		break;
	case OPT_NO_HOST_MIX:
		cfg->no_host_mix = true;
		break;
	case OPT_NO_RESEED:
		cfg->no_reseed = true;
		break;
	case OPT_USE_SLOW_SOURCES:
		/* rngd 6 reads its slow sources only when the fast ones fail;
		 * every enabled source here is read on demand already. */
		break;
	case OPT_NO_REPEAT_TEST:
		cfg->no_repeat_test = true;
		break;
	case 'x':
	case 'n':
		if (!valid_name(arg, strlen(arg)))
			return usage_error(err, errlen,
			    "%s: '%s' is not a source name (lower-case letters, digits, '_')", flag,
			    arg);
		/* rngd's numbering changed between its versions: never guess. */
		if (all_digits(arg))
			return usage_error(err, errlen,
			    "%s: '%s' is an rngd source number; entropyd takes names "
			    "(entropyd -l lists them)", flag, arg);
		if (c == 'x')
			list_append(&cfg->exclude, &cfg->n_exclude, arg);
		else
			list_append(&cfg->include, &cfg->n_include, arg);
		break;
	case 'O':
		return parse_source_option(cfg, flag, arg, err, errlen);
	case 'o':
	case 'r':
	case 'p':
	case OPT_PLUGIN_DIR:
	case OPT_CONTROL_SOCKET:
	case OPT_GENERATION_FILE:
	case OPT_GENERATION_HOOKS:
		if (arg[0] == '\0')
			return usage_error(err, errlen, "%s: the path is empty", flag);
		if (c == 'o')
			set_string(&cfg->random_device, arg);
		else if (c == 'r')
			option_append(cfg, "hwrng", 5, "device", 6, arg);
		else if (c == 'p')
			set_string(&cfg->pid_file, arg);
		else if (c == OPT_PLUGIN_DIR)
			set_string(&cfg->plugin_dir, arg);
		else if (c == OPT_GENERATION_FILE)
			set_string(&cfg->generation_file, arg);
		else if (c == OPT_GENERATION_HOOKS)
			set_string(&cfg->generation_hooks, arg);
		else
			set_string(&cfg->control_socket, arg);
		break;
	case OPT_GENERATION_HOOK_TIMEOUT:
		if (parse_unsigned(arg, 1, OPTIONS_MAX_HOOK_TIMEOUT_S,
		    &cfg->generation_hook_timeout_s) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number of seconds from 1 "
			    "to %u", flag, arg, OPTIONS_MAX_HOOK_TIMEOUT_S);
		break;
	case 's':
		if (parse_unsigned(arg, 1, 4096, &cfg->random_step_bytes) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number from 1 to 4096",
			    flag, arg);
		break;
	case 'W':
		if (parse_watermark(arg, &cfg->fill_watermark_bits) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number of bits from 0 to "
			    "4096, nor a share of the pool from 0%% to 100%%", flag, arg);
		break;
	case 'R':
		if (parse_unsigned(arg, 1, 86400, &cfg->reseed_interval_s) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number from 1 to 86400",
			    flag, arg);
		break;
	case 'e':
		if (parse_unsigned(arg, 1, 8, &cfg->entropy_count_bits) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number from 1 to 8", flag,
			    arg);
		break;
	case OPT_REFILL_BITS:
		if (parse_unsigned(arg, 256, 65536, &cfg->refill_bits) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number from 256 to 65536",
			    flag, arg);
		break;
	case 't':
		cfg->test_mode = true;
		break;
	case OPT_MIN_CREDIT:
		if (options_entropy_bits(arg, &cfg->min_credit_bits) != 0)
			return usage_error(err, errlen, "%s: '%s' is not a number of bits from 0 to "
			    "%d (per byte, or per raw sample)", flag, arg, OPTIONS_MAX_ENTROPY_BITS);
		break;
	case OPT_WAIT_FOR_DEVICE:
		cfg->wait_for_device = true;
		break;
	case 'i':
		cfg->ignorefail = true;
		break;
	case OPT_HEALTH_LISTEN:
		if (check_listen(flag, arg, err, errlen) != 0)
			return EX_USAGE;
		set_string(&cfg->health_listen, arg);
		break;
	case 'D':
		if (!valid_user_group(arg))
			return usage_error(err, errlen, "%s: '%s' is not valid, expected USER:GROUP",
			    flag, arg);
		set_string(&cfg->drop_privileges, arg);
		break;
	case 'v':
		cfg->version = true;
		break;
	case 'h':
		cfg->help = true;
		break;
	case OPT_CAPTURE:
		if (cfg->capture_restarts)
			return usage_error(err, errlen, "%s: --capture-restarts is given: one "
			    "capture at a time", flag);
		return parse_capture(cfg, flag, arg, err, errlen);
	case OPT_EGD_SOCKET:
	case OPT_EGD_LISTEN:
	case OPT_EGD_LISTEN_ANY:
	case OPT_EGD_GROUP:
	case OPT_EGD_RATE:
	case OPT_EGD_SHARE:
	case OPT_EGD_MAX_CLIENTS:
		return parse_egd(cfg, c, flag, arg, err, errlen);
	case OPT_CAPTURE_RESTARTS:
		if (cfg->capture_source != NULL && !cfg->capture_restarts)
			return usage_error(err, errlen, "%s: --capture is given: one capture at "
			    "a time", flag);
		return parse_capture_restarts(cfg, flag, arg, err, errlen);
	default:
		return usage_error(err, errlen, "%s: not handled", flag);
	}
	return 0;
}

/* Whether the command line names the source anywhere: -x, -n, -O, --capture. */
static bool
names_source(const struct config *cfg, const char *name)
{
	size_t i;

	if (list_has(cfg->exclude, cfg->n_exclude, name) ||
	    list_has(cfg->include, cfg->n_include, name))
		return true;
	for (i = 0; i < cfg->n_options; i++)
		if (strcmp(cfg->options[i].source, name) == 0)
			return true;
	return (cfg->show_options != NULL && strcmp(cfg->show_options, name) == 0) ||
	    (cfg->capture_source != NULL && strcmp(cfg->capture_source, name) == 0);
}

/*
 * rngd's rdrand source is the CPU's RNG, both instructions (RDSEED where
 * the CPU has it). A command line in rngd's terms, naming rdrand with -x or
 * -n but rdseed nowhere and without -x all (which rngd lacks), meant both:
 * rdseed follows rdrand into the same list.
 */
static void
rdseed_follows_rdrand(struct config *cfg)
{
	bool excluded = list_has(cfg->exclude, cfg->n_exclude, "rdrand");
	bool included = list_has(cfg->include, cfg->n_include, "rdrand");

	if ((!excluded && !included) || list_has(cfg->exclude, cfg->n_exclude, "all") ||
	    names_source(cfg, "rdseed"))
		return;
	if (excluded)
		list_append(&cfg->exclude, &cfg->n_exclude, "rdseed");
	if (included)
		list_append(&cfg->include, &cfg->n_include, "rdseed");
	cfg->rdseed_follows_rdrand = true;
}

/* Fill cfg with the defaults, every string a heap copy. */
static void
set_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->random_device = xstrdup(OPTIONS_DEFAULT_RANDOM_DEVICE);
	cfg->random_step_bytes = 64;
	cfg->fill_watermark_bits = 2048;
	cfg->reseed_interval_s = 60;
	cfg->entropy_count_bits = 8;
	cfg->refill_bits = 2048;
	cfg->egd_rate_bytes = OPTIONS_EGD_RATE_DEFAULT;
	cfg->egd_share_percent = OPTIONS_EGD_SHARE_DEFAULT;
	cfg->egd_max_clients = OPTIONS_EGD_MAX_CLIENTS_DEFAULT;
	cfg->plugin_dir = xstrdup(PLUGINDIR);
	cfg->control_socket = xstrdup(control_socket_default());
	cfg->generation_file = xstrdup(genfile_default());
	cfg->generation_hooks = xstrdup(getenv(OPTIONS_HOOKS_ENV) != NULL &&
	    *getenv(OPTIONS_HOOKS_ENV) != '\0' ? getenv(OPTIONS_HOOKS_ENV) : OPTIONS_DEFAULT_HOOKS);
	cfg->generation_hook_timeout_s = OPTIONS_DEFAULT_HOOK_TIMEOUT_S;
}

/* Parse argv into cfg; on error cfg is left freed and err says why. */
int
options_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	char flag[64];
	int c, longindex, rc = 0;

	set_defaults(cfg);
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	opterr = 0;
	optind = 0; /* glibc: start over, forgetting any half-read option cluster */
	for (;;) {
		longindex = -1;
		c = getopt_long(argc, argv, short_options, long_options, &longindex);
		if (c == -1)
			break;
		if (c == '?') {
			rc = unknown_option(optind > 0 && optind <= argc ? argv[optind - 1] : NULL,
			    optopt, err, errlen);
			goto fail;
		}
		if (c == ':') {
			/* getopt leaves longindex unset here; the missing value
			 * was the last argument, so that argument says which. */
			if (optind > 0 && optind <= argc &&
			    strncmp(argv[optind - 1], "--", 2) == 0)
				longindex = long_index_by_val(optopt);
			flag_name(flag, sizeof flag, optopt, longindex);
			rc = usage_error(err, errlen, "%s: a value is required", flag);
			goto fail;
		}
		flag_name(flag, sizeof flag, c, longindex);
		if ((rc = apply_option(cfg, c, flag, optarg, err, errlen)) != 0)
			goto fail;
	}
	if (optind < argc) {
		if (rngd_feed_interval(argc, argv, argv[optind]))
			rc = usage_error(err, errlen, "unexpected argument '%s': -t takes no value "
			    "here (it is test mode: nothing is written to the kernel); rngd's -t, "
			    "its feed interval, is -R SECONDS (--force-reseed) here", argv[optind]);
		else
			rc = usage_error(err, errlen, "unexpected argument '%s'", argv[optind]);
		goto fail;
	}
	/* Test mode writes nothing to the kernel and reports on the terminal. */
	if (cfg->test_mode)
		cfg->foreground = true;
	if ((rc = check_egd_listen(cfg, err, errlen)) != 0)
		goto fail;
	rdseed_follows_rdrand(cfg);
	return 0;

fail:
	options_free(cfg);
	return rc;
}

int
options_check_devices(const struct config *cfg, int *errnum, char *err, size_t errlen)
{
	const struct config_option *o;
	struct stat st;
	size_t i;

	if (cfg->wait_for_device)
		return 0;
	for (i = 0; i < cfg->n_options; i++) {
		o = &cfg->options[i];
		/* Paths only: ALSA's device names (hw:0) are not files. */
		if (strcmp(o->key, "device") != 0 || o->value[0] != '/' || stat(o->value, &st) == 0)
			continue;
		*errnum = errno;
		snprintf(err, errlen, "%s: %s: %s (named by %s; --wait-for-device if it comes by "
		    "hotplug)", o->source, o->value, strerror(errno),
		    strcmp(o->source, "hwrng") == 0 ? "-r or -O hwrng:device" : "-O");
		return EX_NOINPUT;
	}
	return 0;
}

/* Free every string cfg holds and leave it zeroed (safe to free twice). */
void
options_free(struct config *cfg)
{
	size_t i;

	list_free(cfg->exclude, cfg->n_exclude);
	list_free(cfg->include, cfg->n_include);
	for (i = 0; i < cfg->n_options; i++) {
		free(cfg->options[i].source);
		free(cfg->options[i].key);
		free(cfg->options[i].value);
	}
	free(cfg->options);
	free(cfg->show_options);
	free(cfg->random_device);
	free(cfg->pid_file);
	free(cfg->drop_privileges);
	free(cfg->plugin_dir);
	free(cfg->control_socket);
	free(cfg->capture_source);
	free(cfg->capture_path);
	free(cfg->health_listen);
	free(cfg->generation_file);
	free(cfg->generation_hooks);
	list_free(cfg->egd_sockets, cfg->n_egd_sockets);
	list_free(cfg->egd_listen, cfg->n_egd_listen);
	free(cfg->egd_group);
	memset(cfg, 0, sizeof *cfg);
}
