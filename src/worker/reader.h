/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_READER_H
#define ENTROPYD_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <entropyd/source.h>

/*
 * A core-owned thread for a source whose read() blocks or computes. The
 * thread reads only while the loop wants data, one buffer at a time, and
 * wakes the loop through an eventfd once per read (reads are sized by the
 * loop: small at start-up, up to the whole buffer once a source is warm).
 * The pipeline stays on the loop thread.
 */
#define READER_BUFFER_BYTES 32768 /* = PIPELINE_READ_MAX */

struct reader;

/* Start a thread reading src with state. */
struct reader *reader_start(const struct entropyd_source *src, void *state);
/* The fd the loop polls for a finished read. */
int reader_fd(const struct reader *);
/*
 * Tell the thread whether to read, and how much the next read should ask
 * for; with ahead, it may read the next buffer while a finished one still
 * waits for reader_take() (when the reserve has room for both).
 */
void reader_want(struct reader *, bool want, size_t len, bool ahead);
/*
 * Take the finished read, if any: returns false when none is ready; else
 * *result is the read()'s return, *err its errno, and *buf points at the
 * bytes, which stay put until reader_release() (or reader_stop()).
 */
bool reader_take(struct reader *, const uint8_t **buf, ssize_t *result, int *err);
/* Done with the taken read: wipe its bytes and let the thread hand over the next. */
void reader_release(struct reader *);
/*
 * The VM generation changed: wipe a finished read the loop has not taken
 * (returns its bytes), have a read in progress interrupted and dropped when
 * it ends, and call the module's forget() on the thread before its next
 * read. Never while the loop holds a taken buffer (between reader_take()
 * and reader_release()).
 */
size_t reader_forget(struct reader *);
/* Bytes of reads dropped by reader_forget() since the last call. */
size_t reader_take_stale(struct reader *);
/* Ask the thread to stop and interrupt its read(), without waiting. */
void reader_request_stop(struct reader *);
/*
 * Stop the thread, interrupting a blocked read(); waits up to timeout_ms.
 * Returns true when it stopped (the caller closes the source state). False
 * when it is stuck inside read(): the reader is then an orphan that owns
 * the state; once read() returns, the loop reaps it (through defer):
 * closes the state with the module's close() and frees the thread's
 * buffers, fd and memory.
 */
bool reader_stop(struct reader *, unsigned timeout_ms);
/* Reap the orphans whose read() has returned (also called at exit). */
void reader_reap(void);
/* Whether an orphan thread may still run src's code (do not unload it). */
bool reader_runs_module(const struct entropyd_source *src);
/* Install the signal that interrupts blocked reads (once, before any thread). */
void reader_global_init(void);

#endif
