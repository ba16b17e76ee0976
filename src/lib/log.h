/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_LOG_H
#define ENTROPYD_LOG_H

#include <stdarg.h>

/* Where log lines go. */
enum log_target { LOG_TO_STDERR, LOG_TO_SYSLOG };

void log_init(const char *progname, enum log_target, int verbose);
void log_setverbose(int verbose);
int log_getverbose(void);
/* With syslog as the target, copy warnings and errors to stderr as well (1) or not (0). */
void log_copy_to_stderr(int on);
void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_printf(int priority, const char *, ...) __attribute__((format(printf, 2, 3)));
void log_vlog(int priority, const char *, va_list) __attribute__((format(printf, 2, 0)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Exit with a sysexits code after logging. */
void fatalc(int code, const char *, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
