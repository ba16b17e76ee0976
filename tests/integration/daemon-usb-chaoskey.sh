#!/bin/sh
# The usb source's ChaosKey path end to end: umockdev makes libusb see a fake
# ChaosKey whose usbdevfs ioctls tests/fakes/usb-fake-chaoskey answers (fresh
# random bytes per URB, or stuck bytes, a stall, a vanished device on command),
# and plugs keys in and out with uevents that reach libusb's hotplug callbacks.
# Background processes are ended by PID; pipelines run under timeout.
. "$(dirname "$0")/lib.sh"
if sanitized; then asan_option verify_asan_link_order=0; fi
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
entropytest=$top_builddir/entropytest
fake=$top_builddir/tests/fakes/usb-fake-chaoskey
[ -x "$fake" ] || skip_all "built without umockdev (libumockdev-dev) or libusb"
plan 22

size() { stat -c %s "$1" 2>/dev/null || echo 0; }
mkfifo "$tmp/ctl"
# The fake runs under umockdev's preload too: it builds each uevent with
# libudev, which must find the device in the testbed, not in the real /sys.
# Its files are open to all (umask 0): rows 19-20 run the daemon as nobody.
(umask 0; LD_PRELOAD=libumockdev-preload.so.0${LD_PRELOAD:+:$LD_PRELOAD} \
    exec "$fake" "$tmp/dir" "$tmp/ctl" 2>"$tmp/fake.err") &
fakepid=$!
track $fakepid
wait_for 100 test -s "$tmp/dir" || { not_ok "the fake ChaosKey starts"; finish; }
UMOCKDEV_DIR=$(cat "$tmp/dir")
LD_PRELOAD=libumockdev-preload.so.0${LD_PRELOAD:+:$LD_PRELOAD}
export UMOCKDEV_DIR LD_PRELOAD
# control WORD: tell the fake what to do next, and wait until it has: the
# FIFO takes the line at once, the fake acts on it when it runs.
controls=0
control() {
	echo "$1" >"$tmp/ctl"
	controls=$((controls + 1))
	wait_for 300 sh -c "test \$(grep -c '^control: ' '$tmp/fake.err') -ge $controls" ||
	    diag "the fake did not say it did \"$1\""
}
# The key at port 2 has the serial number "TEST 42/a"; the one the hotplug
# rows plug in at port 3 has none.
key=usb:chaoskey-TEST_42_a

# 1-3: data flows from the whitened endpoint and passes FIPS 140-2.
timeout 120 "$entropyd" -f -d -x all -n usb -o - 2>"$tmp/flow.err" | head -c 250000 >"$tmp/flow.out"
check "ChaosKey: output arrives ($(size "$tmp/flow.out") bytes)" test "$(size "$tmp/flow.out")" -eq 250000
check "ChaosKey: named by its serial number (cut to [A-Za-z0-9._-]), endpoint 0x85" sh -c \
    "grep -q '$key: reading /dev/bus/usb/001/002 (reader thread' '$tmp/flow.err' &&
     grep -qx 'endpoint 0x85' '$tmp/fake.err' && ! grep -q 'endpoint 0x86' '$tmp/fake.err'"
"$entropytest" <"$tmp/flow.out" >/dev/null 2>"$tmp/fips"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "ChaosKey: the output passes FIPS 140-2 ($passed blocks of 99)" test "${passed:-0}" -ge 95

# 4-6: a stall: absent, reported, and read again once the key recovers.
"$entropyd" -f -d -x all -n usb -o /dev/null 2>"$tmp/run.err" &
pid=$!
track $pid
wait_for 100 grep -q "$key: reading" "$tmp/run.err"
control stall
wait_for 100 grep -q "$key: read: .*; absent" "$tmp/run.err"
check "a stall: the instance goes absent" sh -c \
    "grep -q '$key: endpoint 0x85 stalled' '$tmp/run.err' && grep -q '$key: read: Broken pipe; absent' '$tmp/run.err'"
