#!/bin/sh
# --capture: exactly COUNT raw samples written, the daemon carries on; a
# source the health tests suspend mid-capture is still read until the file
# is complete; --capture-restarts: 1000 fresh opens of 1000 samples each,
# which entropytest -R fails when the restarts repeat each other and passes
# when they differ; bad uses refused.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
libs=$top_builddir/tests/plugins/.libs
plan 17
size() { stat -c %s "$1" 2>/dev/null || echo 0; }

"$entropyd" -f -x all -n jitter --capture "jitter:5000:$tmp/raw" -o "$tmp/out" \
    2>"$tmp/log" &
pid=$!
track $pid
wait_for 150 grep -q "captured" "$tmp/log"
check "the capture is logged" grep -q "jitter: captured 5000 raw samples to $tmp/raw" "$tmp/log"
check "exactly 5000 bytes, one per sample" test "$(size "$tmp/raw")" -eq 5000
distinct=$(od -An -tu1 -v "$tmp/raw" | tr -s ' ' '\n' | sed '/^$/d' | sort -u | wc -l)
check "raw samples, not one repeated value ($distinct distinct)" test "$distinct" -gt 16
wait_for 100 size_at_least "$tmp/out" 1
check "the daemon carries on delivering, the capture file stays at 5000" sh -c \
    "kill -0 $pid && test $(size "$tmp/out") -gt 0 && test $(size "$tmp/raw") -eq 5000"
stop $pid

# usage_rc EXPECTED PATTERN ARGS...: the daemon refuses with that exit and message.
refuses() {
	want=$1 pattern=$2
	shift 2
	"$entropyd" -f "$@" -o "$tmp/out2" 2>"$tmp/err"
	rc=$?
	test "$rc" -eq "$want" && grep -q -- "$pattern" "$tmp/err"
}
check "a source without raw samples: exit 64" refuses 64 "delivers no raw samples" \
    -x all -n jitter -n file -O file:path:/dev/null --capture file:10:"$tmp/c"
check "a source not in use: exit 64" refuses 64 "not in use" \
    -x all -n file -O file:path:/dev/null --capture jitter:10:"$tmp/c"
check "an uncreatable path: exit 73" refuses 73 "--capture: $tmp/no/such" \
    -x all -n jitter --capture "jitter:10:$tmp/no/such"
check "--capture and --capture-restarts together: exit 64" refuses 64 "one capture at a time" \
    -x all -n jitter --capture "jitter:10:$tmp/c" --capture-restarts "jitter:$tmp/r"

mkdir "$tmp/plugins"
cp "$libs/testraw.so" "$tmp/plugins/"
# A source that repeats one stale buffer every other read after 20000
# samples: the repeat test fails each, and the source is suspended at 25
# failures (some 220000 samples in); the capture goes on to 400000, read
# while it is suspended.
"$entropyd" -f -x all -n testraw -O testraw:mode:stale --plugin-dir "$tmp/plugins" \
    --capture "testraw:400000:$tmp/stick" -o "$tmp/out3" 2>"$tmp/log3" &
pid=$!
track $pid
wait_for 300 grep -q "captured" "$tmp/log3"
stop $pid
check "suspended mid-capture, it is still read for the capture" \
    grep -q "testraw: suspended; still read for its capture, nothing of it credited or fed" \
    "$tmp/log3"
check "the file still reaches 400000 samples, and says how many came while suspended" sh -c \
    "test $(size "$tmp/stick") -eq 400000 && grep -Eq 'testraw: captured 400000 raw samples \
to $tmp/stick \(one per byte; [0-9]+ of them read while the tests had it suspended, none of \
those credited\)' '$tmp/log3'"
show_if_failed "$tmp/log3"
check "they are the source's own: noise, and its stale buffer again and again" python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
assert len(set(b[:20000])) > 200, "not noise"
assert any(b.count(b[o:o + 512]) >= 3 for o in range(20000, 40000, 512)), "no stale buffer"' \
    "$tmp/stick"

# Restart data of a source whose every open replays the same samples, and
# of one whose opens differ (that one with debug lines, which say each open).
for mode in replay noise; do
	debug=""
	[ $mode = noise ] && debug=-d
	"$entropyd" -f $debug -x all -n testraw -O testraw:mode:$mode --plugin-dir "$tmp/plugins" \
	    --capture-restarts "testraw:$tmp/r-$mode" -o /dev/null \
	    --control-socket "$tmp/r-$mode.sock" 2>"$tmp/rlog-$mode" &
	pid=$!
	track $pid
	wait_for 1200 grep -q "captured 1000 restarts" "$tmp/rlog-$mode"
	stop $pid
done
check "1000 restarts of 1000 samples, each after a fresh open" sh -c \
    "test $(size "$tmp/r-noise") -eq 1000000 && grep -q 'testraw: captured 1000 restarts of \
1000 raw samples to $tmp/r-noise (one per byte)' '$tmp/rlog-noise' &&
    test \$(grep -c 'testraw: reading' '$tmp/rlog-noise') -ge 1000"
show_if_failed "$tmp/rlog-noise"
check "without -d, one line per open only for the first, then one every 100 restarts" sh -c \
    "test \$(grep -c 'testraw: reading' '$tmp/rlog-replay') -eq 1 &&
    test \$(grep -c 'testraw: --capture-restarts: [1-9]00 of 1000 restarts recorded' \
    '$tmp/rlog-replay') -eq 9"
show_if_failed "$tmp/rlog-replay"
check "the log says what is written and how to assess it" grep -q \
    "capture-restarts: testraw: opened afresh 1000 times, the first 1000 raw samples each time to \
$tmp/r-noise" "$tmp/rlog-noise"
"$entropytest" -R -w 8 -H 2 "$tmp/r-replay" >"$tmp/replay.out" 2>&1
rc=$?
check "identical restarts fail the sanity check (entropytest -R exits 1)" sh -c \
    "test $rc -eq 1 && grep -q 'Restart Sanity Check Failed' '$tmp/replay.out' &&
    grep -q '^X_max: 1000$' '$tmp/replay.out'"
show_if_failed "$tmp/replay.out"
"$entropytest" -R -w 8 -H 2 "$tmp/r-noise" >"$tmp/noise.out" 2>&1
rc=$?
check "differing restarts pass (exit 0)" sh -c \
    "test $rc -eq 0 && grep -q 'Validation Test Passed' '$tmp/noise.out'"
show_if_failed "$tmp/noise.out"
check "the rows are the restarts in order: the replayed rows all alike" python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
rows = {b[i:i + 1000] for i in range(0, len(b), 1000)}
assert len(rows) == 1, "%d different rows" % len(rows)' "$tmp/r-replay"
finish
