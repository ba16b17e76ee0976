#!/bin/sh
# SPDX-License-Identifier: MIT
# Half-open TCP on the EGD listener. In a private network namespace two
# guests on loopback TCP lose their path to the daemon without a FIN or a
# reset (loopback goes down): one that read its bytes and went silent, and
# one that asked and never read (the daemon has bytes it cannot deliver).
# The daemon's keepalive probes and its user timeout find both gone and
# drop them, while a guest on a Unix socket is served throughout; the two
# guests' processes never learn of it, so nothing but the daemon's own
# probing closed them. The slow tier: it waits out the probes (about 70 s).
if [ -z "${ENTROPYD_TEST_NETNS:-}" ]; then
	ENTROPYD_TEST_NETNS=1
	export ENTROPYD_TEST_NETNS
	if unshare -n true 2>/dev/null; then
		exec unshare -n /bin/sh "$0" "$@"
	elif unshare -rn true 2>/dev/null; then
		exec unshare -rn /bin/sh "$0" "$@"
	fi
	ENTROPYD_TEST_NETNS=
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
[ -n "$ENTROPYD_TEST_NETNS" ] ||
    skip_all "no private network namespace (needs root, or user namespaces)"
command -v ip >/dev/null 2>&1 || skip_all "ip (iproute2) is not installed"
ip link set lo up || skip_all "cannot bring loopback up in the namespace"
plan 5

# client MODE ADDR ARGS...: one of egd-client.py's clients.
client() { python3 "$top_srcdir/tests/integration/egd-client.py" "$@"; }
# tcp_clients: how many of the daemon's EGD clients are on TCP.
tcp_clients() {
	ucurl "$tmp/s" /clients >"$tmp/clients.json" &&
	    json 'sum(c["name"].startswith("127.0.0.1:") for c in d["clients"])' \
	    <"$tmp/clients.json"
}
no_tcp_client() { [ "$(tcp_clients)" = 0 ]; }

mkdir "$tmp/egd"
feed_random "$tmp/in"
port=$(free_port)
start_daemon "$tmp/s" "$tmp/log" "$tmp/in" -d -O file:entropy:8 \
    --egd-socket "g1=$tmp/egd/g1.sock" --egd-listen "127.0.0.1:$port" \
    --egd-rate 0 --egd-share 100
wait_for 100 test -S "$tmp/egd/g1.sock"

# 1: two TCP guests, one silent after its read, one that never reads.
client idle "127.0.0.1:$port" "$tmp/done" >"$tmp/idle" 2>&1 &
idle=$!
track $idle
client sleeper "127.0.0.1:$port" "$tmp/done" >"$tmp/sleeper" 2>&1 &
sleeper=$!
track $sleeper
wait_for 600 sh -c "grep -q read= '$tmp/idle' && grep -q asked '$tmp/sleeper'"
n=$(tcp_clients)
check "two TCP guests connected ($n): one read its bytes and went silent ($(cat "$tmp/idle")), one asked and reads nothing ($(cat "$tmp/sleeper"))" \
    sh -c "grep -qx read=32 '$tmp/idle' && grep -qx asked '$tmp/sleeper' && test '$n' = 2"
show_if_failed "$tmp/idle" "$tmp/sleeper" "$tmp/log"

# 2: their path goes, with no FIN and no reset; a Unix guest is served.
ip link set lo down
t0=$(date +%s)
client read "$tmp/egd/g1.sock" 25500 "$tmp/g1.bin" >"$tmp/g1" 2>&1
check "with both TCP guests half-open, a guest on a Unix socket is served ($(cat "$tmp/g1"))" \
    grep -qx read=25500 "$tmp/g1"

# 3-4: the daemon's probes find them gone and drop them.
wait_for 1200 no_tcp_client
t1=$(date +%s)
check "both half-open guests are dropped by the daemon ($((t1 - t0)) s after loopback went down)" \
    no_tcp_client
why=$(sed -n 's/.*egd: 127\.0\.0\.1:[0-9]*: closed (\([A-Z][^)]*\)).*/\1/p' "$tmp/log" |
    sort | uniq -c | awk '{ $1 = $1 } 1' | paste -sd, -)
check "... each logged as closed, for the error its probing met ($why)" \
    test "$(grep -c "egd: 127\\.0\\.0\\.1:[0-9]*: closed ([A-Z]" "$tmp/log")" = 2
show_if_failed "$tmp/log"

# 5: the guests never closed: only the daemon's own probing did.
check "the guests' processes still hold their connections (no FIN or reset was sent)" \
    sh -c "kill -0 $idle && kill -0 $sleeper"
# Let them see it before the clean-up removes it (else they wait 300 s).
touch "$tmp/done"
wait "$idle" "$sleeper" 2>/dev/null
finish
