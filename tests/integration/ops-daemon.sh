#!/bin/sh
# Daemonising: the start returns once the daemon runs, detached, stdio on
# /dev/null, in /, holding the pidfile's lock.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 6

mkfifo "$tmp/in"
"$entropyd" -b -p "$tmp/pid" -x all -n file -O "file:path:$tmp/in" -o "$tmp/out" \
    >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
pid=$(cat "$tmp/pid" 2>/dev/null)
[ -n "$pid" ] && track "$pid"
# No waiting: the starting process returns only after the pidfile is written.
check "-b returns 0 with the pidfile already naming a running daemon (pid $pid)" sh -c \
    "test $rc -eq 0 && test -n '$pid' && kill -0 '$pid'"
check "stdin, stdout and stderr are /dev/null" sh -c \
    "for fd in 0 1 2; do test \"\$(readlink /proc/$pid/fd/\$fd)\" = /dev/null || exit 1; done"
check "the working directory is /" test "$(readlink "/proc/$pid/cwd")" = /
# Field 6 of /proc/PID/stat (after the command in parentheses) is the session.
sid=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f4)
check "the daemon is in its own session and not its leader (sid $sid)" sh -c \
    "test '$sid' != '$pid' && test '$sid' != \"\$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f4)\""
"$entropyd" -b -p "$tmp/pid" -x all -n file -O "file:path:$tmp/in" -o "$tmp/out2" 2>"$tmp/stderr"
rc=$?
check "a second daemon is refused (exit 73) naming pid $pid" sh -c \
    "test $rc -eq 73 && grep -q 'running (pid $pid)' '$tmp/stderr'"
kill "$pid"
wait_for 50 gone "$pid"
gone "$pid" && [ ! -e "$tmp/pid" ]
check "SIGTERM ends it and the pidfile goes" test $? -eq 0
finish
