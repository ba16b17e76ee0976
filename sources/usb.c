/* SPDX-License-Identifier: MIT */
/*
 * usb: USB noise keys. CDC-ACM keys (TrueRNG, TrueRNGpro, OneRNG) are read
 * through their tty, which the loop polls; ChaosKeys are read from their
 * bulk endpoints with libusb, from the daemon's reader thread (synchronous
 * transfers with a short timeout, so the loop never blocks on USB).
 *
 * Two descriptors share this file: "usb" reads every key's whitened output;
 * "chaoskey_raw" reads a ChaosKey's raw ADC endpoint as 12-bit samples for
 * the SP 800-90B tests. RAW_SAMPLES and the credit unit belong to a whole
 * module, so raw mode is a module of its own rather than a per-key option;
 * while chaoskey_raw is selected, usb leaves ChaosKeys to it.
 *
 * Hotplug: libusb's hotplug callbacks run on a thread of this module, which
 * waits in libusb's event handling (no timeout to speak of: it wakes for
 * USB events, never on a timer). The callbacks only queue the event and ask
 * the daemon, through host->defer, to handle the queue on its loop: a key
 * plugged in becomes an instance (or its absent one opens again), a key
 * unplugged goes absent at once through host->instance_gone.
 *
 * A ChaosKey is named by its serial number (the string descriptor, cut to
 * [A-Za-z0-9._-]) when it has one, else by bus and port path; both stay the
 * same when the key is unplugged and plugged in again.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#ifdef HAVE_LIBUSB
#include <libusb.h>
#endif

#include <entropyd/source.h>
#include "builtin.h"
#include "usb_tty.h"

#define USB_CHAOSKEY_COOKED_EP 0x85
#define USB_CHAOSKEY_RAW_EP 0x86
#define USB_CHAOSKEY_INTERFACE 0
#define USB_TRANSFER_BYTES 4096     /* a multiple of the 64-byte packets */
#define USB_TRANSFER_TIMEOUT_MS 100 /* below the daemon's reader stop timeout */
#define USB_TTY_BAUD 115200         /* CDC-ACM ignores it; the knock does not */
#define USB_MAX_PORTS 8
#define USB_SERIAL_BYTES 64

/* A key found by a probe; the instance's cookie. Kept until exit, so a
 * re-probe that finds the key again hands back the same one. */
struct usb_key {
	struct usb_key *next;
	struct entropyd_module *module;
	struct entropyd_instance *instance; /* the last add_instance gave */
	char id[128];
	const struct usb_tty_model *model;
	char tty[PATH_MAX];       /* CDC-ACM: the tty */
	bool raw;                 /* ChaosKey: the raw endpoint */
	uint8_t bus, address, ports[USB_MAX_PORTS];
	int nports;
};

/* One open key. */
struct usb_state {
	struct entropyd_instance *instance;
	struct usb_key *key;
	int fd;                   /* CDC-ACM tty, or -1 */
	int onerng_mode;
#ifdef HAVE_LIBUSB
	libusb_device_handle *handle;
	unsigned char endpoint;
	uint8_t buf[USB_TRANSFER_BYTES];
	size_t off, len;
#endif
};

static const struct entropyd_host *usb_host;
static struct usb_key *usb_keys;
static bool usb_raw_selected;  /* chaoskey_raw is enabled: usb skips ChaosKeys */
#ifdef HAVE_LIBUSB
/* A hotplug event, queued by the event thread for the loop. */
struct usb_event {
	struct usb_event *next;
	struct entropyd_module *module;
	libusb_device *dev;       /* referenced */
	bool arrived;
};

/* A module's hotplug callback. */
struct usb_hotplug {
	struct entropyd_module *module;
	libusb_hotplug_callback_handle handle;
};

static libusb_context *usb_ctx;
static struct usb_hotplug usb_hotplugs[2]; /* usb, chaoskey_raw */
static pthread_t usb_thread;
static bool usb_thread_running;
static int usb_thread_stop;
/* Bulk transfers under way in reader threads (one the daemon gave up on included). */
static unsigned usb_transfers;
static pthread_mutex_t usb_events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct usb_event *usb_events, **usb_events_tail = &usb_events;
#endif

