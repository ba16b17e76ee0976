#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench runs end to end with a tiny data size and prints every figure
# line (no timing is asserted: machines are noisy).
. "$(dirname "$0")/lib.sh"
[ -x "$top_builddir/tests/bench/entropyd-bench" ] || skip_all "entropyd-bench not built"
plan 5

BENCH_MB=1 BENCH_RUNS=1 BENCH_IDLE=1 BENCH_EST_SECONDS=0.2 BENCH_EGD_SECONDS=0.5 \
    BENCH_GEN_CHANGES=3 BENCH_JITTER_SECONDS=0.2 BENCH_ASSESS_RUNS=1 BENCH_NO_INSTALL=1 \
    TMPDIR=$tmp \
    sh "$top_srcdir/tests/bench/bench.sh" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "the bench script exits 0 (exit $rc)" test "$rc" -eq 0
missing=""
for f in fips fips-counts assess-random assess-jitter condition pipeline pipeline-norepeat \
    repeat-cost repeat-cpu pipeline-kernel estimate jitter-default jitter-24mhz \
    plugin-pipeline plugin-idle-wakeups plugin-pss startup idle-wakeups idle-cpu idle-rss \
    idle-pss clone-refill uevent-wakeups egd-capacity egd-1 egd-10 egd-100 egd-latency \
    egd-rss generation-waiters generation-publish; do
	grep -q "^$f " "$tmp/out" || missing="$missing $f"
done
check "every figure has its line${missing:+ (missing:$missing)}" test -z "$missing"
check "the pipeline figure measured the daemon reading its source" \
    sh -c "grep '^pipeline ' '$tmp/out' | grep -q 'via entropyd [1-9]'"
check "the plugin figures measured a plugin host" sh -c \
    "grep '^plugin-pipeline ' '$tmp/out' | grep -Eq '(fileplug|rdrandplug) via its host and entropyd [1-9]' &&
     grep '^plugin-pss ' '$tmp/out' | grep -q 'instances [0-9.]*/[0-9.]*/[0-9.]* MB'"
check "no count mismatch between entropytest and rngtest" sh -c "! grep -q MISMATCH '$tmp/out'"
sed 's/^/# /' "$tmp/out" "$tmp/err"
finish
