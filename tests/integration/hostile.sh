#!/bin/sh
# SPDX-License-Identifier: MIT
# The hostile-plugin suite: each way a plugin can try to hurt the daemon, in
# turn. A case runs one hostile plugin (tests/plugins/hostile.c, copied as
# hostile_CASE.so: the file name picks the case) beside a good source, the
# file source on a FIFO of random bytes, which must keep feeding whatever the
# plugin does. Each case has its own scratch directory and daemon and runs in
# a subshell: one that fails or ends early costs only its own checks, and
# those it did not make are reported failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
libs=$top_builddir/tests/plugins/.libs
suite_tmp=$tmp
# A plugin's call may take PLUGINPROTO_CALL_TIMEOUT_MS (5 s) before its host is ended.
hung_tenths=150

# hostile_copy CASE: the plugin as hostile_CASE.so in the case's plugin directory.
hostile_copy() {
	mkdir -p "$tmp/plugins"
	cp "$libs/hostile.so" "$tmp/plugins/hostile_$1.so"
}

# hostile_start CASE [entropyd arguments]: a daemon with the file source and
# hostile_CASE, a file sink and a private control socket; its PID in $pid.
hostile_start() {
	name=hostile_$1
	hostile_copy "$1"
	shift
	[ -p "$tmp/in" ] || feed_random "$tmp/in"
	rm -f "$sock"
	select=$name
	[ "${select_plugin:-yes}" = yes ] || select=file
	run_entropyd -f -x all -n file -n "$select" -O "file:path:$tmp/in" -O file:entropy:8 \
	    --plugin-dir "$tmp/plugins" --control-socket "$sock" -o "$tmp/out" "$@" \
	    2>"$tmp/log" &
	pid=$!
	track $pid
	wait_for 100 test -S "$sock"
}
# src NAME FIELD: a counter of source NAME from /sources (-1 if none).
src() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]['counters']['$2']" 2>/dev/null || echo -1
}
# plugin_metric FAMILY: the plugin's sample in /metrics (-1 if none).
plugin_metric() {
	ucurl "$sock" /metrics >"$tmp/metrics"
	v=$(metric "$tmp/metrics" "entropyd_${1}{plugin=\"$name\"}")
	echo "${v:--1}"
}
grew() { [ "$(src "$1" "$2")" -gt "$3" ]; }
restarted() { [ "$(plugin_metric plugin_restarts_total)" -ge 1 ]; }
# Absent, with "plugin host ended: $1" in its last error, in one look at /sources.
absent_with() {
	ucurl "$sock" /sources >"$tmp/sources"
	json "[s['state'] + ' ' + str(s['last_error']) for s in d['sources'] if s['name'] == '$name'][0]" \
	    <"$tmp/sources" 2>/dev/null | grep -qF "absent plugin host ended: $1"
}
# The file source conditions more within 10 s.
good_keeps_feeding() {
	before=$(src file bytes_conditioned)
	check "the file source keeps feeding ($before bytes conditioned so far)" \
	    wait_for 100 grew file bytes_conditioned "$before"
}
# hostile_end: SIGTERM ends the daemon within two seconds, and its plugin
# launcher and hosts before it; exit 0.
hostile_end() {
	procs=$(tree "$pid")
	kill "$pid"
	check "SIGTERM ends the daemon within two seconds, its plugin launcher and hosts first ($(echo $procs | wc -w) processes)" \
	    ended_with_plugins
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "a clean exit 0 (status $rc)" test "$rc" -eq 0
	show_if_failed "$tmp/log"
}
# The daemon ($pid) is gone within two seconds, and none of $procs is left.
ended_with_plugins() { wait_for 20 gone "$pid" && none_left "$procs"; }
# host_pids: the daemon's plugin hosts (children of its launcher, a child of the daemon).
host_pids() {
	for l in $(pgrep -P "$pid" -f 'entropyd-plugin --launcher'); do
		pgrep -P "$l"
	done
}

