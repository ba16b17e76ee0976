/* SPDX-License-Identifier: MIT */
/*
 * Allocation that ends the process on failure (xmalloc, xcalloc,
 * xreallocarray, xstrdup, xasprintf), so no caller half-handles it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

/* Allocators that end the process on exhaustion: no half-handled failures. */
void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		fatal("xmalloc: allocating %zu bytes", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		fatal("xcalloc: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p = reallocarray(ptr, nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		fatal("xreallocarray: allocating %zu * %zu bytes", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatal("xstrdup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("xasprintf");
	return n;
}
