#!/bin/sh
# The sysvinit script from a staged install: start, status, reload, a refused
# second start, stop; with start-stop-daemon and without it.
. "$(dirname "$0")/lib.sh"
plan 19

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# Stage an install; the make that runs the tests must not steer this one.
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" install DESTDIR="$tmp/root") \
    >"$tmp/install.log" 2>&1
check "make install DESTDIR= stages the files" test $? -eq 0
script=$(find "$tmp/root" -path '*/init.d/entropyd' -type f)
daemon=$(find "$tmp/root" -path '*/sbin/entropyd' -type f)
check "the init script is installed as init.d/entropyd, executable" test -x "$script"
check "the defaults file is installed as default/entropyd" sh -c \
    "find '$tmp/root' -path '*/default/entropyd' -type f | grep -q . &&
     grep -q '^DAEMON_ARGS=' \"\$(find '$tmp/root' -path '*/default/entropyd' -type f)\""
check "the completion is installed once per command" sh -c \
    "for c in entropyd entropytest entropyctl; do
         find '$tmp/root' -path \"*/bash-completion/completions/\$c\" | grep -q . || exit 1; done"
if [ ! -x "$script" ] || [ ! -x "$daemon" ]; then
	diag "nothing to run: see $tmp/install.log"
	sed 's/^/# /' "$tmp/install.log"
	finish
fi

# A regular file as the source: drained at its end, read again after SIGHUP.
head -c 200000 /dev/urandom >"$tmp/data"
cat >"$tmp/defaults" <<EOT
DAEMON_ARGS="-x all -n file -O file:path:$tmp/data -O file:entropy:8 -o $tmp/out"
EOT
DAEMON=$daemon PIDFILE=$tmp/entropyd.pid DEFAULTS=$tmp/defaults
export DAEMON PIDFILE DEFAULTS

# run_cycle LABEL: the whole life of the daemon through the script.
run_cycle() {
	label=$1
	rm -f "$tmp/out"
	sh "$script" start >"$tmp/start.out" 2>&1
	rc=$?
	pid=$(cat "$PIDFILE" 2>/dev/null)
	[ -n "$pid" ] && track "$pid"
	check "$label: start succeeds and the pidfile names a running daemon at once (pid $pid)" \
	    sh -c "test $rc -eq 0 && kill -0 '$pid' 2>/dev/null"
	out=$(sh "$script" status 2>&1)
	check "$label: status says running with the pid ($out)" sh -c \
	    "sh '$script' status >/dev/null && test '$out' = 'entropyd is running (pid $pid)'"
	wait_for 100 test "$(size "$tmp/out")" -ge 4000
	before=$(size "$tmp/out")
	# The source drains at its end: wait for the output to stop growing.
	while sleep 0.3; [ "$(size "$tmp/out")" -ne "$before" ]; do
		before=$(size "$tmp/out")
	done
	sh "$script" reload >/dev/null 2>&1
	rc=$?
	wait_for 100 test "$(size "$tmp/out")" -gt "$before"
	check "$label: reload (SIGHUP) reopens the drained source ($before -> $(size "$tmp/out") bytes)" \
	    sh -c "test $rc -eq 0 && test $(size "$tmp/out") -gt $before"
	sh "$script" start >"$tmp/again.out" 2>&1
	rc=$?
	check "$label: a second start is refused naming pid $pid" sh -c \
	    "test $rc -ne 0 && grep -q 'running (pid $pid)' '$tmp/again.out' && kill -0 $pid"
	sh "$script" stop >/dev/null 2>&1
	rc=$?
	gone "$pid"
	g=$?
	check "$label: stop ends the daemon and removes the pidfile" sh -c \
	    "test $rc -eq 0 && test $g -eq 0 && test ! -e '$PIDFILE'"
	sh "$script" status >/dev/null 2>&1
	check "$label: status then says not running (LSB 3)" test $? -eq 3
	sh "$script" stop >/dev/null 2>&1
	check "$label: stop when not running succeeds" test $? -eq 0
}

if command -v start-stop-daemon >/dev/null 2>&1; then
	run_cycle "start-stop-daemon"
else
	for i in 1 2 3 4 5 6 7; do skip "start-stop-daemon is not installed"; done
fi
SSD=none
export SSD
run_cycle "without start-stop-daemon"
sh "$script" bogus >/dev/null 2>&1
check "an unknown action is a usage error (exit 2)" test $? -eq 2
finish