# hostile_crash CASE REASON [read|probe [protocol]]: the plugin's host ends
# with REASON (the instance goes absent with it, in /sources and the log);
# the host is restarted and counted; the file source keeps feeding. With
# "probe" the plugin dies before adding an instance: the reason is the
# module's. With "protocol" /metrics counts a protocol error too.
# 7 checks, 8 with "protocol".
hostile_crash() {
	case=$1 reason=$2 where=${3:-read} protocol=${4:-}
	hostile_start "$case"
	if [ "$where" = probe ]; then
		wait_for "$hung_tenths" grep -qF "plugin $tmp/plugins/$name.so: host ended: $reason" \
		    "$tmp/log"
		check "its host ended: $reason (log)" grep -qF \
		    "$name: not used: plugin host ended during probe(): $reason" "$tmp/log"
		"$entropyd" -l -n "$name" --plugin-dir "$tmp/plugins" >"$tmp/list" 2>/dev/null
		check "-l says why it is unusable" grep -qF \
		    "unusable: plugin host ended during probe(): $reason" "$tmp/list"
		show_if_failed "$tmp/list"
	else
		check "/sources: absent, last error: plugin host ended: $reason" \
		    wait_for "$hung_tenths" absent_with "$reason"
		show_if_failed "$tmp/sources"
		check "the log says how its host ended" grep -qF \
		    "plugin $tmp/plugins/$name.so: host ended: $reason" "$tmp/log"
	fi
	show_if_failed "$tmp/log"
	check "its host is restarted with backoff and counted in /metrics" \
	    wait_for 100 restarted
	if [ -n "$protocol" ]; then
		check "/metrics counts a protocol error" \
		    test "$(plugin_metric plugin_protocol_errors_total)" -ge 1
	fi
	good_keeps_feeding
	ucurl "$sock" /health >"$tmp/health"
	check "/health answers" grep -q '"status"' "$tmp/health"
	hostile_end
}

# hostile_claim CASE REASON: the plugin is refused at load for what it
# claims, with REASON in the log and -l; the file source feeds. 5 checks.
hostile_claim() {
	case=$1 reason=$2
	select_plugin=no hostile_start "$case"
	wait_for 100 test -s "$tmp/out"
	check "refused at load: $reason (log)" grep -qF \
	    "plugin $tmp/plugins/$name.so: refused: $reason" "$tmp/log"
	show_if_failed "$tmp/log"
	"$entropyd" -l --plugin-dir "$tmp/plugins" >"$tmp/list" 2>/dev/null
	check "-l lists the refusal and no such source" sh -c \
	    "grep -qF 'refused plugin $tmp/plugins/$name.so: $reason' '$tmp/list' &&
	     ! grep -q '^$name ' '$tmp/list'"
	good_keeps_feeding
	hostile_end
}

# A plugin that segfaults in read() costs only its own instance. 7 checks.
case_segv_read() {
	# In a sanitizer build UBSan reports the store through NULL and ends the
	# host first: with exit status 1 unless abort_on_error (contrib/quickstart's
	# setting) makes it SIGABRT; pinned here so that one reason is expected.
	if sanitized; then
		asan_option abort_on_error=0
		UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}abort_on_error=0"
		export UBSAN_OPTIONS
		hostile_crash segv_read "exited with status 1"
	else
		hostile_crash segv_read "killed by SIGSEGV"
	fi
}

