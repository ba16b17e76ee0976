#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin cannot credit the kernel: its host has no capability, no new
# privileges and a seccomp filter, and RNDADDENTROPY on /dev/random fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
plan 5
hostile_start rndadd
wait_for 100 grep -q "RNDADDENTROPY\|open /dev/random" "$tmp/log"
check "RNDADDENTROPY is denied" \
    grep -q "hostile_rndadd: RNDADDENTROPY: Operation not permitted" "$tmp/log"
show_if_failed "$tmp/log"
host=$(host_pids | head -n 1)
check "its host runs without capabilities" sh -c \
    "test -n '$host' && grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$host/status &&
     grep -q '^CapPrm:[[:space:]]*0000000000000000' /proc/$host/status &&
     grep -q '^CapBnd:[[:space:]]*0000000000000000' /proc/$host/status"
check "with no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$host/status"
if grep -q 'HAVE_SECCOMP 1' "$top_builddir/config.h"; then
	check "under a seccomp filter" grep -q '^Seccomp:[[:space:]]*2' "/proc/$host/status"
else
	skip "entropyd was built without libseccomp"
fi
good_keeps_feeding
kill "$pid"
wait "$pid"
finish
