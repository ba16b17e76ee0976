/* SPDX-License-Identifier: MIT */
/*
 * Fake ChaosKeys for tests of the usb source: an umockdev testbed with a
 * ChaosKey at bus 1 port 2 whose usbdevfs ioctls are answered here, in the
 * testbed's worker thread (libusb's tests/umockdev.c is the model). Bulk IN
 * URBs are answered at once with fresh random bytes, so libusb, which reaps
 * with USBDEVFS_REAPURBNDELAY, never spins for long.
 *
 *   usb-fake-chaoskey DIRFILE CONTROL
 *
 * Writes the testbed's directory to DIRFILE (run the daemon with
 * UMOCKDEV_DIR set to it and libumockdev-preload.so.0 preloaded), then
 * reads lines from the FIFO CONTROL:
 *   good | stuck | stall | nodev   how bulk transfers end from now on
 *   wedge                          bulk URBs are not given back at all, not
 *                                  even once discarded (a transfer hangs);
 *                                  "wedged" on stderr once one is held
 *   add N | remove N               plug a ChaosKey in at port N, or pull it
 *   quit
 * saying "control: LINE" on stderr once each is done, and logs each URB
 * endpoint it sees once, to stderr ("endpoint 0x85").
 * The key at port 2 has the serial number FAKE_SERIAL; others have none.
 * Run it with libumockdev-preload.so.0 preloaded too: umockdev builds each
 * uevent with libudev in this process, and without the preload libudev
 * looks for the device in the real /sys, finds nothing, and sends nothing.
 *
 * One difference from a kernel: umockdev's stand-in for a usbfs fd is a
 * socket, always writable, and libusb polls that fd for POLLOUT (a reaped
 * URB waiting). So while a fake key is open, the daemon's libusb event
 * thread wakes at once on every poll; on a real usbfs fd it sleeps.
 */
#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <linux/usbdevice_fs.h>

#include <umockdev.h>

#define FAKE_SYSFS "/sys/devices/pci0000:00/0000:00:14.0"
#define FAKE_SERIAL "TEST 42/a"  /* iSerialNumber 3 of the key at port 2 */

enum fake_mode { FAKE_GOOD, FAKE_STUCK, FAKE_STALL, FAKE_NODEV, FAKE_WEDGE };

/* An URB submitted and not yet reaped. */
struct fake_urb {
	UMockdevIoctlClient *client;
	UMockdevIoctlData *urb;
	gboolean discarded;     /* reaped as cancelled, as the kernel does */
};

static GMutex fake_lock;
static GList *fake_urbs;
static volatile int fake_mode = FAKE_GOOD;
static gboolean fake_wedged_said;
static volatile sig_atomic_t fake_quit;
static unsigned fake_endpoints_seen[256];

/* A ChaosKey's descriptors: one vendor interface, bulk IN 0x85 and 0x86. */
static const char fake_record[] =
    "P: /devices/pci0000:00/0000:00:14.0/usb1/1-%u\n"
    "N: bus/usb/001/00%u\n"
    "E: SUBSYSTEM=usb\n"
    "E: DEVTYPE=usb_device\n"
    "E: DRIVER=usb\n"
    "E: BUSNUM=001\n"
    "E: DEVNUM=00%u\n"
    "E: DEVNAME=/dev/bus/usb/001/00%u\n"
    "E: PRODUCT=1d50/60c6/100\n"
    "A: busnum=1\\n\n"
    "A: devnum=%u\\n\n"
    "A: devpath=%u\\n\n"
    "A: idVendor=1d50\\n\n"
    "A: idProduct=60c6\\n\n"
    "A: bConfigurationValue=1\\n\n"
    "A: bNumConfigurations=1\\n\n"
    "A: speed=12\\n\n"
    "H: descriptors="
    "120100020000004050" "1dc66000010102" "%02x" "01"
    "09022000010100801e"
    "0904000002ff000000"
    "07058502400000"
    "07058602400000\n";

/* A control URB: the string descriptors (languages, the serial); else a stall. */
static void
fake_control(struct usbdevfs_urb *urb)
{
	unsigned char *b = urb->buffer, desc[64];
	unsigned want = (unsigned)(b[6] | b[7] << 8), len = 0, i;

	urb->status = -EPIPE;
	urb->actual_length = 0;
	if (b[1] != 6 || b[3] != 3) /* GET_DESCRIPTOR of a string */
		return;
	if (b[2] == 0) {
		memcpy(desc, "\x04\x03\x09\x04", 4); /* US English */
		len = 4;
	} else if (b[2] == 3) {
		for (i = 0; FAKE_SERIAL[i] != '\0'; i++) {
			desc[2 + 2 * i] = (unsigned char)FAKE_SERIAL[i];
			desc[3 + 2 * i] = 0;
		}
		len = 2 + 2 * i;
		desc[0] = (unsigned char)len;
		desc[1] = 3;
	} else
		return;
	if (len > want)
		len = want;
	memcpy(b + 8, desc, len);
	urb->status = 0;
	urb->actual_length = (int)len;
}

