#!/bin/sh
# SPDX-License-Identifier: MIT
# With -D the daemon confines itself (its seccomp list has no exec), yet a
# plugin that crashes is still restarted: its launcher was started before.
# The hosts run as the -D user, without capabilities. The file source feeds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "not root: -D needs root"
getent passwd nobody >/dev/null 2>&1 || skip_all "no user nobody"
no_leak_check_under_seccomp
plan 5
group=$(id -gn nobody)
mkdir -p "$tmp/plugins"
cp "$libs/hostile_rndadd.so" "$tmp/plugins/"
hostile_start segv_read -D "nobody:$group" -n hostile_rndadd
restarted_twice() { [ "$(plugin_metric plugin_restarts_total)" -ge 2 ]; }
check "under -D its crashed host is restarted again and again" wait_for 150 restarted_twice
show_if_failed "$tmp/log"
# The hosts as they are now (the crashing one may be between restarts).
hosts_ok() {
	n=0
	for h in $(host_pids); do
		[ "$(stat -c %U "/proc/$h")" = nobody ] || return 1
		grep -q '^CapEff:[[:space:]]*0000000000000000' "/proc/$h/status" || return 1
		n=$((n + 1))
	done
	[ $n -ge 1 ]
}
# A host just started runs as root for a moment, until it confines itself.
check "the plugin hosts run as nobody, without capabilities" wait_for 50 hosts_ok
check "the daemon confined itself" grep -q "system calls confined to the seccomp allow-list\|running as nobody" "$tmp/log"
good_keeps_feeding
kill "$pid"
wait "$pid"
rc=$?
check "SIGTERM: exit 0 (status $rc)" test "$rc" -eq 0
finish
