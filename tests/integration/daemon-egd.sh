#!/bin/sh
# SPDX-License-Identifier: MIT
# The EGD broker end to end: a private daemon with the file source serves
# clients (egd-client.py) on a named and an unnamed Unix socket and
# on loopback TCP: every command; names in /clients and /metrics; a guest
# that never reads, one that hangs up mid-reply, writes, unknown commands
# and garbage, each costing only its own connection; the cap on
# connections; the rate's bound; and, with known data, that no conditioned
# byte reaches both a client and the sink, or two clients
# (egd-marks.py).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 29

# client MODE ADDR ARGS...: one of egd-client.py's clients.
client() { python3 "$top_srcdir/tests/integration/egd-client.py" "$@"; }
# The first number after "KEY=" in the file $2.
field() { sed -n "s/.*$1=\\([0-9][0-9]*\\).*/\\1/p" "$2" | head -n 1; }
# clients_json DAEMON-SOCKET: GET /clients into $tmp/clients.json.
clients_json() { ucurl "$1" /clients >"$tmp/clients.json"; }
# connected DAEMON-SOCKET N: whether N EGD clients are connected.
connected() {
	clients_json "$1" && [ "$(json 'd["connected"]' <"$tmp/clients.json")" = "$2" ]
}

# 1-2: the sockets, and every command on each kind (their directory must
# exist: the daemon makes only its default runtime directory).
mkdir "$tmp/egd"
feed_random "$tmp/in"
port=$(free_port)
start_daemon "$tmp/s" "$tmp/log" "$tmp/in" -d -O file:entropy:8 \
    --egd-socket "g1=$tmp/egd/g1.sock" --egd-socket "$tmp/egd/anon.sock" \
    --egd-listen "127.0.0.1:$port" --egd-rate 0 --egd-share 100
wait_for 100 test -S "$tmp/egd/anon.sock"
check "the EGD sockets are made, mode 0660" sh -c \
    "test \"\$(stat -c %a '$tmp/egd/g1.sock')\" = 660 &&
     test \"\$(stat -c %a '$tmp/egd/anon.sock')\" = 660"
: >"$tmp/commands"
for addr in "$tmp/egd/g1.sock" "$tmp/egd/anon.sock" "127.0.0.1:$port"; do
	client commands "$addr" >>"$tmp/commands" 2>&1
done
check "every command on a named and an unnamed Unix socket and on TCP: available, pid, a non-blocking and a blocking read" \
    test "$(grep -c "^available=[1-9][0-9]* pid=$daemon nonblocking=32/32 blocking=255\$" \
    "$tmp/commands")" = 3
show_if_failed "$tmp/commands" "$tmp/log"

# 3-6: guests that never read; the others are served, /health answers.
rm -f "$tmp/done"
for addr in "$tmp/egd/g1.sock" "$tmp/egd/anon.sock" "127.0.0.1:$port"; do
	client sleeper "$addr" "$tmp/done" >>"$tmp/sleepers" 2>&1 &
	track $!
done
wait_for 600 sh -c "test \"\$(grep -c asked '$tmp/sleepers' 2>/dev/null)\" = 3"
wait_for 300 connected "$tmp/s" 3
json '" ".join(sorted(c["name"].split("=")[0].split(":")[0] for c in d["clients"]))' \
    <"$tmp/clients.json" >"$tmp/names"
check "/clients names each client: the socket's name, uid and pid, address and port ($(cat "$tmp/names"))" \
    test "$(cat "$tmp/names")" = "127.0.0.1 g1 uid"
client read "$tmp/egd/g1.sock" 25500 "$tmp/other.bin" >"$tmp/other" 2>&1
check "while three guests never read, another is served (25500 bytes)" \
    test "$(field read "$tmp/other")" = 25500
# The status of the egd:clients check in /health, into $tmp/egd.status.
egd_check() {
	ucurl "$tmp/s" /health -o "$tmp/health.json" -w '%{http_code}\n' >"$tmp/health.code"
	json 'd["checks"]["egd:clients"][0]["status"]' <"$tmp/health.json" >"$tmp/egd.status"
}
egd_check
check "/health answers meanwhile, with an egd:clients check ($(cat "$tmp/health.code") $(cat "$tmp/egd.status"))" \
    sh -c "grep -qx 200 '$tmp/health.code' && grep -qx pass '$tmp/egd.status'"
check "/clients: each sleeper waits for bytes, or has bytes it has not read" \
    test "$(json 'sum(c["waiting"] or c["unsent_bytes"] > 0 for c in d["clients"])' \
    <"$tmp/clients.json")" = 3
touch "$tmp/done"
wait_for 300 connected "$tmp/s" 0

