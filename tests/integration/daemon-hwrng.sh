#!/bin/sh
# The hwrng source on this machine's real /dev/hwrng, through the whole pipeline.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest

current=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)
[ -e /dev/hwrng ] || skip_all "no /dev/hwrng on this machine"
[ -r /dev/hwrng ] || skip_all "/dev/hwrng is not readable (needs root)"
[ -n "$current" ] && [ "$current" != none ] || skip_all "the kernel has no current hwrng"
plan 2

( timeout 60 "$entropyd" -f -x all -n hwrng -o - 2>"$tmp/log"; echo $? >"$tmp/rc" ) |
    "$entropytest" -c 3 2>"$tmp/fips" >/dev/null
wait_for 50 test -s "$tmp/rc"
check "hwrng ($current) through FIPS and SHA-256: 3 blocks pass entropytest" \
    fips_ok "$tmp/fips" 3
check "the daemon read the real device and ended with its reader" sh -c \
    "grep -q 'hwrng: reading /dev/hwrng' '$tmp/log' && test \"\$(cat '$tmp/rc')\" = 0"
finish
