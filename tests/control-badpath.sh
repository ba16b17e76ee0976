#!/bin/sh
# SPDX-License-Identifier: MIT
# A request path that is not UTF-8 (found by tests/fuzz/fuzz_control) gets
# a 404 with the path shown safely, and the daemon keeps running: it used to
# exit on the JSON it could not build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 3

sock=$tmp/s
feed_random "$tmp/in"
start_daemon "$sock" "$tmp/log" "$tmp/in"
pid=$daemon
# raw SOCKET BYTES: send BYTES (printf escapes) and print the answer.
raw() {
	python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
s.shutdown(socket.SHUT_WR)
out = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    out += b
sys.stdout.write(out.decode("latin-1"))
PY
}
raw "$sock" 'GET /metrics H\xffTP/1. HTTP/1.0\r\n\r\n' >"$tmp/a1"
raw "$sock" 'GET /sources/\xff\xfe%ff HTTP/1.0\r\n\r\n' >"$tmp/a2"
check "a path with a non-UTF-8 byte: 404, the byte shown as '?'" sh -c \
    "head -n 1 '$tmp/a1' | grep -q ' 404 ' && grep -q '\"path\": \"/metrics H?TP/1.\"' '$tmp/a1'"
check "/sources/ and bytes that are not UTF-8: 404" sh -c "head -n 1 '$tmp/a2' | grep -q ' 404 '"
check "the daemon is still running and answers" sh -c \
    "kill -0 $pid && '$entropyctl' -s '$sock' health >/dev/null"
finish
