/* SPDX-License-Identifier: MIT */
/* libFuzzer: the command line, flags and -O SOURCE:KEY:VALUE, through options_parse(). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is argv[1..]: arguments separated by NUL bytes. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy, *argv[65], err[512];
	struct config cfg;
	size_t i, start = 0;
	int argc = 1;

	if (size > 4096)
		return 0;
	copy = malloc(size + 1);
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = (char *)"entropyd";
	for (i = 0; i <= size && argc < 64; i++) {
		if (i == size || copy[i] == '\0') {
			copy[i] = '\0';
			argv[argc++] = copy + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	if (options_parse(&cfg, argc, argv, err, sizeof err) == 0)
		options_free(&cfg);
	else if (memchr(err, '\0', sizeof err) == NULL)
		abort(); /* the error line must be a terminated string */
	free(copy);
	return 0;
}
