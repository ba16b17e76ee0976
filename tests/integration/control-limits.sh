#!/bin/sh
# SPDX-License-Identifier: MIT
# Misbehaving clients of the control socket affect only themselves: huge
# headers, garbage, a half-sent request, a thousand idle connections from one
# peer (over its limit), a request flood (wrk), an idle connection and one
# that dribbles a byte at a time closed at the request deadline, while a
# kept-alive connection gets a new deadline for each request.
# (control-fair.sh has clients of several users at once.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
abuse=$top_srcdir/tests/integration/control-abuse.py
cap=$(sed -n 's/^#define CONTROL_PEER_MAX \([0-9]*\).*/\1/p' "$top_srcdir/src/control/control.h")
plan 17

sock=$tmp/s
port=$(free_port)
feed_random "$tmp/in"
ENTROPYD_CONTROL_TIMEOUT=600
export ENTROPYD_CONTROL_TIMEOUT
# ASan keeps freed memory in a quarantine (256 MB by default): keep it small,
# so that the RSS bound below measures the daemon and not the sanitizer.
if sanitized; then asan_option quarantine_size_mb=4; fi
start_daemon "$sock" "$tmp/log" "$tmp/in" --health-listen "127.0.0.1:$port"
pid=$daemon
wait_for 100 sh -c "'$entropyctl' -s '$sock' health >/dev/null 2>&1"
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"; }
rss_before=$(rss)

# The daemon still serves /health after each abuse.
healthy() { "$entropyctl" -s "$sock" health >/dev/null; }

# 1-2: an oversized header gets an error; others are still served.
check "a 20 kB header gets 400" test "$(python3 "$abuse" header "$sock" 20000)" = \
    "HTTP/1.1 400 Bad Request"
check "after the huge header /health still answers" healthy

# 3-4: binary garbage gets an error or a hang-up, nothing else.
out=$(python3 "$abuse" garbage "$sock")
check "garbage gets 400 or a closed connection ($out)" sh -c \
    "test '$out' = 'HTTP/1.1 400 Bad Request' || test '$out' = closed"
check "after garbage /health still answers" healthy

# 5: a client that sends half a request and stalls does not block another.
check "a stalled half request does not block /health on another connection" \
    test "$(python3 "$abuse" slow "$sock")" = "HTTP/1.1 200 OK"

# 6-8: a thousand idle connections from one uid: those over its limit are
# closed at once, those within it are served; afterwards the count falls back.
# Whether the control server counts only the connection asking.
one_connection() {
	ucurl "$sock" /metrics -o "$tmp/m"
	test "$(metric "$tmp/m" entropyd_control_connections)" = 1
}
# Earlier clients' connections are gone before the count starts.
wait_for 300 one_connection
python3 "$abuse" many "$sock" 1000 "$cap" >"$tmp/many"
check "1000 connections from one uid: all but $cap closed at once" \
    test "$(head -1 "$tmp/many")" = "closed=$((1000 - cap)) open=$cap"
check "a connection within the cap is served" test "$(sed -n 2p "$tmp/many")" = \
    "held=HTTP/1.1 200 OK"
wait_for 300 one_connection
check "closed connections free their places (1 open: this one)" one_connection

# 9-12: a request flood over TCP: no crash, memory bounded, still feeding.
if command -v wrk >/dev/null 2>&1; then
	ucurl "$sock" /metrics -o "$tmp/m0"
	fed0=$(metric "$tmp/m0" 'entropyd_bytes_fed_total{source="file"}')
	wrk -t 2 -c 200 -d 3s "http://127.0.0.1:$port/health" >"$tmp/wrk" 2>&1
	grep -E 'Requests/sec|requests in' "$tmp/wrk" | sed 's/^ */# wrk: /'
	check "wrk flood: the daemon is still running" kill -0 "$pid"
	check "wrk flood: /health still answers" healthy
	# Whether the source is still being fed through to the sink.
	still_feeding() {
		ucurl "$sock" /metrics -o "$tmp/m1"
		test "$(metric "$tmp/m1" 'entropyd_bytes_fed_total{source="file"}')" -gt "$fed0"
	}
	wait_for 300 still_feeding
	check "wrk flood: the source is still fed to the sink" still_feeding
	rss_after=$(rss)
	diag "RSS before ${rss_before} kB, after ${rss_after} kB"
	check "memory stays bounded (RSS grew less than 32 MB)" \
	    test "$((rss_after - rss_before))" -lt 32768
else
	for i in 1 2 3 4; do
		skip "wrk is not installed (Debian package wrk)"
	done
fi
stop "$pid"

# 13-14: an idle connection is closed at the (test-shortened) deadline.
ENTROPYD_CONTROL_TIMEOUT=1
start_daemon "$tmp/s2" "$tmp/log2" "$tmp/in"
wait_for 100 sh -c "'$entropyctl' -s '$tmp/s2' health >/dev/null 2>&1"
check "an idle connection is closed at the deadline" \
    test "$(python3 "$abuse" idle "$tmp/s2")" = closed
check "after the deadline /health still answers" sh -c "'$entropyctl' -s '$tmp/s2' health >/dev/null"
stop "$daemon"

# 15: a byte every half second would reset a per-read timeout forever; the
# deadline covers the whole request.
ENTROPYD_CONTROL_TIMEOUT=3
start_daemon "$tmp/s3" "$tmp/log3" "$tmp/in"
wait_for 100 sh -c "'$entropyctl' -s '$tmp/s3' health >/dev/null 2>&1"
out=$(python3 "$abuse" dribble "$tmp/s3" 0.5)
secs=$(echo "$out" | sed -n 's/closed after \([0-9]*\) s/\1/p')
check "a client sending a byte every 0.5 s is closed at the 3 s deadline ($out)" \
    test -n "$secs" -a "${secs:-99}" -lt 15
# 16-17: each request on a kept-alive connection has its own deadline: three
# requests 2 s apart outlast one 3 s deadline from the accept.
out=$(python3 "$abuse" keepalive "$tmp/s3" 2 3)
check "a kept-alive connection: each request has its own deadline ($out)" \
    test "$out" = "HTTP/1.1 200 OK | HTTP/1.1 200 OK | HTTP/1.1 200 OK"
check "after them /health still answers" sh -c "'$entropyctl' -s '$tmp/s3' health >/dev/null"
finish
