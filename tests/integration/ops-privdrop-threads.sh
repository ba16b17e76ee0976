#!/bin/sh
# SPDX-License-Identifier: MIT
# -D holds for every thread, not only the one that dropped: reader threads
# start before the drop, so the bounding set and no_new_privs are set before
# any thread exists. And the control socket is removed at exit by the dropped
# daemon when its directory lets it (entropyd made it, or it is the user's),
# with a warning at start when not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "-D needs root"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
    skip_all "no user nobody or group nogroup"
plan 9

# nobody must reach the directories under $tmp, and remove its socket from run/
# (only the default runtime directory is made by the daemon).
chmod 755 "$tmp"
mkdir "$tmp/run" && chown nobody:nogroup "$tmp/run"
no_leak_check_under_seccomp
"$top_builddir/tests/fakes/sandbox-probe" work 2>/dev/null
[ $? -eq 77 ] && seccomp=no || seccomp=yes
nobody=$(id -u nobody)

# 1-5: jitter reads in a reader thread, started before the drop.
run_entropyd -f -t -d -x all -n jitter -D nobody:nogroup --control-socket "$tmp/run/ctl" \
    2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "running as nobody:nogroup" "$tmp/log"
wait_for 100 sh -c "test \$(ls /proc/$pid/task | wc -l) -ge 2"
threads=$(ls "/proc/$pid/task" | wc -l)
check "the daemon runs a reader thread besides the loop ($threads threads)" test "$threads" -ge 2
# every FIELD VALUE: each thread's /proc status FIELD is VALUE.
every() {
	for t in /proc/"$pid"/task/*; do
		v=$(sed -n "s/^$1:[[:space:]]*//p" "$t/status" | tr -s '\t ' ' ')
		[ "$v" = "$2" ] || { diag "thread ${t##*/}: $1 $v"; return 1; }
	done
}
# Without the kernel sink there is no feeder: the one process is the worker,
# which needs no capability, so its threads' bounding set is empty.
check "every thread's bounding set is empty" every CapBnd 0000000000000000
check "every thread has no_new_privs" every NoNewPrivs 1
check "every thread runs as nobody" every Uid "$nobody $nobody $nobody $nobody"
if [ "$seccomp" = yes ]; then
	check "every thread is under the seccomp filter" every Seccomp 2
else
	skip "built without libseccomp"
fi

# 6-7: a socket in a directory entropyd made is removed at exit by the dropped daemon.
kill "$pid"
wait "$pid"
check "SIGTERM: exit 0 ($?), the socket removed from the directory entropyd made" \
    test ! -e "$tmp/run/ctl"
check "that directory belongs to the -D user" test "$(stat -c %U "$tmp/run")" = nobody

# 8-9: a directory the user cannot write: said at start; the socket stays.
mkdir "$tmp/rootdir"
feed_random "$tmp/in"
start_daemon "$tmp/rootdir/ctl" "$tmp/log2" "$tmp/in" -D nobody:nogroup
pid=$daemon
wait_for 100 grep -q "running as nobody:nogroup" "$tmp/log2"
check "a directory the user cannot write: a warning at start" \
    grep -q "rootdir: the -D user cannot remove the socket" "$tmp/log2"
stop "$pid"
check "... and the socket stays after exit, as warned" test -S "$tmp/rootdir/ctl"
finish
