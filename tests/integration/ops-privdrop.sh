#!/bin/sh
# -D USER:GROUP: unknown names refused early; as root the daemon runs as the
# user: with the kernel sink its feeder keeps CAP_SYS_ADMIN alone and still
# credits the kernel (ops-privsep.sh checks the worker and the rest), with a
# file sink the one process keeps no capability.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 14

# One line on stderr, exit 67, nothing created.
for spec in no-such-user-entropyd:nogroup nobody:no-such-group-entropyd; do
	"$entropyd" -f -D "$spec" -o "$tmp/out" -p "$tmp/pid" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	check "-D $spec: exit 67, one line ($(cat "$tmp/stderr")), nothing created" sh -c \
	    "test $rc -eq 67 && test \$(wc -l <'$tmp/stderr') -eq 1 && grep -q unknown '$tmp/stderr' &&
	     test ! -e '$tmp/out' && test ! -e '$tmp/pid'"
done

if [ "$(id -u)" -ne 0 ]; then
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "switching users needs root"; done
	finish
fi
if ! getent passwd nobody >/dev/null || ! getent group nogroup >/dev/null; then
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "no user nobody or group nogroup"; done
	finish
fi

# Without the privilege to switch, the drop fails, and that is fatal.
head -c 100000 /dev/urandom >"$tmp/data"
chmod 755 "$tmp"
chmod 644 "$tmp/data"
if command -v setpriv >/dev/null 2>&1; then
	cp "$entropyd" "$tmp/entropyd" && chmod 755 "$tmp/entropyd"
	mkdir "$tmp/nobody" && chown 65534:65534 "$tmp/nobody"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	    "$tmp/entropyd" -f -t -D nobody:nogroup -x all -n file -O "file:path:$tmp/data" \
	    --control-socket "$tmp/nobody/ctl" 2>"$tmp/stderr"
	rc=$?
	check "a drop that cannot happen is fatal: exit 71 ($(tail -n 1 "$tmp/stderr"))" sh -c \
	    "test $rc -eq 71 && grep -q -- '-D: cannot drop privileges' '$tmp/stderr'"
else
	skip "setpriv is not installed"
fi

hwrng_usable() {
	[ -r /dev/hwrng ] && [ "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" != none ] &&
	    [ -n "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" ]
}
# Feed the kernel from /dev/hwrng where it can be credited honestly;
# otherwise check the identity with a file sink.
no_leak_check_under_seccomp
if hwrng_usable; then
	kernel=yes
	"$entropyd" -f -d -x all -n hwrng -R 1 -D nobody:nogroup \
	    --control-socket "$tmp/ctl" 2>"$tmp/log" &
else
	kernel=no
	"$entropyd" -f -d -x all -n file -O "file:path:$tmp/data" -o "$tmp/out" \
	    -D nobody:nogroup --control-socket "$tmp/ctl" 2>"$tmp/log" &
fi
pid=$!
track $pid
wait_for 100 grep -q "running as nobody:nogroup" "$tmp/log"
status=/proc/$pid/status
field() { sed -n "s/^$1:[[:space:]]*//p" "$status" | tr -s '\t ' ' '; }
uid=$(id -u nobody)
gid=$(getent group nogroup | cut -d: -f3)
# The kernel sink's feeder keeps CAP_SYS_ADMIN; a daemon without one keeps nothing.
if [ "$kernel" = yes ]; then
	who=feeder caps=0000000000200000 says="CAP_SYS_ADMIN only"
else
	who=worker caps=0000000000000000 says="no capabilities"
fi
check "the $who says it runs as nobody:nogroup with $says" \
    grep -q "$who: running as nobody:nogroup with $says" "$tmp/log"
check "Uid is nobody's, real, effective, saved and fs ($(field Uid))" \
    test "$(field Uid)" = "$uid $uid $uid $uid"
check "Gid is nogroup's ($(field Gid))" test "$(field Gid)" = "$gid $gid $gid $gid"
check "CapEff and CapPrm are $caps ($(field CapEff), $(field CapPrm))" sh -c \
    "test '$(field CapEff)' = $caps && test '$(field CapPrm)' = $caps"
check "CapInh and CapAmb are empty, CapBnd is $caps ($(field CapBnd)), NoNewPrivs 1" sh -c \
    "test '$(field CapInh)' = 0000000000000000 && test '$(field CapAmb)' = 0000000000000000 &&
     test '$(field CapBnd)' = $caps && test '$(field NoNewPrivs)' = 1"
"$top_builddir/tests/fakes/sandbox-probe" work 2>/dev/null
probe=$?
if [ "$kernel" = yes ]; then
	# The feeder's list is its own, written out without libseccomp.
	check "the feeder's seccomp filter is loaded (Seccomp: $(field Seccomp))" \
	    test "$(field Seccomp)" = 2
elif [ $probe -eq 77 ]; then
	check "without libseccomp no filter is loaded" test "$(field Seccomp)" = 0
else
	check "the seccomp filter is loaded (Seccomp: $(field Seccomp))" test "$(field Seccomp)" = 2
fi
if [ "$kernel" = yes ]; then
	# -R 1: top-ups after the drop: the feeder's CAP_SYS_ADMIN on the /dev/random opened before it.
	wait_for 100 sh -c "test \$(grep -c 'fed the kernel' '$tmp/log') -ge 2"
	check "after the drop the kernel is still credited (first feed and top-ups)" sh -c \
	    "grep -q 'first feed: [1-9][0-9]* bits credited' '$tmp/log' &&
	     test \$(grep -c 'fed the kernel' '$tmp/log') -ge 2"
else
	wait_for 100 test -s "$tmp/out"
	skip "no usable /dev/hwrng to credit honestly (identity checked with a file sink)"
fi
check "the control socket belongs to nobody:nogroup, mode 0660 ($(stat -c '%U:%G %a' "$tmp/ctl"))" \
    test "$(stat -c '%U:%G %a' "$tmp/ctl")" = "nobody:nogroup 660"
"$top_builddir/entropyctl" -s "$tmp/ctl" sources >"$tmp/ctl.out" 2>&1
check "after the drop the control socket answers" sh -c \
    "test $? -eq 0 && grep -q 'hwrng\|file' '$tmp/ctl.out'"
kill -HUP "$pid"
kill -USR1 "$pid"
wait_for 100 grep -q "bytes written" "$tmp/log"
check "SIGHUP re-probes and SIGUSR1 reports, under the filter" sh -c \
    "grep -q 'SIGHUP: re-probing' '$tmp/log' && grep -q 'bytes written' '$tmp/log' && kill -0 $pid"
kill "$pid"
wait "$pid"
rc=$?
check "SIGTERM: a clean exit 0 as nobody (status $rc)" test "$rc" -eq 0
finish
