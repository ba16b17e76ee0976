#!/bin/sh
# --capture: exactly COUNT raw samples written, the daemon carries on; bad uses refused.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 7
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
finish
