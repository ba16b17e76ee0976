/* SPDX-License-Identifier: MIT */
/*
 * Logging in the OpenBSD daemons' style (log_warn, log_warnx, log_info,
 * log_debug, fatal): to stderr in the foreground, to syslog once detached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sysexits.h>

#include "log.h"

static void log_vwarn(int, const char *, va_list) __attribute__((format(printf, 2, 0)));

static const char *log_progname = "entropyd";
static enum log_target log_target = LOG_TO_STDERR;
static int log_verbose; /* -1 quiet, 0 normal, 1 debug */
static int log_stderr_copy; /* warnings and worse to stderr too, besides syslog */

/* Set up logging: stderr in the foreground, syslog when daemonised. */
void
log_init(const char *progname, enum log_target target, int verbose)
{
	log_progname = progname;
	log_target = target;
	log_verbose = verbose;
	if (target == LOG_TO_SYSLOG)
		openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

/* While a background start is not yet up, its warnings and errors reach the starter too. */
void
log_copy_to_stderr(int on)
{
	log_stderr_copy = on;
}

/* Emit one line at a syslog priority, honouring -q and -d. */
void
log_vlog(int priority, const char *fmt, va_list ap)
{
	char line[1024];

	if (priority == LOG_DEBUG && log_verbose < 1)
		return;
	if (priority >= LOG_NOTICE && log_verbose < 0)
		return;
	vsnprintf(line, sizeof line, fmt, ap);
	if (log_target == LOG_TO_SYSLOG) {
		syslog(priority, "%s", line);
		if (log_stderr_copy && priority <= LOG_WARNING)
			fprintf(stderr, "%s: %s\n", log_progname, line);
	} else
		fprintf(stderr, "%s: %s\n", log_progname, line);
}

/* Log a line with ": strerror(errno)" appended. */
static void
log_vwarn(int priority, const char *fmt, va_list ap)
{
	char line[1024];
	int saved_errno = errno;

	vsnprintf(line, sizeof line, fmt, ap);
	log_printf(priority, "%s: %s", line, strerror(saved_errno));
	errno = saved_errno;
}

void
log_printf(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(priority, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwarn(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwarn(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(EX_OSERR);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(EX_SOFTWARE);
}

void
fatalc(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(code);
}
