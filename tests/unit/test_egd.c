/* SPDX-License-Identifier: MIT */
/* The EGD wire format (src/proto/egd.c): every command, every malformed request. */
#include <limits.h>
#include <string.h>

#include <criterion/criterion.h>

#include "egd.h"

/* Parse buf whole as one request: its status, request and bytes used. */
static enum egd_parse_status
parse(const void *buf, size_t len, struct egd_request *req, size_t *used)
{
	*used = 0;
	memset(req, 0xa5, sizeof *req);
	return egd_parse(buf, len, req, used);
}

Test(egd, available_and_pid_are_one_byte)
{
	struct egd_request req;
	size_t used;

	cr_assert_eq(parse("\x00", 1, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_AVAILABLE);
	cr_assert_eq(used, 1);
	cr_assert_eq(req.len_bytes, 0);
	cr_assert_eq(parse("\x04", 1, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_PID);
	cr_assert_eq(used, 1);
}

Test(egd, reads_take_a_length_byte)
{
	struct egd_request req;
	uint8_t buf[2];
	size_t used;
	unsigned n;

	for (n = 1; n <= EGD_READ_MAX_BYTES; n++) {
		buf[0] = 0x01;
		buf[1] = (uint8_t)n;
		cr_assert_eq(parse(buf, 2, &req, &used), EGD_PARSED);
		cr_assert_eq(req.command, EGD_READ_NONBLOCKING);
		cr_assert_eq(req.len_bytes, n);
		cr_assert_eq(used, 2);
		buf[0] = 0x02;
		cr_assert_eq(parse(buf, 2, &req, &used), EGD_PARSED);
		cr_assert_eq(req.command, EGD_READ_BLOCKING);
		cr_assert_eq(req.len_bytes, n);
		cr_assert_eq(used, 2);
	}
}

Test(egd, a_read_without_its_length_needs_more)
{
	struct egd_request req;
	size_t used;

	cr_assert_eq(parse("\x01", 1, &req, &used), EGD_NEED_MORE);
	cr_assert_eq(parse("\x02", 1, &req, &used), EGD_NEED_MORE);
	cr_assert_eq(parse("", 0, &req, &used), EGD_NEED_MORE);
}

Test(egd, a_read_of_zero_bytes_is_invalid)
{
	struct egd_request req;
	size_t used;

	cr_assert_eq(parse("\x01\x00", 2, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_INVALID);
	cr_assert_eq(req.byte, 0x01);
	cr_assert_eq(used, 2);
	cr_assert_eq(parse("\x02\x00", 2, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_INVALID);
	cr_assert_eq(req.byte, 0x02);
}

Test(egd, a_write_is_known_by_its_first_byte)
{
	struct egd_request req;
	size_t used;

	/* The server refuses it without waiting for its bits, length and data. */
	cr_assert_eq(parse("\x03", 1, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_WRITE);
	cr_assert_eq(used, 1);
	cr_assert_eq(parse("\x03\x00\x40\x08" "abcdefgh", 12, &req, &used), EGD_PARSED);
	cr_assert_eq(req.command, EGD_WRITE);
	cr_assert_eq(used, 1);
}

Test(egd, every_other_command_byte_is_invalid)
{
	struct egd_request req;
	uint8_t buf[2];
	size_t used;
	unsigned b;

	for (b = 0x05; b <= 0xff; b++) {
		buf[0] = (uint8_t)b;
		buf[1] = 0x10;
		cr_assert_eq(parse(buf, 2, &req, &used), EGD_PARSED, "byte 0x%02x", b);
		cr_assert_eq(req.command, EGD_INVALID, "byte 0x%02x", b);
		cr_assert_eq(req.byte, b);
		cr_assert_eq(used, 1, "byte 0x%02x uses its byte alone", b);
		cr_assert_eq(parse(buf, 1, &req, &used), EGD_PARSED, "byte 0x%02x alone", b);
		cr_assert_eq(req.command, EGD_INVALID);
	}
}

Test(egd, pipelined_requests_come_apart_in_order)
{
	static const uint8_t stream[] = { 0x00, 0x02, 0x20, 0x04, 0x01, 0xff, 0x02, 0x01, 0x09 };
	static const enum egd_command want[] = { EGD_AVAILABLE, EGD_READ_BLOCKING, EGD_PID,
		EGD_READ_NONBLOCKING, EGD_READ_BLOCKING, EGD_INVALID };
	struct egd_request req;
	size_t off = 0, used, i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(egd_parse(stream + off, sizeof stream - off, &req, &used), EGD_PARSED);
		cr_assert_eq(req.command, want[i], "request %zu", i);
		off += used;
	}
	cr_assert_eq(off, sizeof stream);
	cr_assert_eq(egd_parse(stream + off, 0, &req, &used), EGD_NEED_MORE);
}

Test(egd, available_is_big_endian_and_saturates)
{
	uint8_t out[EGD_AVAILABLE_REPLY_BYTES];

	egd_put_available(out, 0);
	cr_assert_arr_eq(out, "\x00\x00\x00\x00", 4);
	egd_put_available(out, 0x01020304);
	cr_assert_arr_eq(out, "\x01\x02\x03\x04", 4);
	egd_put_available(out, UINT32_MAX);
	cr_assert_arr_eq(out, "\xff\xff\xff\xff", 4);
	egd_put_available(out, (uint64_t)UINT32_MAX + 12345);
	cr_assert_arr_eq(out, "\xff\xff\xff\xff", 4);
}

Test(egd, pid_is_a_length_and_ascii)
{
	uint8_t out[EGD_PID_REPLY_MAX_BYTES];
	size_t n;

	n = egd_put_pid(out, 1);
	cr_assert_eq(n, 2);
	cr_assert_arr_eq(out, "\x01" "1", 2);
	n = egd_put_pid(out, 4194304);
	cr_assert_eq(n, 8);
	cr_assert_arr_eq(out, "\x07" "4194304", 8);
	n = egd_put_pid(out, ULONG_MAX);
	cr_assert_eq(n, 1 + strlen("18446744073709551615"));
	cr_assert_eq(out[0], 20);
	cr_assert_arr_eq(out + 1, "18446744073709551615", 20);
}

Test(egd, command_names)
{
	cr_assert_str_eq(egd_command_name(EGD_AVAILABLE), "available");
	cr_assert_str_eq(egd_command_name(EGD_READ_NONBLOCKING), "read_nonblocking");
	cr_assert_str_eq(egd_command_name(EGD_READ_BLOCKING), "read_blocking");
	cr_assert_str_eq(egd_command_name(EGD_WRITE), "write");
	cr_assert_str_eq(egd_command_name(EGD_PID), "pid");
	cr_assert_str_eq(egd_command_name(EGD_INVALID), "invalid");
	cr_assert_str_eq(egd_command_name((enum egd_command)99), "invalid");
}
