/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CAPTURE_H
#define ENTROPYD_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

/*
 * --capture SOURCE:COUNT:PATH: write the first COUNT raw samples a source
 * delivers, before any health test, to PATH, one sample per byte, the
 * format NIST's SP 800-90B tool (and entropytest -e) reads; that format
 * holds at most 8 bits a sample, so a wider sample has its low 8 bits
 * written (bits 0-7, where an ADC's noise is), and the log says so. A
 * figure for those bits is a lower bound for the whole sample: a function
 * of a sample never has more min-entropy than the sample. Then close the
 * file, log it, and carry on.
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
