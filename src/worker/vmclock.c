/* SPDX-License-Identifier: MIT */
/*
 * vmclock as a VM generation trigger: read the vm_generation_counter the
 * hypervisor keeps in the vmclock page, and report a change of it. Woken by
 * the device where it notifies, else by a slow timer; the structure is
 * parsed here from what read() returns, never mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "vmclock.h"

/* The longest device path kept. */
#define VMCLOCK_PATH_BYTES 256

static struct {
	int fd;
	struct event *ev;             /* the device's poll, or the check timer */
	void (*changed)(void);
	struct vmclock_reading last;
	char path[VMCLOCK_PATH_BYTES];
	char error[VMCLOCK_PATH_BYTES + 96]; /* why the last read failed, "" when it did not */
} vmclock = { .fd = -1 };

/* Little-endian loads. */
static uint32_t
vmclock_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
vmclock_le64(const uint8_t *p)
{
	return (uint64_t)vmclock_le32(p) | (uint64_t)vmclock_le32(p + 4) << 32;
}

enum vmclock_status
vmclock_parse(const uint8_t *buf, size_t len, struct vmclock_reading *r)
{
	uint32_t size;

	memset(r, 0, sizeof *r);
	/* The driver itself wants the fields up to flags: all else is optional. */
	if (len < VMCLOCK_OFF_FLAGS + 8)
		return VMCLOCK_SHORT;
	if (vmclock_le32(buf + VMCLOCK_OFF_MAGIC) != VMCLOCK_MAGIC)
		return VMCLOCK_BAD_MAGIC;
	if ((buf[VMCLOCK_OFF_VERSION] | buf[VMCLOCK_OFF_VERSION + 1] << 8) != VMCLOCK_VERSION)
		return VMCLOCK_BAD_VERSION;
	r->seq_count = vmclock_le32(buf + VMCLOCK_OFF_SEQ_COUNT);
	r->flags = vmclock_le64(buf + VMCLOCK_OFF_FLAGS);
	r->notifications = (r->flags & VMCLOCK_FLAG_NOTIFICATION_PRESENT) != 0;
	if (r->seq_count & 1)
		return VMCLOCK_BUSY;
	size = vmclock_le32(buf + VMCLOCK_OFF_SIZE);
	if (!(r->flags & VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT) || size < VMCLOCK_BYTES ||
	    len < VMCLOCK_BYTES)
		return VMCLOCK_NO_COUNTER;
	r->vm_generation_counter = vmclock_le64(buf + VMCLOCK_OFF_VM_GENERATION_COUNTER);
	return VMCLOCK_OK;
}

const char *
vmclock_status_text(enum vmclock_status s)
{
	switch (s) {
	case VMCLOCK_OK:
		return "ok";
	case VMCLOCK_SHORT:
		return "too short for a vmclock structure";
	case VMCLOCK_BAD_MAGIC:
		return "not a vmclock structure (bad magic)";
	case VMCLOCK_BAD_VERSION:
		return "a vmclock structure of an unknown version";
	case VMCLOCK_NO_COUNTER:
		return "no VM generation counter in it";
	case VMCLOCK_BUSY:
		return "being updated (odd seq_count)";
	}
	return "?";
}

/* Read the structure from the start; the status, the reason logged in error. */
static enum vmclock_status
vmclock_read(struct vmclock_reading *r)
{
	uint8_t buf[VMCLOCK_BYTES];
	enum vmclock_status s;
	ssize_t n;
	int tries;

	/* The driver's read() is consistent; a plain file in a test may be caught mid-write. */
	for (tries = 0; tries < 3; tries++) {
		while ((n = pread(vmclock.fd, buf, sizeof buf, 0)) == -1 && errno == EINTR)
			;
		if (n == -1) {
			snprintf(vmclock.error, sizeof vmclock.error, "%s: %s", vmclock.path,
			    strerror(errno));
			return VMCLOCK_SHORT;
		}
		if ((s = vmclock_parse(buf, (size_t)n, r)) != VMCLOCK_BUSY)
			break;
	}
	if (s == VMCLOCK_OK)
		vmclock.error[0] = '\0';
	else
		snprintf(vmclock.error, sizeof vmclock.error, "%s: %s", vmclock.path,
		    vmclock_status_text(s));
	return s;
}

