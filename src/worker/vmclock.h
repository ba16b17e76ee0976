/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_VMCLOCK_H
#define ENTROPYD_VMCLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

/*
 * The vmclock device (Linux 6.13 and later, /dev/vmclock0): a page the
 * hypervisor shares with the guest, described by the kernel's
 * include/uapi/linux/vmclock-abi.h. All fields are little-endian; those
 * after the constant ones are consistent only while seq_count is even and
 * unchanged (the driver's read() retries until they are). Where the flags
 * say VM_GEN_COUNTER_PRESENT, the hypervisor bumps vm_generation_counter
 * each time the guest is loaded from a snapshot: one more report of a VM
 * generation change, next to the vmgenid driver's. Where they also say
 * NOTIFICATION_PRESENT, poll() on the device says when the page changed;
 * otherwise the counter is looked at every VMCLOCK_CHECK_S seconds and
 * whenever another trigger reports a change.
 */
#define VMCLOCK_PATH "/dev/vmclock0"
/* For tests: the device to read instead (a file holding the structure). */
#define VMCLOCK_PATH_ENV "ENTROPYD_VMCLOCK"
/* The structure's magic ("VCLK") and the one version there is. */
#define VMCLOCK_MAGIC 0x4b4c4356u
#define VMCLOCK_VERSION 1
/* Offsets of the fields read here, and the structure's length up to the counter's end. */
#define VMCLOCK_OFF_MAGIC 0
#define VMCLOCK_OFF_SIZE 4
#define VMCLOCK_OFF_VERSION 8
#define VMCLOCK_OFF_SEQ_COUNT 12
#define VMCLOCK_OFF_FLAGS 24
#define VMCLOCK_OFF_VM_GENERATION_COUNTER 104
#define VMCLOCK_BYTES 112
/* Flags. */
#define VMCLOCK_FLAG_VM_GEN_COUNTER_PRESENT (UINT64_C(1) << 8)
#define VMCLOCK_FLAG_NOTIFICATION_PRESENT (UINT64_C(1) << 9)
/* Without notifications: how often the counter is read. */
#define VMCLOCK_CHECK_S 5

/* What a read of the structure says. */
enum vmclock_status {
	VMCLOCK_OK,          /* a generation counter, read */
	VMCLOCK_SHORT,       /* fewer bytes than the fixed fields */
	VMCLOCK_BAD_MAGIC,   /* not a vmclock structure */
	VMCLOCK_BAD_VERSION, /* a version other than 1 */
	VMCLOCK_NO_COUNTER,  /* no vm_generation_counter: the flag is clear, or the size ends before it */
	VMCLOCK_BUSY,        /* seq_count is odd: the hypervisor is writing it */
};

/* The fields that matter here. */
struct vmclock_reading {
	uint32_t seq_count;
	uint64_t flags;
	uint64_t vm_generation_counter;
	bool notifications;  /* NOTIFICATION_PRESENT: poll() wakes on a change */
};

/* Parse len bytes read from the device's start. */
enum vmclock_status vmclock_parse(const uint8_t *buf, size_t len, struct vmclock_reading *);
/* Why a status is not VMCLOCK_OK, in a few words. */
const char *vmclock_status_text(enum vmclock_status);
/*
 * Open the device ($ENTROPYD_VMCLOCK or VMCLOCK_PATH) and watch its counter
 * on the loop at the highest priority; on a change, changed() is called.
 * Logs one line when the device is there. 0, or -1 when there is nothing to
 * watch (no device, or no counter in it).
 */
int vmclock_start(struct event_base *, void (*changed)(void));
/* Read the counter again and keep it as the current one (another trigger saw the change). */
void vmclock_sync(void);
void vmclock_stop(void);
/* Whether the counter is watched, and one line about it for /health and the log. */
bool vmclock_watching(void);
void vmclock_describe(char *buf, size_t len);

#endif