/* Answer the usbdevfs ioctls libusb makes for a ChaosKey. */
static gboolean
fake_ioctl(UMockdevIoctlBase *handler, UMockdevIoctlClient *client, gpointer unused)
{
	UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
	gulong request = umockdev_ioctl_client_get_request(client);
	struct usbdevfs_urb *urb;

	switch (request) {
	case USBDEVFS_GET_CAPABILITIES: {
		UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(guint32), NULL);

		*(guint32 *)d->data = USBDEVFS_CAP_BULK_CONTINUATION |
		    USBDEVFS_CAP_NO_PACKET_SIZE_LIM | USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
		umockdev_ioctl_data_unref(d);
		umockdev_ioctl_client_complete(client, 0, 0);
		return TRUE;
	}
	case USBDEVFS_GETDRIVER:
		/* No kernel driver holds the fake key. */
		umockdev_ioctl_client_complete(client, -1, ENODATA);
		return TRUE;
	case USBDEVFS_CLAIMINTERFACE:
	case USBDEVFS_RELEASEINTERFACE:
	case USBDEVFS_DISCONNECT_CLAIM:
	case USBDEVFS_IOCTL:
	case USBDEVFS_CLEAR_HALT:
	case USBDEVFS_RESET:
	case USBDEVFS_SETINTERFACE:
		umockdev_ioctl_client_complete(client, 0, 0);
		return TRUE;
	case USBDEVFS_SUBMITURB: {
		UMockdevIoctlData *u, *buf;
		struct fake_urb *f;

		if (fake_mode == FAKE_NODEV) {
			umockdev_ioctl_client_complete(client, -1, ENODEV);
			return TRUE;
		}
		u = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_urb), NULL);
		urb = (struct usbdevfs_urb *)u->data;
		buf = umockdev_ioctl_data_resolve(u, G_STRUCT_OFFSET(struct usbdevfs_urb, buffer),
		    (gsize)urb->buffer_length, NULL);
		umockdev_ioctl_data_unref(buf);
		if (!fake_endpoints_seen[urb->endpoint]++)
			fprintf(stderr, "endpoint 0x%02x\n", urb->endpoint);
		f = g_new0(struct fake_urb, 1);
		f->client = g_object_ref(client);
		f->urb = u;
		g_mutex_lock(&fake_lock);
		fake_urbs = g_list_append(fake_urbs, f);
		g_mutex_unlock(&fake_lock);
		umockdev_ioctl_client_complete(client, 0, 0);
		return TRUE;
	}
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY: {
		struct fake_urb *f = NULL;
		UMockdevIoctlData *ptr;
		gboolean held = FALSE;
		GList *l;

		g_mutex_lock(&fake_lock);
		for (l = fake_urbs; l != NULL; l = l->next)
			if (((struct fake_urb *)l->data)->client == client) {
				f = l->data;
				urb = (struct usbdevfs_urb *)f->urb->data;
				if (fake_mode == FAKE_WEDGE && urb->type == USBDEVFS_URB_TYPE_BULK) {
					f = NULL; /* still "in flight" */
					held = TRUE;
				} else
					fake_urbs = g_list_delete_link(fake_urbs, l);
				break;
			}
		g_mutex_unlock(&fake_lock);
		if (held && !fake_wedged_said) {
			fake_wedged_said = TRUE;
			fprintf(stderr, "wedged\n");
		}
		if (f == NULL) {
			umockdev_ioctl_client_complete(client, -1, EAGAIN);
			return TRUE;
		}
		urb = (struct usbdevfs_urb *)f->urb->data;
		if (f->discarded) {
			/* usbfs gives a discarded URB back as unlinked, empty. */
			urb->status = -ECONNRESET;
			urb->actual_length = 0;
		} else if (urb->type == USBDEVFS_URB_TYPE_CONTROL)
			fake_control(urb);
		else switch (fake_mode) {
		case FAKE_STALL:
			urb->status = -EPIPE;
			urb->actual_length = 0;
			break;
		case FAKE_NODEV:
			urb->status = -ENODEV;
			urb->actual_length = 0;
			break;
		case FAKE_STUCK:
			memset(urb->buffer, 0x5a, (size_t)urb->buffer_length);
			urb->status = 0;
			urb->actual_length = urb->buffer_length;
			break;
		default:
			if (getrandom(urb->buffer, (size_t)urb->buffer_length, 0) !=
			    urb->buffer_length)
				abort();
			/* The raw endpoint: 12-bit samples in little-endian words. */
			if (urb->endpoint == 0x86)
				for (int i = 1; i < urb->buffer_length; i += 2)
					((unsigned char *)urb->buffer)[i] &= 0x0f;
			urb->status = 0;
			urb->actual_length = urb->buffer_length;
		}
		ptr = umockdev_ioctl_data_resolve(arg, 0, sizeof(gpointer), NULL);
		umockdev_ioctl_data_set_ptr(ptr, 0, f->urb);
		umockdev_ioctl_data_unref(ptr);
		umockdev_ioctl_client_complete(client, 0, 0);
		umockdev_ioctl_data_unref(f->urb);
		g_object_unref(f->client);
		g_free(f);
		return TRUE;
	}
	case USBDEVFS_DISCARDURB: {
		GList *l;
		gulong addr = *(gulong *)arg->data;
		int found = 0;

		/*
		 * As usbfs: a discarded URB not yet reaped stays to be reaped,
		 * unlinked; one already reaped is EINVAL. libusb cancels a
		 * transfer that timed out (an answer later than 100 ms, as under
		 * load) and waits for its URB: one never given back would hang
		 * libusb_bulk_transfer() for good.
		 */
		g_mutex_lock(&fake_lock);
		for (l = fake_urbs; l != NULL; l = l->next) {
			struct fake_urb *f = l->data;

			if (f->client == client && f->urb->client_addr == addr && !f->discarded) {
				f->discarded = TRUE;
				found = 1;
				break;
			}
		}
		g_mutex_unlock(&fake_lock);
		umockdev_ioctl_client_complete(client, found ? 0 : -1, found ? 0 : EINVAL);
		return TRUE;
	}
	default:
		fprintf(stderr, "unhandled ioctl 0x%lx\n", request);
		umockdev_ioctl_client_complete(client, -1, ENOTTY);
		return TRUE;
	}
}

