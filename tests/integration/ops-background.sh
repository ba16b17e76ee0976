#!/bin/sh
# SPDX-License-Identifier: MIT
# -b reports only real success: the starting command exits 0 once the daemon
# is up (control socket answering, privileges dropped, pidfile written), and
# otherwise with the daemon's sysexits code and its error on stderr, leaving
# no daemon behind: the TCP port taken (69), the control socket held by a
# live daemon (73), -D naming a missing user (67), a pidfile that cannot be
# created (73) or written on a full file system (73).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plan 23

feed_random "$tmp/in"
# The entropyd processes whose command line names this test's directory.
daemons() {
	for d in /proc/[0-9]*; do
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q "^[^ ]*entropyd .*$tmp/" &&
		    echo "${d#/proc/}"
	done
}
# bg NAME ARGS...: entropyd -b with the file source, stdout and stderr in
# $tmp/NAME.out and NAME.err, the status in $rc.
bg() {
	name=$1
	shift
	# Each its own generation file (and socket): several run at once here.
	"$entropyd" -b -x all -n file -O "file:path:$tmp/in" -o "$tmp/$name.sink" \
	    --generation-file "$tmp/$name.generation" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
}
# failed CODE NAME PATTERN: the start exited CODE, its stderr says PATTERN,
# and no daemon of this test is left but those named in $keep.
failed() {
	test "$rc" -eq "$1" && grep -q -- "$3" "$tmp/$2.err" &&
	    test "$(daemons | grep -v -x -F "${keep:-none}" | wc -l)" -eq 0
}
keep=""

# 1-6: a start that succeeds returns with everything up: no waiting here.
bg ok -p "$tmp/ok.pid" --control-socket "$tmp/ok.sock"
pid=$(cat "$tmp/ok.pid" 2>/dev/null)
[ -n "$pid" ] && track "$pid"
check "-b: exit 0 with the pidfile naming a running daemon (pid $pid)" sh -c \
    "test $rc -eq 0 && test -n '$pid' && kill -0 '$pid'"
"$entropyctl" -s "$tmp/ok.sock" health >"$tmp/ok.health" 2>&1
check "-b: the control socket answers as soon as the start returns ($(head -n 1 "$tmp/ok.health"))" \
    test $? -le 1
check "-b: nothing on the starting command's stdout or stderr" \
    test ! -s "$tmp/ok.out" -a ! -s "$tmp/ok.err"
check "-b: the daemon's stderr is /dev/null once up" \
    test "$(readlink "/proc/$pid/fd/2")" = /dev/null
# The start returns even when its stderr is a pipe read to the end: the
# daemon lets go of it once up.
t0=$(date +%s)
out=$("$entropyd" -b -x all -n file -O "file:path:$tmp/in" -o "$tmp/pipe.sink" \
    -p "$tmp/pipe.pid" --control-socket "$tmp/pipe.sock" 2>&1)
rc=$?
t1=$(date +%s)
pid2=$(cat "$tmp/pipe.pid" 2>/dev/null)
[ -n "$pid2" ] && track "$pid2"
check "-b with stderr on a pipe: returns ($((t1 - t0)) s), exit $rc, says nothing ($out)" \
    test "$rc" -eq 0 -a -z "$out" -a $((t1 - t0)) -lt 30
# Started with SIGCHLD ignored (a disposition exec keeps), the children are
# still waited for: the start does not mistake that for a failure.
python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$entropyd" -b -x all -n file -O "file:path:$tmp/in" \
    -o "$tmp/ign.sink" -p "$tmp/ign.pid" --control-socket "$tmp/ign.sock" 2>"$tmp/ign.err"
rc=$?
pid5=$(cat "$tmp/ign.pid" 2>/dev/null)
[ -n "$pid5" ] && track "$pid5"
check "-b started with SIGCHLD ignored: exit $rc, the daemon runs ($(cat "$tmp/ign.err"))" sh -c \
    "test $rc -eq 0 && kill -0 '$pid5'"
stop "$pid5"
keep=$(printf '%s\n%s' "$pid" "$pid2")

# 7-8: the TCP port is taken: exit 69, and why.
# The holder binds a free port itself and says which: no other may take it first.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$tmp/holder.port" &
holder=$!
track $holder
wait_for 100 test -s "$tmp/holder.port"
port=$(cat "$tmp/holder.port")
bg tcp -p "$tmp/tcp.pid" --control-socket "$tmp/tcp.sock" --health-listen "127.0.0.1:$port"
check "port taken: exit 69 saying it cannot listen ($(cat "$tmp/tcp.err"))" \
    failed 69 tcp "cannot listen: Address already in use"
check "port taken: the pidfile and the socket are gone" test ! -e "$tmp/tcp.pid" -a ! -e "$tmp/tcp.sock"
stop "$holder"

# 9-10: the control socket is a live daemon's: exit 73, and that daemon stays.
bg live -p "$tmp/live.pid" --control-socket "$tmp/ok.sock"
check "socket in use: exit 73 saying another daemon answers ($(cat "$tmp/live.err"))" \
    failed 73 live "another daemon answers on it"
"$entropyctl" -s "$tmp/ok.sock" metrics -t 10 >/dev/null
check "socket in use: the first daemon still answers" test $? -eq 0

