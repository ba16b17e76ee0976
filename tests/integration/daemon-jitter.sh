#!/bin/sh
# jitter end to end: FIPS on its output, a stuck clock refused while other
# sources carry on, a coarse one (an emulated 24 MHz counter) worked around
# and credited, bad options refused, and no CPU use once nothing is wanted.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
entropyctl=$top_builddir/entropyctl
plan 16

listen=$top_builddir/tests/fakes/notify-listen

# CPU ticks (user + system) a process has used.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Wait (up to 60 s) until the process used at most 5 ticks in a second.
settle() {
	n=60
	while [ $n -gt 0 ]; do
		a=$(ticks "$1")
		sleep 1
		[ $(($(ticks "$1") - a)) -le 5 ] && return 0
		n=$((n - 1))
	done
	return 1
}
# idle_check PID LABEL: over two seconds the daemon used at most 20 ticks.
idle_check() {
	settle "$1"
	a=$(ticks "$1")
	sleep 2
	used=$(($(ticks "$1") - a))
	# Reading jitter flat out costs about 200 ticks in two seconds.
	check "$2: nothing wanted, no CPU burnt ($used ticks in 2 s)" test "$used" -le 20
}

timeout 120 sh -c "'$entropyd' -f -x all -n jitter -o - 2>'$tmp/fips.log' |
    '$entropytest' -c 20 >/dev/null 2>'$tmp/fips'"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "jitter: the daemon's output passes FIPS 140-2 (${passed:-0} of 20 blocks)" \
    test "${passed:-0}" -ge 19
check "jitter: start-up tests on raw samples, then 1/3 bit per sample" sh -c \
    "grep -q 'jitter: start-up tests passed' '$tmp/fips.log' &&
    grep -q 'jitter: reading .*0.333333 bits per sample credited' '$tmp/fips.log'"

# A clock stuck between ticks (monotonic_coarse) fails start-up with a clear
# line; the file source carries on.
head -c 200000 /dev/urandom >"$tmp/data"
"$entropyd" -f -x all -n jitter -n file -O jitter:clock:monotonic_coarse \
    -O "file:path:$tmp/data" -O file:entropy:8 -o "$tmp/out" 2>"$tmp/coarse.log" &
pid=$!
track $pid
wait_for 100 test -s "$tmp/out"
check "coarse clock: jitter refused with a clear message" grep -Eq \
    "jitter: start-up: .*(too coarse|stuck).*; not used" "$tmp/coarse.log"
check "coarse clock: the daemon runs on with the file source" sh -c \
    "kill -0 $pid && test -s '$tmp/out'"
stop $pid

