#!/bin/sh
# SPDX-License-Identifier: MIT
# entropytest -R: SP 800-90B 3.1.4 restart tests of 1000 restarts of 1000
# samples. Restarts that repeat each other fail the sanity check (a column
# holds one value 1000 times); restarts that differ pass it and the
# validation; H_I from -H or, without it, from the samples in order; bad
# uses. entropytest-nist.sh compares the figures with ea_restart.
. "$(dirname "$0")/lib.sh"
et="$top_builddir/entropytest"
[ -x "$et" ] || skip_all "entropytest not built"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
plan 9

python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
# Each restart from its own seed, or all from one.
def restarts(same):
    out = bytearray()
    for i in range(1000):
        r = random.Random(7 if same else 1000 + i)
        out += bytes(r.randrange(16) for _ in range(1000))
    return out
open(d + "/differ", "wb").write(restarts(False))
open(d + "/same", "wb").write(restarts(True))
open(d + "/short", "wb").write(restarts(False)[:999000])
PY

"$et" -R -w 4 -H 3.5 "$tmp/same" >"$tmp/same.out" 2>&1
rc=$?
check "identical restarts: the sanity check fails, exit 1" sh -c \
    "test $rc -eq 1 && grep -q '^\*\*\* Restart Sanity Check Failed \*\*\*' '$tmp/same.out'"
check "identical restarts: each column is one value 1000 times" \
    grep -q '^X_max: 1000$' "$tmp/same.out"
show_if_failed "$tmp/same.out"
"$et" -R -w 4 -H 3.5 "$tmp/differ" >"$tmp/differ.out" 2>&1
rc=$?
check "differing restarts: sanity check and validation pass, exit 0" sh -c \
    "test $rc -eq 0 && grep -q '^Restart Sanity Check Passed' '$tmp/differ.out' &&
    grep -q '^Validation Test Passed' '$tmp/differ.out'"
show_if_failed "$tmp/differ.out"
check "the rows' and columns' figures, as ea_restart -v prints them" sh -c \
    "grep -q '^	Most Common Value Estimate (Rows) = 3\.[0-9]* / 4 bit(s)$' '$tmp/differ.out' &&
    grep -q '^	LZ78Y Prediction Test Estimate (Cols) = 3\.[0-9]* / 4 bit(s)$' '$tmp/differ.out' &&
    test \$(grep -c ' (Rows) = \| (Cols) = ' '$tmp/differ.out') -eq 14"
check "min(H_r, H_c, H_I) is H_I when both datasets measure more" \
    grep -q '^min(H_r, H_c, H_I): 3.500000$' "$tmp/differ.out"
"$et" -R -w 4 "$tmp/differ" >"$tmp/default.out" 2>&1
check "without -H, H_I is what -e finds on the samples in order, and it says so" sh -c \
    "grep -q 'H_I taken from the samples in order' '$tmp/default.out' &&
    grep -q '^H_I: 3\.' '$tmp/default.out'"
"$et" -R -w 4 "$tmp/short" 2>"$tmp/err"
check "999000 samples: exit 65" sh -c "test $? -eq 65 && grep -q '1000 restarts of 1000' '$tmp/err'"
"$et" -R "$tmp/differ" 2>"$tmp/err"
check "-R without -w: exit 64" sh -c "test $? -eq 64 && grep -q 'needs the sample width' '$tmp/err'"
"$et" -R -e -w 4 "$tmp/differ" 2>"$tmp/err"
check "-R with -e: exit 64" sh -c "test $? -eq 64 && grep -q 'choose one' '$tmp/err'"
finish
