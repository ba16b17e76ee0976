/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CAPTURE_H
#define ENTROPYD_CAPTURE_H

#include <stdbool.h>
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
 * of a sample never has more min-entropy than the sample. The capture is
 * the noise source's, not the health tests': a source the tests suspend
 * is still read until the file is complete (capture_wants), nothing of it
 * credited or fed meanwhile. Then close the file, log it, and carry on.
 *
 * --capture-restarts SOURCE:PATH: SP 800-90B 3.1.4's restart data, the
 * first 1000 samples after each of 1000 opens of the source (each a fresh
 * open and start-up, as at boot), restart after restart: the row order
 * NIST's ea_restart and entropytest -R read. A restart cut short by a
 * reopen the capture did not ask for is dropped and taken again.
 */
struct entropyd_instance;

/* What the engine does with an instance after its read went to the capture. */
enum capture_next {
	CAPTURE_GO_ON,      /* the usual: test, condition, credit */
	CAPTURE_REOPEN      /* a restart is complete: close it and open it afresh */
};

/*
 * Check the flag against the registry (the source must deliver raw samples)
 * and create the file. 0 (also when no capture was asked for), or a
 * sysexits code with one line in err.
 */
int capture_start(const struct config *, char *err, size_t errlen);
/*
 * The hook where the engine hands a read's bytes to the pipeline;
 * suspended: the source is suspended, read for the capture alone.
 */
enum capture_next capture_input(const struct entropyd_instance *, const uint8_t *buf,
    size_t len, bool suspended);
/* The engine opened an instance: a restart capture starts a new restart. */
void capture_opened(const struct entropyd_instance *);
/* Whether the instance is being opened again for the next restart of a restart capture. */
bool capture_reopening(const struct entropyd_instance *);
/* Whether a capture still wants the instance's samples (read it, suspended or not). */
bool capture_wants(const struct entropyd_instance *);

#endif