static const struct entropyd_option usb_options[] = {
	{ "tty", NULL, "read this tty as a CDC-ACM key instead of looking (needs usb:model)" },
	{ "model", NULL, "the key on usb:tty: truerng, truerngpro, truerngpro2 or onerng" },
	{ "onerng_mode", "0", "OneRNG mode: 0 avalanche, 2 avalanche and RF, 6 RF (whitened)" },
	{ "truerngpro_mode", "normal", "TrueRNGpro mode: normal, rng1white or rng2white" },
	{ "sysfs", "/sys", "where to look for ttyACM devices (for testing)" },
	{ NULL, NULL, NULL }
};

/* An option, or "" when unset. */
static const char *
usb_option(struct entropyd_module *module, const char *key)
{
	const char *v = usb_host->option(module, key);

	return v != NULL ? v : "";
}

/* Find or make a module's record for a key. */
static struct usb_key *
usb_key_get(struct entropyd_module *module, const char *id)
{
	struct usb_key *k;

	for (k = usb_keys; k != NULL; k = k->next)
		if (k->module == module && strcmp(k->id, id) == 0)
			return k;
	if ((k = calloc(1, sizeof *k)) == NULL)
		return NULL;
	k->module = module;
	snprintf(k->id, sizeof k->id, "%s", id);
	k->next = usb_keys;
	usb_keys = k;
	return k;
}

/* Add an instance for a key, logging when that fails. */
static int
usb_add(struct entropyd_module *module, struct usb_key *k, const char *device)
{
	if ((k->instance = usb_host->add_instance(module, k->id, device, k)) == NULL) {
		usb_host->module_log(module, ENTROPYD_LOG_ERR, "%s: cannot add an instance", device);
		return 0;
	}
	return 1;
}

/* Check the options: a tty needs its model, and modes must be known. */
static int
usb_configure(struct entropyd_module *module, const struct entropyd_host *host, char *err,
    size_t errlen)
{
	const struct usb_tty_model *m;
	const char *model, *tty;

	usb_host = host;
	model = usb_option(module, "model");
	tty = usb_option(module, "tty");
	if (*model != '\0' && ((m = usb_tty_model_by_name(model)) == NULL ||
	    m->protocol == USB_TTY_NONE)) {
		snprintf(err, errlen, "usb:model: '%s' is not truerng, truerngpro, truerngpro2 "
		    "or onerng", model);
		return -1;
	}
	if (*tty != '\0' && *model == '\0') {
		snprintf(err, errlen, "usb:tty: say which key it is with -O usb:model:NAME");
		return -1;
	}
	if (usb_tty_onerng_mode(usb_option(module, "onerng_mode"), err, errlen) == -1)
		return -1;
	if (usb_tty_knock_baud(usb_option(module, "truerngpro_mode")) == 0) {
		snprintf(err, errlen, "usb:truerngpro_mode: '%s' is not normal, rng1white or "
		    "rng2white", usb_option(module, "truerngpro_mode"));
		return -1;
	}
	return 0;
}

/* usb_tty_find's callback: add a key found in sysfs. */
static void
usb_found_tty(const struct usb_tty_found *f, void *arg)
{
	struct entropyd_module *module = arg;
	struct usb_key *k;
	char id[128], device[PATH_MAX];

	snprintf(id, sizeof id, "%s-%s", f->model->name, f->port);
	snprintf(device, sizeof device, "/dev/%s", f->tty);
	if ((k = usb_key_get(module, id)) == NULL)
		return;
	k->model = f->model;
	snprintf(k->tty, sizeof k->tty, "%s", device);
	usb_add(module, k, device);
}

/* The key given with usb:tty. */
static int
usb_probe_tty(struct entropyd_module *module, const char *tty)
{
	const struct usb_tty_model *m = usb_tty_model_by_name(usb_option(module, "model"));
	const char *base = strrchr(tty, '/');
	struct usb_key *k;
	struct stat st;
	char id[128];

	if (m == NULL)
		return 0;
	if (stat(tty, &st) == -1) {
		usb_host->unusable(module, "%s: %s", tty, strerror(errno));
		return 0;
	}
	snprintf(id, sizeof id, "%s-%s", m->name, base != NULL ? base + 1 : tty);
	if ((k = usb_key_get(module, id)) == NULL)
		return 0;
	k->model = m;
	snprintf(k->tty, sizeof k->tty, "%s", tty);
	return usb_add(module, k, tty);
}

