#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that forks 1000 times gets no process at all: its host may make
# threads, never processes. It keeps its instance; the file source feeds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
plan 6
hostile_start forkbomb -O hostile_forkbomb:entropy:8
wait_for 100 grep -q "forks: " "$tmp/log"
check "not one of its 1000 forks succeeded" \
    grep -q "hostile_forkbomb: forks: 0 of 1000 succeeded (Operation not permitted)" "$tmp/log"
show_if_failed "$tmp/log"
hosts=$(host_pids)
n=0
for h in $hosts; do n=$((n + $(pgrep -c -P "$h"))); done
check "its host has no child process (hosts: $(echo $hosts))" sh -c "test -n '$hosts' && test $n -eq 0"
wait_for 100 grew hostile_forkbomb bytes_conditioned 0
check "its instance still reads and is conditioned" grew hostile_forkbomb bytes_conditioned 0
good_keeps_feeding
hostile_end
finish
