/* SPDX-License-Identifier: MIT */
/*
 * entropyctl: ask a running entropyd over its control socket (HTTP on a
 * Unix socket) how its sources are doing. A small blocking HTTP/1.0 client:
 * one request, read to the end, print.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <jansson.h>

#include "control_socket.h"

/* Monitoring-plugin exit codes for `entropyctl health`. */
enum { CTL_OK, CTL_WARNING, CTL_CRITICAL, CTL_UNKNOWN };

#define CTL_TIMEOUT_MS 10000
#define CTL_MAX_RESPONSE_BYTES (4u << 20)

/* One HTTP answer. */
struct ctl_response {
	int code;
	char *body;
	size_t len;
};

static const char *ctl_socket;
static int ctl_json;

/* Print usage to f. */
static void
ctl_usage(FILE *f)
{
	fprintf(f,
	    "usage: entropyctl [-hjv] [-s socket] command\n"
	    "commands:\n"
	    "  status          a table of the sources: state, rate, credited, failures, last error\n"
	    "  health          one-line summary; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN\n"
	    "  metrics         the Prometheus metrics\n"
	    "  sources [NAME]  every detail of every source, or of NAME\n"
	    "options:\n"
	    "  -s, --socket PATH  the control socket (default: %s)\n"
	    "  -j, --json         print the daemon's JSON as it is, for scripts\n"
	    "  -h, --help         print this help and exit\n"
	    "  -v, --version      print the version and exit\n", control_socket_default());
}

/* A usage error: one line, exit 64. */
static void __attribute__((noreturn))
ctl_usage_error(const char *what)
{
	fprintf(stderr, "entropyctl: %s (see entropyctl --help)\n", what);
	exit(EX_USAGE);
}

/* Write all of buf, or -1. */
static int
ctl_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* GET path over the socket; 0, or -1 with err saying why. */
static int
ctl_get(const char *path, struct ctl_response *r, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	char req[512], *p, *end;
	size_t cap = 65536;
	ssize_t n;
	int fd;

	memset(r, 0, sizeof *r);
	if (strlen(ctl_socket) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "%s: path too long for a Unix socket", ctl_socket);
		return -1;
	}
	strcpy(sun.sun_path, ctl_socket);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		snprintf(err, errlen, "cannot reach entropyd at %s: %s (is it running? -s names "
		    "another socket)", ctl_socket, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: localhost\r\n"
	    "User-Agent: entropyctl/%s\r\n\r\n", path, PACKAGE_VERSION);
	if (ctl_write_all(fd, req, strlen(req)) == -1) {
		snprintf(err, errlen, "%s: write: %s", ctl_socket, strerror(errno));
		close(fd);
		return -1;
	}
	r->body = malloc(cap + 1);
	for (;;) {
		if (r->body == NULL) {
			snprintf(err, errlen, "out of memory");
			close(fd);
			return -1;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, CTL_TIMEOUT_MS) == 0) {
			snprintf(err, errlen, "%s: no answer within %d s", ctl_socket,
			    CTL_TIMEOUT_MS / 1000);
			close(fd);
			return -1;
		}
		if ((n = read(fd, r->body + r->len, cap - r->len)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: read: %s", ctl_socket, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		r->len += (size_t)n;
		if (r->len == cap) {
			if (cap >= CTL_MAX_RESPONSE_BYTES) {
				snprintf(err, errlen, "%s: answer too long", ctl_socket);
				close(fd);
				return -1;
			}
			cap *= 2;
			r->body = realloc(r->body, cap + 1);
		}
	}
	close(fd);
	r->body[r->len] = '\0';
	/* "HTTP/1.x CODE REASON", headers, a blank line, the body. */
	if (strncmp(r->body, "HTTP/1.", 7) != 0 || r->len < 12 ||
	    (end = strstr(r->body, "\r\n\r\n")) == NULL) {
		snprintf(err, errlen, "%s: not an HTTP answer (the daemon closed the connection; "
		    "too many clients?)", ctl_socket);
		return -1;
	}
	r->code = (int)strtol(r->body + 9, &p, 10);
	end += 4;
	r->len -= (size_t)(end - r->body);
	memmove(r->body, end, r->len + 1);
	return 0;
}

/* The body as JSON, or NULL with a message. */
static json_t *
ctl_parse(const struct ctl_response *r, const char *path)
{
	json_error_t e;
	json_t *doc = json_loadb(r->body, r->len, 0, &e);

	if (doc == NULL)
		fprintf(stderr, "entropyctl: %s: the answer is not JSON: %s\n", path, e.text);
	return doc;
}

