/* SPDX-License-Identifier: MIT */
/*
 * Clone detection: the kernel's uevent, its log line, SIGUSR2 and POST
 * /vmgenid each say the VM generation changed; the handler forgets
 * everything held from before.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/filter.h>
#include <linux/netlink.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "vmclock.h"
#include "vmgenid.h"

/* A uevent is at most UEVENT_BUFFER_SIZE (2048) of keys plus its header. */
#define VMGENID_RECV_BYTES 8192
/* The change prefix and the smallest scan the filter is tried with. */
#define VMGENID_PREFIX "change@"
#define VMGENID_FILTER_MIN_SCAN 128

/* The most a /dev/kmsg record can be (the kernel refuses smaller buffers). */
#define VMGENID_KMSG_RECORD_BYTES 8192

static struct {
	int fd;
	struct event *ev;
	int kmsg_fd;
	struct event *kmsg_ev;
	vmgenid_handler handler;
	struct vmgenid_stats stats;
} vmgenid = { .fd = -1, .kmsg_fd = -1 };

static const char *const vmgenid_trigger_names[] = {
	[VMGENID_TRIGGER_UEVENT] = "uevent",
	[VMGENID_TRIGGER_KMSG] = "kmsg",
	[VMGENID_TRIGGER_VMCLOCK] = "vmclock",
	[VMGENID_TRIGGER_SIGNAL] = "signal",
	[VMGENID_TRIGGER_CONTROL] = "control",
};

const char *
vmgenid_trigger_name(enum vmgenid_trigger t)
{
	return vmgenid_trigger_names[t];
}

const char *
vmgenid_sysfs_root(void)
{
	const char *root = getenv(VMGENID_SYSFS_ENV);

	return root != NULL && *root != '\0' ? root : "/sys";
}

