/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: the EGD request parser (src/proto/egd.c) over hostile input,
 * split into requests as the broker splits a client's stream. Every
 * request uses at least its command byte and no byte past the input; a
 * read's length is 1..255 and only reads have one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egd_request req;
	uint8_t reply[EGD_PID_REPLY_MAX_BYTES];
	uint8_t *copy = malloc(size + 1);
	size_t off = 0, used;

	/* A private copy of exactly the input's length, so ASan sees overreads. */
	memcpy(copy, data, size);
	while (egd_parse(copy + off, size - off, &req, &used) == EGD_PARSED) {
		if (used < 1 || used > 2 || used > size - off || req.byte != copy[off])
			abort();
		if ((req.command == EGD_READ_BLOCKING || req.command == EGD_READ_NONBLOCKING) !=
		    (req.len_bytes != 0) || req.len_bytes > EGD_READ_MAX_BYTES)
			abort();
		if (req.command >= EGD_NCOMMANDS || egd_command_name(req.command) == NULL)
			abort();
		off += used;
	}
	/* What is left is an incomplete request: nothing, or a read's first byte. */
	if (size - off > 1 || (size - off == 1 && copy[off] != 0x01 && copy[off] != 0x02))
		abort();
	egd_put_available(reply, size);
	if (egd_put_pid(reply, size) > sizeof reply)
		abort();
	free(copy);
	return 0;
}
