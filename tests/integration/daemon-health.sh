#!/bin/sh
# SPDX-License-Identifier: MIT
# Health that tells the truth, tried as a broken device would:
#  - a FIFO held open by a writer that never writes, as the only source:
#    stalled, /health 503 and `entropyctl health` CRITICAL within the stall
#    timeout plus 5 s; beside a healthy source WARNING; recovered when bytes
#    flow; an idle daemon that wants nothing marks nothing stalled and wakes
#    for nothing;
#  - an all-ones writer that reconnects every 20 blocks: suspended within a
#    bounded number of blocks, suspended again sooner and for longer, and
#    /health failing all the while;
#  - one random block repeated (2500 and 4096 bytes) and a 64-byte chunk
#    repeated inside random data: nothing of the repeats conditioned (the
#    file sink holds exactly the conditioning of the rest), counted under
#    the test "repeat".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plugin=$top_builddir/tests/plugins/.libs/faulty.so
[ -f "$plugin" ] || skip_all "the faulty test plugin is not built (make check builds it)"
plan 29

mkdir "$tmp/plugins"
cp "$plugin" "$tmp/plugins/"
sock=$ENTROPYD_CONTROL_SOCKET

# start ARGS...: a daemon on the private socket, its PID in $pid, its log in $tmp/log.
start() {
	rm -f "$sock"
	run_entropyd -f -d "$@" 2>"$tmp/log" &
	pid=$!
	track $pid
	wait_for 100 test -S "$sock"
}
# src NAME FIELD...: a field of source NAME from /sources (python subscripts).
src() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]$2" \
	    2>/dev/null || echo -1
}
state() { src "$1" "['state']"; }
is_state() { [ "$(state "$1")" = "$2" ]; }
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$sock" \
    http://localhost/health; }
health_status() { ucurl "$sock" /health | json "d['status']" 2>/dev/null; }
is_503() { [ "$(http_code)" = 503 ]; }
ctl_health() { "$entropyctl" health >"$tmp/ctl" 2>&1; echo $?; }
# switches PID: voluntary context switches of every thread (each is a wake-up).
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
	    awk '/^voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}

# --- 1. a stall as the only source --------------------------------------------
mkfifo "$tmp/silent"
sleep 100000 >"$tmp/silent" &
silent=$!
track $silent
start -x all -n file -O "file:path:$tmp/silent" -O file:entropy:8 -O file:stall_timeout:2 \
    -o "$tmp/out"
check "a source not yet overdue is not stalled" is_state file running
wait_for 70 is_503
check "silent FIFO alone: /health answers 503 within the timeout + 5 s" is_503
check "silent FIFO alone: it is stalled in /sources" is_state file stalled
rc=$(ctl_health)
check "silent FIFO alone: entropyctl health exits 2 ($(head -1 "$tmp/ctl"))" test "$rc" -eq 2
"$entropyctl" status >"$tmp/status" 2>&1
ucurl "$sock" /metrics >"$tmp/metrics"
shown_stalled() {
	grep -Eq '^file +stalled' "$tmp/status" &&
	    [ "$(metric "$tmp/metrics" 'entropyd_source_state{source="file",state="stalled"}')" = 1 ] &&
	    grep -q 'file: stalled: no data for 2 s while asked for it' "$tmp/log"
}
check "stalled in entropyctl status, /metrics and the log" shown_stalled
show_if_failed "$tmp/log" "$tmp/status"
stop $pid

# --- 2. beside a healthy source, and recovery ---------------------------------
echo good >"$tmp/mode"
start -x all -n file -n faulty -O "file:path:$tmp/silent" -O file:entropy:8 \
    -O file:stall_timeout:3 -O "faulty:control:$tmp/mode" -O faulty:entropy:8 \
    --plugin-dir "$tmp/plugins" -o "$tmp/out"
