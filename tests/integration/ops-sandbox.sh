#!/bin/sh
# The worker's seccomp allow-list: what the worker does works, the rest is
# refused or fatal.
. "$(dirname "$0")/lib.sh"
probe=$top_builddir/tests/fakes/sandbox-probe
no_leak_check_under_seccomp

"$probe" work 2>"$tmp/err"
rc=$?
[ "$rc" -ne 77 ] || skip_all "built without libseccomp (--with-seccomp)"
plan 7
check "memory, threads, pipes, Unix sockets and clocks work under the filter (exit $rc)" \
    test "$rc" -eq 0
"$probe" inet
check "an IPv4 socket is refused with EPERM" test $? -eq 0
# sh reports a death by signal N as 128+N.
"$probe" exec 2>/dev/null
rc=$?
sig=$( [ "$rc" -gt 128 ] && kill -l $((rc - 128)) )
check "execve kills the process with SIGSYS (status $rc, ${sig:-no signal})" test "$sig" = SYS
"$probe" random 2>/dev/null
rc=$?
sig=$( [ "$rc" -gt 128 ] && kill -l $((rc - 128)) )
check "RNDADDENTROPY, the feeder's alone, kills the process with SIGSYS (status $rc)" \
    test "$sig" = SYS
"$probe" fork
check "a new process is refused with EPERM: clone makes threads only" test $? -eq 0
"$probe" wx
check "memory both writable and executable, or made executable later, is refused" test $? -eq 0
"$probe" kill
check "a signal to another process is refused" test $? -eq 0
finish
