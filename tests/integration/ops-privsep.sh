#!/bin/sh
# Privilege separation with the kernel sink: the feeder alone holds
# /dev/random and CAP_SYS_ADMIN and issues RNDADDENTROPY; the worker runs
# without a capability; a worker killed mid-feed is restarted, feeding
# resumes, nothing is credited twice; the feeder's death ends the others.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
entropyd=$top_builddir/entropyd

[ "$(id -u)" -eq 0 ] || skip_all "the feeder credits the kernel: needs root"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
    skip_all "no user nobody or group nogroup"
# A source that can be credited honestly: the kernel's hwrng, else RDSEED.
if [ -r /dev/hwrng ] && [ -n "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" ] &&
    [ "$(cat /sys/class/misc/hw_random/rng_current)" != none ]; then
	src=hwrng
elif "$entropyd" -l 2>/dev/null | awk '$1 == "rdseed" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	src=rdseed
else
	skip_all "no usable /dev/hwrng or RDSEED to credit the kernel honestly"
fi
command -v strace >/dev/null 2>&1 || skip_all "strace is not installed"
no_leak_check_under_seccomp
# The worker's allow-list needs libseccomp (the feeder's is written out).
"$top_builddir/tests/fakes/sandbox-probe" work 2>/dev/null
[ $? -ne 77 ] || skip_all "built without libseccomp (--with-seccomp): the worker has no filter"
# The workers are killed with SIGSEGV: let it kill them, as in a plain build.
if sanitized; then asan_option handle_segv=0; fi
plan 46