/* Read the counter; report a change once, then keep the new value. */
static void
vmclock_check(int fd, short what, void *arg)
{
	struct vmclock_reading r;

	if (vmclock_read(&r) != VMCLOCK_OK) {
		log_debug("vmclock: %s", vmclock.error);
		return;
	}
	if (r.vm_generation_counter == vmclock.last.vm_generation_counter)
		return;
	log_info("vmclock: VM generation counter %" PRIu64 " -> %" PRIu64,
	    vmclock.last.vm_generation_counter, r.vm_generation_counter);
	vmclock.last = r;
	if (vmclock.changed != NULL)
		vmclock.changed();
}

int
vmclock_start(struct event_base *base, void (*changed)(void))
{
	const char *env = getenv(VMCLOCK_PATH_ENV);
	struct timeval every = { VMCLOCK_CHECK_S, 0 };
	enum vmclock_status s;

	vmclock.changed = changed;
	vmclock.error[0] = '\0';
	snprintf(vmclock.path, sizeof vmclock.path, "%s", env != NULL && *env != '\0' ? env :
	    VMCLOCK_PATH);
	if ((vmclock.fd = open(vmclock.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			log_warn("vmclock: %s", vmclock.path);
		snprintf(vmclock.error, sizeof vmclock.error, "%s: %s", vmclock.path,
		    strerror(errno));
		return -1;
	}
	if ((s = vmclock_read(&vmclock.last)) != VMCLOCK_OK) {
		log_info("vmclock: %s; not watched", vmclock.error);
		vmclock_stop();
		return -1;
	}
	/* A change is handled before anything else that woke the loop with it. */
	if (vmclock.last.notifications)
		vmclock.ev = event_new(base, vmclock.fd, EV_READ | EV_PERSIST, vmclock_check, NULL);
	else
		vmclock.ev = event_new(base, -1, EV_PERSIST, vmclock_check, NULL);
	if (vmclock.ev == NULL || event_priority_set(vmclock.ev, 0) == -1 ||
	    event_add(vmclock.ev, vmclock.last.notifications ? NULL : &every) == -1) {
		log_warnx("vmclock: %s: cannot watch it", vmclock.path);
		vmclock_stop();
		return -1;
	}
	if (vmclock.last.notifications)
		log_info("vmclock: watching the VM generation counter of %s (%" PRIu64 ")",
		    vmclock.path, vmclock.last.vm_generation_counter);
	else
		log_info("vmclock: watching the VM generation counter of %s (%" PRIu64 "); the "
		    "device does not notify: read every %d s", vmclock.path,
		    vmclock.last.vm_generation_counter, VMCLOCK_CHECK_S);
	return 0;
}

void
vmclock_sync(void)
{
	struct vmclock_reading r;

	if (vmclock.ev != NULL && vmclock_read(&r) == VMCLOCK_OK)
		vmclock.last = r;
}

void
vmclock_stop(void)
{
	if (vmclock.ev != NULL)
		event_free(vmclock.ev);
	vmclock.ev = NULL;
	if (vmclock.fd != -1)
		close(vmclock.fd);
	vmclock.fd = -1;
}

bool
vmclock_watching(void)
{
	return vmclock.ev != NULL;
}

void
vmclock_describe(char *buf, size_t len)
{
	if (vmclock.ev != NULL && vmclock.last.notifications)
		snprintf(buf, len, "vmclock counter %" PRIu64 " in %s (the device notifies)%s",
		    vmclock.last.vm_generation_counter, vmclock.path, vmclock.error[0] != '\0' ?
		    "; its last read failed" : "");
	else if (vmclock.ev != NULL)
		snprintf(buf, len, "vmclock counter %" PRIu64 " in %s (read every %d s)%s",
		    vmclock.last.vm_generation_counter, vmclock.path, VMCLOCK_CHECK_S,
		    vmclock.error[0] != '\0' ? "; its last read failed" : "");
	else
		snprintf(buf, len, "no vmclock counter (%s)", vmclock.error[0] != '\0' ?
		    vmclock.error : VMCLOCK_PATH);
}
