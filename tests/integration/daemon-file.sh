#!/bin/sh
# The daemon end to end with the file source: FIFO in, file/stdout out.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
plan 14

# Bytes of a file as hex, from an offset.
hexat() { od -An -tx1 -v -j "$2" -N "$3" "$1" | tr -d ' \n'; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# 1-3: a FIFO source feeding a file sink, credited 8 bits per byte.
mkfifo "$tmp/in"
head -c 600000 /dev/urandom >"$tmp/data"
cat "$tmp/data" >"$tmp/in" &
track $!
"$entropyd" -f -d -x all -n file -O "file:path:$tmp/in" -O file:entropy:8 -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 200 size_at_least "$tmp/out" 400000
check "FIFO source to file sink: output arrives ($(size "$tmp/out") bytes)" test "$(size "$tmp/out")" -ge 400000
# After the 4-byte bootstrap, each 40 bytes at 8 bits/byte give one SHA-256 output.
want=$(dd if="$tmp/data" bs=1 skip=4 count=40 2>/dev/null | sha256sum | cut -c1-64)
check "the first output is SHA-256 of input bytes 4..43" test "$want" = "$(hexat "$tmp/out" 0 32)"
"$entropytest" <"$tmp/out" >/dev/null 2>"$tmp/fips"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "the conditioned output passes FIPS 140-2 ($passed blocks)" test "${passed:-0}" -ge 150
stop "$pid"

# 4-5: all-zero input: nothing written, failures counted, source suspended.
rm -f "$tmp/out"
head -c 200000 /dev/zero >"$tmp/in" &
track $!
"$entropyd" -f -x all -n file -O "file:path:$tmp/in" -O file:entropy:8 -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "suspended after" "$tmp/log"
check "zeros: the source is suspended" grep -q "file: suspended after 2[5-9] failed blocks" "$tmp/log"
kill -USR1 "$pid"
wait_for 30 grep -q "monobit=" "$tmp/log"
check "zeros: nothing written, failures counted" sh -c \
    "test $(size "$tmp/out") -eq 0 && grep -q 'monobit=[1-9]' '$tmp/log'"
stop "$pid"

# 6: a repeating pattern fails too.
rm -f "$tmp/out"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "q8Zr!x3@LmP0w7Ke" }' >"$tmp/pattern"
"$entropyd" -f -x all -n file -O "file:path:$tmp/pattern" -O file:entropy:8 -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "suspended after" "$tmp/log"
check "a repeating pattern: suspended, nothing written" sh -c \
    "grep -q 'suspended after' '$tmp/log' && test $(size "$tmp/out") -eq 0"
stop "$pid"

# 7: a regular file is read to its end, then the source is drained.
head -c 100000 /dev/urandom >"$tmp/finite"
rm -f "$tmp/out"
"$entropyd" -f -x all -n file -O "file:path:$tmp/finite" -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "source drained" "$tmp/log"
check "a regular file ends: drained, uncredited output written" sh -c \
    "grep -q 'file: input ended; source drained' '$tmp/log' && test $(size "$tmp/out") -gt 40000"
stop "$pid"

# 8: stdout into entropytest; the daemon ends when its reader does.
head -c 1000000 /dev/urandom >"$tmp/big"
( "$entropyd" -f -x all -n file -O "file:path:$tmp/big" -o - 2>"$tmp/log"; echo $? >"$tmp/rc" ) |
    "$entropytest" -c 20 2>"$tmp/fips" >/dev/null
wait_for 50 test -s "$tmp/rc"
check "-o - | entropytest -c 20: 20 blocks tested, daemon exits 0 when the pipe closes" sh -c \
    "grep -q 'successes: 2[0-9]\|successes: 19' '$tmp/fips' && test \"\$(cat '$tmp/rc')\" = 0 &&
     grep -q 'closed by its reader' '$tmp/log'"

# 9-10: SIGTERM while a source blocks in read() exits within a second.
mkfifo "$tmp/stall"
sleep 60 >"$tmp/stall" &
holder=$!
track $holder
"$entropyd" -f -t -x all -n hwrng -r "$tmp/stall" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 50 grep -q "hwrng: reading" "$tmp/log"
check "a stalled source is read by a blocked reader thread" grep -q "reader thread" "$tmp/log"
kill -TERM "$pid"
check "SIGTERM while the read blocks: exits within a second" \
    wait_for "$(bound 10)" sh -c "! kill -0 $pid 2>/dev/null"
check "the blocked read() was interrupted, not abandoned" sh -c "! grep -q stuck '$tmp/log'"
kill "$holder" 2>/dev/null

# 11-12: SIGHUP re-probes: a source that appears later is picked up.
"$entropyd" -f -t -x all -n file -O "file:path:$tmp/later" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 50 grep -q "no usable entropy source" "$tmp/log"
check "no usable source: said once, the daemon keeps running" sh -c \
    "test \$(grep -c 'no usable entropy source' '$tmp/log') -eq 1 && kill -0 $pid"
head -c 50000 /dev/urandom >"$tmp/later"
kill -HUP "$pid"
wait_for 50 grep -q "file: reading" "$tmp/log"
check "after SIGHUP the new source is read" grep -q "file: reading $tmp/later" "$tmp/log"
stop "$pid"

# 14: two sources into one file sink: both keep flowing, neither is starved.
mkfifo "$tmp/a" "$tmp/b"
head -c 2000000 /dev/urandom >"$tmp/a" &
track $!
# The hwrng source takes a FIFO without a writer as a device at its end:
# hold one writer open (read-write never blocks) so the one below cannot
# lose the race between the daemon's open and its first read.
exec 4<>"$tmp/b"
head -c 2000000 /dev/urandom >"$tmp/b" &
track $!
rm -f "$tmp/out"
"$entropyd" -f -x all -n file -n hwrng -O "file:path:$tmp/a" -r "$tmp/b" -o "$tmp/out" 2>"$tmp/log14" &
pid=$!
track $pid
wait_for 200 size_at_least "$tmp/out" 1500000
kill -USR1 "$pid"
wait_for 30 grep -q "^entropyd: hwrng: .*taken" "$tmp/log14"
taken_file=$(sed -n 's/^entropyd: file: .*taken \([0-9]*\).*/\1/p' "$tmp/log14")
taken_hwrng=$(sed -n 's/^entropyd: hwrng: .*taken \([0-9]*\).*/\1/p' "$tmp/log14")
[ -n "$taken_hwrng" ] || sed "s/^/# /" "$tmp/log14"
check "two sources share one stream sink (file $taken_file, hwrng $taken_hwrng bytes)" sh -c \
    "test '${taken_file:-0}' -ge 500000 && test '${taken_hwrng:-0}' -ge 500000"
stop "$pid"
exec 4>&-
finish
