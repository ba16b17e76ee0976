/* SPDX-License-Identifier: MIT */
/*
 * entropyctl: ask a running entropyd over its control socket (HTTP on a
 * Unix socket) how its sources are doing. A small HTTP/1.0 client: one
 * request, read to the end, print; the whole exchange within a deadline.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "control_socket.h"
#include "genfile.h"

/* Monitoring-plugin exit codes for `entropyctl health`. */
enum { CTL_OK, CTL_WARNING, CTL_CRITICAL, CTL_UNKNOWN };

#define CTL_TIMEOUT_S 10
#define CTL_TIMEOUT_MAX_S 3600
#define CTL_MAX_RESPONSE_BYTES (4u << 20)
/* How long to wait before connecting again while the daemon's queue is full. */
#define CTL_CONNECT_RETRY_MS 10

/* One HTTP answer. */
struct ctl_response {
	int code;
	char *body;
	size_t len;
};

/* wait-generation: the longest wait one long poll asks for (it asks again after). */
#define CTL_LONGPOLL_S 600

static const char *ctl_socket;
static int ctl_json;
static int ctl_timeout_s = CTL_TIMEOUT_S;
static bool ctl_timeout_given;         /* -t was given */
static struct timespec ctl_deadline;   /* the whole exchange ends by then */
static const char *ctl_genfile;        /* the generation file: its socket, and itself */
static bool ctl_socket_given;          /* -s was given */

/* Print usage to f. */
static void
ctl_usage(FILE *f)
{
	fprintf(f,
	    "usage: entropyctl [-hjv] [-s socket] [-t seconds] command [options]\n"
	    "commands:\n"
	    "  status          a table of the sources: state, rate, credited, failures (and\n"
	    "                  the share of recent tests that failed), last error\n"
	    "  health          one-line summary; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN\n"
	    "  metrics         the Prometheus metrics\n"
	    "  sources [NAME]  every detail of every source, or of NAME\n"
	    "  vmgenid         tell the daemon this VM was restored from a snapshot or\n"
	    "                  cloned: it forgets what it holds and refills (root only)\n"
	    "  generation      the VM generation ID (any user: from the generation socket,\n"
	    "                  or the generation file)\n"
	    "  wait-generation [--after ID]\n"
	    "                  wait until the VM generation ID is not ID (by default the\n"
	    "                  current one) and print the new one; -t limits the wait\n"
	    "options (before or after the command):\n"
	    "  -s, --socket, --control-socket PATH\n"
	    "                     the control socket (default: %s)\n"
	    "  -t, --timeout SECONDS\n"
	    "                     give up when the whole answer has not come within\n"
	    "                     SECONDS, 1..%d (default: %d)\n"
	    "                     (wait-generation: how long to wait; default: no limit)\n"
	    "  -g, --generation-file PATH\n"
	    "                     the generation file; generation and wait-generation ask\n"
	    "                     its socket, PATH.sock, unless -s names one, and read the\n"
	    "                     file where no socket answers (default: %s)\n"
	    "  -j, --json         print the daemon's JSON as it is, for scripts\n"
	    "  -h, --help         print this help and exit\n"
	    "  -v, --version      print the version and exit\n"
	    "exit status: health: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (no answer:\n"
	    "one 'ENTROPYD UNKNOWN - reason' line); other commands: 0 success, 1 no such\n"
	    "source, 64 usage, 69 daemon not reached, 76 unexpected answer, 77 vmgenid\n"
	    "by a user other than root; wait-generation: 0 changed, 1 the wait timed out;\n"
	    "generation: 75 no ID yet\n",
	    control_socket_default(), CTL_TIMEOUT_MAX_S, CTL_TIMEOUT_S, genfile_default());
}

/* A usage error: one line, exit 64. */
static void __attribute__((noreturn))
ctl_usage_error(const char *what)
{
	fprintf(stderr, "entropyctl: %s (see entropyctl --help)\n", what);
	exit(EX_USAGE);
}

