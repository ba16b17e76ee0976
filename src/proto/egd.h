/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_EGD_H
#define ENTROPYD_EGD_H

#include <stddef.h>
#include <stdint.h>

/*
 * The EGD protocol (the Entropy Gathering Daemon's, as QEMU's rng-egd
 * backend, libvirt's egd backend and egd.pl speak it), free of I/O. A
 * client sends one command byte, and a length byte after a read:
 *   0x00     entropy available: 4-byte big-endian count of bytes ready
 *   0x01 N   non-blocking read: 1 length byte, then that many bytes (<= N)
 *   0x02 N   blocking read: exactly N bytes (1..255), no length byte
 *   0x03 ... write entropy (then 2 bytes of bits, 1 length byte, data)
 *   0x04     pid: 1 length byte, then the server's pid in ASCII
 * Any other command byte, and a read of N = 0, is invalid.
 */
#define EGD_READ_MAX_BYTES 255
#define EGD_AVAILABLE_REPLY_BYTES 4
/* A length byte and a pid of up to 20 digits. */
#define EGD_PID_REPLY_MAX_BYTES 21

enum egd_command {
	EGD_AVAILABLE,
	EGD_READ_NONBLOCKING,
	EGD_READ_BLOCKING,
	EGD_WRITE,
	EGD_PID,
	EGD_INVALID,          /* an unknown command byte, or a read of 0 bytes */
	EGD_NCOMMANDS
};

/* One request. */
struct egd_request {
	enum egd_command command;
	uint8_t byte;         /* the command byte as sent */
	unsigned len_bytes;   /* a read's N (1..255); 0 otherwise */
};

enum egd_parse_status {
	EGD_NEED_MORE,        /* the request is not whole yet: read more */
	EGD_PARSED,           /* *req and *used are set */
};

/*
 * The first request of the len bytes at buf. A write is parsed at its
 * command byte alone: the server refuses it without reading its data. An
 * invalid request uses its command byte (and a read of 0 its length byte).
 */
enum egd_parse_status egd_parse(const uint8_t *buf, size_t len, struct egd_request *req,
    size_t *used);
/* The reply to 0x00: count bytes ready, big-endian, at most 2^32 - 1. */
void egd_put_available(uint8_t out[EGD_AVAILABLE_REPLY_BYTES], uint64_t count);
/* The reply to 0x04 into out (at least EGD_PID_REPLY_MAX_BYTES); returns its length. */
size_t egd_put_pid(uint8_t out[EGD_PID_REPLY_MAX_BYTES], unsigned long pid);
/* The label of a command for logs and metrics. */
const char *egd_command_name(enum egd_command);

#endif
