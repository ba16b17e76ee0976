#!/bin/sh
# The sysvinit script from a staged install: start, status, reload, a refused
# second start, stop; with start-stop-daemon and without it. Settings that
# cannot work (a daemon that exits at once, an unknown user) are refused.
# make install keeps an edited defaults file and creates the plugin directory.
. "$(dirname "$0")/lib.sh"
plan 43

size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# Whether the daemon says (on the test's control socket, which it takes from
# the environment) that the file source is drained.
drained() {
	"$top_builddir/entropyctl" -j sources file 2>/dev/null | grep -q '"state": "drained"'
}

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
defaults=$(find "$tmp/root" -path '*/default/entropyd' -type f)
check "the plugin directory is created, empty" sh -c \
    "find '$tmp/root' -type d -path '*/entropyd/sources' -empty | grep -q ."

# The defaults file is the administrator's once installed.
echo 'DAEMON_ARGS="-x tpm"' >>"$defaults"
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" install DESTDIR="$tmp/root") \
    >"$tmp/install2.log" 2>&1
check "make install again keeps an edited defaults file" sh -c \
    "tail -n 1 '$defaults' | grep -qx 'DAEMON_ARGS=\"-x tpm\"' &&
     grep -q 'keeping .*default/entropyd' '$tmp/install2.log'"
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" uninstall DESTDIR="$tmp/root") \
    >"$tmp/uninstall.log" 2>&1
check "make uninstall keeps the edited defaults file, removes the rest" sh -c \
    "test -f '$defaults' && test ! -e '$script' && test ! -e '$daemon' &&
     ! find '$tmp/root' -type d -path '*/entropyd/sources' | grep -q ."
rm -f "$defaults"
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" install DESTDIR="$tmp/root" &&
    make -C "$top_builddir" uninstall DESTDIR="$tmp/root") >"$tmp/install3.log" 2>&1
