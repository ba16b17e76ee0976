#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault injection, one table: a daemon with two sources, the test-only
# "faulty" drop-in (its faults switched through a control file) and the file
# source on a FIFO of random bytes. For each fault row: health reflects the
# fault within a second, the bad data is never conditioned nor credited, the
# other source keeps feeding, the faulty source recovers once the fault
# clears, and SIGTERM ends the daemon within a second. Then the sinks that
# fail (ENOSPC on /dev/full, EPERM on the kernel's pool without privilege),
# a storm of SIGHUPs, and SIGTERM while every source blocks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
plugin=$top_builddir/tests/plugins/.libs/faulty.so
[ -f "$plugin" ] || skip_all "the faulty test plugin is not built (make check builds it)"
plan 51

mkdir "$tmp/plugins"
cp "$plugin" "$tmp/plugins/"
mode=$tmp/mode
sock=$tmp/s
feed_random "$tmp/in"

# start [more entropyd arguments]: a daemon with both sources, its PID in $pid.
start() {
	echo good >"$mode"
	rm -f "$sock" "$tmp/out"
	run_entropyd -f -x all -n file -n faulty -O "file:path:$tmp/in" -O file:entropy:8 \
	    -O "faulty:control:$mode" -O faulty:entropy:8 --plugin-dir "$tmp/plugins" \
	    --control-socket "$sock" "$@" 2>"$tmp/log" &
	pid=$!
	track $pid
	wait_for 100 test -S "$sock"
}
# start_alone MODE: a daemon with the faulty source alone, in MODE, to a file sink.
start_alone() {
	echo "$1" >"$mode"
	rm -f "$sock" "$tmp/out"
	run_entropyd -f -x all -n faulty -O "faulty:control:$mode" -O faulty:entropy:8 \
	    --plugin-dir "$tmp/plugins" --control-socket "$sock" -o "$tmp/out" 2>"$tmp/log" &
	pid=$!
	track $pid
	wait_for 100 test -S "$sock"
}
# src NAME FIELD: a counter of source NAME from /sources.
src() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]['counters']['$2']" 2>/dev/null || echo -1
}
# state NAME: the state of source NAME from /sources.
state() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]['state']" 2>/dev/null
}
# hcheck KEY FIELD: one field of a /health check.
hcheck() {
	ucurl "$sock" /health | json "d['checks']['$1'][0].get('$2', '')" 2>/dev/null
}
# backoff_ms NAME: the retry backoff of source NAME from /sources.
backoff_ms() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]['backoff_ms']" 2>/dev/null || echo 0
}
# cpu_ticks PID: the process's user and system time, in clock ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
# Predicates, for wait_for.
grew() { [ "$(src "$1" "$2")" -gt "$3" ]; }
is_running() { [ "$(state "$1")" = running ]; }
failing() { [ "$(hcheck faulty:state status)" = fail ]; }
failed_more() { [ "$(src faulty blocks_failed)" -gt "$1" ]; }
failed_blocks_shown() { failed_more "$1" && [ "$(hcheck faulty:failedBlocks status)" != pass ]; }
stalled() {
	a=$(src faulty bytes_read)
	sleep 0.3
	[ "$a" -ge 0 ] && [ "$(src faulty bytes_read)" -eq "$a" ]
}
# sigterm_within_a_second ROW: SIGTERM, then the daemon is gone within 1 s
# (3 s under the sanitizers: see bound).
sigterm_within_a_second() {
	kill "$pid"
	check "$1: SIGTERM ends the daemon within a second" wait_for "$(bound 10)" gone "$pid"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	# A daemon that ended before the SIGTERM: say how, and show its log.
	[ "$rc" -eq 0 ] || { diag "$1: the daemon ended with status $rc"; diag_file "$tmp/log"; }
}

