/* SPDX-License-Identifier: MIT */
/*
 * The EGD wire format: parsing a client's requests and building the
 * replies that carry no entropy. Pure (no I/O, no state), so the broker
 * (src/worker/broker.c), the unit tests and the fuzzer share it.
 */
#include <stdio.h>
#include <string.h>

#include "egd.h"

static const char *const egd_command_names[EGD_NCOMMANDS] = {
	[EGD_AVAILABLE] = "available",
	[EGD_READ_NONBLOCKING] = "read_nonblocking",
	[EGD_READ_BLOCKING] = "read_blocking",
	[EGD_WRITE] = "write",
	[EGD_PID] = "pid",
	[EGD_INVALID] = "invalid",
};

const char *
egd_command_name(enum egd_command c)
{
	return (unsigned)c < EGD_NCOMMANDS ? egd_command_names[c] : "invalid";
}

/* Split off one request: one byte, or two for a read. */
enum egd_parse_status
egd_parse(const uint8_t *buf, size_t len, struct egd_request *req, size_t *used)
{
	if (len == 0)
		return EGD_NEED_MORE;
	req->byte = buf[0];
	req->len_bytes = 0;
	*used = 1;
	switch (buf[0]) {
	case 0x00:
		req->command = EGD_AVAILABLE;
		return EGD_PARSED;
	case 0x03:
		req->command = EGD_WRITE;
		return EGD_PARSED;
	case 0x04:
		req->command = EGD_PID;
		return EGD_PARSED;
	case 0x01:
	case 0x02:
		if (len < 2)
			return EGD_NEED_MORE;
		*used = 2;
		req->len_bytes = buf[1];
		req->command = buf[1] == 0 ? EGD_INVALID :
		    buf[0] == 0x01 ? EGD_READ_NONBLOCKING : EGD_READ_BLOCKING;
		return EGD_PARSED;
	default:
		req->command = EGD_INVALID;
		return EGD_PARSED;
	}
}

void
egd_put_available(uint8_t out[EGD_AVAILABLE_REPLY_BYTES], uint64_t count)
{
	uint32_t v = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;

	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

size_t
egd_put_pid(uint8_t out[EGD_PID_REPLY_MAX_BYTES], unsigned long pid)
{
	char digits[EGD_PID_REPLY_MAX_BYTES + 1];
	int n = snprintf(digits, sizeof digits, "%lu", pid);

	out[0] = (uint8_t)n;
	memcpy(out + 1, digits, (size_t)n);
	return (size_t)n + 1;
}
