/* SPDX-License-Identifier: MIT */
/*
 * The libusb functions the usb source calls, loaded from libusb-1.0 (and
 * with it libudev) on first use: a machine with no USB bus, or a daemon
 * without the usb source, need not map them. The prototypes come from
 * libusb's own header, so a mismatch does not compile.
 */
#include <libusb.h>

#include "lazylib.h"

#define USB_DL_FAIL LIBUSB_ERROR_NOT_SUPPORTED	/* what a call returns without libusb */

static struct lazylib usb_dl = LAZYLIB_INIT("libusb-1.0.so.0");

/* libusb's name for an error, or why libusb could not be loaded. */
const char *
libusb_error_name(int errcode)
{
	LAZYLIB_GET(&usb_dl, const char *, libusb_error_name, (int),
	    return errcode == USB_DL_FAIL ? lazylib_error(&usb_dl) : "LIBUSB_ERROR_OTHER")
	return f(errcode);
}

LAZYLIB_FN(&usb_dl, int, libusb_init, (libusb_context **ctx), (ctx), USB_DL_FAIL)
LAZYLIB_VOID_FN(&usb_dl, libusb_exit, (libusb_context *ctx), (ctx))
LAZYLIB_FN(&usb_dl, int, libusb_has_capability, (uint32_t capability), (capability), 0)
LAZYLIB_FN(&usb_dl, ssize_t, libusb_get_device_list,
    (libusb_context *ctx, libusb_device ***list), (ctx, list), USB_DL_FAIL)
LAZYLIB_VOID_FN(&usb_dl, libusb_free_device_list, (libusb_device **list, int unref_devices),
    (list, unref_devices))
LAZYLIB_FN(&usb_dl, libusb_device *, libusb_ref_device, (libusb_device *dev), (dev), NULL)
LAZYLIB_VOID_FN(&usb_dl, libusb_unref_device, (libusb_device *dev), (dev))
LAZYLIB_FN(&usb_dl, uint8_t, libusb_get_bus_number, (libusb_device *dev), (dev), 0)
LAZYLIB_FN(&usb_dl, uint8_t, libusb_get_device_address, (libusb_device *dev), (dev), 0)
LAZYLIB_FN(&usb_dl, int, libusb_get_port_numbers,
    (libusb_device *dev, uint8_t *port_numbers, int port_numbers_len),
    (dev, port_numbers, port_numbers_len), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_get_device_descriptor,
    (libusb_device *dev, struct libusb_device_descriptor *desc), (dev, desc), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_open, (libusb_device *dev, libusb_device_handle **dev_handle),
    (dev, dev_handle), USB_DL_FAIL)
LAZYLIB_VOID_FN(&usb_dl, libusb_close, (libusb_device_handle *dev_handle), (dev_handle))
LAZYLIB_FN(&usb_dl, int, libusb_get_string_descriptor_ascii,
    (libusb_device_handle *dev_handle, uint8_t desc_index, unsigned char *data, int length),
    (dev_handle, desc_index, data, length), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_set_auto_detach_kernel_driver,
    (libusb_device_handle *dev_handle, int enable), (dev_handle, enable), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_claim_interface,
    (libusb_device_handle *dev_handle, int interface_number), (dev_handle, interface_number),
    USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_release_interface,
    (libusb_device_handle *dev_handle, int interface_number), (dev_handle, interface_number),
    USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_clear_halt, (libusb_device_handle *dev_handle,
    unsigned char endpoint), (dev_handle, endpoint), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_bulk_transfer,
    (libusb_device_handle *dev_handle, unsigned char endpoint, unsigned char *data, int length,
    int *actual_length, unsigned int timeout),
    (dev_handle, endpoint, data, length, actual_length, timeout), USB_DL_FAIL)
LAZYLIB_FN(&usb_dl, int, libusb_handle_events_timeout_completed,
    (libusb_context *ctx, struct timeval *tv, int *completed), (ctx, tv, completed),
    USB_DL_FAIL)
LAZYLIB_VOID_FN(&usb_dl, libusb_interrupt_event_handler, (libusb_context *ctx), (ctx))
LAZYLIB_FN(&usb_dl, int, libusb_hotplug_register_callback,
    (libusb_context *ctx, int events, int flags, int vendor_id, int product_id, int dev_class,
    libusb_hotplug_callback_fn cb_fn, void *user_data,
    libusb_hotplug_callback_handle *callback_handle),
    (ctx, events, flags, vendor_id, product_id, dev_class, cb_fn, user_data, callback_handle),
    USB_DL_FAIL)
LAZYLIB_VOID_FN(&usb_dl, libusb_hotplug_deregister_callback,
    (libusb_context *ctx, libusb_hotplug_callback_handle callback_handle),
    (ctx, callback_handle))