#ifdef HAVE_LIBUSB
/* Start libusb once; NULL with a reason when it cannot start. */
static libusb_context *
usb_libusb(struct entropyd_module *module)
{
	int rc;

	if (usb_ctx == NULL && (rc = libusb_init(&usb_ctx)) != 0) {
		usb_host->unusable(module, "libusb: %s", libusb_error_name(rc));
		usb_ctx = NULL;
	}
	return usb_ctx;
}

static bool usb_key_is(const struct usb_key *, libusb_device *);
static int usb_add_chaoskey(struct entropyd_module *, libusb_device *, bool);

/* The event thread: libusb's event handling, until shutdown interrupts it. */
static void *
usb_thread_main(void *unused)
{
	/* A day: libusb wants a bound, and a wake-up a day is no cost. */
	struct timeval day = { 86400, 0 };

	while (!__atomic_load_n(&usb_thread_stop, __ATOMIC_ACQUIRE))
		libusb_handle_events_timeout_completed(usb_ctx, &day, &usb_thread_stop);
	return NULL;
}

/* On the loop: handle the queued hotplug events. */
static void
usb_hotplug_run(struct entropyd_module *unused, void *arg)
{
	struct usb_event *e;
	struct usb_key *k;

	for (;;) {
		pthread_mutex_lock(&usb_events_lock);
		if ((e = usb_events) != NULL && (usb_events = e->next) == NULL)
			usb_events_tail = &usb_events;
		pthread_mutex_unlock(&usb_events_lock);
		if (e == NULL)
			return;
		if (e->arrived)
			usb_add_chaoskey(e->module, e->dev, e->module == usb_hotplugs[1].module);
		else
			for (k = usb_keys; k != NULL; k = k->next)
				if (k->module == e->module && k->instance != NULL &&
				    k->model->protocol == USB_TTY_NONE && usb_key_is(k, e->dev))
					usb_host->instance_gone(k->instance, "unplugged");
		libusb_unref_device(e->dev);
		free(e);
	}
}

/* On the event thread: queue the event, and have the loop handle it. */
static int LIBUSB_CALL
usb_hotplug_event(libusb_context *ctx, libusb_device *dev, libusb_hotplug_event event,
    void *module)
{
	struct usb_event *e;

	if ((e = calloc(1, sizeof *e)) == NULL)
		return 0;
	e->module = module;
	e->dev = libusb_ref_device(dev);
	e->arrived = event == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED;
	pthread_mutex_lock(&usb_events_lock);
	*usb_events_tail = e;
	usb_events_tail = &e->next;
	pthread_mutex_unlock(&usb_events_lock);
	usb_host->defer(module, usb_hotplug_run, NULL);
	return 0;
}

/* Watch for ChaosKeys plugged in or out for a module, once; start the thread. */
static void
usb_hotplug_start(struct entropyd_module *module, bool raw)
{
	const struct usb_tty_model *model = usb_tty_model_by_name("chaoskey");
	struct usb_hotplug *h = &usb_hotplugs[raw];
	int rc;

	if (h->module != NULL || !ENTROPYD_HOST_HAS(usb_host, instance_gone) ||
	    !libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG))
		return;
	rc = libusb_hotplug_register_callback(usb_ctx, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
	    LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT, 0, model->vid, model->pid,
	    LIBUSB_HOTPLUG_MATCH_ANY, usb_hotplug_event, module, &h->handle);
	if (rc != LIBUSB_SUCCESS) {
		usb_host->module_log(module, ENTROPYD_LOG_WARNING, "libusb hotplug: %s; a key "
		    "plugged in later is found on SIGHUP", libusb_error_name(rc));
		return;
	}
	h->module = module;
	if (usb_thread_running)
		return;
	usb_thread_stop = 0;
	if ((rc = pthread_create(&usb_thread, NULL, usb_thread_main, NULL)) != 0) {
		usb_host->module_log(module, ENTROPYD_LOG_WARNING, "libusb event thread: %s",
		    strerror(rc));
		libusb_hotplug_deregister_callback(usb_ctx, h->handle);
		h->module = NULL;
		return;
	}
	usb_thread_running = true;
}

