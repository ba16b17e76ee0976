# SPDX-License-Identifier: MIT
# Shell test helpers: TAP output, a private scratch directory, and cleanup of
# every process a test starts (by PID). Source it from a
# tests/integration/*.sh script.

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
tap_n=0
tap_failed=0
tap_pids=""
tmp=$(mktemp -d "${TMPDIR:-/tmp}/entropyd-test.XXXXXX")
# Every daemon and entropyctl a test starts without a socket of its own use
# this one, never the system's: tests run in parallel.
ENTROPYD_CONTROL_SOCKET=$tmp/control.sock
export ENTROPYD_CONTROL_SOCKET
# Likewise the generation file (and its socket, beside it), and the hooks:
# none unless a test puts some there, never the system's.
ENTROPYD_GENERATION_FILE=$tmp/generation
ENTROPYD_GENERATION_HOOKS=$tmp/generation.d
export ENTROPYD_GENERATION_FILE ENTROPYD_GENERATION_HOOKS
# Plugins run in the plugin host built here, not an installed one.
ENTROPYD_PLUGIN_HOST=$top_builddir/entropyd-plugin
export ENTROPYD_PLUGIN_HOST

# Stop what the test started, then remove the scratch directory.
tap_cleanup() {
	for pid in $tap_pids; do
		kill "$pid" 2>/dev/null
	done
	for pid in $tap_pids; do
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap tap_cleanup EXIT
trap 'exit 1' INT TERM

plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); tap_last=ok; echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=1; tap_last=fail; echo "not ok $tap_n - $*"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
diag() { printf '# %s\n' "$@"; }
# Show the last lines of each file as diagnostics.
diag_file() {
	for f in "$@"; do
		diag "--- $f"
		tail -n 60 "$f" 2>/dev/null | while IFS= read -r line; do diag "$line"; done
	done
}
# After a failed check, show the last lines of each file.
show_if_failed() { [ "${tap_last:-}" = fail ] || return 0; diag_file "$@"; }
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# stop PID...: end processes the test started and reap them, so the next
# daemon does not meet the last one's control socket.
stop() {
	for p in "$@"; do kill "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	return 0
}
# Remember a background process so cleanup ends it.
track() { tap_pids="$tap_pids $1"; }
# Skip the whole script (for missing hardware or privileges, saying which).
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# Wait up to $1 tenths of a second for command $2... to succeed. The command
# runs afresh each time, but its arguments are expanded once, by the caller:
# wait for "$(...)" through a function or sh -c (see size_at_least).
wait_for() {
	tenths=$1
	shift
	while [ "$tenths" -gt 0 ]; do
		if "$@"; then return 0; fi
		sleep 0.1
		tenths=$((tenths - 1))
	done
	return 1
}
finish() { exit "$tap_failed"; }
# checker_points FILE COUNT PREFIX: a checker's "ok WHAT" and "not ok WHAT"
# lines (vmgenid-marks.py, egd-marks.py) as COUNT test points
# "PREFIX: WHAT"; other lines are left out, and points it did not print fail.
checker_points() {
	cp_n=0
	while read -r verdict rest; do
		case $verdict in
		ok) ok "$3: $rest" ;;
		not) not_ok "$3: ${rest#ok }" ;;
		*) continue ;;
		esac
		cp_n=$((cp_n + 1))
	done <"$1"
	while [ "$cp_n" -lt "$2" ]; do
		not_ok "$3: (not run)"
		cp_n=$((cp_n + 1))
	done
}
# Whether process $1 is gone (a zombie left for a slow reaper counts as gone).
# A zombie can be reaped between kill -0 and the read of its stat: no stat
# to read then means gone too, not "still running".
gone() {
	kill -0 "$1" 2>/dev/null || return 0
	gone_state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ "$gone_state" = Z ] || { [ -z "$gone_state" ] && ! kill -0 "$1" 2>/dev/null; }
}
# tree PID: every process below PID, then PID, one a line (the deepest first).
tree() {
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
	echo "$1"
}
# none_left PIDS: no process of the list is left (a zombie counts as gone);
# else the first one left is shown.
none_left() {
	for p in $1; do gone "$p" || { diag "left: $(ps -o pid=,args= -p "$p")"; return 1; }; done
}
# size_at_least FILE BYTES: whether FILE (missing: 0 bytes) holds at least
# BYTES; for wait_for, as it reads the size afresh each time.
size_at_least() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
# Whether the daemon is built with ASan (and UBSan): --enable-sanitizers
# says so; a build given -fsanitize=address in CFLAGS is recognised by the
# runtime linked into the daemon.
sanitized() {
	[ "${ENTROPYD_SANITIZED:-}" = 1 ] || grep -q __asan_init "$top_builddir/entropyd" 2>/dev/null
}
# bound TENTHS: a bound on how fast the daemon does something itself (exit
# on SIGTERM, say) in tenths of a second, for wait_for: as given, or three
# times that where the daemon runs under AddressSanitizer, whose exit adds
# LeakSanitizer's scan of the whole heap (0.1 to 0.3 s on a loaded 2-core
# machine), or under a wrapper such as valgrind.
bound() {
	if sanitized || [ -n "${ENTROPYD_WRAPPER:-}" ]; then echo $(($1 * 3)); else echo "$1"; fi
}
# Add sanitizer option $1 (name=value) to ASAN_OPTIONS for what runs next.
asan_option() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$1"
	export ASAN_OPTIONS
}
# LeakSanitizer stops the world with ptrace, which the seccomp filters (the
# worker's with -D, the kernel sink's feeder always) refuse: a sanitized daemon
# under a filter runs without the leak check (every other daemon test keeps it).
no_leak_check_under_seccomp() { if sanitized; then asan_option detect_leaks=0; fi; }
# run_entropyd ARGS... &: the daemon in the background, under
# $ENTROPYD_WRAPPER when set (e.g. ENTROPYD_WRAPPER="valgrind
# --error-exitcode=99 --leak-check=full"). The subshell execs it, so $! is the
# daemon's PID (valgrind runs the program in its own process).
run_entropyd() {
	# shellcheck disable=SC2086 # the wrapper is a command line
	exec ${ENTROPYD_WRAPPER:-} "$top_builddir/entropyd" "$@"
}
# fips_ok LOG N: entropytest's LOG shows N blocks tested and at most one
# failed (about one good block in 1300 fails FIPS 140-2 by chance).
fips_ok() {
	fips_s=$(sed -n 's/.*FIPS 140-2 successes: //p' "$1")
	fips_f=$(sed -n 's/.*FIPS 140-2 failures: //p' "$1")
	[ -n "$fips_s" ] && [ -n "$fips_f" ] && [ $((fips_s + fips_f)) -eq "$2" ] && [ "$fips_f" -le 1 ]
}
# start_swtpm DIR [swtpm flags...]: a swtpm server on DIR/S, PID in $swtpm_pid.
start_swtpm() {
	dir=$1
	shift
	mkdir -p "$dir"
	rm -f "$dir/S" "$dir/C"
	swtpm socket --server "type=unixio,path=$dir/S" --ctrl "type=unixio,path=$dir/C" \
	    --tpmstate "dir=$dir" "$@" 2>>"$dir/swtpm.log" &
	swtpm_pid=$!
	track $swtpm_pid
	wait_for 100 test -S "$dir/S"
}
# start_fake_tty NAME ARGS...: a fake CDC-ACM key (tests/fakes/usb-fake-tty
# ARGS) on a pty, logging to $tmp/NAME.log; sets $pts and $fakepid.
start_fake_tty() {
	name=$1
	shift
	"$top_builddir/tests/fakes/usb-fake-tty" "$@" "$tmp/$name.pts" \
	    "$tmp/$name.log" &
	track $!
	fakepid=$!
	wait_for 50 test -s "$tmp/$name.pts"
	pts=$(cat "$tmp/$name.pts")
}
