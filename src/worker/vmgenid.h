/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_VMGENID_H
#define ENTROPYD_VMGENID_H

#include <linux/filter.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct event_base;

/*
 * Clone detection. When a VM is restored from a snapshot (or a clone of it
 * starts), the hypervisor changes the VM generation ID; Linux 5.18 and
 * later (driver vmgenid) reseed their CRNG with it and log
 * "random: crng reseeded due to virtual machine fork"; Linux 6.8 (and
 * kernels carrying its patch; 6.9 reverted it) also sends a kernel uevent
 * carrying NEW_VMGENID=1. Everything the daemon held before is then the
 * same in every clone and must never be fed: the handler (the engine)
 * forgets it and refills the kernel from fresh reads.
 *
 * Three listeners on the loop, any of which reports a change:
 *   - a NETLINK_KOBJECT_UEVENT socket in the kernel's group. A classic BPF
 *     filter keeps every other uevent out of its queue, so the daemon is
 *     woken by nothing else; what passes must come from the kernel itself
 *     (sender port 0, root credentials), as libusb's hotplug code and
 *     libudev's kernel monitor require, since any root process may send to
 *     the group but none can send as port 0;
 *   - /dev/kmsg, only where a generation ID device is bound to the driver:
 *     the kernel's notice, from the kernel facility, which no process can
 *     write (the kernel gives what user space writes the user facility).
 *     Every kernel log record wakes the daemon: the price of the one
 *     signal most kernels give;
 *   - the vmclock device's VM generation counter, where there is one
 *     (src/worker/vmclock.c).
 */

/* The sysfs root, for tests: -l, the start-up line and /health look there. */
#define VMGENID_SYSFS_ENV "ENTROPYD_SYSFS_ROOT"
/* The kernel's uevent group. */
#define VMGENID_UEVENT_GROUP 1
/* The key the kernel's vmgenid driver sends (drivers/virt/vmgenid.c). */
#define VMGENID_UEVENT_KEY "NEW_VMGENID=1"
/* The kernel log, and the notice add_vmfork_randomness() logs (random.c). */
#define VMGENID_KMSG_PATH "/dev/kmsg"
#define VMGENID_KMSG_NOTICE "random: crng reseeded due to virtual machine fork"
/* Bytes of a uevent the filter looks through for the key (first try). */
#define VMGENID_FILTER_SCAN_BYTES 1024
/* The most instructions vmgenid_filter() writes for VMGENID_FILTER_SCAN_BYTES. */
#define VMGENID_FILTER_MAX_INSNS (16 + 13 * (VMGENID_FILTER_SCAN_BYTES / 4))

enum vmgenid_device {
	VMGENID_DEVICE_NONE,    /* no VM generation ID device */
	VMGENID_DEVICE_UNBOUND, /* a device, but no vmgenid driver bound to it */
	VMGENID_DEVICE_BOUND,   /* bound to the kernel's vmgenid driver */
};

/* What sysfs says about the machine's VM generation ID device. */
struct vmgenid_probe {
	enum vmgenid_device device;
	char name[256];      /* e.g. "VMGENCTR:00", "QEMUVGID:00" */
	char bus[16];        /* the bus its driver is on: "platform" or "acpi" */
};

/* How a change was signalled. */
enum vmgenid_trigger {
	VMGENID_TRIGGER_UEVENT,  /* the kernel's uevent */
	VMGENID_TRIGGER_KMSG,    /* the kernel's log notice */
	VMGENID_TRIGGER_VMCLOCK, /* the vmclock device's VM generation counter (vmclock.h) */
	VMGENID_TRIGGER_SIGNAL,  /* SIGUSR2 */
	VMGENID_TRIGGER_CONTROL, /* POST /vmgenid on the control socket */
	VMGENID_NTRIGGERS
};

/* Counters and state for logs, /health and /metrics. */
struct vmgenid_stats {
	struct vmgenid_probe probe;
	bool listening;            /* the uevent socket is on the loop */
	char listen_error[160];    /* why not, when it is not */
	bool kmsg;                 /* /dev/kmsg is on the loop */
	char kmsg_error[160];      /* why not, where a bound device wants it */
	size_t filter_scan_bytes;  /* what the attached filter looks through; 0: none */
	uint64_t changes[VMGENID_NTRIGGERS];
	uint64_t ignored;          /* uevents or log records refused: not the kernel's */
	uint64_t discarded_bytes;  /* held from before a change, wiped */
	uint64_t refills;          /* refills fed and reseeded */
	uint64_t last_event_ns;    /* CLOCK_MONOTONIC of the last change */
	uint64_t last_refill_ns;   /* the last refill's time from the change to RNDRESEEDCRNG */
};

/* Called on the loop for every change: how it came, and when (CLOCK_MONOTONIC). */
typedef void (*vmgenid_handler)(enum vmgenid_trigger, uint64_t event_ns);

/* The sysfs root: $ENTROPYD_SYSFS_ROOT, or "/sys". */
const char *vmgenid_sysfs_root(void);
/* Look for the device under a sysfs root (a test tree, or "/sys"). */
void vmgenid_probe(const char *sysfs_root, struct vmgenid_probe *);
/* Print the -l line: whether clone detection works here, and why not. */
void vmgenid_print(FILE *);
/*
 * Write the socket filter into prog (room for VMGENID_FILTER_MAX_INSNS):
 * only a datagram starting "change@" with the key as a whole field, the
 * key beginning within the first scan_bytes (at most
 * VMGENID_FILTER_SCAN_BYTES), passes. Returns the instruction count.
 */
size_t vmgenid_filter(struct sock_filter *prog, size_t scan_bytes);
/*
 * Attach the filter to fd, as long as the kernel's option memory allows:
 * scan_bytes halves from VMGENID_FILTER_SCAN_BYTES down to 128 until it
 * fits. Returns the scan bytes attached, or 0 (errno set) when none fits.
 */
size_t vmgenid_filter_attach(int fd);
/* Whether a uevent's text is a change carrying NEW_VMGENID=1 as a field. */
bool vmgenid_uevent_says_change(const uint8_t *msg, size_t len);
/*
 * Whether one /dev/kmsg record ("PRI,SEQ,TIME,FLAGS;TEXT\n...") is the
 * notice; *forged is set when the text is but the facility is not the
 * kernel's (a process wrote it).
 */
bool vmgenid_kmsg_says_change(const char *record, size_t len, bool *forged);
/*
 * Probe, log one line about clone detection, and listen on base's loop at
 * the highest priority (so a change is handled before anything else that
 * woke the loop with it is fed): the uevent socket always, /dev/kmsg where
 * a device is bound. 0, or -1 when the uevent socket cannot be had
 * (logged; the daemon carries on).
 */
int vmgenid_start(struct event_base *, vmgenid_handler);
void vmgenid_stop(void);
/* A manual trigger (SIGUSR2, the control socket): the same handler, now. */
void vmgenid_trigger(enum vmgenid_trigger);
/* Whether clone detection is armed: a bound device and /dev/kmsg watched, or vmclock's counter. */
bool vmgenid_armed(void);
/* One line: "armed (...)" or "not available: ..." or "not armed: ...". */
void vmgenid_describe(char *buf, size_t len);
const struct vmgenid_stats *vmgenid_stats(void);
/* The engine's accounting: bytes wiped for a change, a refill's latency. */
void vmgenid_note_discarded(uint64_t bytes);
void vmgenid_note_refill(uint64_t latency_ns);
const char *vmgenid_trigger_name(enum vmgenid_trigger);

#endif