/*
 * A key's serial number cut to [A-Za-z0-9._-], or "" when it has none. It
 * takes two control transfers on the loop's thread, bounded by libusb's
 * timeout of one second; a key answers them in a millisecond or two.
 */
static void
usb_serial(libusb_device *dev, uint8_t index, char *serial, size_t len)
{
	libusb_device_handle *h;
	unsigned char buf[USB_SERIAL_BYTES];
	int n;

	serial[0] = '\0';
	if (index == 0 || len == 0 || libusb_open(dev, &h) != 0)
		return;
	n = libusb_get_string_descriptor_ascii(h, index, buf, sizeof buf);
	libusb_close(h);
	usb_tty_name_part(buf, n, serial, len);
}

/* Add (or find again) the instance of one ChaosKey on the bus. */
static int
usb_add_chaoskey(struct entropyd_module *module, libusb_device *dev, bool raw)
{
	const struct usb_tty_model *model = usb_tty_model_by_name("chaoskey");
	struct libusb_device_descriptor desc;
	uint8_t ports[USB_MAX_PORTS];
	struct usb_key *k;
	char id[128], device[64], serial[USB_SERIAL_BYTES];
	int j, len, nports;

	if (libusb_get_device_descriptor(dev, &desc) != 0 || desc.idVendor != model->vid ||
	    desc.idProduct != model->pid)
		return 0;
	if ((nports = libusb_get_port_numbers(dev, ports, USB_MAX_PORTS)) < 0)
		nports = 0;
	usb_serial(dev, desc.iSerialNumber, serial, sizeof serial);
	if (serial[0] != '\0')
		len = snprintf(id, sizeof id, "%s%s", raw ? "" : "chaoskey-", serial);
	else {
		/* Named by bus and port path, as the kernel names USB devices. */
		len = snprintf(id, sizeof id, "%s%u", raw ? "" : "chaoskey-",
		    libusb_get_bus_number(dev));
		for (j = 0; j < nports; j++)
			len += snprintf(id + len, sizeof id - (size_t)len, "%c%u", j ? '.' : '-',
			    ports[j]);
		if (nports == 0)
			snprintf(id + len, sizeof id - (size_t)len, "-addr%u",
			    libusb_get_device_address(dev));
	}
	if ((k = usb_key_get(module, id)) == NULL)
		return 0;
	k->model = model;
	k->raw = raw;
	k->bus = libusb_get_bus_number(dev);
	k->address = libusb_get_device_address(dev);
	k->nports = nports;
	memcpy(k->ports, ports, sizeof k->ports);
	snprintf(device, sizeof device, "/dev/bus/usb/%03u/%03u", k->bus, k->address);
	return usb_add(module, k, device);
}

/* Add an instance per ChaosKey on the bus. */
static int
usb_probe_chaoskeys(struct entropyd_module *module, bool raw)
{
	libusb_device **list;
	char bus[PATH_MAX];
	ssize_t n, i;
	int added = 0;

	/* No USB bus, no key to come: do not load libusb for nothing. */
	snprintf(bus, sizeof bus, "%s/bus/usb", *usb_option(module, "sysfs") != '\0' ?
	    usb_option(module, "sysfs") : "/sys");
	if (access(bus, F_OK) == -1)
		return 0;
	if (usb_libusb(module) == NULL)
		return 0;
	usb_hotplug_start(module, raw);
	if ((n = libusb_get_device_list(usb_ctx, &list)) < 0) {
		usb_host->unusable(module, "libusb: %s", libusb_error_name((int)n));
		return 0;
	}
	for (i = 0; i < n; i++)
		added += usb_add_chaoskey(module, list[i], raw);
	libusb_free_device_list(list, 1);
	return added;
}