/* A number of a JSON object, 0 when absent. */
static double
ctl_num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* A string of a JSON object, "" when absent or null. */
static const char *
ctl_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* Bytes per second, readable. */
static void
ctl_rate(char *buf, size_t len, double bps)
{
	if (bps >= 1e6)
		snprintf(buf, len, "%.1f MB/s", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, len, "%.1f kB/s", bps / 1e3);
	else
		snprintf(buf, len, "%.0f B/s", bps);
}

/* GET path and make sure the daemon answered 200 (or, for /health, 503). */
static int
ctl_fetch(const char *path, struct ctl_response *r, int unreachable)
{
	char err[512];

	if (ctl_get(path, r, err, sizeof err) == -1) {
		fprintf(stderr, "entropyctl: %s\n", err);
		exit(unreachable);
	}
	return r->code;
}

/* entropyctl health: the Nagios/monitoring-plugin convention. */
static int
ctl_health(void)
{
	static const char *const names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };
	struct ctl_response r;
	const char *status, *key;
	json_t *doc, *checks, *check, *sink;
	unsigned running = 0, total = 0;
	int rc;

	ctl_fetch("/health", &r, CTL_UNKNOWN);
	if ((r.code != 200 && r.code != 503) || (doc = ctl_parse(&r, "/health")) == NULL) {
		printf("ENTROPYD UNKNOWN - unexpected answer (HTTP %d)\n", r.code);
		free(r.body);
		return CTL_UNKNOWN;
	}
	status = ctl_str(doc, "status");
	rc = strcmp(status, "pass") == 0 ? CTL_OK : strcmp(status, "warn") == 0 ? CTL_WARNING :
	    strcmp(status, "fail") == 0 ? CTL_CRITICAL : CTL_UNKNOWN;
	if (ctl_json) {
		fwrite(r.body, 1, r.len, stdout);
	} else {
		checks = json_object_get(doc, "checks");
		json_object_foreach(checks, key, check) {
			size_t len = strlen(key);

			if (len < 6 || strcmp(key + len - 6, ":state") != 0)
				continue;
			total++;
			if (strcmp(ctl_str(json_array_get(check, 0), "status"), "pass") == 0)
				running++;
		}
		sink = json_object_get(doc, "sink");
		printf("ENTROPYD %s - %u of %u sources running; sink %s %s, %.0f bits credited%s%s"
		    " | sources_running=%u;;;0;%u\n", names[rc], running, total,
		    ctl_str(sink, "kind"), ctl_str(sink, "state"), ctl_num(sink, "bits_credited"),
		    json_object_get(doc, "output") != NULL ? "; " : "", ctl_str(doc, "output"),
		    running, total);
		/* The first check that is not passing says why. */
		json_object_foreach(checks, key, check) {
			json_t *c = json_array_get(check, 0);

			if (strcmp(ctl_str(c, "status"), "pass") != 0 &&
			    json_object_get(c, "output") != NULL)
				printf("%s: %s\n", key, ctl_str(c, "output"));
		}
	}
	json_decref(doc);
	free(r.body);
	return rc;
}

/* entropyctl status: one line per source. */
static int
ctl_status(void)
{
	struct ctl_response r;
	json_t *doc, *src;
	size_t i;
	char rate[32];

	if (ctl_fetch("/sources", &r, EX_UNAVAILABLE) != 200 ||
	    (doc = ctl_parse(&r, "/sources")) == NULL) {
		fprintf(stderr, "entropyctl: /sources: unexpected answer (HTTP %d)\n", r.code);
		free(r.body);
		return EX_PROTOCOL;
	}
	if (ctl_json) {
		fwrite(r.body, 1, r.len, stdout);
		json_decref(doc);
		free(r.body);
		return EX_OK;
	}
	printf("%-20s %-10s %11s %14s %8s  %s\n", "SOURCE", "STATE", "RATE", "CREDITED",
	    "FAILURES", "LAST ERROR");
	json_array_foreach(json_object_get(doc, "sources"), i, src) {
		json_t *c = json_object_get(src, "counters");

		ctl_rate(rate, sizeof rate,
		    ctl_num(json_object_get(src, "rates"), "read_bytes_per_second"));
		printf("%-20s %-10s %11s %9.0f bits %8.0f  %s\n", ctl_str(src, "name"),
		    ctl_str(src, "state"), rate, ctl_num(c, "bits_credited"),
		    ctl_num(c, "blocks_failed"), ctl_str(src, "last_error"));
	}
	if (i == 0)
		printf("(no sources)\n");
	json_decref(doc);
	free(r.body);
	return EX_OK;
}

