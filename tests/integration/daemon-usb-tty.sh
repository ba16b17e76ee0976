#!/bin/sh
# The usb source's CDC-ACM path end to end: a pseudo-terminal stands in for a
# OneRNG, a TrueRNGpro and a TrueRNG (tests/fakes/usb-fake-tty on the master
# side checks commands, raw mode and the baud rate, and streams data).
# Background processes are ended by PID; pipelines run under timeout.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
plan 18

size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# daemon LOG ARGS...: start entropyd in the foreground; sets $pid.
daemon() {
	log=$1
	shift
	"$entropyd" -f -d -x all -n usb "$@" 2>"$tmp/$log" &
	pid=$!
	track $pid
}
stopped() { ! kill -0 "$1" 2>/dev/null; }

# 1-6: OneRNG: raw mode, then "cmd0\n" and "cmdO\n"; data passes FIPS; on
# exit "cmdo\n" and "cmdw\n".
# The daemon writes to a pipe and exits when its reader has enough.
start_fake_tty onerng onerng
timeout 120 "$entropyd" -f -d -x all -n usb -O "usb:tty:$pts" -O usb:model:onerng -o - 2>"$tmp/onerng.err" |
    head -c 250000 >"$tmp/onerng.out"
check "OneRNG: output arrives ($(size "$tmp/onerng.out") bytes)" \
    test "$(size "$tmp/onerng.out")" -eq 250000
check "OneRNG: instance named by model and tty" grep -q "usb:onerng-${pts##*/}: reading $pts (polled" "$tmp/onerng.err"
check "OneRNG: the tty went raw before any command" sh -c \
    "grep -n '^raw\$\|^cmd' '$tmp/onerng.log' | head -n 1 | grep -q ':raw\$'"
check "OneRNG: mode then start, nothing unexpected" sh -c \
    "grep '^cmd' '$tmp/onerng.log' | head -n 2 | tr '\n' ' ' | grep -qx 'cmd cmd0 cmd cmdO ' &&
     ! grep -q unexpected '$tmp/onerng.log'"
"$entropytest" <"$tmp/onerng.out" >/dev/null 2>"$tmp/fips"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "OneRNG: the output passes FIPS 140-2 ($passed blocks)" test "${passed:-0}" -ge 30
wait_for 50 grep -q "cmd cmdw" "$tmp/onerng.log"
check "OneRNG: on exit stop then flush" sh -c \
    "grep '^cmd' '$tmp/onerng.log' | tail -n 2 | tr '\n' ' ' | grep -qx 'cmd cmdo cmd cmdw ' &&
     grep -qx stopped '$tmp/onerng.log'"
show_if_failed "$tmp/onerng.log" "$tmp/onerng.err"
stop "$fakepid"

# 7-8: OneRNG mode 2 chosen with -O; a fake expecting mode 0 catches it.
start_fake_tty onerng2 -m 2 onerng
timeout 120 "$entropyd" -f -x all -n usb -O "usb:tty:$pts" -O usb:model:onerng -O usb:onerng_mode:2 -o - \
    2>"$tmp/onerng2.err" | head -c 10000 >"$tmp/onerng2.out"
check "OneRNG mode 2: cmd2 sent, data flows" sh -c \
    "grep -qx 'cmd cmd2' '$tmp/onerng2.log' && test $(size "$tmp/onerng2.out") -eq 10000"
stop "$fakepid"
start_fake_tty onerng0 -m 0 onerng
daemon onerng0.err -O "usb:tty:$pts" -O usb:model:onerng -O usb:onerng_mode:2 -o "$tmp/onerng0.out"
wait_for 100 grep -q "unexpected cmd2" "$tmp/onerng0.log"
check "a wrong OneRNG command is caught by the fake, which sends nothing" sh -c \
    "grep -q 'unexpected cmd2' '$tmp/onerng0.log' && ! grep -q streaming '$tmp/onerng0.log'"
stop "$pid" "$fakepid"