/* Whether a listed device is this key (same bus and port path, or address). */
static bool
usb_key_is(const struct usb_key *k, libusb_device *dev)
{
	uint8_t ports[USB_MAX_PORTS];
	int n;

	if (libusb_get_bus_number(dev) != k->bus)
		return false;
	if (k->nports == 0)
		return libusb_get_device_address(dev) == k->address;
	n = libusb_get_port_numbers(dev, ports, USB_MAX_PORTS);
	return n == k->nports && memcmp(ports, k->ports, (size_t)n) == 0;
}

/* Open a ChaosKey: find it again, detach a kernel driver, claim it. */
static int
usb_open_chaoskey(struct usb_state *st)
{
	struct libusb_device_descriptor desc;
	libusb_device **list, *dev = NULL;
	ssize_t n, i;
	int rc;

	if (usb_ctx == NULL || (n = libusb_get_device_list(usb_ctx, &list)) < 0) {
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "libusb is not available");
		return -1;
	}
	for (i = 0; i < n && dev == NULL; i++)
		if (usb_key_is(st->key, list[i]) &&
		    libusb_get_device_descriptor(list[i], &desc) == 0 &&
		    desc.idVendor == st->key->model->vid && desc.idProduct == st->key->model->pid)
			dev = list[i];
	if (dev == NULL) {
		libusb_free_device_list(list, 1);
		usb_host->log(st->instance, ENTROPYD_LOG_WARNING, "not on the bus (unplugged)");
		errno = ENODEV;
		return -1;
	}
	rc = libusb_open(dev, &st->handle);
	libusb_free_device_list(list, 1);
	if (rc != 0) {
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "open: %s", libusb_error_name(rc));
		return -1;
	}
	/* The kernel's chaoskey driver may hold it: detach, reattach on release. */
	rc = libusb_set_auto_detach_kernel_driver(st->handle, 1);
	if (rc != 0 && rc != LIBUSB_ERROR_NOT_SUPPORTED)
		usb_host->log(st->instance, ENTROPYD_LOG_WARNING, "cannot detach the kernel "
		    "driver: %s", libusb_error_name(rc));
	if ((rc = libusb_claim_interface(st->handle, USB_CHAOSKEY_INTERFACE)) != 0) {
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "claim interface: %s",
		    libusb_error_name(rc));
		libusb_close(st->handle);
		st->handle = NULL;
		return -1;
	}
	st->endpoint = st->key->raw ? USB_CHAOSKEY_RAW_EP : USB_CHAOSKEY_COOKED_EP;
	return 0;
}

/* Read a ChaosKey endpoint: whole transfers into a buffer, handed out as asked. */
static ssize_t
usb_read_chaoskey(struct usb_state *st, void *buf, size_t len)
{
	int got = 0, rc;

	if (st->off == st->len) {
		st->off = st->len = 0;
		__atomic_add_fetch(&usb_transfers, 1, __ATOMIC_ACQ_REL);
		rc = libusb_bulk_transfer(st->handle, st->endpoint, st->buf, sizeof st->buf,
		    &got, USB_TRANSFER_TIMEOUT_MS);
		__atomic_sub_fetch(&usb_transfers, 1, __ATOMIC_ACQ_REL);
		if (got > 0 && (rc == 0 || rc == LIBUSB_ERROR_TIMEOUT))
			st->len = (size_t)got;
		else if (rc == 0 || rc == LIBUSB_ERROR_TIMEOUT || rc == LIBUSB_ERROR_INTERRUPTED)
			return ENTROPYD_READ_AGAIN;
		else {
			if (rc == LIBUSB_ERROR_PIPE) {
				usb_host->log(st->instance, ENTROPYD_LOG_WARNING,
				    "endpoint 0x%02x stalled", st->endpoint);
				libusb_clear_halt(st->handle, st->endpoint);
				errno = EPIPE;
			} else if (rc == LIBUSB_ERROR_NO_DEVICE) {
				usb_host->log(st->instance, ENTROPYD_LOG_WARNING, "unplugged");
				errno = ENODEV;
			} else {
				usb_host->log(st->instance, ENTROPYD_LOG_WARNING,
				    "bulk transfer: %s", libusb_error_name(rc));
				errno = EIO;
			}
			return ENTROPYD_READ_ERROR;
		}
	}
	if (len > st->len - st->off)
		len = st->len - st->off;
	memcpy(buf, st->buf + st->off, len);
	explicit_bzero(st->buf + st->off, len);
	st->off += len;
	return (ssize_t)len;
}
#endif /* HAVE_LIBUSB */