/* Print one source's details as "key: value" lines, nested keys dotted. */
static void
ctl_print_flat(const char *prefix, json_t *v)
{
	const char *key;
	json_t *sub;
	char *name;

	if (json_is_object(v)) {
		json_object_foreach(v, key, sub) {
			if (asprintf(&name, "%s%s%s", prefix, *prefix ? "." : "", key) == -1)
				exit(EX_OSERR);
			ctl_print_flat(name, sub);
			free(name);
		}
		return;
	}
	if (json_is_string(v))
		printf("  %-36s %s\n", prefix, json_string_value(v));
	else if (json_is_integer(v))
		printf("  %-36s %" JSON_INTEGER_FORMAT "\n", prefix, json_integer_value(v));
	else if (json_is_real(v))
		printf("  %-36s %.2f\n", prefix, json_real_value(v));
	else if (json_is_boolean(v))
		printf("  %-36s %s\n", prefix, json_is_true(v) ? "yes" : "no");
	else if (json_is_null(v))
		printf("  %-36s -\n", prefix);
}

/* entropyctl sources [NAME]. */
static int
ctl_sources(const char *name)
{
	struct ctl_response r;
	json_t *doc, *src, *list;
	char *path, *p;
	size_t i;

	if (name != NULL) {
		for (p = (char *)name; *p != '\0'; p++)
			if (*p == '/' || *p == '%' || *p == '?' || *p == '#' || *p <= ' ')
				ctl_usage_error("the source name holds a character it cannot hold");
		if (asprintf(&path, "/sources/%s", name) == -1)
			return EX_OSERR;
	} else
		path = strdup("/sources");
	ctl_fetch(path, &r, EX_UNAVAILABLE);
	if (r.code == 404 && name != NULL) {
		fprintf(stderr, "entropyctl: no source named %s\n", name);
		free(path);
		free(r.body);
		return 1;
	}
	if (r.code != 200 || (doc = ctl_parse(&r, path)) == NULL) {
		fprintf(stderr, "entropyctl: %s: unexpected answer (HTTP %d)\n", path, r.code);
		free(path);
		free(r.body);
		return EX_PROTOCOL;
	}
	if (ctl_json)
		fwrite(r.body, 1, r.len, stdout);
	else if (name != NULL) {
		printf("%s\n", ctl_str(doc, "name"));
		ctl_print_flat("", doc);
	} else {
		list = json_object_get(doc, "sources");
		json_array_foreach(list, i, src) {
			printf("%s%s\n", i ? "\n" : "", ctl_str(src, "name"));
			ctl_print_flat("", src);
		}
	}
	json_decref(doc);
	free(path);
	free(r.body);
	return EX_OK;
}

/* entropyctl metrics: the text as the daemon sends it. */
static int
ctl_metrics(void)
{
	struct ctl_response r;

	if (ctl_fetch("/metrics", &r, EX_UNAVAILABLE) != 200) {
		fprintf(stderr, "entropyctl: /metrics: unexpected answer (HTTP %d)\n", r.code);
		free(r.body);
		return EX_PROTOCOL;
	}
	fwrite(r.body, 1, r.len, stdout);
	free(r.body);
	return EX_OK;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	char msg[256];
	int c;

	ctl_socket = control_socket_default();
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:s:jhv", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (*optarg == '\0')
				ctl_usage_error("-s: the path is empty");
			ctl_socket = optarg;
			break;
		case 'j':
			ctl_json = 1;
			break;
		case 'h':
			ctl_usage(stdout);
			return EX_OK;
		case 'v':
			printf("entropyctl %s\n", PACKAGE_VERSION);
			return EX_OK;
		case ':':
			snprintf(msg, sizeof msg, "%s: a value is required", argv[optind - 1]);
			ctl_usage_error(msg);
		default:
			snprintf(msg, sizeof msg, "unrecognized option '%s'", argv[optind - 1]);
			ctl_usage_error(msg);
		}
	}
	if (optind >= argc)
		ctl_usage_error("no command given");
	cmd = argv[optind++];
	if (strcmp(cmd, "sources") == 0) {
		if (argc - optind > 1)
			ctl_usage_error("sources takes at most one source name");
		return ctl_sources(optind < argc ? argv[optind] : NULL);
	}
	if (optind < argc) {
		snprintf(msg, sizeof msg, "%s: unexpected argument '%s'", cmd, argv[optind]);
		ctl_usage_error(msg);
	}
	if (strcmp(cmd, "status") == 0)
		return ctl_status();
	if (strcmp(cmd, "health") == 0)
		return ctl_health();
	if (strcmp(cmd, "metrics") == 0)
		return ctl_metrics();
	snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
	ctl_usage_error(msg);
}