/* Milliseconds left before the deadline, 0 once it passed. */
static int
ctl_left_ms(void)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(ctl_deadline.tv_sec - now.tv_sec) * 1000 +
	    (ctl_deadline.tv_nsec - now.tv_nsec) / 1000000;
	return ms <= 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Wait until fd is ready for events or the deadline passes; 1 ready, 0 timed out, -1. */
static int
ctl_wait(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&pfd, 1, ctl_left_ms());
	while (n == -1 && errno == EINTR);
	return n;
}

/*
 * Connect without blocking: a full queue (a daemon that does not accept)
 * is tried again until the deadline. 0, or -1 with errno.
 */
static int
ctl_connect(int fd, const struct sockaddr_un *sun)
{
	struct timespec pause = { 0, CTL_CONNECT_RETRY_MS * 1000000L };

	while (connect(fd, (const struct sockaddr *)sun, sizeof *sun) == -1) {
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || ctl_left_ms() == 0)
			return -1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* Send all of buf before the deadline: 0, or -1 with err saying why. */
static int
ctl_send_all(int fd, const char *buf, size_t len, char *err, size_t errlen)
{
	ssize_t n;

	while (len > 0) {
		/* MSG_NOSIGNAL: a daemon that hung up is an answer, not a SIGPIPE. */
		if ((n = send(fd, buf, len, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && ctl_wait(fd, POLLOUT) > 0)
				continue;
			if (errno == EAGAIN)
				snprintf(err, errlen, "%s: the daemon took no request within %d s",
				    ctl_socket, ctl_timeout_s);
			else
				snprintf(err, errlen, "%s: sending the request: %s", ctl_socket,
				    strerror(errno));
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* method path over the socket, all within the deadline; 0, or -1 with err saying why. */
static int
ctl_request(const char *method, const char *path, struct ctl_response *r, char *err,
    size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char req[512], *p, *end, *grown;
	size_t cap = 65536;
	ssize_t n;
	int fd, ready;

	memset(r, 0, sizeof *r);
	if (strlen(ctl_socket) >= sizeof sun.sun_path) {
		snprintf(err, errlen, "%s: path too long for a Unix socket", ctl_socket);
		return -1;
	}
	strcpy(sun.sun_path, ctl_socket);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1 ||
	    ctl_connect(fd, &sun) == -1) {
		snprintf(err, errlen, "cannot reach entropyd at %s: %s (is it running? -s names "
		    "another socket)", ctl_socket, errno == EAGAIN ?
		    "it accepts no connection" : strerror(errno));
		goto fail;
	}
	snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: localhost\r\n"
	    "User-Agent: entropyctl/%s\r\nContent-Length: 0\r\n\r\n", method, path,
	    PACKAGE_VERSION);
	if (ctl_send_all(fd, req, strlen(req), err, errlen) == -1)
		goto fail;
	if ((r->body = malloc(cap + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (;;) {
		if ((ready = ctl_wait(fd, POLLIN)) == 0) {
			snprintf(err, errlen, "%s: no answer within %d s", ctl_socket,
			    ctl_timeout_s);
			goto fail;
		}
		if (ready == -1 || ((n = read(fd, r->body + r->len, cap - r->len)) == -1 &&
		    errno != EINTR && errno != EAGAIN)) {
			snprintf(err, errlen, "%s: reading the answer: %s", ctl_socket,
			    strerror(errno));
			goto fail;
		}
		if (n == -1)
			continue;
		if (n == 0)
			break;
		r->len += (size_t)n;
		if (r->len < cap)
			continue;
		if (cap >= CTL_MAX_RESPONSE_BYTES) {
			snprintf(err, errlen, "%s: answer too long", ctl_socket);
			goto fail;
		}
		cap *= 2;
		if ((grown = realloc(r->body, cap + 1)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		r->body = grown;
	}
	close(fd);
	fd = -1;
	r->body[r->len] = '\0';
	if (r->len == 0) {
		snprintf(err, errlen, "%s: the daemon closed the connection without an answer "
		    "(too many clients?)", ctl_socket);
		goto fail;
	}
	/* "HTTP/1.x CODE REASON", headers, a blank line, the body. */
	if (strncmp(r->body, "HTTP/1.", 7) != 0 || r->len < 12 ||
	    (end = strstr(r->body, "\r\n\r\n")) == NULL) {
		snprintf(err, errlen, "%s: not an HTTP answer", ctl_socket);
		goto fail;
	}
	r->code = (int)strtol(r->body + 9, &p, 10);
	end += 4;
	r->len -= (size_t)(end - r->body);
	memmove(r->body, end, r->len + 1);
	return 0;

fail:
	if (fd != -1)
		close(fd);
	free(r->body);
	memset(r, 0, sizeof *r);
	return -1;
}

/* GET path: ctl_request's answer. */
static int
ctl_get(const char *path, struct ctl_response *r, char *err, size_t errlen)
{
	return ctl_request("GET", path, r, err, errlen);
}

/* The body as JSON, or NULL with why not in err. */
static json_t *
ctl_parse(const struct ctl_response *r, const char *path, char *err, size_t errlen)
{
	json_error_t e;
	json_t *doc = json_loadb(r->body, r->len, 0, &e);

	if (doc == NULL)
		snprintf(err, errlen, "%s: the answer is not JSON: %s", path, e.text);
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

/*
 * GET path: the HTTP status, or -1 (no answer, r->body NULL) after saying
 * why on stderr.
 */
static int
ctl_fetch(const char *path, struct ctl_response *r)
{
	char err[512];

	if (ctl_get(path, r, err, sizeof err) == -1) {
		fprintf(stderr, "entropyctl: %s\n", err);
		return -1;
	}
	return r->code;
}

/* GET path and parse its JSON, or say why not on stderr; NULL then. */
static json_t *
ctl_fetch_json(const char *path, struct ctl_response *r)
{
	char err[512];
	json_t *doc;

	if (ctl_fetch(path, r) != 200)
		return NULL;
	if ((doc = ctl_parse(r, path, err, sizeof err)) == NULL)
		fprintf(stderr, "entropyctl: %s\n", err);
	return doc;
}

/*
 * No answer to a health check: one line on stdout, as monitoring plugins
 * must print, and exit status 3.
 */
static int __attribute__((format(printf, 1, 2)))
ctl_unknown(const char *fmt, ...)
{
	va_list ap;

	fputs("ENTROPYD UNKNOWN - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return CTL_UNKNOWN;
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
	char err[512];
	int rc;

	if (ctl_get("/health", &r, err, sizeof err) == -1)
		return ctl_unknown("%s", err);
	if (r.code != 200 && r.code != 503) {
		free(r.body);
		return ctl_unknown("unexpected answer (HTTP %d)", r.code);
	}
	if ((doc = ctl_parse(&r, "/health", err, sizeof err)) == NULL) {
		free(r.body);
		return ctl_unknown("%s", err);
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
	char rate[32], failures[40];

	if ((doc = ctl_fetch_json("/sources", &r)) == NULL && r.body == NULL)
		return EX_UNAVAILABLE;
	if (doc == NULL) {
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
	printf("%-20s %-10s %11s %14s %-20s %s\n", "SOURCE", "STATE", "RATE", "CREDITED",
	    "FAILURES (RECENT)", "LAST ERROR");
	json_array_foreach(json_object_get(doc, "sources"), i, src) {
		json_t *c = json_object_get(src, "counters");

		ctl_rate(rate, sizeof rate,
		    ctl_num(json_object_get(src, "rates"), "read_bytes_per_second"));
		/* The count since start, and the share of recent tests that failed. */
		snprintf(failures, sizeof failures, "%.0f (%.2f%%)", ctl_num(c, "blocks_failed"),
		    100.0 * ctl_num(json_object_get(src, "recent_failures"), "rate"));
		printf("%-20s %-10s %11s %9.0f bits %-20s %s\n", ctl_str(src, "name"),
		    ctl_str(src, "state"), rate, ctl_num(c, "bits_credited"), failures,
		    ctl_str(src, "last_error"));
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
	if ((doc = ctl_fetch_json(path, &r)) == NULL && r.body == NULL) {
		free(path);
		return EX_UNAVAILABLE;
	}
	if (doc == NULL && r.code == 404 && name != NULL) {
		fprintf(stderr, "entropyctl: no source named %s\n", name);
		free(path);
		free(r.body);
		return 1;
	}
	if (doc == NULL) {
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

	if (ctl_fetch("/metrics", &r) == -1)
		return EX_UNAVAILABLE;
	if (r.code != 200) {
		fprintf(stderr, "entropyctl: /metrics: unexpected answer (HTTP %d)\n", r.code);
		free(r.body);
		return EX_PROTOCOL;
	}
	fwrite(r.body, 1, r.len, stdout);
	free(r.body);
	return EX_OK;
}

/* entropyctl vmgenid: the manual trigger for restore hooks. */
static int
ctl_vmgenid(void)
{
	struct ctl_response r;
	char err[512];
	json_t *doc;

	if (ctl_request("POST", "/vmgenid", &r, err, sizeof err) == -1) {
		fprintf(stderr, "entropyctl: %s\n", err);
		return EX_UNAVAILABLE;
	}
	if (r.code == 403) {
		fprintf(stderr, "entropyctl: vmgenid: only root may say the VM generation "
		    "changed\n");
		free(r.body);
		return EX_NOPERM;
	}
	if (r.code != 200 || (doc = ctl_parse(&r, "/vmgenid", err, sizeof err)) == NULL) {
		fprintf(stderr, "entropyctl: /vmgenid: unexpected answer (HTTP %d)\n", r.code);
		free(r.body);
		return EX_PROTOCOL;
	}
	if (ctl_json)
		fwrite(r.body, 1, r.len, stdout);
	else
		printf("VM generation change sent: %.0f bytes held from before discarded; "
		    "refilling\n", ctl_num(doc, "discarded_bytes"));
	json_decref(doc);
	free(r.body);
	return EX_OK;
}

/* Start the deadline of one exchange: seconds from now. */
static void
ctl_deadline_in(int seconds)
{
	clock_gettime(CLOCK_MONOTONIC, &ctl_deadline);
	ctl_deadline.tv_sec += seconds;
}

/*
 * The current generation, as the socket or, where none answers, the
 * generation file says: 0 with the ID in id (and the body in r when it came
 * from the socket: r->body NULL otherwise); 69 (said on stderr) when
 * neither has one.
 */
static int
ctl_current_generation(char *id, struct ctl_response *r)
{
	char err[512];
	json_t *doc;
	const char *s;

	if (ctl_get("/generation", r, err, sizeof err) == -1) {
		if (genfile_read(ctl_genfile, id) == 0)
			return 0;
		fprintf(stderr, "entropyctl: %s\n", err);
		fprintf(stderr, "entropyctl: and %s: %s\n", ctl_genfile, strerror(errno));
		return EX_UNAVAILABLE;
	}
	if (r->code != 200 || (doc = ctl_parse(r, "/generation", err, sizeof err)) == NULL) {
		fprintf(stderr, "entropyctl: /generation: unexpected answer (HTTP %d)\n", r->code);
		free(r->body);
		r->body = NULL;
		return EX_PROTOCOL;
	}
	s = json_string_value(json_object_get(doc, "id"));
	snprintf(id, GENFILE_ID_CHARS + 1, "%s", s != NULL ? s : "");
	json_decref(doc);
	return EX_OK;
}

/* entropyctl generation: the ID, or with -j the daemon's document. */
static int
ctl_generation(void)
{
	char id[GENFILE_ID_CHARS + 1];
	struct ctl_response r;
	int rc;

	if ((rc = ctl_current_generation(id, &r)) != EX_OK)
		return rc;
	if (ctl_json && r.body != NULL)
		fwrite(r.body, 1, r.len, stdout);
	else if (ctl_json)
		printf("{\n  \"id\": \"%s\",\n  \"file\": \"%s\"\n}\n", id, ctl_genfile);
	else if (id[0] == '\0') {
		fprintf(stderr, "entropyctl: no generation ID yet (the kernel's CRNG is not ready)\n");
		free(r.body);
		return EX_TEMPFAIL;
	} else
		printf("%s\n", id);
	free(r.body);
	return EX_OK;
}

/* Seconds left of a wait until end (CLOCK_MONOTONIC), 0 once past. */
static int
ctl_seconds_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return end->tv_sec > now.tv_sec ? (int)(end->tv_sec - now.tv_sec) : 0;
}

/* wait-generation where no socket serves: the generation file, through inotify. */
static int
ctl_wait_file(const char *after, const struct timespec *end)
{
	char id[GENFILE_ID_CHARS + 1];
	int rc = genfile_wait(ctl_genfile, after,
	    ctl_timeout_given ? ctl_seconds_left(end) * 1000 : -1, id);

	if (rc == -1) {
		fprintf(stderr, "entropyctl: %s: %s%s\n", ctl_genfile, strerror(errno),
		    errno == ENOENT ? " (no daemon keeps it)" : "");
		return EX_UNAVAILABLE;
	}
	if (rc == 0)
		return 1;
	printf("%s\n", id);
	return EX_OK;
}

/*
 * entropyctl wait-generation: long polls of at most CTL_LONGPOLL_S each
 * until the ID is not after; 0 and the new ID, 1 at -t's end, 69 without a
 * daemon. Where no socket answers, or too many wait on it, it waits on the
 * generation file.
 */
static int
ctl_wait_generation(const char *after_arg)
{
	char after[GENFILE_ID_CHARS + 1], path[128], err[512], id[GENFILE_ID_CHARS + 1];
	struct ctl_response r;
	struct timespec end;
	const char *s;
	json_t *doc;
	int rc, poll_s;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ctl_timeout_s;
	ctl_deadline_in(CTL_TIMEOUT_S);
	if (after_arg != NULL)
		snprintf(after, sizeof after, "%s", after_arg);
	else if ((rc = ctl_current_generation(after, &r)) != EX_OK)
		return rc;
	else
		free(r.body);
	/* No ID yet (the CRNG is not ready): any the daemon publishes is not the nil UUID. */
	if (after[0] == '\0')
		snprintf(after, sizeof after, "00000000-0000-0000-0000-000000000000");
	for (;;) {
		poll_s = ctl_timeout_given ? ctl_seconds_left(&end) : CTL_LONGPOLL_S;
		if (poll_s > CTL_LONGPOLL_S)
			poll_s = CTL_LONGPOLL_S;
		/* The answer may take the whole wait, then the usual time to come. */
		ctl_deadline_in(poll_s + CTL_TIMEOUT_S);
		snprintf(path, sizeof path, "/generation?after=%s&timeout=%d", after, poll_s);
		if (ctl_get(path, &r, err, sizeof err) == -1) {
			/* No socket, none for this user, or it is full: the file serves as well. */
			if (access(ctl_genfile, F_OK) == 0)
				return ctl_wait_file(after, &end);
			fprintf(stderr, "entropyctl: %s\n", err);
			return EX_UNAVAILABLE;
		}
		if (r.code == 304) {
			free(r.body);
			if (ctl_timeout_given && ctl_seconds_left(&end) == 0)
				return 1;
			continue;
		}
		if (r.code == 503) {
			/* Too many wait on the socket: the file serves as well. */
			free(r.body);
			return ctl_wait_file(after, &end);
		}
		if (r.code != 200 || (doc = ctl_parse(&r, "/generation", err, sizeof err)) == NULL) {
			fprintf(stderr, "entropyctl: /generation: unexpected answer (HTTP %d)\n",
			    r.code);
			free(r.body);
			return EX_PROTOCOL;
		}
		s = json_string_value(json_object_get(doc, "id"));
		snprintf(id, sizeof id, "%s", s != NULL ? s : "");
		json_decref(doc);
		if (id[0] != '\0' && strcmp(id, after) != 0) {
			if (ctl_json)
				fwrite(r.body, 1, r.len, stdout);
			else
				printf("%s\n", id);
			free(r.body);
			return EX_OK;
		}
		free(r.body);
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "control-socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ "generation-file", required_argument, NULL, 'g' },
		{ "after", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *after = NULL;
	char *gensock = NULL;
	const char **words, *cmd, *arg;
	char msg[256], *end;
	int c, nwords = 0, before;
	bool dashdash = false;
	long v;

	/* A daemon that hangs up is reported like any missing answer. */
	signal(SIGPIPE, SIG_IGN);
	ctl_socket = control_socket_default();
	ctl_genfile = genfile_default();
	if ((words = calloc((size_t)argc + 1, sizeof *words)) == NULL)
		return EX_OSERR;
	opterr = 0;
	/* Options may come before and after the command word and its argument. */
	while (optind < argc) {
		before = optind;
		if (dashdash || (c = getopt_long(argc, argv, "+:s:t:g:a:jhv", longopts, NULL)) == -1) {
			if (!dashdash && optind > before && strcmp(argv[optind - 1], "--") == 0)
				dashdash = true;
			else if (optind < argc)
				words[nwords++] = argv[optind++];
			continue;
		}
		switch (c) {
		case 's':
			if (*optarg == '\0')
				ctl_usage_error("-s: the path is empty");
			ctl_socket = optarg;
			ctl_socket_given = true;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || v < 1 ||
			    v > CTL_TIMEOUT_MAX_S) {
				snprintf(msg, sizeof msg, "-t: '%s' is not a number of seconds from 1 "
				    "to %d", optarg, CTL_TIMEOUT_MAX_S);
				ctl_usage_error(msg);
			}
			ctl_timeout_s = (int)v;
			ctl_timeout_given = true;
			break;
		case 'g':
			if (*optarg == '\0')
				ctl_usage_error("-g: the path is empty");
			ctl_genfile = optarg;
			break;
		case 'a':
			if (!genfile_parse(optarg, strlen(optarg), NULL)) {
				snprintf(msg, sizeof msg, "--after: '%s' is not a generation ID (a "
				    "UUID)", optarg);
				ctl_usage_error(msg);
			}
			after = optarg;
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
	cmd = words[0];
	arg = words[1];
	free(words);
	if (nwords == 0)
		ctl_usage_error("no command given");
	if (strcmp(cmd, "sources") != 0 && nwords > 1) {
		snprintf(msg, sizeof msg, "%s: unexpected argument '%s'", cmd, arg);
		ctl_usage_error(msg);
	}
	if (strcmp(cmd, "sources") == 0 && nwords > 2)
		ctl_usage_error("sources takes at most one source name");
	if (after != NULL && strcmp(cmd, "wait-generation") != 0)
		ctl_usage_error("--after is for wait-generation");
	/* Anyone may ask the generation socket; the control socket only if named. */
	if ((strcmp(cmd, "generation") == 0 || strcmp(cmd, "wait-generation") == 0) &&
	    !ctl_socket_given) {
		if (asprintf(&gensock, "%s.sock", ctl_genfile) == -1)
			return EX_OSERR;
		ctl_socket = gensock;
	}
	if (strcmp(cmd, "wait-generation") == 0)
		return ctl_wait_generation(after);
	ctl_deadline_in(ctl_timeout_s);
	if (strcmp(cmd, "sources") == 0)
		return ctl_sources(arg);
	if (strcmp(cmd, "status") == 0)
		return ctl_status();
	if (strcmp(cmd, "health") == 0)
		return ctl_health();
	if (strcmp(cmd, "metrics") == 0)
		return ctl_metrics();
	if (strcmp(cmd, "vmgenid") == 0)
		return ctl_vmgenid();
	if (strcmp(cmd, "generation") == 0)
		return ctl_generation();
	snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
	ctl_usage_error(msg);
}
