#!/bin/sh
# SPDX-License-Identifier: MIT
# entropyctl when it gets no answer: against a socket nobody listens on, a
# server that accepts and resets or hangs up, a hung (stopped) daemon, and
# one whose queue is full, `entropyctl health` prints exactly one
# "ENTROPYD UNKNOWN - reason" line on stdout and exits 3, never dies of
# SIGPIPE; the other commands exit 69 with the reason on stderr. Options
# are taken before and after the command; --control-socket is --socket.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 18

# unknown_line FILE: FILE is one line, an UNKNOWN one.
unknown_line() {
	test "$(wc -l <"$1")" -eq 1 && grep -q '^ENTROPYD UNKNOWN - ..*' "$1"
}
# unknown [PATTERN]: the last entropyctl exited 3 with one UNKNOWN line on
# stdout (matching PATTERN).
unknown() {
	test "$rc" -eq 3 && unknown_line "$tmp/out" && grep -q -- "${1:-.}" "$tmp/out"
}
# ctl ARGS...: entropyctl with stdout, stderr and the status in $tmp/out, err, $rc.
ctl() {
	"$entropyctl" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# 1-2: nothing there, and a socket file nobody listens on.
ctl -s "$tmp/none" health
check "no socket: health exits 3 with one UNKNOWN line ($(cat "$tmp/out"))" \
    unknown 'No such file'
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/closed"
ctl -s "$tmp/closed" health
check "a closed socket: health exits 3 with one UNKNOWN line ($(cat "$tmp/out"))" \
    unknown refused

# 3-7: servers that accept and answer nothing: one resets (closes with the
# request unread), one shuts the connection at once (a request sent after
# that is a broken pipe: SIGPIPE used to end entropyctl, exit 141), one reads
# the request and hangs up.
python3 - "$tmp/reset" "$tmp/shut" "$tmp/hangup" >"$tmp/servers.log" 2>&1 <<'PY' &
import select, socket, sys
servers = {}
for path, mode in zip(sys.argv[1:], ("reset", "shut", "hangup")):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(128)
    servers[s] = mode
while True:
    r, _, _ = select.select(list(servers), [], [])
    for s in r:
        c, _ = s.accept()
        if servers[s] == "hangup":
            c.settimeout(5)
            c.recv(65536)
        elif servers[s] == "reset":
            select.select([c], [], [], 5)  # the request is in: close it unread
        else:
            c.shutdown(socket.SHUT_RDWR)
        c.close()
PY
track $!
wait_for 100 test -S "$tmp/hangup"
ctl -s "$tmp/reset" health
check "accept and reset: health exits 3 with one UNKNOWN line ($(cat "$tmp/out"))" unknown
ctl -s "$tmp/hangup" health
check "accept and hang up: health exits 3 with one UNKNOWN line ($(cat "$tmp/out"))" \
    unknown 'without an answer'
# Whether the request meets the shut connection (EPIPE) or is queued first
# (then a reset) is a race: try it twenty times.
codes="" bad=0 pipes=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	ctl -s "$tmp/shut" health
	codes="$codes$rc "
	unknown_line "$tmp/out" || bad=$((bad + 1))
	grep -q 'Broken pipe' "$tmp/out" && pipes=$((pipes + 1))
done
diag "a shut connection: $pipes of 20 requests met a broken pipe"
check "a shut connection, 20 times: exit 3 and one UNKNOWN line each, never SIGPIPE ($codes)" \
    test "$codes" = "3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 " -a "$bad" -eq 0
all=""
for cmd in status metrics sources status metrics sources; do
	ctl -s "$tmp/shut" "$cmd"
	all="$all $cmd:$rc"
done
check "a shut connection: status, metrics, sources exit 69, none by SIGPIPE ($all)" \
    test "$all" = " status:69 metrics:69 sources:69 status:69 metrics:69 sources:69"
ctl -s "$tmp/reset" status
check "... each saying why on stderr, nothing on stdout ($(cat "$tmp/err"))" sh -c \
    "test $rc -eq 69 && test -s '$tmp/err' && test ! -s '$tmp/out'"

# 8-11: a hung daemon (SIGSTOP): the kernel takes the connection and the
# request, nothing answers; and once its queue is full, not even a connection.
feed_random "$tmp/in"
start_daemon "$tmp/s" "$tmp/log" "$tmp/in"
pid=$daemon
wait_for 100 sh -c "'$entropyctl' -s '$tmp/s' health >/dev/null 2>&1"
kill -STOP "$pid"
t0=$(date +%s)
ctl -s "$tmp/s" -t 2 health
t1=$(date +%s)
check "a stopped daemon: health -t 2 exits 3 with one UNKNOWN line ($(cat "$tmp/out"))" \
    unknown 'no answer within 2 s'
check "... after about 2 s, not hanging ($((t1 - t0)) s)" test $((t1 - t0)) -lt 10
t0=$(date +%s)
ctl -s "$tmp/s" health
t1=$(date +%s)
unknown 'no answer within 10 s'
check "a stopped daemon: by default health gives up after 10 s ($((t1 - t0)) s)" \
    test $? -eq 0 -a $((t1 - t0)) -ge 9 -a $((t1 - t0)) -lt 30
# Fill the stopped daemon's queue, so that connect() itself cannot complete.
python3 - "$tmp/s" "$tmp/filled" <<'PY' &
import socket, sys, time
held = []
try:
    while len(held) < 1000:
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        s.connect(sys.argv[1])
        held.append(s)
except OSError:
    pass
open(sys.argv[2], "w").write("%d\n" % len(held))
time.sleep(60)
PY
filler=$!
track $filler
wait_for 100 test -s "$tmp/filled"
ctl -s "$tmp/s" -t 2 health
check "a full queue ($(cat "$tmp/filled") connections): health -t 2 exits 3, one UNKNOWN line ($(cat "$tmp/out"))" \
    unknown 'accepts no connection'
stop "$filler"
kill -CONT "$pid"
wait_for 100 sh -c "'$entropyctl' -s '$tmp/s' health >/dev/null 2>&1"

# 12-18: options after the command, and --control-socket.
ctl health -s "$tmp/s"
check "health -s SOCKET: options after the command (exit $rc)" sh -c \
    "test $rc -eq 0 && grep -q '^ENTROPYD OK' '$tmp/out'"
ctl --control-socket "$tmp/s" health
check "--control-socket is --socket (exit $rc)" sh -c \
    "test $rc -eq 0 && grep -q '^ENTROPYD OK' '$tmp/out'"
ctl sources file --control-socket="$tmp/s" -j
check "sources NAME --control-socket=SOCKET -j: the source's JSON (exit $rc)" \
    test "$rc" -eq 0 -a "$(json 'd["name"]' <"$tmp/out")" = file
ctl -s "$tmp/s" -- health
check "-- ends the options (exit $rc)" test "$rc" -eq 0
ctl health extra -s "$tmp/s"
check "a word too many after the command is still a usage error (exit $rc)" sh -c \
    "test $rc -eq 64 && test \$(wc -l <'$tmp/err') -eq 1"
all=""
for t in 0 3601 abc ""; do
	ctl -s "$tmp/s" -t "$t" health
	all="$all $rc"
done
check "-t outside 1..3600 or not a number: exit 64 ($all)" test "$all" = " 64 64 64 64"
ctl -s "$tmp/s" health --timeout 5
check "--timeout 5 after the command (exit $rc)" test "$rc" -eq 0
stop "$pid"
finish