wait_for 100 is_state file stalled
check "beside a healthy source: the silent FIFO stalls" is_state file stalled
rc=$(ctl_health)
check "beside a healthy source: /health 200 warn, entropyctl health exits 1" sh -c \
    "test '$(http_code)' = 200 && test '$(health_status)' = warn && test $rc -eq 1"
(while :; do head -c 20000 /dev/urandom; sleep 0.2; done >"$tmp/silent") 2>/dev/null &
writer=$!
track $writer
wait_for 100 is_state file running
check "bytes flow again: running again by itself" is_state file running
rc=$(ctl_health)
check "recovered: /health passes, entropyctl health exits 0" sh -c \
    "test '$(health_status)' = pass && test $rc -eq 0"
delivery_shown() {
	ucurl "$sock" /metrics >"$tmp/metrics"
	[ "$(src file "['last_delivery'] is not None")" = True ] &&
	    awk '$1 == "entropyd_source_last_delivery_timestamp_seconds{source=\"file\"}" &&
	    $2 > 1e9 { ok = 1 } END { exit !ok }' "$tmp/metrics"
}
check "the last delivery time is in /sources and /metrics" delivery_shown
stop $writer
wait_for 100 is_state file stalled
check "silent again: stalled again" is_state file stalled
show_if_failed "$tmp/log"
stop $pid

# --- 3. an idle daemon marks nothing stalled and wakes for nothing -------------
# The sink is a FIFO whose reader never reads: once the pipe and the reserves
# are full, nothing is wanted from the source.
mkfifo "$tmp/outfifo" "$tmp/busy"
sleep 100000 <"$tmp/outfifo" &
track $!
(while :; do head -c 100000 /dev/urandom; done >"$tmp/busy") 2>/dev/null &
busy=$!
track $busy
start -x all -n file -O "file:path:$tmp/busy" -O file:entropy:8 -O file:stall_timeout:1 \
    -o "$tmp/outfifo"
reserve_full() { [ "$(src file "['reserve']['bytes']")" -ge 8192 ]; }
wait_for 100 reserve_full
sleep 1
w0=$(switches $pid)
sleep 3
w1=$(switches $pid)
check "idle (full reserve, stuck sink): no wake-up in 3 s ($((w1 - w0)))" test "$w1" -eq "$w0"
check "idle past the stall timeout: not stalled (nothing was asked of it)" is_state file running
stop $pid $busy

# --- 4. an all-ones writer that reconnects every 20 blocks --------------------
mkfifo "$tmp/ones"
# Each connection ends before the next opens (the pause), so the daemon sees
# the end of the stream and reopens: a reconnect every 20 blocks.
(while :; do head -c 50000 /dev/zero | tr '\000' '\377' >"$tmp/ones"; sleep 0.3; done) \
    2>/dev/null &
ones=$!
track $ones
start -x all -n file -O "file:path:$tmp/ones" -O file:entropy:8 -o "$tmp/out2"
wait_for 300 is_state file suspended
n1=$(sed -n 's/.*file: suspended after \([0-9]*\) failed blocks.*/\1/p' "$tmp/log" | head -1)
check "reconnecting all-ones writer: suspended after ${n1:-?} failed blocks (<= 27)" \
    test "${n1:-999}" -le 27
check "reconnects did not clear the record: the writer reconnected before it" awk \
    '/file: stream ended; reopening/ { r = 1 } /file: suspended after/ { exit !r }' "$tmp/log"
check "suspended, the only source: /health 503" is_503
wait_for 300 sh -c "test \$(grep -c 'file: suspended after' '$tmp/log') -ge 3"
n3=$(sed -n 's/.*file: suspended after \([0-9]*\) failed blocks.*/\1/p' "$tmp/log" | sed -n 3p)
check "re-probed, it fails again and is suspended after a few more blocks (${n3:-?} in all)" \
    test "${n3:-999}" -le $((n1 + 2 * (10 + 2)))
