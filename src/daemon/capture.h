/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CAPTURE_H
#define ENTROPYD_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

/*
 * --capture SOURCE:COUNT:PATH: write the first COUNT raw samples a source
 * delivers, before any health test, to PATH, one sample per byte (the low
 * 8 bits of wider samples), the format NIST's SP 800-90B tool reads. Then
 * close the file, log it, and carry on.
 */
struct entropyd_instance;

/*
 * Check the flag against the registry (the source must deliver raw samples)
 * and create the file. 0 (also when no capture was asked for), or a
 * sysexits code with one line in err.
 */
int capture_start(const struct config *, char *err, size_t errlen);
/* The hook where the engine hands a read's bytes to the pipeline. */
void capture_input(const struct entropyd_instance *, const uint8_t *buf, size_t len);

#endif