# A slow-starting plugin that blocks in probe(): the file source's first
# feed comes first; a SIGTERM while the probe hangs (the loop's thread waits
# on its host for up to 5 s) ends the daemon at once all the same. 5 checks.
case_slow_block_probe() {
	hostile_start slow_block_probe -d
	wait_for 100 grep -q "probing the slow-starting sources" "$tmp/log"
	check "its probe began after the file source's first feed (the sink holds $(wc -c <"$tmp/out") bytes)" \
	    sh -c "grep -q 'the first feed is out: probing the slow-starting sources' '$tmp/log' &&
	     test -s '$tmp/out'"
	# Its host is blocked in probe() now (for 5 s, when its watchdog ends it).
	sleep 0.5
	check "its host has not ended yet" sh -c "! grep -q 'host ended' '$tmp/log'"
	kill "$pid"
	check "SIGTERM while its probe hangs ends the daemon within two seconds" \
	    wait_for 20 gone "$pid"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "a clean exit 0 (status $rc)" test "$rc" -eq 0
	check "the log says the probe was given up for the stop" \
	    grep -qF "host ended: the daemon is stopping during probe()" "$tmp/log"
	show_if_failed "$tmp/log"
}

# A plugin that logs 20000 lines at once cannot flood the daemon's log:
# at most 100 a second pass, the rest are counted as dropped. 6 checks.
case_flood() {
	hostile_start flood -O hostile_flood:entropy:8
	wait_for 100 grep -q "dropping the rest" "$tmp/log"
	check "the excess is dropped and said so" grep -q "plugin hostile_flood: more than 100 log lines in a second; dropping the rest" "$tmp/log"
	lines=$(grep -c "flood line" "$tmp/log")
	check "at most a few hundred of its lines were logged ($lines)" test "$lines" -le 400
	wait_for 300 grew hostile_flood bytes_conditioned 0
	check "its instance still reads" grew hostile_flood bytes_conditioned 0
	good_keeps_feeding
	hostile_end
}

# A plugin that forks 1000 times gets no process at all: its host may make
# threads, never processes. It keeps its instance; the file source feeds.
# 6 checks.
case_forkbomb() {
	hostile_start forkbomb -O hostile_forkbomb:entropy:8
	wait_for 100 grep -q "forks: " "$tmp/log"
	check "not one of its 1000 forks succeeded" \
	    grep -q "hostile_forkbomb: forks: 0 of 1000 succeeded (Operation not permitted)" "$tmp/log"
	show_if_failed "$tmp/log"
	hosts=$(host_pids)
	n=0
	for h in $hosts; do n=$((n + $(pgrep -c -P "$h"))); done
	check "its host has no child process (hosts: $(echo $hosts))" sh -c "test -n '$hosts' && test $n -eq 0"
	wait_for 100 grew hostile_forkbomb bytes_conditioned 0
	check "its instance still reads and is conditioned" grew hostile_forkbomb bytes_conditioned 0
	good_keeps_feeding
	hostile_end
}

# A plugin cannot credit the kernel: its host has no capability, no new
# privileges and a seccomp filter, and RNDADDENTROPY on /dev/random fails.
# 5 checks.
case_rndadd() {
	hostile_start rndadd
	wait_for 100 grep -q "RNDADDENTROPY\|open /dev/random" "$tmp/log"
	check "RNDADDENTROPY is denied" \
	    grep -q "hostile_rndadd: RNDADDENTROPY: Operation not permitted" "$tmp/log"
	show_if_failed "$tmp/log"
	host=$(host_pids | head -n 1)
	check "its host runs without capabilities" sh -c \
	    "test -n '$host' && grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$host/status &&
	     grep -q '^CapPrm:[[:space:]]*0000000000000000' /proc/$host/status &&
	     grep -q '^CapBnd:[[:space:]]*0000000000000000' /proc/$host/status"
	check "with no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$host/status"
	if grep -q 'HAVE_SECCOMP 1' "$top_builddir/config.h"; then
		check "under a seccomp filter" grep -q '^Seccomp:[[:space:]]*2' "/proc/$host/status"
	else
		skip "entropyd was built without libseccomp"
	fi
	good_keeps_feeding
	kill "$pid"
	wait "$pid"
}