# 9-11: TrueRNGpro: the knock ends at the mode's baud rate (4800, rng1white).
start_fake_tty pro -b 4800 truerngpro
timeout 120 "$entropyd" -f -d -x all -n usb -O "usb:tty:$pts" -O usb:model:truerngpro \
    -O usb:truerngpro_mode:rng1white -o - 2>"$tmp/pro.err" | head -c 100000 >"$tmp/pro.out"
check "TrueRNGpro: output arrives at 4800 baud ($(size "$tmp/pro.out") bytes)" sh -c \
    "test $(size "$tmp/pro.out") -eq 100000 && grep -qx 'speed 4800' '$tmp/pro.log'"
check "TrueRNGpro: the tty is raw and nothing was written to the key" sh -c \
    "grep -qx raw '$tmp/pro.log' && ! grep -q unexpected '$tmp/pro.log'"
check "TrueRNGpro: DTR on a pty is not fatal" sh -c \
    "! grep -q 'DTR:' '$tmp/pro.err' && grep -q 'has no modem lines' '$tmp/pro.err'"
stop "$fakepid"

# 12-13: the key goes away (the pty's master closes): absent, the daemon runs on.
start_fake_tty gone truerng
daemon gone.err -O "usb:tty:$pts" -O usb:model:truerng -o /dev/null
wait_for 100 grep -q "streaming" "$tmp/gone.log"
kill "$fakepid"
# A pty's slave reads end of file, or EIO, once its master closes: either is
# gone. Wait for that line itself: -d logs "absent -> running" at the open,
# long before the key goes.
check "unplugged tty: the instance goes absent" wait_for 100 sh -c \
    "grep -q 'usb:truerng-${pts##*/}: .*\(hung up\|Input/output error\)' '$tmp/gone.err' &&
     grep -q 'usb:truerng-${pts##*/}: read: .*; absent' '$tmp/gone.err'"
# SIGUSR1 until a report finds it absent, not reopened between two retries.
check "unplugged tty: the daemon runs on and reports it absent" wait_for 100 sh -c \
    "kill -USR1 $pid && sleep 0.2 && grep -q 'usb:truerng-${pts##*/}: absent for' '$tmp/gone.err'"
show_if_failed "$tmp/gone.err"
stop "$pid"

# 14-15: a TrueRNG sending stuck bytes is suspended; nothing is written.
start_fake_tty stuck -s truerng
daemon stuck.err -O "usb:tty:$pts" -O usb:model:truerng -o "$tmp/stuck.out"
wait_for 300 grep -q "suspended after" "$tmp/stuck.err"
check "stuck bytes: suspended" grep -q "usb:truerng-${pts##*/}: suspended after" "$tmp/stuck.err"
check "stuck bytes: nothing written" test "$(size "$tmp/stuck.out")" -eq 0
stop "$pid" "$fakepid"

# 16: a key that appears later: a SIGHUP re-probe adds and opens it.
daemon later.err -O "usb:tty:$tmp/later" -O usb:model:truerng -o /dev/null
wait_for 50 grep -q "no usable entropy source" "$tmp/later.err"
start_fake_tty later truerng
ln -s "$pts" "$tmp/later"
kill -HUP "$pid"
wait_for 100 grep -q "usb:truerng-later: reading $tmp/later" "$tmp/later.err"
check "a key that appears later becomes an instance on SIGHUP" \
    grep -q "usb:truerng-later: reading $tmp/later" "$tmp/later.err"
stop "$pid" "$fakepid"

# 17-18: bad options are usage errors.
timeout 120 "$entropyd" -f -x all -n usb -O usb:tty:/dev/null -o "$tmp/x" 2>"$tmp/usage1"
rc=$?
check "usb:tty without usb:model: exit 64, says so" sh -c \
    "test $rc -eq 64 && grep -q 'usb:model' '$tmp/usage1'"
timeout 120 "$entropyd" -f -x all -n usb -O usb:onerng_mode:4 -o "$tmp/x" 2>"$tmp/usage2"
rc=$?
check "OneRNG mode 4 (no noise) is refused: exit 64" sh -c \
    "test $rc -eq 64 && grep -q 'turns every noise source off' '$tmp/usage2'"
finish
