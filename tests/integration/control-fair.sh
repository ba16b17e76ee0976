#!/bin/sh
# SPDX-License-Identifier: MIT
# No client can blind the others. Slowloris clients (hundreds of connections,
# one byte every 2 s, never a whole request) run as unprivileged users on the
# TCP listener and on the Unix socket, ten uids of the daemon's group there
# so that the socket's shared places are all taken; then wrk floods the TCP
# listener. Throughout, root's `entropyctl health` on the Unix socket must
# answer within 2 s every time, and the source must keep being fed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "running clients as other users needs root"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv is not installed (util-linux)"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
    skip_all "no user nobody or group nogroup"
header=$top_srcdir/src/control/control.h
limit() { sed -n "s/^#define $1 \([0-9]*\).*/\1/p" "$header"; }
unix_max=$(limit CONTROL_UNIX_MAX)
peer_max=$(limit CONTROL_PEER_MAX)
# as_user UID COMMAND...: run a command as UID in the group nogroup, no capabilities.
as_user() {
	u=$1
	shift
	setpriv --reuid="$u" --regid=nogroup --clear-groups --inh-caps=-all "$@"
}
# A python3 the other users may run (root's own may live under /root).
for py in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3 ""; do
	[ -n "$py" ] && as_user 65534 "$py" -c pass 2>/dev/null && break
done
[ -n "$py" ] || skip_all "no python3 that an unprivileged user may run"
plan 11

# The attackers read their script and reach the socket as other users.
chmod 755 "$tmp"
cp "$top_srcdir/tests/integration/control-slowloris.py" "$tmp/slowloris.py"
chmod 644 "$tmp/slowloris.py"
# run/ is nobody's (entropyd makes only its default runtime directory): the
# socket is nobody:nogroup 0660.
sock=$tmp/run/ctl
mkdir -p "$tmp/run" && chown nobody:nogroup "$tmp/run"
port=$(free_port)
feed_random "$tmp/in"
# A 5 s deadline: a byte every 2 s would keep a per-read timeout from ever firing.
deadline=5
ENTROPYD_CONTROL_TIMEOUT=$deadline
export ENTROPYD_CONTROL_TIMEOUT
no_leak_check_under_seccomp
start_daemon "$sock" "$tmp/log" "$tmp/in" --health-listen "127.0.0.1:$port" -D nobody:nogroup
pid=$daemon
wait_for 100 sh -c "'$entropyctl' -s '$sock' health >/dev/null 2>&1"

# The bytes the sink has taken from the source so far.
fed() {
	ucurl "$sock" /metrics -o "$tmp/m.fed"
	metric "$tmp/m.fed" 'entropyd_bytes_fed_total{source="file"}'
}
# probe SECONDS: root's health check every half second for SECONDS. Sets
# $probes, $bad (failed or slower than 2 s), $slowest_ms, and, from /metrics
# fetched by root right after, the most TCP places seen held ($tcp_seen) and
# whether root was served from its reserve while every shared Unix place was
# taken ($reserve_used).
probe() {
	probes=0 bad=0 slowest_ms=0 tcp_seen=0 reserve_used=no
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		t0=$(date +%s%N)
		"$entropyctl" -s "$sock" health >"$tmp/probe.out" 2>&1
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		probes=$((probes + 1))
		[ "$ms" -gt "$slowest_ms" ] && slowest_ms=$ms
		if [ "$rc" -ne 0 ] || [ "$ms" -gt 2000 ]; then
			bad=$((bad + 1))
			diag "health check $probes: exit $rc after $ms ms: $(head -n 1 "$tmp/probe.out")"
		fi
		if ucurl "$sock" /metrics -o "$tmp/m.probe"; then
			place() { metric "$tmp/m.probe" "entropyd_control_place_connections{place=\"$1\"}"; }
			[ "$(place tcp)" -gt "$tcp_seen" ] && tcp_seen=$(place tcp)
			[ "$(place unix)" -eq "$unix_max" ] && [ "$(place unix_root)" -ge 1 ] &&
			    reserve_used=yes
		fi
		sleep 0.5
	done
}