# key_report: SIGUSR1, then the key's newest statistics line.
key_report() {
	reports=$(grep -c "$key: [a-z]* for" "$tmp/run.err")
	kill -USR1 "$pid" || return 1
	wait_for 50 sh -c "test \$(grep -c '$key: [a-z]* for' '$tmp/run.err') -gt $reports"
	grep "$key: [a-z]* for" "$tmp/run.err" | tail -n 1
}
# Predicates on a fresh report: absent after the stall; running, having read
# more than $1 bytes.
stall_reported() {
	key_report | grep -q "$key: absent for .*last error: \(.*stalled\|read: Broken pipe\)"
}
reads_past() {
	key_report >"$tmp/report"
	grep -q "$key: running for" "$tmp/report" &&
	    [ "$(sed -n 's/.*; read \([0-9]*\) bytes;.*/\1/p' "$tmp/report")" -gt "$1" ]
}
# A retry (the key still stalling) may be reopening it when a report is made.
check "a stall: SIGUSR1 statistics say absent, with the error" wait_for 100 stall_reported
# Such a retry logs "reading" too: what shows the key read again is its bytes.
read0=$(key_report | sed -n 's/.*; read \([0-9]*\) bytes;.*/\1/p')
control good
check "after the stall the key is read again" wait_for 150 reads_past "${read0:-0}"

# 7-9: NO_DEVICE (unplug): absent, and absent again on each retry.
# The reader thread logs "unplugged" before the loop logs the outcome, and the
# retry's backoff comes after that: wait for the last line each check names,
# in the log since the fault (the stall's retries backed off too).
mark=$(wc -l <"$tmp/run.err")
control nodev
# since_nodev: the daemon's log since the fault.
since_nodev="tail -n +$((mark + 1)) '$tmp/run.err'"
check "NO_DEVICE: the instance goes absent" wait_for 100 sh -c \
    "$since_nodev | grep -q '$key: unplugged' && $since_nodev | grep -q '$key: read: No such device; absent'"
check "NO_DEVICE: retried with backoff, still absent" wait_for 300 sh -c \
    "test \$($since_nodev | grep -c '$key: unplugged') -ge 2 &&
     $since_nodev | sed -n 's/.*$key: retry in \([0-9]*\) ms\$/\1/p' | tail -n 2 |
         { read -r a && read -r b && test \$b -gt \$a; }"
check "the daemon runs on" kill -0 "$pid"
stop "$pid"

# 10-14: hotplug. A key plugged in while the daemon runs: an instance at
# once, named by bus and port without a serial; a key pulled out: absent at
# once, through the hotplug callback (the fake's URBs for it still work, so
# no read fails); plugged in again: the same name, read again.
control good
"$entropyd" -f -x all -n usb -o /dev/null --control-socket "$tmp/sock" 2>"$tmp/hot.err" &
pid=$!
track $pid
wait_for 100 grep -q "$key: reading" "$tmp/hot.err"
control "add 3"
wait_for 100 grep -q "usb:chaoskey-1-3: reading /dev/bus/usb/001/003" "$tmp/hot.err"
check "hotplug: a key plugged in becomes an instance, named by bus and port" \
    grep -q "usb:chaoskey-1-3: reading /dev/bus/usb/001/003" "$tmp/hot.err"
control "remove 2"
wait_for 100 grep -q "$key: unplugged; absent" "$tmp/hot.err"
check "hotplug: a key pulled out goes absent at once, the log names it" \
    grep -q "$key: unplugged; absent" "$tmp/hot.err"
"$entropyctl" -s "$tmp/sock" -j sources "$key" >"$tmp/hot.json" 2>&1
# A retry since the unplug (each second) leaves "not on the bus (unplugged)".
check "hotplug: the control socket says absent, unplugged" sh -c \
    "grep -q '\"state\": \"absent\"' '$tmp/hot.json' && grep -q 'unplugged' '$tmp/hot.json'"
control "add 2"
wait_for 100 sh -c "test \$(grep -c '$key: reading /dev/bus/usb/001/002' '$tmp/hot.err') -ge 2"
check "hotplug: plugged in again, the same name is read again" sh -c \
    "test \$(grep -c '$key: reading /dev/bus/usb/001/002' '$tmp/hot.err') -ge 2"
control "remove 3"
wait_for 100 grep -q "usb:chaoskey-1-3: unplugged; absent" "$tmp/hot.err"
check "hotplug: the key without a serial goes absent too; the daemon runs on" sh -c \
    "grep -q 'usb:chaoskey-1-3: unplugged; absent' '$tmp/hot.err' && kill -0 $pid"
stop "$pid"

