#!/bin/sh
# SPDX-License-Identifier: MIT
# A plugin that logs 20000 lines at once cannot flood the daemon's log:
# at most 100 a second pass, the rest are counted as dropped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
plan 6
hostile_start flood -O hostile_flood:entropy:8
wait_for 100 grep -q "dropping the rest" "$tmp/log"
check "the excess is dropped and said so" grep -q "plugin hostile_flood: more than 100 log lines in a second; dropping the rest" "$tmp/log"
lines=$(grep -c "flood line" "$tmp/log")
check "at most a few hundred of its lines were logged ($lines)" test "$lines" -le 400
wait_for 300 grew hostile_flood bytes_conditioned 0
check "its instance still reads" grew hostile_flood bytes_conditioned 0
good_keeps_feeding
hostile_end
finish