check "make uninstall removes an unchanged defaults file" test ! -e "$defaults"
(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" install DESTDIR="$tmp/root") \
    >>"$tmp/install3.log" 2>&1
check "the installed defaults run the daemon as entropyd:entropyd, with no arguments" sh -c \
    "(. '$defaults' && test \"\$DAEMON_USER\" = entropyd:entropyd && test -z \"\$DAEMON_ARGS\")"
# The unit reads the same file: only NAME="value" lines, which sh and
# systemd's EnvironmentFile= read alike.
check "the defaults file holds only comments and NAME=\"value\" lines" sh -c \
    "! grep -Ev '^(#.*|[A-Z_]+=\"[^\"\$\`\\\\]*\"|)\$' '$defaults'"

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
	# The source drains at its end (its output written by then): wait for
	# the daemon to say so, not for a pause in the output's growth.
	wait_for 300 drained
	before=$(size "$tmp/out")
	sh "$script" reload >/dev/null 2>&1
	rc=$?
	wait_for 100 size_at_least "$tmp/out" $((before + 1))
	check "$label: reload (SIGHUP) reopens the drained source ($before -> $(size "$tmp/out") bytes)" \
	    sh -c "test $rc -eq 0 && test $before -gt 0 && test $(size "$tmp/out") -gt $before"
	sh "$script" start >"$tmp/again.out" 2>&1
	rc=$?
	check "$label: a second start succeeds (LSB), naming pid $pid, and starts nothing new" sh -c \
	    "test $rc -eq 0 && grep -q 'already running (pid $pid)' '$tmp/again.out' &&
	     kill -0 $pid && test \"\$(cat '$PIDFILE')\" = $pid"
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
unset SSD

# Arguments that make the daemon exit at once or stay in the foreground are
# refused with the reason (LSB 6, not configured), and nothing is started.
for args in "-v" "--version" "--ver" "-l" "-x tpm --list" "-h" "--usage" "-t" "-dv" \
    "-O hwrng" "-Ohwrng" "--option=hwrng" "--option hwrng"; do
	echo "DAEMON_ARGS=\"-x all -n file -O file:path:$tmp/data -o $tmp/out $args\"" \
	    >"$tmp/defaults"
	sh "$script" start >"$tmp/start.out" 2>&1
	rc=$?
	check "DAEMON_ARGS with '$args': start refused, exit 6 ($(tail -n 1 "$tmp/start.out"))" \
	    sh -c "test $rc -eq 6 && grep -q 'exit at once or stay in the foreground' \
	        '$tmp/start.out' && test ! -e '$PIDFILE'"
done

# HWRNG_SELECT (rngd's HRNGSELECT) is written to the kernel before the start;
# a name the kernel lacks is reported and left alone.
mkdir "$tmp/hw_random"
printf 'virtio_rng.0 tpm-rng-0\n' >"$tmp/hw_random/rng_available"
printf 'virtio_rng.0\n' >"$tmp/hw_random/rng_current"
HWRNG_SYSFS=$tmp/hw_random SSD=none
export HWRNG_SYSFS SSD
for want in tpm-rng-0 no-such-rng; do
	cat >"$tmp/defaults" <<EOT
DAEMON_ARGS="-x all -n file -O file:path:$tmp/data -o $tmp/out"
HWRNG_SELECT="$want"
EOT
	sh "$script" start >"$tmp/start.out" 2>&1
	rc=$?
	pid=$(cat "$PIDFILE" 2>/dev/null)
	[ -n "$pid" ] && track "$pid"
	sh "$script" stop >/dev/null 2>&1
	if [ "$want" = tpm-rng-0 ]; then
		check "HWRNG_SELECT=$want: selected before the start ($(cat "$tmp/hw_random/rng_current"))" \
		    sh -c "test $rc -eq 0 && test \"\$(cat '$tmp/hw_random/rng_current')\" = tpm-rng-0"
	else
		check "HWRNG_SELECT=$want: reported, the kernel's choice kept, the daemon started" \
		    sh -c "test $rc -eq 0 && grep -q 'not one of the kernel' '$tmp/start.out' &&
		        test \"\$(cat '$tmp/hw_random/rng_current')\" = tpm-rng-0"
	fi
done
unset HWRNG_SYSFS SSD

# An unknown user is refused before anything starts.
cat >"$tmp/defaults" <<EOT
DAEMON_ARGS="-x all -n file -O file:path:$tmp/data -o $tmp/out"
DAEMON_USER="no-such-user-entropyd:nogroup"
EOT
sh "$script" start >"$tmp/start.out" 2>&1
rc=$?
check "an unknown DAEMON_USER: start refused, exit 6, saying how to fix it" sh -c \
    "test $rc -eq 6 && grep -q 'no such user or group; create it' '$tmp/start.out' &&
     test ! -e '$PIDFILE'"

# A daemon that is gone after its start is a failed start.
printf '#!/bin/sh\nexit 0\n' >"$tmp/gone" && chmod 755 "$tmp/gone"
echo 'DAEMON_ARGS=""' >"$tmp/defaults"
DAEMON=$tmp/gone sh "$script" start >"$tmp/start.out" 2>&1
rc=$?
check "a daemon not running after its start: start fails (exit $rc), saying so" sh -c \
    "test $rc -eq 1 && grep -q 'not running after its start' '$tmp/start.out'"

# DAEMON_USER runs the daemon as that user (-D), which needs root.
if [ "$(id -u)" -ne 0 ]; then
	skip "switching users needs root"
elif ! getent passwd nobody >/dev/null || ! getent group nogroup >/dev/null; then
	skip "no user nobody or group nogroup"
else
	cat >"$tmp/defaults" <<EOT
DAEMON_ARGS="-x all -n file -O file:path:$tmp/data -O file:entropy:8 -o $tmp/out"
DAEMON_USER="nobody:nogroup"
EOT
	sh "$script" start >"$tmp/start.out" 2>&1
	rc=$?
	pid=$(cat "$PIDFILE" 2>/dev/null)
	[ -n "$pid" ] && track "$pid"
	# The daemon drops once its sources and socket are open, after the start returns.
	wait_for 100 sh -c "awk '/^Uid:/ { print \$2 }' /proc/$pid/status | grep -qx $(id -u nobody)"
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	check "DAEMON_USER=nobody:nogroup: the daemon runs as uid $uid" sh -c \
	    "test $rc -eq 0 && test '$uid' = '$(id -u nobody)'"
	show_if_failed "$tmp/start.out"
	sh "$script" stop >/dev/null 2>&1
fi
finish