backoffs=$(sed -n 's/.*file: retry in \([0-9]*\) ms.*/\1/p' "$tmp/log" | tr '\n' ' ')
check "the backoff grows with each suspension ($backoffs)" sh -c \
    "echo '$backoffs' | awk '{ exit !(\$1 == 1000 && \$2 == 2000 && \$3 == 4000) }'"
codes=""
i=0
while [ $i -lt 10 ]; do
	codes="$codes$(http_code) "
	sleep 0.3
	i=$((i + 1))
done
check "/health never passes while it is the only source ($codes)" sh -c \
    "! echo '$codes' | grep -q 200"
check "nothing of it conditioned, nothing in the sink" sh -c \
    "test '$(src file "['counters']['bytes_conditioned']")' = 0 && test ! -s '$tmp/out2'"
show_if_failed "$tmp/log"
stop $pid $ones
# A writer of the loop may wait in open() for a reader: be one, briefly.
exec 9<>"$tmp/ones"
sleep 0.2
exec 9<&-

# --- 5. repeated output through the daemon -------------------------------------
# make_input KIND FILE: the test inputs, from a fixed seed whose blocks all
# pass FIPS 140-2; prints the conditioning (SHA-256 of each 40 bytes, as at
# 8 bits per byte) of the blocks that hold no repeat into FILE.expected.
make_input() {
	python3 - "$1" "$2" <<'EOF'
import hashlib, random, sys
kind, path = sys.argv[1], sys.argv[2]
r = random.Random(1515)
if kind == "block2500":
    b = r.randbytes(2500)
    data = b * 40
    clean = []
elif kind == "block4096":
    b = r.randbytes(4096)
    data = b * 25
    clean = [0]
else:
    data = bytearray(r.randbytes(4 + 60 * 2500))
    chunk = r.randbytes(64)
    # within the 32 KiB the test looks back: 5 blocks (12.5 kB) apart
    for blk, off in ((2, 1000), (7, 777), (12, 1501)):
        data[4 + blk * 2500 + off:4 + blk * 2500 + off + 64] = chunk
    data = bytes(data)
    clean = [i for i in range(60) if i not in (7, 12)]
open(path, "wb").write(data)
stream = b"".join(data[4 + i * 2500:4 + (i + 1) * 2500] for i in clean)
out = b"".join(hashlib.sha256(stream[i:i + 40]).digest() for i in range(0, len(stream) - 39, 40))
open(path + ".expected", "wb").write(out)
EOF
}
# -i: never suspended, so the whole file is read to its end.
for kind in block2500 block4096 chunk; do
	make_input $kind "$tmp/$kind"
	start -x all -n file -O "file:path:$tmp/$kind" -O file:entropy:8 -i -o "$tmp/$kind.out"
	wait_for 300 is_state file drained
	wait_for 30 sh -c "test \$(stat -c %s '$tmp/$kind.out') -ge \$(stat -c %s '$tmp/$kind.expected')"
	repeats=$(src file "['test_failures']['repeat']")
	failed=$(src file "['counters']['blocks_failed']")
	ucurl "$sock" /metrics >"$tmp/metrics"
	case $kind in
	block2500) want=39 ;;   # (100000 - 4) / 2500 blocks, every one a repeat
	block4096) want=39 ;;   # 40 blocks, all but the first
	chunk) want=2 ;;        # the two blocks holding a copy
	esac
	check "$kind: $repeats blocks failed the repeat test (want $want), no other failure" sh -c \
	    "test '$repeats' = $want && test '$failed' = $want"
	check "$kind: the sink holds exactly the conditioning of the other blocks" \
	    cmp -s "$tmp/$kind.out" "$tmp/$kind.expected"
	series='entropyd_test_failures_total{source="file",test="repeat"}'
	check "$kind: counted under test=\"repeat\" in /metrics" test \
	    "$(metric "$tmp/metrics" "$series")" = "$want"
	show_if_failed "$tmp/log"
	stop $pid
done
finish