# A 24 MHz counter, as many arm64 boards have: the work grows until its
# samples carry entropy; it is credited, and not suspended for being coarse.
# field EXPR: a Python expression over d, jitter's /sources object.
field() {
	"$entropyctl" --json sources jitter 2>/dev/null |
	    python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
"$entropyd" -f -x all -n jitter -O jitter:quantize_hz:24M -o /dev/null 2>"$tmp/24.log" &
pid=$!
track $pid
# Asked afresh on each try (wait_for's arguments are expanded once).
conditioned_4k() { test "$(field 'd["counters"]["bytes_conditioned"] > 4096')" = True; }
wait_for 600 conditioned_4k
check "24 MHz: start-up grew the work and said so" grep -Eq \
    "jitter: start-up: the clock steps by 1 \(quantized\), too coarse for the work: it grew [0-9]+-fold( \(its bound\))? to [0-9]+ memory accesses" \
    "$tmp/24.log"
# A few dozen ticks can measure well in a burst on a busy machine, then collapse.
steps=$(sed -n 's/.*grew .* a sample, which takes \([0-9]*\) steps.*/\1/p' "$tmp/24.log" | head -n 1)
check "24 MHz: it grew until a sample spans at least 256 ticks (${steps:-none})" \
    test "${steps:-0}" -ge 256
check "24 MHz: 4 KiB conditioned (32768 bits credited), the source running" test \
    "$(field 'd["state"] == "running" and d["counters"]["bytes_conditioned"] > 4096 and d["estimate"]["bits"] > 0')" = True
show_if_failed "$tmp/24.log"
check "24 MHz: never suspended (no repeat test failure on its honest samples)" test \
    "$(field 'd["failure_score"]["suspensions"] == 0 and d["test_failures"]["repeat"] == 0')" = True
stop $pid

"$entropyd" -f -x all -n jitter -O jitter:osr:2 -o "$tmp/out" 2>"$tmp/osr.log"
rc=$?
check "-O jitter:osr:2 (a higher credit) is refused: exit 64, one line" sh -c \
    "test $rc -eq 64 && grep -q 'osr' '$tmp/osr.log' && test \$(wc -l <'$tmp/osr.log') -eq 1"

# A FIFO sink whose reader stops reading: the pipe and the reserve fill, then idle.
mkfifo "$tmp/sink"
"$entropyd" -f -x all -n jitter -o "$tmp/sink" 2>"$tmp/fifo.log" &
pid=$!
track $pid
exec 3<"$tmp/sink"
wait_for 100 grep -q "jitter: start-up tests passed" "$tmp/fifo.log"
check "FIFO sink: jitter started" grep -q "jitter: start-up tests passed" "$tmp/fifo.log"
idle_check $pid "FIFO sink not read"
stop $pid
exec 3<&-

# Jitter's start-up assessment takes a while (twice 0.1 s on a coarse
# clock): with a quicker source the first feed does not wait for it. Told
# through systemd's socket, in order: no status before READY=1 names
# jitter, one after it does.
head -c 300000 /dev/urandom >"$tmp/quick"
"$listen" "$tmp/notify" 60 >"$tmp/messages" &
track $!
wait_for 50 test -S "$tmp/notify"
NOTIFY_SOCKET=$tmp/notify "$entropyd" -f -d -x all -n file -n jitter -O "file:path:$tmp/quick" \
    -O file:entropy:8 -o "$tmp/qout" --control-socket "$tmp/q.sock" 2>"$tmp/quick.log" &
pid=$!
track $pid
wait_for 300 grep -q "jitter running" "$tmp/messages"
check "a quick source feeds first: READY=1 before any status names jitter, then jitter runs" \
    awk '/^READY=1$/ { ready = 1 } /^STATUS=.*jitter/ { if (!ready) early = 1; else late = 1 }
    END { exit !(ready && !early && late) }' "$tmp/messages"
show_if_failed "$tmp/messages" "$tmp/quick.log"
check "... and the daemon says it probed jitter after the first feed" \
    grep -q "the first feed is out: probing the slow-starting sources" "$tmp/quick.log"
stop $pid

# A quick source that never delivers (a FIFO nobody writes) holds jitter
# back only so long: it starts, says why, and feeds.
mkfifo "$tmp/silent"
"$entropyd" -f -x all -n file -n jitter -O "file:path:$tmp/silent" -O file:entropy:8 \
    -o "$tmp/sout" --control-socket "$tmp/s.sock" 2>"$tmp/silent.log" &
pid=$!
track $pid
wait_for 300 size_at_least "$tmp/sout" 4096
check "a silent quick source: jitter starts after 1 s all the same, and feeds" sh -c \
    "grep -q 'no feed within 1000 ms: probing the slow-starting sources now' '$tmp/silent.log' &&
    grep -q 'jitter: start-up tests passed' '$tmp/silent.log' && test -s '$tmp/sout'"
show_if_failed "$tmp/silent.log"
stop $pid
# Alone, jitter is not held back at all: probed before the loop, as ever.
"$entropyd" -f -d -x all -n jitter -o /dev/null --control-socket "$tmp/a.sock" \
    2>"$tmp/alone.log" &
pid=$!
track $pid
wait_for 300 grep -q "jitter: start-up tests passed" "$tmp/alone.log"
check "jitter alone: probed at once, not held back for a first feed" sh -c \
    "grep -q 'jitter: start-up tests passed' '$tmp/alone.log' &&
    ! grep -q 'probing the slow-starting sources' '$tmp/alone.log'"
stop $pid

# The kernel sink with a one-hour top-up: after the first feed nothing is wanted.
if [ "$(id -u)" -ne 0 ]; then
	skip "crediting the kernel needs root"
	finish
fi
"$entropyd" -f -x all -n jitter -R 3600 2>"$tmp/kernel.log" &
pid=$!
track $pid
wait_for 100 grep -q "first feed" "$tmp/kernel.log"
idle_check $pid "kernel sink after the first feed"
finish