# 15-16: stuck bytes from the key: suspended, nothing written.
control stuck
"$entropyd" -f -x all -n usb -o "$tmp/stuck.out" 2>"$tmp/stuck.err" &
pid=$!
track $pid
wait_for 150 grep -q "suspended after" "$tmp/stuck.err"
check "stuck bytes: suspended" grep -q "$key: suspended after" "$tmp/stuck.err"
check "stuck bytes: nothing written" test "$(size "$tmp/stuck.out")" -eq 0
stop "$pid"

# 17-18: chaoskey_raw: the raw endpoint, 12-bit samples through RCT and APT.
control good
timeout 120 "$entropyd" -f -d -x all -n chaoskey_raw -o - 2>"$tmp/raw.err" | head -c 50000 >"$tmp/raw.out"
check "chaoskey_raw: reads endpoint 0x86, output arrives ($(size "$tmp/raw.out") bytes)" sh -c \
    "grep -qx 'endpoint 0x86' '$tmp/fake.err' && test $(size "$tmp/raw.out") -eq 50000"
check "chaoskey_raw: samples pass the start-up tests, 2 bits per sample credited" sh -c \
    "grep -q 'chaoskey_raw:TEST_42_a: start-up tests passed' '$tmp/raw.err' &&
     grep -q 'chaoskey_raw:TEST_42_a: reading .*2 bits per sample' '$tmp/raw.err'"

# 19-20: SIGTERM while a transfer hangs inside libusb (the fake holds its
# URB): the reader is left to finish on its own, and the daemon still ends
# cleanly, libusb not torn down under that reader.
control good
"$entropyd" -f -x all -n usb -o /dev/null 2>"$tmp/wedge.err" &
pid=$!
track $pid
wait_for 100 grep -q "$key: reading" "$tmp/wedge.err"
control wedge
wait_for 100 grep -qx wedged "$tmp/fake.err"
kill "$pid"
wait_for "$(bound 100)" gone "$pid" || kill -KILL "$pid"
wait "$pid"
rc=$?
check "a transfer hanging at SIGTERM: its reader is left behind, said once" sh -c \
    "test \$(grep -c '$key: reader stuck in read()' '$tmp/wedge.err') -eq 1"
check "... and the daemon exits 0 (status $rc)" test "$rc" -eq 0
show_if_failed "$tmp/wedge.err"

# 21-22: with -D the worker (nobody, no capability, its seccomp list) still
# takes a key plugged in after its drop, and reads it from a new thread.
control good
if [ "$(id -u)" -ne 0 ] || ! getent passwd nobody >/dev/null || ! getent group nogroup >/dev/null
then
	skip "-D needs root and the user nobody, group nogroup"
	skip "-D needs root and the user nobody, group nogroup"
else
	chmod -R a+rwX "$UMOCKDEV_DIR"
	chmod a+rx "$tmp"
	no_leak_check_under_seccomp
	"$entropyd" -f -d -D nobody:nogroup -x all -n usb -o /dev/null \
	    --control-socket "$tmp/sockd" 2>"$tmp/drop.err" &
	pid=$!
	track $pid
	wait_for 100 grep -q "worker: running as nobody:nogroup" "$tmp/drop.err"
	control "add 3"
	wait_for 100 grep -q "usb:chaoskey-1-3: reading /dev/bus/usb/001/003" "$tmp/drop.err"
	check "-D: a key plugged in after the drop becomes an instance and is read" sh -c \
	    "sed -n '/worker: running as nobody/,\$p' '$tmp/drop.err' |
	     grep -q 'usb:chaoskey-1-3: reading /dev/bus/usb/001/003'"
	check "-D: ... by a worker without capabilities (CapEff $(sed -n 's/^CapEff:[[:space:]]*//p' /proc/$pid/status))" \
	    grep -q '^CapEff:[[:space:]]*0000000000000000' "/proc/$pid/status"
	stop "$pid"
	control "remove 3"
fi
echo quit >"$tmp/ctl"
[ "$tap_failed" = 0 ] || { diag_file "$tmp/raw.err"; diag "daemon:"; cat "$tmp/run.err" "$tmp/hot.err" | grep -v "fed the" | tail -n 25 | while read -r l; do diag "$l"; done; diag "fake:"; tail -n 10 "$tmp/fake.err" | while read -r l; do diag "$l"; done; }
finish