# 1-7: slowloris: 10 uids x 40 connections on the Unix socket, 300 on TCP, 22 s.
fed0=$(fed)
attackers=""
for u in 65534 60001 60002 60003 60004 60005 60006 60007 60008 60009; do
	as_user "$u" "$py" "$tmp/slowloris.py" unix "$sock" 40 2 22 >"$tmp/slow.$u" 2>&1 &
	attackers="$attackers $!"
done
as_user 65534 "$py" "$tmp/slowloris.py" tcp "127.0.0.1:$port" 300 2 22 >"$tmp/slow.tcp" 2>&1 &
attackers="$attackers $!"
for a in $attackers; do track "$a"; done
sleep 3
probe 15
diag "slowloris: $probes health checks, the slowest $slowest_ms ms"
check "slowloris: every root health check answered OK within 2 s ($bad of $probes did not)" \
    test "$probes" -ge 5 -a "$bad" -eq 0
check "slowloris: root was served from its reserve while the $unix_max shared Unix places were taken" \
    test "$reserve_used" = yes
check "slowloris: one TCP address held at most $peer_max places ($tcp_seen seen)" \
    test "$tcp_seen" -ge 1 -a "$tcp_seen" -le "$peer_max"
fed1=$(fed)
check "slowloris: the source is still fed to the sink ($fed0, then $fed1 bytes)" \
    test "$fed1" -gt "$fed0"
for a in $attackers; do wait "$a"; done
longest=0
for f in "$tmp"/slow.*; do
	diag "$(basename "$f"): $(cat "$f")"
	l=$(sed -n 's/.*longest=\([0-9]*\).*/\1/p' "$f")
	[ -n "$l" ] && [ "$l" -gt "$longest" ] && longest=$l
done
check "slowloris: the clients ran and were refused or closed (closed= > 0 for each)" sh -c \
    "for f in '$tmp'/slow.*; do grep -q 'closed=[1-9]' \"\$f\" || exit 1; done"
check "slowloris: no connection outlived the ${deadline} s request deadline by much (longest ${longest} s of 22)" \
    test "$longest" -lt $((deadline * 2 + 2))
ucurl "$sock" /metrics -o "$tmp/m.after"
check "slowloris: connections were refused and expired ($(metric "$tmp/m.after" entropyd_control_refused_total), $(metric "$tmp/m.after" entropyd_control_expired_total))" \
    test "$(metric "$tmp/m.after" entropyd_control_refused_total)" -gt 0 -a \
    "$(metric "$tmp/m.after" entropyd_control_expired_total)" -gt 0

# 8-11: a wrk flood on TCP, as nobody, 12 s.
if command -v wrk >/dev/null 2>&1; then
	fed0=$(fed)
	as_user 65534 wrk -t 2 -c 200 -d 12s "http://127.0.0.1:$port/health" >"$tmp/wrk" 2>&1 &
	flood=$!
	track $flood
	sleep 1
	probe 9
	diag "wrk: $probes health checks, the slowest $slowest_ms ms"
	check "wrk flood: every root health check answered OK within 2 s ($bad of $probes did not)" \
	    test "$probes" -ge 5 -a "$bad" -eq 0
	fed1=$(fed)
	check "wrk flood: the source is still fed to the sink ($fed0, then $fed1 bytes)" \
	    test "$fed1" -gt "$fed0"
	wait "$flood"
	grep -E 'Requests/sec|requests in' "$tmp/wrk" | sed 's/^ */# wrk: /'
	check "wrk flood: wrk was served (some requests answered)" \
	    grep -q '[1-9][0-9]* requests in' "$tmp/wrk"
	check "wrk flood: the daemon still runs and answers" sh -c \
	    "kill -0 $pid && '$entropyctl' -s '$sock' health >/dev/null"
else
	for i in 1 2 3 4; do skip "wrk is not installed (Debian package wrk)"; done
fi
stop "$pid"
finish