/* The first device bound to the vmgenid driver on a bus; true when found. */
static bool
vmgenid_bound(const char *root, const char *bus, struct vmgenid_probe *p)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	bool found = false;

	snprintf(path, sizeof path, "%s/bus/%s/drivers/vmgenid", root, bus);
	if ((dir = opendir(path)) == NULL)
		return false;
	while (!found && (de = readdir(dir)) != NULL) {
		char link[4096 + 1 + sizeof de->d_name];

		/* Bound devices are links; "module" is one too, but not a device. */
		if (de->d_name[0] == '.' || strcmp(de->d_name, "module") == 0)
			continue;
		snprintf(link, sizeof link, "%s/%s", path, de->d_name);
		if (lstat(link, &st) == 0 && S_ISLNK(st.st_mode)) {
			snprintf(p->name, sizeof p->name, "%s", de->d_name);
			snprintf(p->bus, sizeof p->bus, "%s", bus);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

/* Whether an ACPI modalias ("acpi:HID:CID:...:") names a VM generation counter. */
static bool
vmgenid_modalias_matches(const char *modalias)
{
	char copy[512], *tok, *save;

	if (strncmp(modalias, "acpi:", 5) != 0)
		return false;
	snprintf(copy, sizeof copy, "%s", modalias + 5);
	for (tok = strtok_r(copy, ":\n", &save); tok != NULL; tok = strtok_r(NULL, ":\n", &save))
		if (strcasecmp(tok, "VMGENCTR") == 0 || strcasecmp(tok, "VM_GEN_COUNTER") == 0)
			return true;
	return false;
}

/* An ACPI device that is a VM generation counter (bound or not); true when found. */
static bool
vmgenid_acpi_device(const char *root, struct vmgenid_probe *p)
{
	char path[4096], file[4096 + 1 + 256 + sizeof "/modalias"], modalias[512];
	struct dirent *de;
	bool found = false;
	ssize_t n;
	DIR *dir;
	int fd;

	snprintf(path, sizeof path, "%s/bus/acpi/devices", root);
	if ((dir = opendir(path)) == NULL)
		return false;
	while (!found && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (strncmp(de->d_name, "VMGENCTR:", 9) == 0) {
			found = true;
		} else {
			snprintf(file, sizeof file, "%s/%s/modalias", path, de->d_name);
			if ((fd = open(file, O_RDONLY | O_CLOEXEC)) == -1)
				continue;
			n = read(fd, modalias, sizeof modalias - 1);
			close(fd);
			modalias[n > 0 ? n : 0] = '\0';
			found = vmgenid_modalias_matches(modalias);
		}
		if (found)
			snprintf(p->name, sizeof p->name, "%s", de->d_name);
	}
	closedir(dir);
	return found;
}

void
vmgenid_probe(const char *root, struct vmgenid_probe *p)
{
	memset(p, 0, sizeof *p);
	/* The driver is a platform driver since Linux 6.10, an ACPI one before. */
	if (vmgenid_bound(root, "platform", p) || vmgenid_bound(root, "acpi", p))
		p->device = VMGENID_DEVICE_BOUND;
	else if (vmgenid_acpi_device(root, p))
		p->device = VMGENID_DEVICE_UNBOUND;
}

/* Why there is no clone detection, or what it watches. */
static void
vmgenid_probe_describe(const struct vmgenid_probe *p, char *buf, size_t len)
{
	switch (p->device) {
	case VMGENID_DEVICE_BOUND:
		snprintf(buf, len, "VM generation ID device %s (driver vmgenid on the %s bus)",
		    p->name, p->bus);
		break;
	case VMGENID_DEVICE_UNBOUND:
		snprintf(buf, len, "VM generation ID device %s has no driver bound (Linux 5.18 "
		    "or later with CONFIG_VMGENID reports its changes)", p->name);
		break;
	default:
		snprintf(buf, len, "no VM generation ID device");
		break;
	}
}

void
vmgenid_print(FILE *f)
{
	struct vmgenid_probe p;
	char what[512];

	vmgenid_probe(vmgenid_sysfs_root(), &p);
	vmgenid_probe_describe(&p, what, sizeof what);
	if (p.device == VMGENID_DEVICE_BOUND)
		fprintf(f, "clone detection: %s: changes are acted on\n", what);
	else
		fprintf(f, "clone detection: not available: %s (after restoring a snapshot, "
		    "run entropyctl vmgenid or send SIGUSR2)\n", what);
}

/* One classic BPF instruction. */
static struct sock_filter
vmgenid_insn(uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	struct sock_filter f = { .code = code, .jt = jt, .jf = jf, .k = k };

	return f;
}

/*
 * The program. Loads are big-endian. The key "\0NEW_VMGENID=1\0" (its
 * leading NUL ends the field before) covers at least three aligned words,
 * and the first aligned word inside it is one of four, by where the NUL
 * falls: "\0NEW", "NEW_", "EW_V" or "W_VM". So one load per aligned word
 * and four comparisons find a candidate; X is set to the NUL's offset and
 * the whole key is checked there. A load past the datagram's end ends the
 * program, dropping it. The first candidate decides: a uevent has no other
 * key with these fragments before NEW_VMGENID (the kernel puts it right
 * after ACTION, DEVPATH and SUBSYSTEM).
 */
size_t
vmgenid_filter(struct sock_filter *f, size_t scan_bytes)
{
	static const uint32_t candidates[4] = { 0x004e4557, 0x4e45575f, 0x45575f56, 0x575f564d };
	size_t n = 0, verify, a, i;
	int s;

	if (scan_bytes > VMGENID_FILTER_SCAN_BYTES)
		scan_bytes = VMGENID_FILTER_SCAN_BYTES;
	/* "change@" */
	f[n++] = vmgenid_insn(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0);
	f[n++] = vmgenid_insn(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0x6368616e);
	f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0);
	f[n++] = vmgenid_insn(BPF_LD | BPF_H | BPF_ABS, 0, 0, 4);
	f[n++] = vmgenid_insn(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0x6765);
	f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0);
	f[n++] = vmgenid_insn(BPF_LD | BPF_B | BPF_ABS, 0, 0, 6);
	f[n++] = vmgenid_insn(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, '@');
	f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0);
	/* 13 instructions per aligned word, then a drop, then the check. */
	verify = n + 13 * ((scan_bytes - 8) / 4) + 1;
	for (a = 8; a + 4 <= scan_bytes; a += 4) {
		f[n++] = vmgenid_insn(BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)a);
		for (s = 0; s < 4; s++)
			f[n++] = vmgenid_insn(BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(3 - s + 2 * s),
			    s == 3 ? 8 : 0, candidates[s]);
		for (s = 0; s < 4; s++) {
			f[n++] = vmgenid_insn(BPF_LDX | BPF_W | BPF_IMM, 0, 0, (uint32_t)(a - (size_t)s));
			f[n] = vmgenid_insn(BPF_JMP | BPF_JA, 0, 0, (uint32_t)(verify - n - 1));
			n++;
		}
	}
	f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0);
	/* X is the NUL before the key: "\0NEW" "_VMG" "ENID" "=1" "\0". */
	{
		static const struct { uint16_t size; uint32_t off, value; } key[] = {
			{ BPF_W, 0, 0x004e4557 }, { BPF_W, 4, 0x5f564d47 }, { BPF_W, 8, 0x454e4944 },
			{ BPF_H, 12, 0x3d31 }, { BPF_B, 14, 0 },
		};

		for (i = 0; i < sizeof key / sizeof key[0]; i++) {
			f[n++] = vmgenid_insn(BPF_LD | key[i].size | BPF_IND, 0, 0, key[i].off);
			f[n++] = vmgenid_insn(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, key[i].value);
			f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0);
		}
	}
	f[n++] = vmgenid_insn(BPF_RET | BPF_K, 0, 0, 0xffffffffu);
	return n;
}

