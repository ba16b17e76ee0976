#!/bin/sh
# SPDX-License-Identifier: MIT
# Good plugins: the example serial source (options, a pseudo-terminal as its
# board, reconnection), the host table's entropy limit, and SIGHUP loading
# a plugin dropped in while the daemon runs.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
ptynoise=$top_builddir/tests/fakes/ptynoise
libs=$top_builddir/tests/plugins/.libs
plan 15

size() { stat -c %s "$1" 2>/dev/null || echo 0; }
hexat() { od -An -tx1 -v -j "$2" -N "$3" "$1" | tr -d ' \n'; }
[ -c /dev/ptmx ] || skip_all "no /dev/ptmx: pseudo-terminals unavailable"

mkdir "$tmp/plugins"
cp "$top_builddir/examples/.libs/serial.so" "$libs/testgood.so" "$tmp/plugins/"

# 1-2: the example plugin's source is listed and has its options.
"$entropyd" -l --plugin-dir "$tmp/plugins" >"$tmp/list" 2>"$tmp/log"
check "-l lists the serial plugin's source, off by default" sh -c \
    'grep -q "^serial  *off  *no  *unusable: no device given" "$1" &&
     grep -qx "plugin $2/serial.so: source serial" "$1"' sh "$tmp/list" "$tmp/plugins"
"$entropyd" -O serial --plugin-dir "$tmp/plugins" >"$tmp/opts" 2>/dev/null
check "-O serial prints the plugin's options" sh -c \
    'grep -q "serial:device" "$1" && grep -q "serial:baud .*(default 115200)" "$1" &&
     grep -q "serial:entropy" "$1"' sh "$tmp/opts"

# 3-4: -O reaches the plugin: an unknown key is a usage error; a bad value
# fails its configure(), which refuses the plugin but not the daemon.
"$entropyd" -l --plugin-dir "$tmp/plugins" -O serial:parity:even 2>"$tmp/log" >/dev/null
rc=$?
check "-O serial:parity:even: exit 64, no such option" sh -c \
    'test "$1" -eq 64 && grep -q "source .serial. has no option .parity." "$2"' sh $rc "$tmp/log"
"$entropyd" -l -n serial -O serial:device:/dev/null -O serial:baud:12345 \
    --plugin-dir "$tmp/plugins" >"$tmp/list" 2>"$tmp/log"
rc=$?
check "-O serial:baud:12345: the plugin is refused (init failed), -l still exits 0" sh -c \
    'test "$1" -eq 0 && test $(grep -c refused "$2") -eq 1 &&
     grep -q "serial.so: refused: init failed: serial: baud rate .12345. is not one of" "$2" &&
     grep -q "^refused plugin .*serial.so: init failed" "$3"' sh $rc "$tmp/log" "$tmp/list"

# 5-8: a pseudo-terminal as the noise board, through the same pipeline as
# the built-ins, into a file sink. ptynoise reads a FIFO it also holds open
# for writing, so the noise is sent only once the daemon has the line open.
head -c 1500000 /dev/urandom >"$tmp/noise"
mkfifo "$tmp/feed"
"$ptynoise" "$tmp/tty" 0<>"$tmp/feed" &
board=$!
track $board
wait_for 50 test -L "$tmp/tty"
"$entropyd" -f -d -x all -n serial -O "serial:device:$tmp/tty" -O serial:baud:4000000 \
    -O serial:entropy:8 --plugin-dir "$tmp/plugins" -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -qs "serial: reading $tmp/tty (polled, 8 bits per byte credited)" "$tmp/log"
check "the serial source opens the pseudo-terminal and is polled" \
    grep -q "serial: reading $tmp/tty (polled" "$tmp/log"
cat "$tmp/noise" >"$tmp/feed"
wait_for 300 size_at_least "$tmp/out" 400000
check "the board's noise reaches the file sink ($(size "$tmp/out") bytes)" \
    test "$(size "$tmp/out")" -ge 400000
want=$(dd if="$tmp/noise" bs=1 skip=4 count=40 2>/dev/null | sha256sum | cut -c1-64)
check "the first output is SHA-256 of the board's bytes 4..43, as for built-ins" \
    test "$want" = "$(hexat "$tmp/out" 0 32)"
"$entropytest" <"$tmp/out" >/dev/null 2>"$tmp/fips"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "the output passes FIPS 140-2 ($passed blocks)" test "${passed:-0}" -ge 150

