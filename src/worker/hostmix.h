/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_HOSTMIX_H
#define ENTROPYD_HOSTMIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Host-unique data (machine-id, DMI product UUID and serials, MAC
 * addresses, hostname) to mix into the pool uncredited at start: two
 * machines booted from one image then no longer share a pool state. It is
 * not entropy and is never credited.
 */
#define HOSTMIX_MAX_BYTES 4096

/* Collect it under root ("/" normally; a directory tree in tests) into buf. */
size_t hostmix_collect(const char *root, uint8_t *buf, size_t cap);

#endif
