#!/bin/sh
# SPDX-License-Identifier: MIT
# A request path that is not UTF-8 (found by tests/fuzz/fuzz_control) gets
# a 404 with the path shown safely, and the daemon keeps running: it used to
# exit on the JSON it could not build. A path holding a NUL (%00) or another
# control character is refused with 400, not cut short and served. HEAD gets
# the headers alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 10

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

# status FILE: the status code of the answer in FILE.
status() { head -n 1 "$1" | cut -d' ' -f2; }
raw "$sock" 'GET /health%00x HTTP/1.0\r\n\r\n' >"$tmp/nul"
check "/health%00x: 400, not /health served ($(status "$tmp/nul"))" sh -c \
    "test '$(status "$tmp/nul")' = 400 && grep -q '\"path\": \"/health?x\"' '$tmp/nul'"
raw "$sock" 'GET /sources/file%00 HTTP/1.0\r\n\r\n' >"$tmp/nul2"
check "/sources/file%00: 400 ($(status "$tmp/nul2"))" test "$(status "$tmp/nul2")" = 400
got=""
for c in 01 09 0a 1b 7f; do
	raw "$sock" "GET /metrics%$c HTTP/1.0\\r\\n\\r\\n" >"$tmp/ctl.$c"
	got="$got $c:$(status "$tmp/ctl.$c")"
done
check "control characters in the path (%01 %09 %0a %1b %7f): 400 each ($got)" \
    test "$got" = " 01:400 09:400 0a:400 1b:400 7f:400"

# HEAD: the status and headers GET would have, Content-Length included, and no body.
# (The 404 answer is the same every time, so its length can be compared.)
raw "$sock" 'HEAD /health HTTP/1.0\r\n\r\n' >"$tmp/head"
check "HEAD /health: 200, a Content-Length and nothing after the headers" sh -c \
    "test '$(status "$tmp/head")' = 200 && grep -q '^Content-Length: [1-9][0-9]*.\$' '$tmp/head' &&
     test \$(sed -n '1,/^\r\$/p' '$tmp/head' | wc -c) -eq \$(wc -c <'$tmp/head')"
raw "$sock" 'GET /nosuch HTTP/1.0\r\n\r\n' >"$tmp/get404"
raw "$sock" 'HEAD /nosuch HTTP/1.0\r\n\r\n' >"$tmp/head404"
body_len=$(($(wc -c <"$tmp/get404") - $(sed -n '1,/^\r$/p' "$tmp/get404" | wc -c)))
check "HEAD /nosuch: 404 and Content-Length $body_len, the length of GET's body" sh -c \
    "test '$(status "$tmp/head404")' = 404 && grep -q '^Content-Length: $body_len.\$' '$tmp/head404'"
check "HEAD /nosuch: nothing after the headers" \
    test "$(sed -n '1,/^\r$/p' "$tmp/head404" | wc -c)" -eq "$(wc -c <"$tmp/head404")"
# On one kept-alive connection a HEAD then a GET: the GET's answer is not
# taken for a body of the HEAD's.
check "HEAD then GET on one HTTP/1.1 connection: both answered whole" sh -c \
    "curl -s --max-time 30 --unix-socket '$sock' -o /dev/null -w '%{http_code} ' -I \
     http://localhost/health --next --unix-socket '$sock' -o '$tmp/after-head' -w '%{http_code}' \
     http://localhost/metrics | grep -qx '200 200' && grep -q '^entropyd_build_info' '$tmp/after-head'"
check "the daemon is still running and answers" sh -c \
    "kill -0 $pid && '$entropyctl' -s '$sock' health >/dev/null"
finish
