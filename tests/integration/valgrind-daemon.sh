#!/bin/sh
# SPDX-License-Identifier: MIT
# Memcheck over a representative daemon run: the file source on a FIFO, a
# file sink, SIGHUP, SIGUSR1, control socket requests, a clean SIGTERM. No
# memory error and no definite leak at the clean exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
command -v valgrind >/dev/null 2>&1 || skip_all "valgrind is not installed (Debian package valgrind)"
sanitized && skip_all "a sanitizer build: valgrind cannot run an ASan binary"
plan 9

ENTROPYD_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite --track-fds=no \
--log-file=$tmp/vg.%p"
export ENTROPYD_WRAPPER
sock=$tmp/s
feed_random "$tmp/in"
rm -f "$tmp/out"
run_entropyd -f -x all -n file -O "file:path:$tmp/in" -O file:entropy:8 -o "$tmp/out" \
    --control-socket "$sock" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 600 sh -c "'$entropyctl' -s '$sock' health >/dev/null 2>&1"
check "under valgrind the daemon answers on its control socket" \
    "$entropyctl" -s "$sock" health
wait_for 600 test -s "$tmp/out"
check "the file sink is written" test -s "$tmp/out"
kill -HUP "$pid"
wait_for 300 grep -q 'SIGHUP: re-probing' "$tmp/log"
check "SIGHUP re-probes" grep -q 'SIGHUP: re-probing' "$tmp/log"
kill -USR1 "$pid"
wait_for 300 grep -q 'bytes written\|monobit=' "$tmp/log"
check "SIGUSR1 reports the counters" grep -q 'monobit=' "$tmp/log"
ucurl "$sock" /health >"$tmp/health"
ucurl "$sock" /metrics >"$tmp/metrics"
ucurl "$sock" /sources >"$tmp/sources"
ucurl "$sock" /sources/file >/dev/null
ucurl "$sock" /no-such-path >/dev/null
printf 'GARBAGE\r\n\r\n' | python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.stdin.buffer.read()); s.recv(4096)' "$sock" 2>/dev/null
check "/health, /metrics and /sources answer" sh -c \
    "grep -q '\"status\"' '$tmp/health' && grep -q '^entropyd_' '$tmp/metrics' &&
     grep -q '\"sources\"' '$tmp/sources'"
kill "$pid"
wait_for 600 gone "$pid"
wait "$pid"
rc=$?
check "SIGTERM: a clean exit 0 under memcheck (status $rc; 99 means a memcheck error)" \
    test "$rc" -eq 0
vglog=$(ls "$tmp"/vg.* 2>/dev/null | head -n 1)
check "memcheck wrote its log" test -n "$vglog"
[ -z "$vglog" ] || sed 's/^/# /' "$vglog"
check "no memory error" sh -c "! grep -q 'Invalid \|uninitialised\|Mismatched free\|overlap' '$vglog'"
check "no definite leak" sh -c "! grep -q 'definitely lost' '$vglog'"
finish
