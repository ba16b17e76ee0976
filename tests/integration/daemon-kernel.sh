#!/bin/sh
# The kernel sink: RNDADDENTROPY for real as root, a clear refusal without privilege.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 4

# hwrng_usable: /dev/hwrng is there, readable, and the kernel has a current RNG.
hwrng_usable() {
	[ -r /dev/hwrng ] && [ "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" != none ] &&
	    [ -n "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" ]
}

if [ "$(id -u)" -ne 0 ]; then
	"$entropyd" -f -x all -n file -O "file:path:/dev/null" 2>"$tmp/stderr"
	rc=$?
	check "without root: exit 77 naming CAP_SYS_ADMIN and -t" sh -c \
	    "test $rc -eq 77 && grep -q 'CAP_SYS_ADMIN' '$tmp/stderr'"
	skip "crediting the kernel needs root"
	skip "crediting the kernel needs root"
	skip "crediting the kernel needs root"
	finish
fi

# The kernel sink's feeder is always under its seccomp filter.
no_leak_check_under_seccomp
# As root, the refusal is checked by running as nobody.
if command -v setpriv >/dev/null 2>&1; then
	cp "$entropyd" "$tmp/entropyd" 2>/dev/null
	chmod 755 "$tmp" "$tmp/entropyd"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	    "$tmp/entropyd" -f -x all -n hwrng 2>"$tmp/stderr"
	rc=$?
	check "without privilege: exit 77 naming CAP_SYS_ADMIN and -t" sh -c \
	    "test $rc -eq 77 && grep -q 'CAP_SYS_ADMIN' '$tmp/stderr'"
else
	skip "setpriv is not installed"
fi

if ! hwrng_usable; then
	skip "no usable /dev/hwrng to credit honestly"
	skip "no usable /dev/hwrng to credit honestly"
	skip "no usable /dev/hwrng to credit honestly"
	finish
fi
"$entropyd" -f -d -x all -n hwrng -R 1 2>"$tmp/log" &
pid=$!
track $pid
wait_for 100 grep -q "first feed" "$tmp/log"
check "root: the first feed credits the kernel" grep -q "first feed: [1-9][0-9]* bits credited" "$tmp/log"
# The -R 1 top-up feeds again within a couple of seconds.
wait_for 40 sh -c "test \$(grep -c 'fed the kernel' '$tmp/log') -ge 2"
check "root: -R 1 tops the kernel up every second" sh -c \
    "test \$(grep -c 'fed the kernel' '$tmp/log') -ge 2"
kill -USR1 "$pid"
# The feeder passes it on to the worker, through the supervisor. (The
# start-up line names the sink too: wait for the counters themselves.)
counters="sink /dev/random \(kernel\): [1-9][0-9]* bytes written, [1-9][0-9]* bits credited"
wait_for 100 grep -Eq "$counters" "$tmp/log"
check "root: counters show bytes written and bits credited" grep -Eq "$counters" "$tmp/log"
show_if_failed "$tmp/log"
finish
