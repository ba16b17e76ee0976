#!/bin/sh
# systemd readiness through NOTIFY_SOCKET, and the kernel policy's real ioctls as root.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
listen=$top_builddir/tests/fakes/notify-listen
plan 7

# 1-2: test mode: READY=1 once data flows, STATUS= names the sources.
mkfifo "$tmp/in"
head -c 300000 /dev/urandom >"$tmp/in" &
track $!
"$listen" "$tmp/notify" 30 >"$tmp/messages" &
track $!
wait_for 50 test -S "$tmp/notify"
NOTIFY_SOCKET=$tmp/notify "$entropyd" -t -x all -n file -O "file:path:$tmp/in" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "READY=1" "$tmp/messages"
check "READY=1 arrives once data flows" grep -qx "READY=1" "$tmp/messages"
check "STATUS= names the running source" grep -q "^STATUS=1 running: file running" "$tmp/messages"
kill "$pid"
wait "$pid" 2>/dev/null
wait_for 30 grep -q "STOPPING=1" "$tmp/messages"
check "STOPPING=1 at exit" grep -qx "STOPPING=1" "$tmp/messages"

# 4: a start that fails tells systemd why: STATUS= and ERRNO= before the exit.
"$listen" "$tmp/notify-fail" 30 >"$tmp/messages-fail" &
track $!
wait_for 50 test -S "$tmp/notify-fail"
NOTIFY_SOCKET=$tmp/notify-fail "$entropyd" -f -t -x all -n hwrng -r "$tmp/no-such-rng" \
    2>"$tmp/log-fail"
rc=$?
wait_for 30 grep -q "^ERRNO=" "$tmp/messages-fail"
check "a failed start: exit 66, STATUS= with the reason and ERRNO=2 (ENOENT)" sh -c \
    "test $rc -eq 66 && grep -q '^STATUS=entropyd: hwrng: $tmp/no-such-rng: No such file' \
        '$tmp/messages-fail' && grep -qx 'ERRNO=2' '$tmp/messages-fail'"

current=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)
if [ "$(id -u)" -ne 0 ] || [ ! -r /dev/hwrng ] || [ -z "$current" ] || [ "$current" = none ]; then
	skip "the kernel policy's ioctls need root and a usable /dev/hwrng"
	skip "the kernel policy's ioctls need root and a usable /dev/hwrng"
	skip "the kernel policy's ioctls need root and a usable /dev/hwrng"
	finish
fi

# 5-7: as root: host mix, first credited feed, READY=1 after it, a top-up with RNDRESEEDCRNG.
# READY=1 comes from the feeder, after its first credited RNDADDENTROPY; the
# feeder is always under its seccomp filter.
no_leak_check_under_seccomp
"$listen" "$tmp/notify2" 30 >"$tmp/messages2" &
track $!
wait_for 50 test -S "$tmp/notify2"
NOTIFY_SOCKET=$tmp/notify2 "$entropyd" -f -d -x all -n hwrng -R 1 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "READY=1" "$tmp/messages2"
check "root: host data mixed first, then the first credited feed, then READY=1" sh -c \
    "grep -n 'mixed [1-9][0-9]* bytes of host-unique data' '$tmp/log' | cut -d: -f1 >'$tmp/l1' &&
     grep -n 'first feed: ' '$tmp/log' | cut -d: -f1 >'$tmp/l2' &&
     test \"\$(cat '$tmp/l1')\" -lt \"\$(cat '$tmp/l2')\" && grep -qx READY=1 '$tmp/messages2'"
# The burst must be fed before the first -R 1 top-up counts, at the pace of
# a hwrng other tests may read too: ask SIGUSR1 until a report shows a
# top-up and its reseed, rather than once after a fixed pause.
reseeded() {
	kill -USR1 "$pid" && sleep 0.3 &&
	    grep -Eq "phase steady, [1-9][0-9]* top-ups, [1-9][0-9]* reseeds" "$tmp/log"
}
check "root: top-ups are followed by RNDRESEEDCRNG" wait_for 100 reseeded
check "root: no ioctl failed" sh -c "! grep -q 'RNDRESEEDCRNG\|RNDADDENTROPY' '$tmp/log'"
finish