size_t
vmgenid_filter_attach(int fd)
{
	static struct sock_filter prog[VMGENID_FILTER_MAX_INSNS];
	struct sock_fprog fprog;
	size_t scan;

	/* Older kernels allow 20 kB of socket option memory (optmem_max); newer 128 kB. */
	for (scan = VMGENID_FILTER_SCAN_BYTES; scan >= VMGENID_FILTER_MIN_SCAN; scan /= 2) {
		fprog.len = (unsigned short)vmgenid_filter(prog, scan);
		fprog.filter = prog;
		if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog) == 0)
			return scan;
		if (errno != ENOMEM && errno != ENOBUFS)
			return 0;
	}
	return 0;
}

bool
vmgenid_uevent_says_change(const uint8_t *msg, size_t len)
{
	const char *p = (const char *)msg, *end = p + len, *nul;

	if (len < sizeof VMGENID_PREFIX || memcmp(p, VMGENID_PREFIX, strlen(VMGENID_PREFIX)) != 0)
		return false;
	/* "change@DEVPATH\0KEY=VALUE\0...": whole fields, each ended by its NUL. */
	while (p < end && (nul = memchr(p, '\0', (size_t)(end - p))) != NULL) {
		if ((size_t)(nul - p) == strlen(VMGENID_UEVENT_KEY) &&
		    memcmp(p, VMGENID_UEVENT_KEY, strlen(VMGENID_UEVENT_KEY)) == 0)
			return true;
		p = nul + 1;
	}
	return false;
}