# The fault rows: mode, then what "health reflects the fault" means for it.
while read -r row reflect; do
	start -o "$tmp/out"
	wait_for 300 is_running faulty
	wait_for 300 is_running file
	check "$row: both sources run before the fault" sh -c \
	    "test '$(state faulty)' = running && test '$(state file)' = running"
	failed0=$(src faulty blocks_failed)
	read0=$(src faulty bytes_read)
	echo "$row" >"$mode"
	case $reflect in
	failed-blocks) check "$row: its failed blocks are counted and /health's failedBlocks check leaves pass within a second" \
	    wait_for 10 failed_blocks_shown "$failed0" ;;
	state-fails) check "$row: /health fails the source within a second" wait_for 10 failing ;;
	stalls) check "$row: its reads stop within a second (bytes_read stays put)" \
	    wait_for 10 stalled ;;
	still-passes)
		wait_for 10 grew faulty bytes_read "$read0"
		check "$row: short reads are no fault, /health passes the source" \
		    test "$(hcheck faulty:state status)" = pass ;;
	esac
	show_if_failed "$tmp/log"
	# While the fault lasts: its bytes are never conditioned, the file source feeds.
	cond1=$(src faulty bytes_conditioned)
	opens1=$(grep -c 'faulty: reading' "$tmp/log")
	other1=$(src file bytes_conditioned)
	case $reflect in
	failed-blocks)
		failed1=$(src faulty blocks_failed)
		wait_for 100 failed_more "$((failed1 + 3))"
		check "$row: failed blocks rose and not one byte of it was conditioned or credited" \
		    sh -c "test $(src faulty blocks_failed) -gt $((failed1 + 3)) &&
		     test $(src faulty bytes_conditioned) -eq $cond1" ;;
	still-passes)
		check "$row: short reads are tested, conditioned and credited" \
		    wait_for 100 grew faulty bytes_conditioned "$cond1" ;;
	*)
		# eio's good reads between its failures are conditioned, rightly:
		# after each reopen one read (at most 4096 bytes: two blocks with
		# what was pending), then a failure.
		sleep 0.5
		opens=$(($(grep -c 'faulty: reading' "$tmp/log") - opens1 + 1))
		check "$row: nothing from it is conditioned while it fails (at most two blocks per reopen, $opens)" \
		    test "$(src faulty bytes_conditioned)" -le "$((cond1 + 2 * 2048 * opens))" ;;
	esac
	check "$row: the file source keeps feeding" wait_for 100 grew file bytes_conditioned "$other1"
	echo good >"$mode"
	cond2=$(src faulty bytes_conditioned)
	# A source suspended again and again waits out a growing backoff first.
	wait_for $(($(backoff_ms faulty) / 100 + 300)) is_running faulty
	wait_for 100 grew faulty bytes_conditioned "$cond2"
	check "$row: the source recovers when the fault clears (running, conditioned again)" \
	    sh -c "test '$(state faulty)' = running && test $(src faulty bytes_conditioned) -gt $cond2"
	show_if_failed "$tmp/log"
	sigterm_within_a_second "$row"
done <<'ROWS'
stuck failed-blocks
ones failed-blocks
eio state-fails
short still-passes
stall stalls
vanish state-fails
ROWS

# Only the bad source: not one byte reaches the sink, the failures are counted.
start_alone ones
wait_for 300 failed_more 30
check "alone: all-ones words fail their blocks (/sources: $(src faulty blocks_failed) failed)" \
    failed_more 30
check "alone: nothing conditioned, nothing written to the sink" sh -c \
    "test $(src faulty bytes_conditioned) -eq 0 && test ! -s '$tmp/out'"
sigterm_within_a_second alone

# Gone from the start: every open fails. The host answers a failed open at
# once and closes its end, which must be read as the failure it is; taking
# it for a running source that never answers made the daemon spin until the
# stall timeout. Over several retries it stays absent, with its reason.
start_alone vanish
ticks0=$(cpu_ticks "$pid")
sleep 4
ticks=$(($(cpu_ticks "$pid") - ticks0))
reason=$(ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == 'faulty'][0]['last_error']" 2>/dev/null)
check "gone from the start: absent after $(grep -c 'faulty: read' "$tmp/log") failed opens ($reason)" sh -c \
    "test '$(state faulty)' = absent && echo '$reason' | grep -q 'No such device'"