/* Find every known key: the given tty, or ttyACMs in sysfs and ChaosKeys. */
static int
usb_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	const char *tty;
	int n;

	usb_host = host;
	tty = usb_option(module, "tty");
	if (*tty != '\0')
		return usb_probe_tty(module, tty);
	n = usb_tty_find(usb_option(module, "sysfs"), usb_found_tty, module);
	if (n < 0)
		n = 0;
#ifdef HAVE_LIBUSB
	if (!usb_raw_selected)
		n += usb_probe_chaoskeys(module, false);
	if (n == 0)
		host->unusable(module, "no USB noise key found (ChaosKey, TrueRNG, TrueRNGpro, "
		    "OneRNG)");
#else
	if (n == 0)
		host->unusable(module, "no CDC-ACM noise key found (TrueRNG, TrueRNGpro, "
		    "OneRNG); ChaosKey: built without libusb");
#endif
	return n;
}

/* Note that chaoskey_raw takes the ChaosKeys (configure runs only when selected). */
static int
usb_raw_configure(struct entropyd_module *module, const struct entropyd_host *host,
    char *err, size_t errlen)
{
	usb_host = host;
	usb_raw_selected = true;
	return 0;
}

/* Find ChaosKeys for their raw endpoint. */
static int
usb_raw_probe(struct entropyd_module *module, const struct entropyd_host *host)
{
	int n = 0;

	usb_host = host;
#ifdef HAVE_LIBUSB
	if ((n = usb_probe_chaoskeys(module, true)) == 0)
		host->unusable(module, "no ChaosKey found");
#else
	host->unusable(module, "built without libusb");
#endif
	return n;
}