bool
vmgenid_kmsg_says_change(const char *rec, size_t len, bool *forged)
{
	const char *semi, *text, *end;
	unsigned long pri;
	char *after;

	*forged = false;
	if ((semi = memchr(rec, ';', len)) == NULL || rec[0] < '0' || rec[0] > '9')
		return false;
	pri = strtoul(rec, &after, 10);
	if (*after != ',' || after > semi)
		return false;
	/* The text ends at the first newline (continuation lines follow it). */
	text = semi + 1;
	if ((end = memchr(text, '\n', len - (size_t)(text - rec))) == NULL)
		end = rec + len;
	if ((size_t)(end - text) != strlen(VMGENID_KMSG_NOTICE) ||
	    memcmp(text, VMGENID_KMSG_NOTICE, strlen(VMGENID_KMSG_NOTICE)) != 0)
		return false;
	/* Facility 0 is the kernel's: /dev/kmsg gives writers the user facility at least. */
	if (pri >> 3 != 0) {
		*forged = true;
		return false;
	}
	return true;
}

/* The kernel logged something: act on its VM fork notice, ignore the rest. */
static void
vmgenid_kmsg_readable(int fd, short what, void *arg)
{
	static char rec[VMGENID_KMSG_RECORD_BYTES];
	bool change = false, forged;
	ssize_t n;

	for (;;) {
		if ((n = read(fd, rec, sizeof rec)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {
				/* Records were overwritten before we read them. */
				log_warnx("vmgenid: kernel log records were lost; acting as if the VM "
				    "generation changed");
				change = true;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("vmgenid: %s", VMGENID_KMSG_PATH);
			break;
		}
		if (n == 0)
			break;
		if (vmgenid_kmsg_says_change(rec, (size_t)n, &forged))
			change = true;
		else if (forged) {
			vmgenid.stats.ignored++;
			log_warnx("vmgenid: ignored a VM fork notice in the kernel log: written by a "
			    "process, not the kernel");
		}
	}
	if (change)
		vmgenid_trigger(VMGENID_TRIGGER_KMSG);
}

/* Watch the kernel log from its end on; 0, or -1 with err set. */
static int
vmgenid_kmsg_open(struct event_base *base, char *err, size_t errlen)
{
	if ((vmgenid.kmsg_fd = open(VMGENID_KMSG_PATH, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", VMGENID_KMSG_PATH, strerror(errno));
		return -1;
	}
	if (lseek(vmgenid.kmsg_fd, 0, SEEK_END) == -1 ||
	    (vmgenid.kmsg_ev = event_new(base, vmgenid.kmsg_fd, EV_READ | EV_PERSIST,
	    vmgenid_kmsg_readable, NULL)) == NULL ||
	    event_priority_set(vmgenid.kmsg_ev, 0) == -1 || event_add(vmgenid.kmsg_ev, NULL) == -1) {
		snprintf(err, errlen, "%s: cannot watch it", VMGENID_KMSG_PATH);
		if (vmgenid.kmsg_ev != NULL)
			event_free(vmgenid.kmsg_ev);
		vmgenid.kmsg_ev = NULL;
		close(vmgenid.kmsg_fd);
		vmgenid.kmsg_fd = -1;
		return -1;
	}
	return 0;
}

/*
 * Whether a datagram is the kernel's own: sent from port 0 to the kernel's
 * group, with root's credentials. why says what failed.
 */
static bool
vmgenid_from_kernel(const struct msghdr *msg, const struct sockaddr_nl *from,
    const char **why)
{
	struct cmsghdr *c;
	struct ucred cred;

	if (msg->msg_namelen < sizeof *from || from->nl_family != AF_NETLINK) {
		*why = "no netlink sender";
		return false;
	}
	if (from->nl_pid != 0) {
		*why = "sent by a process, not the kernel";
		return false;
	}
	if (from->nl_groups != VMGENID_UEVENT_GROUP) {
		*why = "not to the kernel's group";
		return false;
	}
	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR((struct msghdr *)msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof cred)) {
			memcpy(&cred, CMSG_DATA(c), sizeof cred);
			if (cred.uid != 0) {
				*why = "sender credentials are not root's";
				return false;
			}
			return true;
		}
	*why = "no sender credentials";
	return false;
}

/* The socket is readable: act on the kernel's NEW_VMGENID=1, ignore the rest. */
static void
vmgenid_readable(int fd, short what, void *arg)
{
	static uint8_t buf[VMGENID_RECV_BYTES];
	char control[CMSG_SPACE(sizeof(struct ucred))];
	struct sockaddr_nl from;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr msg;
	const char *why;
	bool change = false;
	ssize_t n;

	for (;;) {
		memset(&msg, 0, sizeof msg);
		memset(&from, 0, sizeof from);
		msg.msg_name = &from;
		msg.msg_namelen = sizeof from;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control;
		msg.msg_controllen = sizeof control;
		if ((n = recvmsg(fd, &msg, MSG_DONTWAIT)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* The queue overflowed: a lost one may have been a change. */
				log_warnx("vmgenid: uevents were lost (receive queue full); acting "
				    "as if the VM generation changed");
				change = true;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("vmgenid: recvmsg");
			break;
		}
		if (msg.msg_flags & MSG_TRUNC) {
			why = "truncated";
		} else if (!vmgenid_uevent_says_change(buf, (size_t)n)) {
			/* Only without the socket filter: any uevent wakes us then. */
			log_debug("vmgenid: a uevent without NEW_VMGENID=1");
			continue;
		} else if (vmgenid_from_kernel(&msg, &from, &why)) {
			change = true;
			continue;
		}
		vmgenid.stats.ignored++;
		log_warnx("vmgenid: ignored a uevent from port %u: %s", (unsigned)from.nl_pid, why);
	}
	explicit_bzero(buf, sizeof buf);
	if (change)
		vmgenid_trigger(VMGENID_TRIGGER_UEVENT);
}

/* Open the uevent socket with its filter; the fd, or -1 with err set. */
static int
vmgenid_open(char *err, size_t errlen)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = VMGENID_UEVENT_GROUP };
	int fd, one = 1;

	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    NETLINK_KOBJECT_UEVENT)) == -1) {
		snprintf(err, errlen, "uevent socket: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) == -1) {
		snprintf(err, errlen, "SO_PASSCRED: %s", strerror(errno));
		close(fd);
		return -1;
	}
	/* Before bind: nothing unfiltered may queue. */
	if ((vmgenid.stats.filter_scan_bytes = vmgenid_filter_attach(fd)) == 0)
		log_warn("vmgenid: no socket filter (every uevent wakes the daemon)");
	if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == -1) {
		snprintf(err, errlen, "uevent socket: bind: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* vmclock's counter moved. */
static void
vmgenid_vmclock_changed(void)
{
	vmgenid_trigger(VMGENID_TRIGGER_VMCLOCK);
}

int
vmgenid_start(struct event_base *base, vmgenid_handler handler)
{
	char what[512], err[sizeof vmgenid.stats.listen_error] = "";

	memset(&vmgenid.stats, 0, sizeof vmgenid.stats);
	vmgenid.handler = handler;
	vmgenid_probe(vmgenid_sysfs_root(), &vmgenid.stats.probe);
	vmgenid_probe_describe(&vmgenid.stats.probe, what, sizeof what);
	if ((vmgenid.fd = vmgenid_open(err, sizeof err)) != -1) {
		vmgenid.ev = event_new(base, vmgenid.fd, EV_READ | EV_PERSIST, vmgenid_readable,
		    NULL);
		/* Before any other event of the same wake-up: nothing old is fed first. */
		if (vmgenid.ev == NULL || event_priority_set(vmgenid.ev, 0) == -1 ||
		    event_add(vmgenid.ev, NULL) == -1) {
			snprintf(err, sizeof err, "cannot watch the uevent socket");
			vmgenid_stop();
		}
	}
	vmgenid.stats.listening = vmgenid.fd != -1;
	snprintf(vmgenid.stats.listen_error, sizeof vmgenid.stats.listen_error, "%s", err);
	if (vmgenid.stats.probe.device == VMGENID_DEVICE_BOUND) {
		vmgenid.stats.kmsg = vmgenid_kmsg_open(base, vmgenid.stats.kmsg_error,
		    sizeof vmgenid.stats.kmsg_error) == 0;
	}
	vmclock_start(base, vmgenid_vmclock_changed);
	vmgenid_describe(what, sizeof what);
	if (vmgenid_armed())
		log_info("clone detection: %s", what);
	else if (vmgenid.stats.probe.device == VMGENID_DEVICE_NONE)
		log_info("clone detection: %s; after restoring a snapshot, run entropyctl vmgenid "
		    "or send SIGUSR2", what);
	else
		log_warnx("clone detection: %s", what);
	if (!vmgenid.stats.listening)
		log_warnx("vmgenid: %s", err);
	return vmgenid.stats.listening ? 0 : -1;
}

void
vmgenid_stop(void)
{
	if (vmgenid.ev != NULL)
		event_free(vmgenid.ev);
	vmgenid.ev = NULL;
	if (vmgenid.fd != -1)
		close(vmgenid.fd);
	vmgenid.fd = -1;
	vmgenid.stats.listening = false;
	if (vmgenid.kmsg_ev != NULL)
		event_free(vmgenid.kmsg_ev);
	vmgenid.kmsg_ev = NULL;
	if (vmgenid.kmsg_fd != -1)
		close(vmgenid.kmsg_fd);
	vmgenid.kmsg_fd = -1;
	vmgenid.stats.kmsg = false;
	vmclock_stop();
}

void
vmgenid_trigger(enum vmgenid_trigger t)
{
	uint64_t now = clock_now_ns();

	vmgenid.stats.changes[t]++;
	vmgenid.stats.last_event_ns = now;
	/* One restore, one change: vmclock's counter moved with it, as seen now. */
	if (t != VMGENID_TRIGGER_VMCLOCK)
		vmclock_sync();
	if (vmgenid.handler != NULL)
		vmgenid.handler(t, now);
}

/* Whether the kernel log is watched for a bound device's notice. */
static bool
vmgenid_kmsg_armed(void)
{
	return vmgenid.stats.kmsg && vmgenid.stats.probe.device == VMGENID_DEVICE_BOUND;
}

bool
vmgenid_armed(void)
{
	return vmgenid_kmsg_armed() || vmclock_watching();
}

void
vmgenid_describe(char *buf, size_t len)
{
	char what[512], clock[384];

	vmgenid_probe_describe(&vmgenid.stats.probe, what, sizeof what);
	vmclock_describe(clock, sizeof clock);
	if (vmgenid_kmsg_armed())
		snprintf(buf, len, "armed: %s; watching the kernel log%s%s%s", what,
		    vmgenid.stats.listening ? " and uevents" : "", vmclock_watching() ?
		    "; and the " : "", vmclock_watching() ? clock : "");
	else if (vmclock_watching())
		snprintf(buf, len, "armed: watching the %s (%s)", clock, what);
	else if (vmgenid.stats.probe.device == VMGENID_DEVICE_BOUND)
		snprintf(buf, len, "not armed: %s, but %s (the kernel reports a change in its log; "
		    "with a uevent only in Linux 6.8)", what, vmgenid.stats.kmsg_error);
	else if (vmgenid.stats.probe.device == VMGENID_DEVICE_UNBOUND)
		snprintf(buf, len, "not armed: %s", what);
	else
		snprintf(buf, len, "not available: %s", what);
}

const struct vmgenid_stats *
vmgenid_stats(void)
{
	return &vmgenid.stats;
}

void
vmgenid_note_discarded(uint64_t bytes)
{
	vmgenid.stats.discarded_bytes += bytes;
}

void
vmgenid_note_refill(uint64_t latency_ns)
{
	vmgenid.stats.refills++;
	vmgenid.stats.last_refill_ns = latency_ns;
}