check "gone from the start: never taken for running (no stall), the daemon idles ($ticks ticks of CPU in 4 s)" \
    sh -c "! grep -q 'stalled' '$tmp/log' && test $ticks -lt 100"
echo good >"$mode"
wait_for $(($(backoff_ms faulty) / 100 + 300)) grew faulty bytes_conditioned 0
check "gone from the start: it runs once it is back" grew faulty bytes_conditioned 0
show_if_failed "$tmp/log"
sigterm_within_a_second "gone from the start"

# ENOSPC: a file sink on /dev/full fails; the daemon says so in one line and
# exits EX_IOERR (74) rather than carry on with nowhere to write.
start -o /dev/full
wait_for 300 gone "$pid"
wait "$pid"
rc=$?
check "ENOSPC: the daemon exits 74 naming the sink and the error" sh -c \
    "test $rc -eq 74 && grep -q '/dev/full: write failed; exiting: No space left on device' '$tmp/log'"
check "ENOSPC: before that the control socket answered" test -n "$(grep 'control: listening' "$tmp/log")"

# EPERM: crediting the kernel's pool without privilege is refused at start.
if [ "$(id -u)" -ne 0 ]; then
	"$entropyd" -f -x all -n file -O "file:path:/dev/null" 2>"$tmp/stderr"
	rc=$?
	check "EPERM: without root the kernel sink exits 77 ($(cat "$tmp/stderr"))" test "$rc" -eq 77
elif command -v setpriv >/dev/null 2>&1; then
	mkdir "$tmp/nobody"
	cp "$entropyd" "$tmp/nobody/entropyd"
	chmod 755 "$tmp" "$tmp/nobody" "$tmp/nobody/entropyd"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	    "$tmp/nobody/entropyd" -f -x all -n file -O "file:path:/dev/null" 2>"$tmp/stderr"
	rc=$?
	check "EPERM: as nobody the kernel sink exits 77 ($(cat "$tmp/stderr"))" sh -c \
	    "test $rc -eq 77 && grep -q 'Operation not permitted' '$tmp/stderr'"
else
	skip "setpriv is not installed (as root the refusal is checked as nobody)"
fi

# A storm of SIGHUPs: still running, answering, both sources back, output grows.
start -o "$tmp/out"
wait_for 300 is_running faulty
i=0
while [ $i -lt 200 ]; do
	kill -HUP "$pid" 2>/dev/null
	i=$((i + 1))
done
wait_for 300 is_running faulty
wait_for 300 is_running file
check "SIGHUP storm: the daemon survives and answers" sh -c \
    "kill -0 $pid && test '$(hcheck faulty:state status)' = pass"
size=$(stat -c %s "$tmp/out")
check "SIGHUP storm: both sources run again and the sink keeps growing" sh -c \
    "test '$(state file)' = running && test '$(state faulty)' = running" &&
    wait_for 100 sh -c "test \$(stat -c %s '$tmp/out') -gt $size"
sigterm_within_a_second "SIGHUP storm"

# SIGTERM while every source blocks: the faulty one in read(), the FIFO idle.
mkfifo "$tmp/idle"
sleep 1000 >"$tmp/idle" &
track $!
echo good >"$mode"
rm -f "$sock"
run_entropyd -f -x all -n file -n faulty -O "file:path:$tmp/idle" -O file:entropy:8 \
    -O "faulty:control:$mode" -O faulty:entropy:8 --plugin-dir "$tmp/plugins" \
    --control-socket "$sock" -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 300 is_running faulty
echo stall >"$mode"
wait_for 10 stalled
kill "$pid"
check "every source blocked: SIGTERM ends the daemon within a second" \
    wait_for "$(bound 10)" gone "$pid"
wait "$pid"
rc=$?
check "every source blocked: a clean exit 0 (status $rc)" test "$rc" -eq 0
finish