# 9-10: unplugged (the board's pty goes away) and plugged in again.
kill $board
wait $board 2>/dev/null
wait_for 100 grep -q "device gone" "$tmp/log"
check "a hang-up makes the source absent, said once" sh -c \
    'test $(grep -c "serial: .*device gone" "$1") -eq 1 && kill -0 "$2"' sh "$tmp/log" $pid
before=$(size "$tmp/out")
head -c 300000 /dev/urandom >"$tmp/noise2"
"$ptynoise" "$tmp/tty" <"$tmp/noise2" &
track $!
wait_for 150 sh -c 'test $(grep -c "serial: reading" "$1") -ge 2' sh "$tmp/log"
wait_for 150 size_at_least "$tmp/out" $((before + 1))
check "the source reconnects to the new board and delivers again" sh -c \
    'test $(grep -c "serial: reading" "$1") -ge 2 && test "$2" -gt "$3"' sh "$tmp/log" \
    "$(size "$tmp/out")" "$before"
stop $pid

# 11: host->limit_entropy lowers one instance's estimate, and only lowers.
"$entropyd" -l -n testgood -O testgood:entropy:6 -O testgood:limit:2 \
    --plugin-dir "$tmp/plugins" >/dev/null 2>"$tmp/log"
"$entropyd" -l -n testgood -O testgood:entropy:6 -O testgood:limit:7 \
    --plugin-dir "$tmp/plugins" >/dev/null 2>"$tmp/log2"
check "limit_entropy lowers the estimate (6 -> 2) and never raises it (7)" sh -c \
    'grep -q "testgood: estimate lowered to 2 bits per byte by its module" "$1" &&
     grep -q "testgood: estimate now 2$" "$1" && grep -q "testgood: estimate now 6$" "$2" &&
     ! grep -q "lowered" "$2"' sh "$tmp/log" "$tmp/log2"

# 12-13: a plugin dropped in while the daemon runs is loaded on SIGHUP, once.
mkdir "$tmp/later"
"$entropyd" -f -t -x hwrng --plugin-dir "$tmp/later" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 50 grep -qs "no usable entropy source" "$tmp/log"
cp "$libs/teston.so" "$tmp/later/"
kill -HUP $pid
wait_for 100 grep -q "teston: reading /dev/urandom" "$tmp/log"
check "SIGHUP loads the new plugin, and its source (on by default) is read" sh -c \
    'grep -q "plugin $2/teston.so: source teston (ABI 1.2) loaded" "$1" &&
     grep -q "teston: reading /dev/urandom (polled" "$1"' sh "$tmp/log" "$tmp/later"
kill -HUP $pid
wait_for 50 sh -c 'test $(grep -c "SIGHUP" "$1") -ge 2' sh "$tmp/log"
kill -USR1 $pid
wait_for 50 grep -q "teston: running" "$tmp/log"
check "a second SIGHUP does not load it again" sh -c \
    'test $(grep -c "teston.so: source teston" "$1") -eq 1 && test $(grep -c refused "$1") -eq 0 &&
     kill -0 "$2"' sh "$tmp/log" $pid
stop $pid

# 14-15: a plugin's own thread (a hotplug thread) adds an instance through
# defer, in its host as it did in the daemon; a finite input ends (EOF) and
# the instance is drained.
mkdir "$tmp/own"
cp "$top_builddir/tests/plugins/.libs/many.so" "$top_builddir/tests/plugins/.libs/fileplug.so" \
    "$tmp/own/"
head -c 60000 /dev/urandom >"$tmp/finite"
"$entropyd" -f -x all -n many -n fileplug -O many:late:1 -O "fileplug:path:$tmp/finite" \
    --plugin-dir "$tmp/own" -o "$tmp/own.out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "many:late: reading /dev/urandom" "$tmp/log"
check "a plugin's own thread adds an instance through defer" sh -c \
    'grep -q "many:0: reading" "$1" && grep -q "many:late: reading /dev/urandom" "$1"' sh "$tmp/log"
wait_for 100 grep -q "fileplug: input ended; source drained" "$tmp/log"
check "a plugin's finite input ends: drained" grep -q "fileplug: input ended; source drained" "$tmp/log"
show_if_failed "$tmp/log"
stop $pid
finish
