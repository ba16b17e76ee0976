#!/bin/sh
# Optional libraries are mapped only when what needs them runs: libasound
# when the audio source is probed, libseccomp when the worker applies the
# sandbox (with -D, or under a feeder),
# libusb when the usb source finds a USB bus to look on.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 5

have() { grep -q "^#define $1 1" "$top_builddir/config.h"; }

# 1-2: the file source alone: neither library is mapped.
head -c 300000 /dev/urandom >"$tmp/data"
"$entropyd" -f -d -x all -n file -O "file:path:$tmp/data" -O file:entropy:8 \
    --control-socket "$tmp/ctl.sock" -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 200 grep -q "source drained" "$tmp/log"
grep -E 'libasound|libseccomp' /proc/$pid/maps >"$tmp/maps"
if have HAVE_ALSA; then
	check "libasound is not mapped while the audio source is off" \
	    test ! -s "$tmp/maps" -a -s "$tmp/out"
else
	skip "built without ALSA"
fi
if have HAVE_SECCOMP; then
	check "libseccomp is not mapped without -D" sh -c \
	    "! grep -q libseccomp '$tmp/maps' && grep -q 'source drained' '$tmp/log'"
else
	skip "built without libseccomp"
fi
stop "$pid"

# 3: the audio source probed (a device that is not there): libasound is
# loaded then, and the probe says why the device is unusable.
if have HAVE_ALSA; then
	"$entropyd" -f -d -x all -n audio -n file -O audio:device:hw:99 \
	    -O "file:path:$tmp/data" -O file:entropy:8 \
	    --control-socket "$tmp/ctl2.sock" -o "$tmp/out2" 2>"$tmp/log2" &
	pid=$!
	track $pid
	wait_for 200 grep -q "source drained" "$tmp/log2"
	check "probing the audio source loads libasound and reports the device" sh -c \
	    "grep -q libasound /proc/$pid/maps && grep -q 'audio: not used: .*hw:99' '$tmp/log2'"
	show_if_failed "$tmp/log2"
	stop "$pid"
else
	skip "built without ALSA"
fi

# 4-5: the usb source on a machine without a USB bus does not load libusb;
# with a bus (only its sysfs directory here) it does, to look and to listen
# for keys plugged in later.
# usb_run NAME SYSFS: the usb and file sources, usb looking at SYSFS.
usb_run() {
	"$entropyd" -f -d -x all -n usb -n file -O "usb:sysfs:$2" -O "file:path:$tmp/data" \
	    -O file:entropy:8 --control-socket "$tmp/$1.sock" -o "$tmp/$1.out" 2>"$tmp/$1.log" &
	pid=$!
	track $pid
	wait_for 200 grep -q "source drained" "$tmp/$1.log"
	grep -c 'libusb' /proc/$pid/maps >"$tmp/$1.maps"
	stop "$pid"
}
if have HAVE_LIBUSB; then
	mkdir -p "$tmp/nobus/class/tty" "$tmp/bus/class/tty" "$tmp/bus/bus/usb"
	usb_run nobus "$tmp/nobus"
	check "no USB bus: libusb is not mapped, the usb source is unusable" sh -c \
	    "test \$(cat '$tmp/nobus.maps') -eq 0 && grep -q 'usb: not used: no USB noise key' '$tmp/nobus.log'"
	usb_run bus "$tmp/bus"
	check "a USB bus: libusb is loaded to look for keys" test "$(cat "$tmp/bus.maps")" -gt 0
else
	skip "built without libusb"
	skip "built without libusb"
fi
finish