/* Put a CDC-ACM key's tty in raw mode and start it as its model wants. */
static int
usb_open_tty(struct usb_state *st)
{
	struct entropyd_module *module = usb_host->instance_module(st->instance);
	const struct usb_tty_model *m = st->key->model;
	char err[128];
	int rc, saved;

	if ((st->fd = open(st->key->tty, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		saved = errno;
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "%s: %s", st->key->tty,
		    strerror(saved));
		errno = saved;
		return -1;
	}
	if (m->protocol == USB_TTY_KNOCK)
		rc = usb_tty_knock(&usb_tty_sys, st->fd,
		    usb_tty_knock_baud(usb_option(module, "truerngpro_mode")));
	else
		rc = usb_tty_raw(&usb_tty_sys, st->fd, USB_TTY_BAUD);
	if (rc == -1) {
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "%s: termios: %s", st->key->tty,
		    strerror(errno));
		goto fail;
	}
	tcflush(st->fd, TCIFLUSH);
	if ((rc = usb_tty_dtr(&usb_tty_sys, st->fd)) == -1) {
		usb_host->log(st->instance, ENTROPYD_LOG_ERR, "%s: DTR: %s", st->key->tty,
		    strerror(errno));
		goto fail;
	}
	if (rc == 1)
		usb_host->log(st->instance, ENTROPYD_LOG_DEBUG, "%s has no modem lines; DTR "
		    "not set", st->key->tty);
	if (m->protocol == USB_TTY_ONERNG) {
		st->onerng_mode = usb_tty_onerng_mode(usb_option(module, "onerng_mode"), err,
		    sizeof err);
		if (st->onerng_mode < 0 || usb_tty_onerng_start(&usb_tty_sys, st->fd,
		    st->onerng_mode) == -1) {
			usb_host->log(st->instance, ENTROPYD_LOG_ERR, "%s: starting: %s",
			    st->key->tty, st->onerng_mode < 0 ? err : strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	saved = errno;
	close(st->fd);
	st->fd = -1;
	errno = saved;
	return -1;
}

/* Open a key found by probe. */
static int
usb_open(struct entropyd_instance *inst, void **state)
{
	struct usb_state *st;
	int rc;

	if (usb_host == NULL || (st = calloc(1, sizeof *st)) == NULL) {
		errno = usb_host == NULL ? EINVAL : ENOMEM;
		return -1;
	}
	st->instance = inst;
	st->key = usb_host->instance_cookie(inst);
	st->fd = -1;
	if (st->key->model->protocol != USB_TTY_NONE)
		rc = usb_open_tty(st);
	else
#ifdef HAVE_LIBUSB
		rc = usb_open_chaoskey(st);
#else
		rc = -1;
#endif
	if (rc == -1) {
		free(st);
		return -1;
	}
	*state = st;
	return 0;
}

/* Read what the tty has; a hung-up tty (unplugged key) is an error. */
static ssize_t
usb_read_tty(struct usb_state *st, void *buf, size_t len)
{
	ssize_t n = read(st->fd, buf, len);

	if (n > 0)
		return n;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return ENTROPYD_READ_AGAIN;
	if (n == 0)
		errno = ENODEV;
	usb_host->log(st->instance, ENTROPYD_LOG_WARNING, "%s: %s", st->key->tty,
	    n == 0 ? "hung up (unplugged?)" : strerror(errno));
	return ENTROPYD_READ_ERROR;
}

static ssize_t
usb_read(void *state, void *buf, size_t len)
{
	struct usb_state *st = state;

	if (st->fd != -1)
		return usb_read_tty(st, buf, len);
#ifdef HAVE_LIBUSB
	return usb_read_chaoskey(st, buf, len);
#else
	errno = ENODEV;
	return ENTROPYD_READ_ERROR;
#endif
}

/*
 * The VM generation changed: drop what a tty or a ChaosKey transfer holds
 * from before it.
 */
static void
usb_forget(void *state)
{
	struct usb_state *st = state;

	if (st->fd != -1)
		tcflush(st->fd, TCIFLUSH);
#ifdef HAVE_LIBUSB
	explicit_bzero(st->buf, sizeof st->buf);
	st->off = st->len = 0;
#endif
}

/* A tty is polled by the loop; a ChaosKey is read from the reader thread. */
static int
usb_pollfd(void *state)
{
	struct usb_state *st = state;

	return st->fd;
}

/* Stop a OneRNG, close the tty; release a ChaosKey (its kernel driver returns). */
static void
usb_close(void *state)
{
	struct usb_state *st = state;

	if (st == NULL)
		return;
	if (st->fd != -1) {
		if (st->key->model->protocol == USB_TTY_ONERNG &&
		    usb_tty_onerng_stop(&usb_tty_sys, st->fd) == -1)
			usb_host->log(st->instance, ENTROPYD_LOG_WARNING, "%s: stopping: %s",
			    st->key->tty, strerror(errno));
		close(st->fd);
	}
#ifdef HAVE_LIBUSB
	if (st->handle != NULL) {
		libusb_release_interface(st->handle, USB_CHAOSKEY_INTERFACE);
		libusb_close(st->handle);
	}
	explicit_bzero(st->buf, sizeof st->buf);
#endif
	free(st);
}

/*
 * The module is unloaded (its instances are gone): forget its keys; once no
 * module watches for hotplug, stop the event thread and libusb.
 */
static void
usb_shutdown(struct entropyd_module *module)
{
	struct usb_key **kp, *k;
#ifdef HAVE_LIBUSB
	struct usb_event **ep, *e;
	size_t i;

	for (i = 0; i < sizeof usb_hotplugs / sizeof usb_hotplugs[0]; i++)
		if (usb_hotplugs[i].module == module) {
			libusb_hotplug_deregister_callback(usb_ctx, usb_hotplugs[i].handle);
			usb_hotplugs[i].module = NULL;
		}
	if (usb_hotplugs[0].module == NULL && usb_hotplugs[1].module == NULL &&
	    usb_thread_running) {
		__atomic_store_n(&usb_thread_stop, 1, __ATOMIC_RELEASE);
		libusb_interrupt_event_handler(usb_ctx);
		pthread_join(usb_thread, NULL);
		usb_thread_running = false;
	}
	/* The module's events still queued: the daemon dropped its calls. */
	pthread_mutex_lock(&usb_events_lock);
	for (ep = &usb_events; (e = *ep) != NULL;) {
		if (e->module == module) {
			*ep = e->next;
			libusb_unref_device(e->dev);
			free(e);
		} else
			ep = &e->next;
	}
	for (usb_events_tail = &usb_events; *usb_events_tail != NULL;)
		usb_events_tail = &(*usb_events_tail)->next;
	pthread_mutex_unlock(&usb_events_lock);
#endif
	for (kp = &usb_keys; (k = *kp) != NULL;) {
		if (k->module == module) {
			*kp = k->next;
			free(k);
		} else
			kp = &k->next;
	}
#ifdef HAVE_LIBUSB
	/*
	 * A reader the daemon gave up on (stuck in a transfer past its stop
	 * time-out) still runs in libusb: tearing libusb down under it aborts
	 * the process. Shutdown comes at exit, so leave libusb to the exit.
	 */
	if (usb_keys == NULL && !usb_thread_running && usb_ctx != NULL &&
	    __atomic_load_n(&usb_transfers, __ATOMIC_ACQUIRE) > 0)
		usb_host->module_log(module, ENTROPYD_LOG_INFO, "a transfer is still under way: "
		    "libusb is left to the exit");
	else if (usb_keys == NULL && !usb_thread_running && usb_ctx != NULL) {
		libusb_exit(usb_ctx);
		usb_ctx = NULL;
	}
#endif
}

/*
 * Credit policy (entropyd(8), CREDIT POLICY): entropy_bits 7 per byte.
 * Every stream this module reads is the key's own whitened output (ChaosKey
 * endpoint 0x85, TrueRNG, TrueRNGpro's whitened modes, OneRNG modes 0, 2,
 * 6): a physical noise source conditioned on the key, not a DRBG, so no
 * reseed bound applies; but whitening hides defects and adds no entropy,
 * and the raw noise behind it is not assessed here, so the credit rests one
 * bit below the 8 the output looks like. The online MCV estimate lowers it
 * when the output shows a defect; operators may lower it; chaoskey_raw
 * measures a ChaosKey's noise itself.
 */
const struct entropyd_source usb_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "usb",
	.description = "USB noise keys: ChaosKey, TrueRNG, TrueRNGpro, OneRNG",
	.flags = ENTROPYD_SOURCE_DEFAULT_ON,
	.entropy_bits = 7.0,
	.sample_bits = 0,
	.options = usb_options,
	.probe = usb_probe,
	.open = usb_open,
	.read = usb_read,
	.pollfd = usb_pollfd,
	.close = usb_close,
	.configure = usb_configure,
	.shutdown = usb_shutdown,
	.forget = usb_forget,
};

/*
 * The ChaosKey's raw endpoint gives 12-bit ADC samples in 16-bit
 * little-endian words. 2 bits per sample is a deliberately low estimate for
 * a noise diode digitised at 12 bits; the RCT and APT run on every sample,
 * and the online estimates (MCV, Markov, Lag on all 12 bits) lower the
 * credit when the noise supports less.
 */
const struct entropyd_source chaoskey_raw_source = {
	.abi_major = ENTROPYD_SOURCE_ABI_MAJOR,
	.abi_minor = ENTROPYD_SOURCE_ABI_MINOR,
	.size = sizeof(struct entropyd_source),
	.name = "chaoskey_raw",
	.description = "ChaosKey raw ADC samples (endpoint 0x86), health-tested per sample",
	.flags = ENTROPYD_SOURCE_RAW_SAMPLES,
	.entropy_bits = 2.0,
	.sample_bits = 12,
	.options = NULL,
	.probe = usb_raw_probe,
	.open = usb_open,
	.read = usb_read,
	.pollfd = usb_pollfd,
	.close = usb_close,
	.configure = usb_raw_configure,
	.shutdown = usb_shutdown,
	.forget = usb_forget,
};
