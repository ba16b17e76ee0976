# SPDX-License-Identifier: MIT
# The hostile-plugin suite's helpers: each tests/hostile-*.sh runs one
# hostile plugin (tests/plugins/hostile.c, built as hostile_CASE.so) beside a
# good source, the file source on a FIFO of random bytes, which must keep
# feeding whatever the plugin does. Source after tests/lib.sh.
. "$(dirname "$0")/control-lib.sh"
libs=$top_builddir/tests/plugins/.libs
sock=$tmp/s
# A plugin's call may take PLUGINPROTO_CALL_TIMEOUT_MS (5 s) before its host is ended.
hung_tenths=150

# hostile_start CASE [entropyd arguments]: a daemon with the file source and
# hostile_CASE, a file sink and a private control socket; its PID in $pid.
hostile_start() {
	name=hostile_$1
	shift
	mkdir -p "$tmp/plugins"
	cp "$libs/$name.so" "$tmp/plugins/"
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
# field NAME KEY: a top-level field of source NAME from /sources.
field() {
	ucurl "$sock" /sources | json "[s for s in d['sources'] if s['name'] == '$1'][0]['$2']" 2>/dev/null
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
# hostile_end: SIGTERM ends the daemon within two seconds, exit 0.
hostile_end() {
	kill "$pid"
	check "SIGTERM ends the daemon within two seconds" wait_for 20 gone "$pid"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "a clean exit 0 (status $rc)" test "$rc" -eq 0
	show_if_failed "$tmp/log"
}
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
hostile_crash() {
	case=$1 reason=$2 where=${3:-read} protocol=${4:-}
	if [ -n "$protocol" ]; then plan 8; else plan 7; fi
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
	finish
}

# hostile_claim CASE REASON: the plugin is refused at load for what it
# claims, with REASON in the log and -l; the file source feeds.
hostile_claim() {
	case=$1 reason=$2
	plan 5
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
	finish
}