# With -D the daemon confines itself (its seccomp list has no exec), yet a
# plugin that crashes is still restarted: its launcher was started before.
# The hosts run as the -D user, without capabilities. The file source feeds.
# 5 checks.
case_sandboxed() {
	if [ "$(id -u)" -ne 0 ]; then
		why="not root: -D needs root"
	elif ! getent passwd nobody >/dev/null 2>&1; then
		why="no user nobody"
	else
		why=
	fi
	if [ -n "$why" ]; then
		for _ in 1 2 3 4 5; do skip "$why"; done
		return
	fi
	no_leak_check_under_seccomp
	group=$(id -gn nobody)
	hostile_copy rndadd
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
}

# Plugin files are checked before loading, as sshd checks its files: a
# regular file and its directory, owned by root or the daemon's user and
# writable by no one else. Each unsafe case is refused with its reason; the
# same plugin in a safe directory loads. 6 checks.
case_file_modes() {
	# list CASE: entropyd -l for the plugin directory $tmp/CASE, into $tmp/CASE.list.
	list() { "$entropyd" -l --plugin-dir "$tmp/$1" >"$tmp/$1.list" 2>"$tmp/$1.log"; }
	mkdir -m 755 "$tmp/safe" "$tmp/wfile" "$tmp/wdir" "$tmp/gdir" "$tmp/owner"
	for d in safe wfile wdir gdir owner; do cp "$libs/testgood.so" "$tmp/$d/"; done
	chmod 755 "$tmp"/*/testgood.so
	chmod o+w "$tmp/wfile/testgood.so"
	chmod 1777 "$tmp/wdir"
	chmod 775 "$tmp/gdir"
	chown 12345 "$tmp/owner/testgood.so"
	for d in safe wfile wdir gdir owner; do list $d; done

	check "a safe plugin loads" grep -qx "plugin $tmp/safe/testgood.so: source testgood" "$tmp/safe.list"
	check "a world-writable .so is refused" grep -qx \
	    "refused plugin $tmp/wfile/testgood.so: unsafe: the file is writable by others (mode 0757)" \
	    "$tmp/wfile.list"
	check "the refusal is logged" grep -qF \
	    "plugin $tmp/wfile/testgood.so: refused: unsafe: the file is writable by others" "$tmp/wfile.log"
	check "a world-writable directory is refused" grep -qx \
	    "refused plugin $tmp/wdir/testgood.so: unsafe: its directory is writable by others (mode 1777)" \
	    "$tmp/wdir.list"
	check "a group-writable directory is refused" grep -qx \
	    "refused plugin $tmp/gdir/testgood.so: unsafe: its directory is writable by its group (mode 0775)" \
	    "$tmp/gdir.list"
	if [ "$(id -u)" -eq 0 ]; then
		check "a file owned by another user is refused" grep -qx \
		    "refused plugin $tmp/owner/testgood.so: unsafe: the file is owned by uid 12345, not by root or the daemon's user" \
		    "$tmp/owner.list"
	else
		skip "not root: cannot give a file to another user"
	fi
}

# End what a case started: SIGTERM, then SIGKILL for what is still there
# after 5 s, so that a stuck case does not hold up the next ones.
hostile_case_end() {
	for p in $tap_pids; do kill "$p" 2>/dev/null; done
	for p in $tap_pids; do wait_for "$(bound 50)" gone "$p" || kill -KILL "$p" 2>/dev/null; done
	for p in $tap_pids; do wait "$p" 2>/dev/null; done
}

# hostile_case NAME COUNT COMMAND...: case NAME, COMMAND making COUNT checks,
# in a subshell with the scratch directory $tmp/NAME. Its checks are named
# after it; those it did not make are reported failed. With hostile_mode
# "count", only adds COUNT to hostile_total.
hostile_case() {
	case_name=$1 count=$2
	shift 2
	if [ "$hostile_mode" = count ]; then
		hostile_total=$((hostile_total + count))
		return 0
	fi
	(
		tmp=$suite_tmp/$case_name
		sock=$tmp/s
		tap_pids=
		mkdir "$tmp"
		trap hostile_case_end EXIT
		"$@"
	) >"$suite_tmp/$case_name.tap"
	sed -E "s/^((not )?ok [0-9]+) - /\\1 - $case_name: /" "$suite_tmp/$case_name.tap"
	made=$(grep -c -E '^(not )?ok ' "$suite_tmp/$case_name.tap")
	tap_n=$((tap_n + made))
	if grep -q '^not ok ' "$suite_tmp/$case_name.tap"; then tap_failed=1; fi
	while [ "$made" -lt "$count" ]; do
		not_ok "$case_name: a check not made (the case ended early)"
		made=$((made + 1))
	done
}

# Every case, in turn.
hostile_cases() {
	hostile_case segv_read 7 case_segv_read
	# A plugin that aborts in probe() costs only itself.
	hostile_case abort_probe 7 hostile_crash abort_probe "killed by SIGABRT" probe
	# A plugin whose probe() blocks with every signal blocked is ended after its timeout.
	hostile_case block_probe 7 hostile_crash block_probe "probe() did not return within 5 s" probe
	# The same from a module that declares a slow start: probed after the
	# first feed, which it does not hold back; a SIGTERM is not held back either.
	hostile_case slow_block_probe 5 case_slow_block_probe
	# A plugin that spins for ever in read() (a blocking source) is ended after its timeout.
	hostile_case loop_read 7 hostile_crash loop_read "read() did not return within 5 s"
	# A plugin whose read() blocks with every signal blocked is ended after its timeout.
	hostile_case block_read 7 hostile_crash block_read "read() did not return within 5 s"
	# A plugin that hands over a readable descriptor, then blocks in read(), is
	# ended after its timeout; the daemon's loop never waits for it.
	hostile_case poll_block 7 hostile_crash poll_block "read() did not return within 5 s"
	# A read() that returns more than asked for ends its host before a byte is
	# sent: nothing is over-read.
	hostile_case overread 8 hostile_crash overread \
	    "read() returned 4196 bytes for a read of 4096" read protocol
	# A read() that returns 1 GB for a 4 KiB read ends its host before a byte is sent.
	hostile_case gigabyte 8 hostile_crash gigabyte \
	    "read() returned 1073741824 bytes for a read of 4096" read protocol
	# A plugin that writes a malformed message onto its host's sockets is a
	# protocol error: its host is ended and counted.
	hostile_case garbage 8 hostile_crash garbage \
	    "protocol error: unexpected or malformed message (type 65535" probe protocol
	# A plugin that goes around its host and sends the daemon a forged data
	# message larger than the read asked for: the daemon cuts it, never
	# over-reads, counts a protocol error and ends the host.
	hostile_case forge 8 hostile_crash forge \
	    "protocol error: a read of 4096 bytes answered with more" read protocol
	hostile_case flood 6 case_flood
	hostile_case forkbomb 6 case_forkbomb
	hostile_case rndadd 5 case_rndadd
	# Claims refused at load: 1000 and NaN bits per byte, raw samples of 0
	# bits, 8 bits of entropy per 1-bit raw sample.
	hostile_case bits_1000 5 hostile_claim bits_1000 \
	    'entropy_bits 1000: a claim must be more than 0 and at most 8 bits per byte'
	hostile_case bits_nan 5 hostile_claim bits_nan \
	    'entropy_bits nan: a claim must be more than 0 and at most 8 bits per byte'
	hostile_case sample_0 5 hostile_claim sample_0 \
	    'sample_bits 0: raw samples must be 1 to 16 bits wide'
	hostile_case eight_per_bit 5 hostile_claim eight_per_bit \
	    'entropy_bits 8: a claim must be more than 0 and at most 1 bits per raw sample'
	hostile_case sandboxed 5 case_sandboxed
	hostile_case file_modes 6 case_file_modes
}

hostile_mode=count hostile_total=0
hostile_cases
plan "$hostile_total"
hostile_mode=run
hostile_cases
finish