# field PID NAME: a field of /proc/PID/status, blanks squeezed.
field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" | tr -s '\t ' ' '; }
# child PID: the one child of PID.
child() { cat "/proc/$1/task/$1/children" 2>/dev/null | tr -d ' '; }
# threads_hold_nothing PID: no thread of PID holds a capability, bounding set
# included, and every one is under the seccomp filter with no_new_privs.
threads_hold_nothing() {
	for t in /proc/"$1"/task/*; do
		for f in CapEff CapPrm CapBnd CapAmb; do
			grep -q "^$f:[[:space:]]*0000000000000000" "$t/status" || return 1
		done
		grep -q "^NoNewPrivs:[[:space:]]*1" "$t/status" &&
		    grep -q "^Seccomp:[[:space:]]*2" "$t/status" || return 1
	done
}
# count PATTERN FILE: lines matching.
count() { grep -c "$1" "$2"; }
# all_ended LOG: none of $procs is left, and LOG says the plugin launcher
# was ended and waited for (its hosts end before it).
all_ended() { none_left "$procs" && grep -q "plugin launcher: ended, its hosts before it" "$1"; }

# --- 1-16: -D nobody:nogroup, three processes and what each may do -----------
"$entropyd" -f -d -x all -n "$src" -R 1 -D nobody:nogroup --control-socket "$tmp/ctl" \
    -p "$tmp/pid" 2>"$tmp/log" &
feeder=$!
track $feeder
wait_for 100 grep -q "worker: running as" "$tmp/log"
wait_for 100 grep -q "first feed" "$tmp/log"
supervisor=$(child "$feeder")
worker=$(child "$supervisor")
check "three processes: the feeder (the pidfile's pid $feeder), the supervisor, the worker" sh -c \
    "test '$(cat "$tmp/pid")' = $feeder && test -n '$supervisor' && test -n '$worker'"
check "worker: nobody, CapEff/CapPrm/CapBnd 0, NoNewPrivs 1, Seccomp 2 ($(field "$worker" CapEff) $(field "$worker" CapBnd) $(field "$worker" NoNewPrivs) $(field "$worker" Seccomp))" sh -c \
    "test '$(field "$worker" Uid)' = '65534 65534 65534 65534' &&
     test '$(field "$worker" CapEff)' = 0000000000000000 &&
     test '$(field "$worker" CapPrm)' = 0000000000000000 &&
     test '$(field "$worker" CapBnd)' = 0000000000000000 &&
     test '$(field "$worker" CapAmb)' = 0000000000000000 &&
     test '$(field "$worker" NoNewPrivs)' = 1 && test '$(field "$worker" Seccomp)' = 2"
check "worker: every thread, the reader threads among them, holds no capability, NoNewPrivs 1, Seccomp 2 ($(ls /proc/$worker/task | wc -l) threads)" \
    threads_hold_nothing "$worker"
check "feeder: nobody with CAP_SYS_ADMIN only (effective, permitted, bounding), NoNewPrivs 1, Seccomp 2" sh -c \
    "test '$(field "$feeder" Uid)' = '65534 65534 65534 65534' &&
     test '$(field "$feeder" CapEff)' = 0000000000200000 &&
     test '$(field "$feeder" CapPrm)' = 0000000000200000 &&
     test '$(field "$feeder" CapBnd)' = 0000000000200000 &&
     test '$(field "$feeder" CapInh)' = 0000000000000000 &&
     test '$(field "$feeder" CapAmb)' = 0000000000000000 &&
     test '$(field "$feeder" NoNewPrivs)' = 1 && test '$(field "$feeder" Seccomp)' = 2"
sup_eff=$(field "$supervisor" CapEff)
sup_bnd=$(field "$supervisor" CapBnd)
check "supervisor: no CAP_SYS_ADMIN in any set (CapEff $sup_eff, CapBnd $sup_bnd), NoNewPrivs 1" sh -c \
    "test \$(( 0x$sup_eff & 0x200000 )) -eq 0 && test \$(( 0x$sup_bnd & 0x200000 )) -eq 0 &&
     test '$(field "$supervisor" NoNewPrivs)' = 1"
check "only the feeder holds /dev/random" sh -c \
    "holds() { ls -l /proc/\$1/fd/ 2>/dev/null | grep -q ' /dev/random\$'; };
     holds $feeder && ! holds $supervisor && ! holds $worker"
# The entries of /proc/PID of a process that may not be dumped are root's,
# whoever runs it: the worker, the same user, can neither trace nor read it.
check "the feeder is not dumpable (/proc/$feeder/fd is root's, its user's is 65534)" sh -c \
    "test \"\$(stat -c %u /proc/$feeder/fd)\" = 0 && test \"\$(stat -c %u /proc/$feeder)\" = 65534"
kill -HUP "$feeder"
kill -USR1 "$feeder"
# relayed: the worker re-probed and reported, and the feeder reported.
relayed() {
	grep -q 'SIGHUP: re-probing' "$1" && grep -q 'sink /dev/random (kernel): ' "$1" &&
	    grep -q 'feeder: [0-9]* bits credited in [0-9]* feeds' "$1"
}
wait_for 200 relayed "$tmp/log"
check "SIGHUP and SIGUSR1 to the feeder reach the worker; SIGUSR1 also reports the feeder" \
    relayed "$tmp/log"
show_if_failed "$tmp/log"
kill -USR2 "$feeder"
wait_for 100 grep -q "VM generation change: .*reseeded" "$tmp/log"
check "SIGUSR2 to the feeder reaches the worker: a refill, fed and reseeded through the feeder" \
    grep -q "VM generation change: [0-9]* fresh bits fed and the kernel's CRNG reseeded" "$tmp/log"
ucurl "$tmp/ctl" /metrics >"$tmp/m0"
check "/metrics: no restart, no refused frame" sh -c \
    "grep -qx 'entropyd_worker_restarts_total 0' '$tmp/m0' &&
     grep -qx 'entropyd_feeder_refused_frames_total{reason=\"credit\"} 0' '$tmp/m0'"

# Mid-feed: -R 1 tops the kernel up every second; kill the worker right after a feed.
fed=$(count 'fed the kernel' "$tmp/log")
wait_for 50 sh -c "test \$(grep -c 'fed the kernel' '$tmp/log') -gt $fed"
kill -SEGV "$worker"
wait_for 100 grep -q "worker restarted (pid [0-9]*, restart 1)" "$tmp/log"
wait_for 100 sh -c "sed -n '/restart 1)/,\$p' '$tmp/log' | grep -q 'first feed'"
check "SIGSEGV: the feeder logs it, restarts the worker, feeding resumes" sh -c \
    "grep -q 'the worker (pid $worker) killed by signal 11' '$tmp/log' &&
     sed -n '/restart 1)/,\$p' '$tmp/log' | grep -q 'first feed: [1-9][0-9]* bits credited'"
worker2=$(child "$supervisor")
wait_for 100 test -S "$tmp/ctl"
ucurl "$tmp/ctl" /metrics >"$tmp/m1"
ucurl "$tmp/ctl" /health >"$tmp/h1"
check "/metrics and /health count the restart" sh -c \
    "grep -qx 'entropyd_worker_restarts_total 1' '$tmp/m1' &&
     python3 -c 'import json,sys; c = json.load(open(\"$tmp/h1\"))[\"checks\"][\"worker:restarts\"][0];
sys.exit(c[\"observedValue\"] != 1 or \"signal 11\" not in c[\"output\"])'"
fed=$(count 'fed the kernel' "$tmp/log")
wait_for 50 sh -c "test \$(grep -c 'fed the kernel' '$tmp/log') -gt $fed"
kill -KILL "$worker2"
wait_for 100 grep -q "restart 2)" "$tmp/log"
wait_for 100 sh -c "sed -n '/restart 2)/,\$p' '$tmp/log' | grep -q 'first feed'"
wait_for 100 test -S "$tmp/ctl"
ucurl "$tmp/ctl" /metrics >"$tmp/m2"
check "SIGKILL: restarted again, feeding resumes, /metrics says 2" sh -c \
    "grep -q 'the worker (pid $worker2) killed by signal 9' '$tmp/log' &&
     sed -n '/restart 2)/,\$p' '$tmp/log' | grep -q 'first feed' &&
     grep -qx 'entropyd_worker_restarts_total 2' '$tmp/m2'"
check "the restarted worker is as confined as the first (CapEff 0, Seccomp 2, nobody)" sh -c \
    "w=\$(cat /proc/$supervisor/task/$supervisor/children | tr -d ' ');
     grep -q '^CapEff:.*0000000000000000' /proc/\$w/status && grep -q '^Seccomp:.*2' /proc/\$w/status &&
     grep -q '^Uid:.*65534' /proc/\$w/status"
worker3=$(child "$supervisor")
kill -KILL "$feeder"
wait_for 100 sh -c "! kill -0 $supervisor 2>/dev/null && ! kill -0 $worker3 2>/dev/null"
check "the feeder's death ends the supervisor and the worker" sh -c \
    "! kill -0 $supervisor 2>/dev/null && ! kill -0 $worker3 2>/dev/null"
check "... and the supervisor removes the pidfile on its way out" test ! -e "$tmp/pid"
show_if_failed "$tmp/log"

# --- 17-24: root without -D, under strace --------------------------------------
strace -f -qq -e trace=ioctl -o "$tmp/trace" \
    "$entropyd" -f -d -x all -n "$src" -R 1 --control-socket "$tmp/ctl2" 2>"$tmp/log2" &
straced=$!
track $straced
wait_for 200 grep -q "first feed" "$tmp/log2"
feeder=$(sed -n 's/.*feeder: pid \([0-9]*\) holds.*/\1/p' "$tmp/log2")
supervisor=$(child "$feeder")
worker=$(child "$supervisor")
check "without -D the worker keeps root's uid, no capability, NoNewPrivs 1, Seccomp 2 ($(field "$worker" CapEff) $(field "$worker" NoNewPrivs) $(field "$worker" Seccomp)); the feeder CAP_SYS_ADMIN alone" sh -c \
    "test '$(field "$worker" Uid)' = '0 0 0 0' && test '$(field "$worker" CapEff)' = 0000000000000000 &&
     test '$(field "$worker" CapPrm)' = 0000000000000000 &&
     test '$(field "$worker" CapBnd)' = 0000000000000000 && test '$(field "$worker" NoNewPrivs)' = 1 &&
     test '$(field "$worker" Seccomp)' = 2 &&
     test '$(field "$feeder" CapEff)' = 0000000000200000 &&
     test '$(field "$feeder" CapPrm)' = 0000000000200000 &&
     test '$(field "$feeder" CapBnd)' = 0000000000200000 && test '$(field "$feeder" Seccomp)' = 2"
check "without -D too, no thread of the worker holds a capability, each under the filter ($(ls /proc/$worker/task | wc -l) threads)" \
    threads_hold_nothing "$worker"
fed=$(count 'fed the kernel' "$tmp/log2")
wait_for 100 sh -c "test \$(grep -c 'fed the kernel' '$tmp/log2') -gt $fed"
kill -SEGV "$worker"
wait_for 200 grep -q "restart 1)" "$tmp/log2"
wait_for 200 sh -c "sed -n '/restart 1)/,\$p' '$tmp/log2' | grep -q 'first feed'"
worker=$(child "$supervisor")
kill -KILL "$worker"
wait_for 200 grep -q "restart 2)" "$tmp/log2"
wait_for 200 sh -c "sed -n '/restart 2)/,\$p' '$tmp/log2' | grep -q 'fed the kernel'"
kill -USR1 "$feeder"
wait_for 50 grep -q "feeder: [0-9]* bits credited" "$tmp/log2"
kill "$feeder"
wait "$straced"
# Credited RNDADDENTROPY calls: "PID ioctl(N, RNDADDENTROPY, {entropy_count=C, ...".
grep 'RNDADDENTROPY, {entropy_count=[1-9]' "$tmp/trace" |
    sed 's/^\([0-9]*\) .*entropy_count=\([0-9]*\),.*/\1 \2/' >"$tmp/adds"
feeder_bits=$(sed -n 's/.*feeder: \([0-9]*\) bits credited in \([0-9]*\) feeds.*/\1/p' "$tmp/log2")
feeder_feeds=$(sed -n 's/.*feeder: \([0-9]*\) bits credited in \([0-9]*\) feeds.*/\2/p' "$tmp/log2")
# What the workers saw acknowledged: their first feeds and every later one.
acked=$(sed -n 's/.*first feed: \([0-9]*\) bits.*/\1/p; s/.*fed the kernel: \([0-9]*\) bits.*/\1/p' \
    "$tmp/log2" | awk '{ s += $1 } END { print s + 0 }')
traced_bits=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/adds")
check "strace: RNDADDENTROPY is issued by the feeder (pid $feeder) and no other process" sh -c \
    "test -s '$tmp/adds' && test \"\$(cut -d' ' -f1 '$tmp/adds' | sort -u)\" = '$feeder'"
check "strace: the worker never issued a random ioctl" sh -c \
    "! grep -v '^$feeder ' '$tmp/trace' | grep -q 'RNDADDENTROPY\|RNDRESEEDCRNG\|RNDADDTOENTCNT'"
check "two workers killed mid-feed, restarted, feeding resumed each time" sh -c \
    "grep -q 'killed by signal 11' '$tmp/log2' && grep -q 'killed by signal 9' '$tmp/log2' &&
     sed -n '/restart 2)/,\$p' '$tmp/log2' | grep -q 'fed the kernel'"
check "nothing credited twice: the kernel saw exactly the feeder's count ($feeder_feeds calls, $feeder_bits bits; traced $(wc -l <"$tmp/adds"), $traced_bits)" sh -c \
    "test '$(wc -l <"$tmp/adds")' = '$feeder_feeds' && test '$traced_bits' = '$feeder_bits'"
# A worker killed between the feeder's answer and its own log line leaves at
# most what one service of the sink credits (the start-up burst) unlogged.
check "nothing lost: every credit a worker saw answered was issued ($acked <= $feeder_bits <= $acked + 2 x 4096)" sh -c \
    "test '$acked' -gt 0 && test '$feeder_bits' -ge '$acked' && test '$feeder_bits' -le \$(( $acked + 8192 ))"
check "a clean stop of the feeder stops all three (strace's run ended 0)" sh -c \
    "grep -q 'feeder: Terminated: stopping' '$tmp/log2' && grep -q 'the worker (pid [0-9]*) exited with status 0' '$tmp/log2'"
show_if_failed "$tmp/log2"

# --- 25-30: as systemd runs it: an unprivileged user with CAP_SYS_ADMIN ambient --
# (and, as the unit's drop-in for clone detection adds, CAP_SYSLOG), on a
# machine whose sysfs shows a generation ID device bound to vmgenid, so that
# the worker opens the kernel log at start.
skip_unit() { for i in 1 2 3 4 5 6; do skip "$1"; done; }
if ! command -v setpriv >/dev/null 2>&1; then
	skip_unit "setpriv is not installed"
elif [ "$src" != rdseed ] &&
    ! "$entropyd" -l 2>/dev/null | awk '$1 == "rdseed" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	skip_unit "as an unprivileged user only RDSEED can be read without a device (none here)"
else
	chmod 755 "$tmp"
	cp "$entropyd" "$tmp/entropyd" && chmod 755 "$tmp/entropyd"
	mkdir "$tmp/unit" && chown 65534:65534 "$tmp/unit"
	mkdir -p "$tmp/sys/bus/acpi/devices/VMGENCTR:00" "$tmp/sys/bus/platform/drivers/vmgenid"
	ln -s ../../../../devices/platform/VMGENCTR:00 \
	    "$tmp/sys/bus/platform/drivers/vmgenid/VMGENCTR:00"
	chmod -R a+rX "$tmp/sys"
	# as_unit LOG CAPS: the daemon as the unit runs it, with ambient CAPS.
	as_unit() {
		ENTROPYD_SYSFS_ROOT=$tmp/sys setpriv --reuid=65534 --regid=65534 --clear-groups \
		    --inh-caps=-all,"$2" --ambient-caps=-all,"$2" --bounding-set=-all,"$2" \
		    "$tmp/entropyd" -f -d -x all -n rdseed --control-socket "$tmp/unit/ctl" \
		    2>"$1" &
		pid=$!
		track $pid
		wait_for 200 grep -q "first feed" "$1"
		supervisor=$(child "$pid")
		worker=$(child "$supervisor")
	}
	as_unit "$tmp/log3" +sys_admin
	check "systemd's way: the kernel is credited (first feed)" \
	    grep -q "first feed: [1-9][0-9]* bits credited" "$tmp/log3"
	check "systemd's way: the feeder keeps CAP_SYS_ADMIN ($(field "$pid" CapEff)), the supervisor nothing ($(field "$supervisor" CapEff))" sh -c \
	    "test '$(field "$pid" CapEff)' = 0000000000200000 &&
	     test '$(field "$supervisor" CapEff)' = 0000000000000000 &&
	     test '$(field "$supervisor" CapAmb)' = 0000000000000000"
	check "systemd's way: the worker holds no capability, ambient included ($(field "$worker" CapEff), $(field "$worker" CapAmb)), Seccomp 2" sh -c \
	    "test '$(field "$worker" CapEff)' = 0000000000000000 &&
	     test '$(field "$worker" CapPrm)' = 0000000000000000 &&
	     test '$(field "$worker" CapAmb)' = 0000000000000000 &&
	     test '$(field "$worker" NoNewPrivs)' = 1 && test '$(field "$worker" Seccomp)' = 2"
	show_if_failed "$tmp/log3"
	stop "$pid"
	if [ "$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)" = 1 ]; then
		check "the unit as installed: under dmesg_restrict the worker cannot open the kernel log (clone detection not armed)" \
		    grep -q "clone detection: not armed: .*/dev/kmsg: Operation not permitted" "$tmp/log3"
	else
		skip "kernel.dmesg_restrict is 0: anyone may read the kernel log"
	fi
	as_unit "$tmp/log6" +sys_admin,+syslog
	check "with the drop-in's CAP_SYSLOG: clone detection armed, the worker holds /dev/kmsg" sh -c \
	    "grep -q 'clone detection: armed: .*watching the kernel log' '$tmp/log6' &&
	     ls -l /proc/$worker/fd/ | grep -q ' /dev/kmsg\$'"
	check "with the drop-in's CAP_SYSLOG: the supervisor keeps it alone ($(field "$supervisor" CapEff)), the feeder CAP_SYS_ADMIN alone ($(field "$pid" CapEff)), the worker nothing ($(field "$worker" CapEff)); bounding sets stay as systemd set them (only CAP_SETPCAP could shrink them)" sh -c \
	    "test '$(field "$supervisor" CapEff)' = 0000000400000000 &&
	     test '$(field "$pid" CapEff)' = 0000000000200000 &&
	     test '$(field "$pid" CapPrm)' = 0000000000200000 &&
	     test '$(field "$pid" CapAmb)' = 0000000000000000 &&
	     test '$(field "$supervisor" CapPrm)' = 0000000400000000 &&
	     test '$(field "$worker" CapEff)' = 0000000000000000 &&
	     test '$(field "$worker" CapPrm)' = 0000000000000000 &&
	     test '$(field "$worker" CapAmb)' = 0000000000000000 &&
	     test '$(field "$worker" Seccomp)' = 2"
	show_if_failed "$tmp/log6"
	stop "$pid"
fi

# --- 31-32: a first worker that cannot start ends the daemon with its status --
: >"$tmp/notadir"
"$entropyd" -f -x all -n "$src" --control-socket "$tmp/notadir/ctl" 2>"$tmp/log4"
rc=$?
"$entropyd" -f -x all -n "$src" -o "$tmp/out4" --control-socket "$tmp/notadir/ctl" 2>/dev/null
rc_file=$?
check "a worker that cannot start: the daemon exits with its status ($rc), as without a feeder ($rc_file)" sh -c \
    "test $rc -ne 0 && test $rc -eq $rc_file && grep -q 'while starting; stopping' '$tmp/log4'"
check "... and nothing is left running" sh -c "! grep -q 'worker restarted' '$tmp/log4'"

# --- 33-34: nothing credited, no feeder: one process, and it still works -----
"$entropyd" -f -x all -n "$src" -o "$tmp/out7" --control-socket "$tmp/ctl7" 2>"$tmp/log7" &
pid=$!
track $pid
wait_for 200 sh -c "test \$(stat -c %s '$tmp/out7' 2>/dev/null || echo 0) -gt 4096"
check "a file sink: no feeder, no child process, output written ($(stat -c %s "$tmp/out7" 2>/dev/null) bytes), no capability" sh -c \
    "test -z '$(child "$pid")' && ! grep -q 'feeder:' '$tmp/log7' &&
     test \$(stat -c %s '$tmp/out7') -gt 4096 && test '$(field "$pid" CapEff)' = 0000000000000000 &&
     test '$(field "$pid" NoNewPrivs)' = 1"
stop "$pid"
show_if_failed "$tmp/log7"
"$entropyd" -t -x all -n "$src" --control-socket "$tmp/ctl8" 2>"$tmp/log8" &
pid=$!
track $pid
wait_for 300 grep -q "rate: $src [0-9.]* kB/s (running)" "$tmp/log8"
check "-t: no feeder, no child process, rates reported, nothing written to the kernel" sh -c \
    "test -z '$(child "$pid")' && ! grep -q 'feeder:\|first feed' '$tmp/log8' &&
     grep -q 'test mode: nothing is written to the kernel' '$tmp/log8' &&
     grep -q 'rate: $src [0-9.]* kB/s (running)' '$tmp/log8'"
stop "$pid"
show_if_failed "$tmp/log8"

# --- 35-36: libseccomp missing at run time (hidden in a private mount namespace)
seclib=$(ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libseccomp\.so\.2 .* => //p' | head -n 1)
if ! command -v unshare >/dev/null 2>&1 || [ -z "$seclib" ]; then
	skip "unshare or the libseccomp.so.2 the daemon loads is missing"
	skip "unshare or the libseccomp.so.2 the daemon loads is missing"
else
	seclib=$(readlink -f "$seclib")
	# The daemon with libseccomp.so.2 an empty file: each program execs the
	# next, so $! is the daemon's pid.
	unshare -m --propagation private sh -c 'mount --bind /dev/null "$0" && exec "$@"' \
	    "$seclib" "$entropyd" -f -d -x all -n "$src" --control-socket "$tmp/ctl9" 2>"$tmp/log9" &
	pid=$!
	track $pid
	wait_for 200 grep -q "first feed" "$tmp/log9"
	feeder=$(sed -n 's/.*feeder: pid \([0-9]*\) holds.*/\1/p' "$tmp/log9")
	worker=$(child "$(child "$feeder")")
	check_pid_is_feeder=$([ "$feeder" = "$pid" ] && echo yes)
	check "without -D a missing libseccomp is a warning: the worker runs with no capability (CapEff $(field "$worker" CapEff), Seccomp $(field "$worker" Seccomp)), the kernel is fed" sh -c \
	    "grep -q 'worker: seccomp: .*running without the system-call allow-list' '$tmp/log9' &&
	     grep -q 'first feed: [1-9][0-9]* bits credited' '$tmp/log9' &&
	     test '$(field "$worker" CapEff)' = 0000000000000000 && test '$(field "$worker" Seccomp)' = 0 &&
	     test '$(field "$feeder" Seccomp)' = 2 && test '$check_pid_is_feeder' = yes"
	show_if_failed "$tmp/log9"
	stop "$pid"
	wait_for 100 sh -c "! kill -0 $feeder 2>/dev/null"
	# In the foreground: it must end at once (a minute, should it not).
	timeout 60 unshare -m --propagation private sh -c 'mount --bind /dev/null "$0" && exec "$@"' \
	    "$seclib" "$entropyd" -f -d -x all -n "$src" -D nobody:nogroup \
	    --control-socket "$tmp/ctl10" 2>"$tmp/log10"
	rc=$?
	check "with -D, which asks for the allow-list, it is fatal: exit $rc (71)" sh -c \
	    "test $rc -eq 71 && grep -q -- '-D: seccomp: ' '$tmp/log10'"
	show_if_failed "$tmp/log10"
fi

# --- 37: a hostile plugin cannot reach the feeder: it runs in a host of its
# own, where no descriptor leads to the feeder's socket ---------------------
plugin=$top_builddir/tests/plugins/.libs/faulty.so
if [ ! -f "$plugin" ]; then
	for i in 1 2 3 4 5; do skip "the faulty test plugin is not built"; done
else
	mkdir "$tmp/plugins"
	cp "$plugin" "$tmp/plugins/"
	# In "cheat" mode the faulty plugin sends a frame crediting 9 bits a
	# byte to every SOCK_SEQPACKET descriptor it has, then reads good bytes.
	echo cheat >"$tmp/mode"
	"$entropyd" -f -d -x all -n "$src" -n faulty -O "faulty:control:$tmp/mode" \
	    --plugin-dir "$tmp/plugins" --control-socket "$tmp/ctl11" 2>"$tmp/log11" &
	pid=$!
	track $pid
	wait_for 200 grep -q "first feed" "$tmp/log11"
	wait_for 100 grep -q "faulty: reading" "$tmp/log11"
	sleep 1
	ucurl "$tmp/ctl11" /metrics >"$tmp/m11"
	check "a plugin's forged frame never reaches the feeder: nothing refused, no worker restarted" sh -c \
	    "! grep -q 'refused a frame from the worker' '$tmp/log11' &&
	     ! grep -Eq '^entropyd_feeder_refused_frames_total\{[^}]*\} [1-9]' '$tmp/m11' &&
	     grep -qx 'entropyd_worker_restarts_total 0' '$tmp/m11'"
	show_if_failed "$tmp/log11"
	procs=$(tree "$pid")
	stop "$pid"
	check "none of the daemon's $(echo $procs | wc -w) processes outlives it (launcher and host included)" \
	    all_ended "$tmp/log11"

	# The launcher, started before the split, is the supervisor's (every
	# process holds its socket): the supervisor's end ends it, and waits.
	"$entropyd" -f -d -x all -n "$src" -n faulty -D nobody:nogroup \
	    --plugin-dir "$tmp/plugins" --control-socket "$tmp/ctl12" 2>"$tmp/log12" &
	pid=$!
	track $pid
	wait_for 200 grep -q "first feed" "$tmp/log12"
	faulty_running() {
		ucurl "$tmp/ctl12" /sources |
		    json "[s['state'] for s in d['sources'] if s['name'] == 'faulty'][0]" 2>/dev/null |
		    grep -qx running
	}
	check "with -D the plugin runs in a host of the launcher started before the split" \
	    wait_for 100 faulty_running
	procs=$(tree "$pid")
	launcher=$(pgrep -P "$pid" -f 'entropyd-plugin --launcher')
	check "the launcher is the feeder's child, the host the launcher's ($(echo $procs | wc -w) processes)" \
	    sh -c "test -n '$launcher' && pgrep -P '$launcher' -f 'entropyd-plugin --host' >/dev/null"
	stop "$pid"
	check "when the feeder, the pidfile's pid, has gone, none of its processes is left: the supervisor ended the launcher and host (log)" \
	    all_ended "$tmp/log12"
	show_if_failed "$tmp/log12"
fi

# --- 38-42: a compromised worker: tests/fakes/worker-cheat.c, preloaded, makes
# the third ADD frame the worker sends (the start-up burst is the first, a
# top-up each second after it) claim 9 bits a byte, as code that took over the
# worker could -------------------------------------------------------------
cheat=$top_builddir/tests/fakes/.libs/worker-cheat.so
if [ ! -f "$cheat" ]; then
	for i in 1 2 3 4 5; do skip "the worker-cheat preload is not built"; done
	finish
fi
strace -f -qq -e trace=ioctl -o "$tmp/trace5" \
    env LD_PRELOAD="$cheat" ENTROPYD_TEST_CHEAT_ADD=3 \
    "$entropyd" -f -d -x all -n "$src" -R 1 --control-socket "$tmp/ctl5" 2>"$tmp/log5" &
straced=$!
track $straced
# Long waits: the kernel's hwrng is slow and shared with the tests running
# beside this one, and each worker tests 2500 bytes before its first feed.
wait_for 600 grep -q "first feed" "$tmp/log5"
feeder=$(sed -n 's/.*feeder: pid \([0-9]*\) holds.*/\1/p' "$tmp/log5")
wait_for 600 grep -q "refused a frame from the worker (pid [0-9]*): credit" "$tmp/log5"
# fed_after_restart LOG: the last "first feed" comes after the last restart.
fed_after_restart() {
	awk '/worker restarted/ { r = NR } /first feed/ { f = NR } END { exit !(r > 0 && f > r) }' "$1"
}
wait_for 600 fed_after_restart "$tmp/log5"
# Ended: killed, or gone by itself first on losing its socket (a failure all the same).
check "the worker's frame (9 bits a byte) is refused, logged, and the worker ended" sh -c \
    "grep -q 'refused a frame from the worker (pid [0-9]*): credit' '$tmp/log5' &&
     grep -Eq 'the worker \(pid [0-9]*\) (killed by signal 9 \(Killed\)|exited with status [0-9]+), after its frame was refused; starting another' '$tmp/log5'"
show_if_failed "$tmp/log5"
check "a new worker is started and feeds the kernel" fed_after_restart "$tmp/log5"
wait_for 100 test -S "$tmp/ctl5"
ucurl "$tmp/ctl5" /metrics >"$tmp/m5"
ucurl "$tmp/ctl5" /health >"$tmp/h5"
check "/metrics counts the refusal by reason, and the restart" sh -c \
    "grep -Eq '^entropyd_feeder_refused_frames_total\{reason=\"credit\"\} [1-9]' '$tmp/m5' &&
     grep -Eq '^entropyd_worker_restarts_total [1-9]' '$tmp/m5' &&
     grep -qx 'entropyd_feeder_refused_frames_total{reason=\"malformed\"} 0' '$tmp/m5'"
check "/health warns: feeder:refusedFrames" python3 -c "
import json, sys
d = json.load(open('$tmp/h5'))
c = d['checks']['feeder:refusedFrames'][0]
sys.exit(not (d['status'] == 'warn' and c['status'] == 'warn' and c['observedValue'] >= 1))"
kill "$feeder"
wait "$straced"
check "strace: the kernel never saw more than 8 bits a byte, and only from the feeder" sh -c \
    "grep 'RNDADDENTROPY, {entropy_count=' '$tmp/trace5' |
     sed 's/^\([0-9]*\) .*entropy_count=\([0-9]*\), buf_size=\([0-9]*\).*/\1 \2 \3/' |
     awk -v f=$feeder '\$1 != f || \$2 > 8 * \$3 { bad = 1 } END { exit bad || NR == 0 }'"
show_if_failed "$tmp/log5"

finish
fi
# Its bytes do not decide anything here: default mode ("good"), no control file.
env LD_PRELOAD="$cheat" ENTROPYD_TEST_CHEAT_ADD=3 \
    "$entropyd" -f -d -x all -n "$src" -n faulty -R 1 -D nobody:nogroup \
    --plugin-dir "$tmp/plugins" --control-socket "$tmp/ctl12" -p "$tmp/pid12" 2>"$tmp/log12" &
feeder=$!
track $feeder
wait_for 600 fed_after_restart "$tmp/log12"
check "a worker that exited cleanly, its frame refused, is followed by another that feeds" \
    fed_after_restart "$tmp/log12"
show_if_failed "$tmp/log12"
faulty_grows() {
	n=$(ucurl "$tmp/ctl12" /sources |
	    json "[s for s in d['sources'] if s['name'] == 'faulty'][0]['counters']['bytes_read']" 2>/dev/null)
	[ "${n:-0}" -gt "${1:-0}" ]
}
wait_for 100 test -S "$tmp/ctl12"
before=$(ucurl "$tmp/ctl12" /sources |
    json "[s for s in d['sources'] if s['name'] == 'faulty'][0]['counters']['bytes_read']" 2>/dev/null)
check "the next worker reads the plugin through a host the launcher started ($before bytes so far)" \
    wait_for 150 faulty_grows "${before:-0}"
check "the launcher outlived the first worker: never gone, no host refused a start" sh -c \
    "! grep -Eq 'plugin launcher: gone|cannot start .*entropyd-plugin' '$tmp/log12'"
show_if_failed "$tmp/log12"
procs=$(tree "$feeder")
kill "$feeder"
wait "$feeder"
check "when the feeder has gone, none of the daemon's $(echo $procs | wc -w) processes is left (launcher and host included)" \
    none_left "$procs"
finish