# 7-12: a guest gone mid-reply, a write, unknown commands, half-closed, garbage.
client midreply "$tmp/egd/anon.sock" >"$tmp/mid" 2>&1
wait_for 100 grep -q "bytes not sent are wiped" "$tmp/log"
check "a guest that hangs up mid-reply: its unsent bytes are wiped" sh -c \
    "grep -qx read=100 '$tmp/mid' && grep -q 'uid=[0-9]*,pid=[0-9]*: closed (.*); [1-9][0-9]* bytes not sent are wiped' '$tmp/log'"
client closes "$tmp/egd/g1.sock" 030040086162636465666768 >"$tmp/write" 2>&1
check "a write (0x03) is refused, logged, its connection closed" sh -c \
    "grep -qx closed '$tmp/write' && grep -q 'egd: g1: refused a write of entropy' '$tmp/log'"
client closes "127.0.0.1:$port" 07 >"$tmp/unknown" 2>&1
check "an unknown command closes its connection" grep -qx closed "$tmp/unknown"
client closes "$tmp/egd/g1.sock" 0200 >"$tmp/zero" 2>&1
check "a read of 0 bytes closes its connection" grep -qx closed "$tmp/zero"
client halfclose "127.0.0.1:$port" >"$tmp/half" 2>&1
check "a TCP client that sends no more after its request is answered, then closed ($(cat "$tmp/half"))" \
    grep -qx "read=32 closed" "$tmp/half"
client garbage "$tmp/egd/anon.sock" >"$tmp/garbage" 2>&1
client commands "$tmp/egd/anon.sock" >"$tmp/after" 2>&1
check "64 KiB of garbage: its connection closed, the others served" sh -c \
    "grep -qx closed '$tmp/garbage' && grep -q 'blocking=255' '$tmp/after'"

# 13-15: the metrics.
ucurl "$tmp/s" /metrics >"$tmp/metrics"
served=$(metric "$tmp/metrics" 'entropyd_egd_bytes_served_total{client="g1"}')
check "entropyd_egd_bytes_served_total{client=\"g1\"} counts its bytes ($served)" \
    test "${served:-0}" -ge 25500
writes=$(metric "$tmp/metrics" 'entropyd_egd_requests_total{client="g1",command="write"}')
refused_w=$(metric "$tmp/metrics" 'entropyd_egd_refused_total{reason="write"}')
refused_i=$(metric "$tmp/metrics" 'entropyd_egd_refused_total{reason="invalid"}')
open_now=$(metric "$tmp/metrics" 'entropyd_egd_clients')
waits=$(metric "$tmp/metrics" 'entropyd_egd_wait_seconds_count')
check "requests by client and command ($writes write), refusals by reason ($refused_w write, $refused_i invalid), $open_now clients, $waits reads waited" \
    sh -c "test '$writes' = 1 && test '$refused_w' = 1 && test '$refused_i' = 3 &&
     test '$open_now' = 0 && test '${waits:-0}' -ge 100"
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics accepts the EGD families" sh -c \
	    "promtool check metrics <'$tmp/metrics' >'$tmp/promtool' 2>&1"
	show_if_failed "$tmp/promtool"
else
	skip "promtool is not installed (Debian package prometheus)"
fi

# 16-20: 257 connections for 256 places; then 1000; the sockets removed at exit.
rm -f "$tmp/done"
client many "$tmp/egd/g1.sock" 257 "$tmp/done" >"$tmp/many257" 2>"$tmp/many257.err" &
track $!
wait_for 600 test -s "$tmp/many257"
check "257 connections with --egd-max-clients 256: one refused ($(cat "$tmp/many257"))" \
    grep -qx "closed=1 open=256" "$tmp/many257"
check "the refusal is logged" grep -q "egd: .*g1.sock: refusing g1: 256 clients are connected" "$tmp/log"
egd_check
check "/health: egd:clients warns after a refusal ($(cat "$tmp/egd.status")); /clients: 256 connected" \
    sh -c "grep -qx warn '$tmp/egd.status' && $(connected "$tmp/s" 256 && echo true || echo false)"
touch "$tmp/done"
wait_for 300 connected "$tmp/s" 0
rm -f "$tmp/done"
client many "$tmp/egd/anon.sock" 1000 "$tmp/done" >"$tmp/many1000" 2>"$tmp/many1000.err" &
track $!
wait_for 1200 test -s "$tmp/many1000"
touch "$tmp/done"
wait_for 300 connected "$tmp/s" 0
client commands "127.0.0.1:$port" >"$tmp/after" 2>&1
check "1000 connections: 744 refused at once, and then the daemon serves on ($(cat "$tmp/many1000"))" \
    sh -c "grep -qx 'closed=744 open=256' '$tmp/many1000' && grep -q 'blocking=255' '$tmp/after'"
if [ "$tap_last" = fail ]; then
	diag_file "$tmp/many1000" "$tmp/many1000.err" "$tmp/after"
	grep -v "connected on\|closed (\|rate:" "$tmp/log" | tail -n 20 >"$tmp/log.short"
	diag_file "$tmp/log.short"