/* Plug a ChaosKey in at port (also its device number). */
static void
fake_add(UMockdevTestbed *bed, UMockdevIoctlBase *handler, unsigned port)
{
	char dev[64], *record;
	GError *err = NULL;

	snprintf(dev, sizeof dev, "/dev/bus/usb/001/00%u", port);
	if (!umockdev_testbed_attach_ioctl(bed, dev, handler, &err)) {
		fprintf(stderr, "attach_ioctl: %s\n", err->message);
		exit(1);
	}
	record = g_strdup_printf(fake_record, port, port, port, port, port, port,
	    port == 2 ? 3 : 0);
	/* With the preload here, this also sends the "add" uevent. */
	if (!umockdev_testbed_add_from_string(bed, record, &err)) {
		fprintf(stderr, "add_from_string: %s\n", err->message);
		exit(1);
	}
	g_free(record);
}

/* Unplug the ChaosKey at port: the "remove" uevent, then the device. */
static void
fake_remove(UMockdevTestbed *bed, unsigned port)
{
	char dev[64], sys[128];
	GError *err = NULL;

	snprintf(sys, sizeof sys, "%s/usb1/1-%u", FAKE_SYSFS, port);
	snprintf(dev, sizeof dev, "/dev/bus/usb/001/00%u", port);
	/* remove_device() sends no uevent; it must go while the device exists. */
	umockdev_testbed_uevent(bed, sys, "remove");
	if (!umockdev_testbed_detach_ioctl(bed, dev, &err)) {
		fprintf(stderr, "detach_ioctl: %s\n", err->message);
		g_clear_error(&err);
	}
	umockdev_testbed_remove_device(bed, sys);
}

static void
fake_on_signal(int sig)
{
	fake_quit = 1;
}

int
main(int argc, char **argv)
{
	UMockdevTestbed *bed;
	UMockdevIoctlBase *handler;
	char line[64], tmp[4096];
	FILE *f, *ctl;
	unsigned port;
	int fd;

	if (argc != 3)
		return 64;
	signal(SIGTERM, fake_on_signal);
	signal(SIGINT, fake_on_signal);
	alarm(600); /* a safety net: the test ends it by PID long before */
	bed = umockdev_testbed_new();
	handler = umockdev_ioctl_base_new();
	g_signal_connect(handler, "handle-ioctl", G_CALLBACK(fake_ioctl), NULL);
	fake_add(bed, handler, 2);

	/* O_RDWR: the FIFO never reads as ended between the test's writes. */
	if ((fd = open(argv[2], O_RDWR)) == -1 || (ctl = fdopen(fd, "r")) == NULL)
		return 66;
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	if ((f = fopen(tmp, "w")) == NULL)
		return 73;
	fprintf(f, "%s\n", umockdev_testbed_get_root_dir(bed));
	fclose(f);
	rename(tmp, argv[1]);

	while (!fake_quit && fgets(line, sizeof line, ctl) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "good") == 0)
			fake_mode = FAKE_GOOD;
		else if (strcmp(line, "stuck") == 0)
			fake_mode = FAKE_STUCK;
		else if (strcmp(line, "stall") == 0)
			fake_mode = FAKE_STALL;
		else if (strcmp(line, "nodev") == 0)
			fake_mode = FAKE_NODEV;
		else if (strcmp(line, "wedge") == 0)
			fake_mode = FAKE_WEDGE;
		else if (sscanf(line, "add %u", &port) == 1 && port >= 2 && port <= 9)
			fake_add(bed, handler, port);
		else if (sscanf(line, "remove %u", &port) == 1 && port >= 2 && port <= 9)
			fake_remove(bed, port);
		else if (strcmp(line, "quit") == 0)
			break;
		/* Said once done, so that a test can wait for it. */
		fprintf(stderr, "control: %s\n", line);
	}
	g_object_unref(handler);
	g_object_unref(bed);
	return 0;
}