# 11: -D naming a user that does not exist: exit 67.
bg nouser -p "$tmp/nouser.pid" --control-socket "$tmp/nouser.sock" -D no-such-user-entropyd:nogroup
check "-D unknown user: exit 67 saying so ($(cat "$tmp/nouser.err"))" \
    failed 67 nouser "unknown user no-such-user-entropyd"

# 12-14: a pidfile that cannot be created, or is not a file: exit 73.
bg nodir -p "$tmp/no/such/dir/pid" --control-socket "$tmp/nodir.sock"
check "pidfile in a missing directory: exit 73 ($(cat "$tmp/nodir.err"))" \
    failed 73 nodir "pidfile $tmp/no/such/dir/pid: No such file or directory"
mkdir "$tmp/notafile"
bg notafile -p "$tmp/notafile" --control-socket "$tmp/notafile.sock"
check "pidfile naming a directory: exit 73 ($(cat "$tmp/notafile.err"))" \
    failed 73 notafile "pidfile $tmp/notafile"
mkfifo "$tmp/fifo.pid"
bg fifo -p "$tmp/fifo.pid" --control-socket "$tmp/fifo.sock"
check "pidfile naming a FIFO: exit 73, the FIFO left alone ($(cat "$tmp/fifo.err"))" sh -c \
    "test $rc -eq 73 && grep -q 'not a regular file' '$tmp/fifo.err' && test -p '$tmp/fifo.pid'"

# 15-17: the pidfile's file system is full: the pid cannot be written.
mkdir "$tmp/full"
# A private mount, in a namespace of its own: gone with it whatever happens.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
    unshare -m sh -c "mount -t tmpfs -o size=16k tmpfs '$tmp/full'" 2>/dev/null; then
	unshare -m sh -c "mount -t tmpfs -o size=16k tmpfs '$tmp/full' &&
	    head -c 1M /dev/zero >'$tmp/full/fill' 2>/dev/null;
	    '$entropyd' -b -x all -n file -O 'file:path:$tmp/in' -o '$tmp/full.sink' \
	        -p '$tmp/full/pid' --control-socket '$tmp/full.sock' 2>'$tmp/full.err';
	    echo \$? >'$tmp/full.rc'; ls '$tmp/full' >'$tmp/full.ls'"
	rc=$(cat "$tmp/full.rc")
	check "full file system: exit 73 ($(cat "$tmp/full.err"))" \
	    failed 73 full "pidfile $tmp/full/pid: cannot write it: No space left on device"
	check "full file system: the empty pidfile is removed ($(cat "$tmp/full.ls"))" \
	    test "$(cat "$tmp/full.ls")" = fill
	check "full file system: the control socket is gone" test ! -e "$tmp/full.sock"
else
	for i in 1 2 3; do skip "a full file system needs root to mount a tmpfs in a namespace"; done
fi

# 18-19: start-up warnings reach the starting command; the start still succeeds.
bg warn -p "$tmp/warn.pid" --control-socket "$tmp/warn.sock" -O "file:path:$tmp/no-such-input"
pid3=$(cat "$tmp/warn.pid" 2>/dev/null)
[ -n "$pid3" ] && track "$pid3"
check "-b: a start-up warning reaches the starting command's stderr ($(head -n 1 "$tmp/warn.err"))" \
    grep -q "file: .*no-such-input" "$tmp/warn.err"
check "-b: ... and the daemon still starts: exit $rc" sh -c "test $rc -eq 0 && kill -0 '$pid3'"
stop "$pid3"
keep=$(printf '%s\n%s' "$pid" "$pid2")

# 20-23: with -D, the start returns with the privileges already dropped.
if [ "$(id -u)" -eq 0 ] && getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
	no_leak_check_under_seccomp
	# nobody must reach drop/ and remove its socket from there at exit (the
	# daemon makes only its default runtime directory).
	chmod 755 "$tmp"
	mkdir "$tmp/drop" && chown nobody:nogroup "$tmp/drop"
	bg drop -p "$tmp/drop.pid" --control-socket "$tmp/drop/ctl" -D nobody:nogroup
	pid4=$(cat "$tmp/drop.pid" 2>/dev/null)
	[ -n "$pid4" ] && track "$pid4"
	uid=$(sed -n 's/^Uid:[[:space:]]*//p' "/proc/$pid4/status" 2>/dev/null | tr -s '\t ' ' ')
	nobody=$(id -u nobody)
	check "-b -D: exit 0 with the ids already nobody's ($uid)" \
	    test "$rc" -eq 0 -a "$uid" = "$nobody $nobody $nobody $nobody"
	"$entropyctl" -s "$tmp/drop/ctl" health -t 10 >"$tmp/drop.health"
	check "-b -D: the control socket answers at once ($(cat "$tmp/drop.health"))" test $? -eq 0
	kill "$pid4"
	wait_for 100 gone "$pid4"
	check "-b -D: SIGTERM ends it" gone "$pid4"
	check "-b -D: its socket is gone after exit" test ! -e "$tmp/drop/ctl"
else
	for i in 1 2 3 4; do skip "-D needs root and the user nobody"; done
fi
stop "$pid" "$pid2"
finish