fi
stop "$daemon"
check "SIGTERM removes the EGD sockets" sh -c \
    "test ! -e '$tmp/egd/g1.sock' && test ! -e '$tmp/egd/anon.sock'"

# 21: the rate: what a client got never passes its bound.
start_daemon "$tmp/s2" "$tmp/log2" "$tmp/in" -O file:entropy:8 \
    --egd-socket "$tmp/egd/rate.sock" --egd-rate 2048
wait_for 100 test -S "$tmp/egd/rate.sock"
client rate "$tmp/egd/rate.sock" 3 2048 >"$tmp/rate" 2>&1
got=$(field bytes "$tmp/rate")
bound=$(field bound "$tmp/rate")
check "--egd-rate 2048: $got bytes in $(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$tmp/rate") s, within the bound ($bound: the rate times the time, and a second's burst)" \
    sh -c "test '${got:-0}' -gt 2048 && test '${got:-0}' -le '${bound:-0}'"
stop "$daemon"

# 22-28: known data, marked: no byte reaches the sink and a client, or two clients.
head -c 300000 /dev/urandom >"$tmp/marks.data"
rm -f "$tmp/marks.in"
mkfifo "$tmp/marks.in"
run_entropyd -f -x all -n file -O "file:path:$tmp/marks.in" -O file:entropy:8 \
    -o "$tmp/marks.out" --control-socket "$tmp/s3" --egd-rate 0 \
    --egd-socket "$tmp/egd/m1.sock" --egd-listen "127.0.0.1:$port" 2>"$tmp/log3" &
daemon=$!
track $daemon
wait_for 100 test -S "$tmp/egd/m1.sock"
client stream "$tmp/egd/m1.sock" 224 3 "$tmp/m1.bin" >"$tmp/m1" 2>&1 &
c1=$!
track $c1
client stream "127.0.0.1:$port" 224 3 "$tmp/m2.bin" >"$tmp/m2" 2>&1 &
c2=$!
track $c2
# Paced, about 60 kB/s, so that the clients ask while the data flows.
(i=0
 while [ $i -lt 74 ]; do
	dd if="$tmp/marks.data" bs=4096 skip=$i count=1 status=none
	sleep 0.05
	i=$((i + 1))
 done) >"$tmp/marks.in"
wait "$c1" "$c2"
wait_for 100 grep -q "source drained" "$tmp/log3"
stop "$daemon"
m1=$(field read "$tmp/m1")
m2=$(field read "$tmp/m2")
sunk=$(wc -c <"$tmp/marks.out")
check "two clients read ($m1 and $m2 bytes) while the sink took the rest ($sunk bytes)" \
    sh -c "test '${m1:-0}' -gt 4096 && test '${m2:-0}' -gt 4096 && test '$sunk' -gt 65536"
python3 "$top_srcdir/tests/integration/egd-marks.py" \
    "$tmp/marks.data" "$tmp/marks.out" "$tmp/m1.bin" \
    "$tmp/m2.bin" >"$tmp/marks.check" 2>&1
checker_points "$tmp/marks.check" 5 marks
show_if_failed "$tmp/marks.check" "$tmp/log3"
# Two conditioned bytes per byte served; at most half of them (--egd-share
# 50), and the allowance kept in hand (8 KiB at 50%) and the stock (1 KiB made).
drawn=$(( 2 * (${m1:-0} + ${m2:-0}) ))
check "--egd-share 50: the clients took $drawn conditioned bytes, the sink $sunk" \
    test "$drawn" -le $((sunk + 8192 + 2048))

# 29: with the kernel sink, the kernel is fed its start-up burst, and the clients are
# served by the worker under its feeder, in its seccomp sandbox.
if [ "$(id -u)" -ne 0 ]; then
	skip "crediting the kernel needs root"
else
	no_leak_check_under_seccomp
	run_entropyd -f -x all -n file -O "file:path:$tmp/in" -O file:entropy:8 \
	    -D nobody:nogroup --control-socket "$tmp/s4" --egd-socket "k1=$tmp/egd/k1.sock" \
	    --egd-group nogroup 2>"$tmp/log4" &
	daemon=$!
	track $daemon
	wait_for 100 test -S "$tmp/egd/k1.sock"
	wait_for 300 grep -q "first feed" "$tmp/log4"
	client commands "$tmp/egd/k1.sock" >"$tmp/kernel" 2>&1
	check "with the kernel sink and -D: the kernel fed its start-up burst ($(sed -n 's/.*first feed: //p' "$tmp/log4")), the sockets the -D group's, the clients served from the sandbox" \
	    sh -c "grep -q 'start-up burst fed' '$tmp/log4' &&
	     test \"\$(stat -c '%a %G' '$tmp/egd/k1.sock')\" = '660 nogroup' &&
	     grep -q 'system calls confined' '$tmp/log4' && grep -q 'blocking=255' '$tmp/kernel'"
	show_if_failed "$tmp/log4" "$tmp/kernel"
	stop "$daemon"
fi
finish
