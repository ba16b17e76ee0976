#!/bin/sh
# SPDX-License-Identifier: MIT
# A full-credit source read by a reader thread reads ahead (a second buffer
# while the loop tests the first): nothing read ahead may slip past the
# tests. The file source on a regular file (read by a thread, credited 8
# bits a byte) gives 300000 good bytes, then one 4096-byte buffer again and
# again (a stale buffer, which FIPS 140-2 passes); jitter feeds throughout.
# The file source is suspended by the repeat test, no more of it is
# conditioned than its good bytes make each time it is read (it is opened
# again after each backoff), and jitter keeps the sink growing.
. "$(dirname "$0")/lib.sh"
entropyctl=$top_builddir/entropyctl
plan 4

good=300000
head -c "$good" /dev/urandom >"$tmp/data"
head -c 4096 /dev/urandom >"$tmp/stale"
i=0
while [ $i -lt 100 ]; do cat "$tmp/stale"; i=$((i + 1)); done >>"$tmp/data"
sock=$tmp/s
run_entropyd -f -x all -n file -n jitter -O "file:path:$tmp/data" -O file:entropy:8 \
    -o "$tmp/out" --control-socket "$sock" 2>"$tmp/log" &
pid=$!
track $pid
# field SOURCE EXPR: a Python expression over d, the source's /sources object.
field() {
	"$entropyctl" -s "$sock" --json sources "$1" 2>/dev/null |
	    python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$2" 2>/dev/null
}
suspended() { test "$(field file 'd["state"]')" = suspended; }
wait_for 300 suspended
check "the stale buffer suspends the file source (repeat test)" sh -c \
    "test '$(field file 'd["state"]')' = suspended &&
    test '$(field file 'd["test_failures"]["repeat"] > 0')' = True"
show_if_failed "$tmp/log"
# After each backoff the file is opened again and its good bytes pass
# again, so the bound is per reading of the file: the suspensions so far,
# and one more if it is being read now (one snapshot, so they agree). 40
# bytes in per 32 out; one block may straddle the good bytes' end.
set -- $(field file '"%d %d" % (d["counters"]["bytes_conditioned"],
    d["failure_score"]["suspensions"] + (d["state"] != "suspended"))')
conditioned=${1:-999999999} readings=${2:-1}
most=$((readings * ((good + 2500) / 40 * 32 + 32)))
check "no more of it conditioned than its good bytes make, read $readings times ($conditioned <= $most)" \
    test "$conditioned" -le "$most"
before=$(field jitter 'd["counters"]["bytes_conditioned"]')
jitter_grew() { test "$(field jitter 'd["counters"]["bytes_conditioned"]')" -gt "$1"; }
check "jitter keeps feeding after the suspension" wait_for 300 jitter_grew "${before:-0}"
check "the daemon runs on" kill -0 "$pid"
stop $pid
finish
