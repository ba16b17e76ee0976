#!/bin/sh
# Clone and snapshot safety on this machine: what the daemon reports about
# clone detection, the manual triggers (SIGUSR2, POST /vmgenid) running the
# whole forget-and-refill, and the uevent listener refusing what is not the
# kernel's NEW_VMGENID=1.
#
# Why the listeners are driven this way. Only the kernel's vmgenid driver
# reports a change, when the hypervisor changes the generation ID: in the
# kernel log from the kernel facility (Linux 5.18 and later), and with a
# NEW_VMGENID=1 uevent from port 0 (Linux 6.8 only). Nothing in a running
# guest can make either: a process writing to /dev/kmsg gets the user
# facility, and a process cannot send as port 0, in any network namespace.
# umockdev's emulation is no substitute: it turns the netlink socket into a
# Unix socket and delivers messages in udevd's "libudev" format, claiming
# group 2 (udevd's); a listener that accepts them would accept udevd's
# re-broadcasts, and it cannot carry the kernel log. So:
#   - the genuine change comes from a real kernel in a QEMU guest whose
#     generation ID a snapshot restore changes (daemon-vmgenid-qemu.sh,
#     which also writes a forged notice into that guest's kernel log: not
#     into this machine's, which others read);
#   - here, in a private network namespace (unshare -n, as root), real
#     kernel uevents without the key (synthetic ones written to sysfs,
#     which reach only that namespace) and a uevent with the key sent by a
#     root process must change nothing;
#   - the manual triggers run the same code from the same handler on, so
#     the forget-and-refill checks run through them here as well.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
plan 48

num() { sed -n "s/.*\"$1\": \\([0-9][0-9]*\\).*/\\1/p" | head -n 1; }
metric() { "$entropyctl" -s "$1" metrics | sed -n "s/^entropyd_$2 //p"; }
# wakeups PID: context switches of every thread.
wakeups() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
	    awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}

# 1-4: what the daemon says about clone detection, from the sysfs it sees.
mkdir -p "$tmp/sys/bus/acpi/devices/VMGENCTR:00" "$tmp/sys/bus/platform/drivers/vmgenid"
ln -s ../../../../devices/platform/VMGENCTR:00 "$tmp/sys/bus/platform/drivers/vmgenid/VMGENCTR:00"
mkdir -p "$tmp/nosys"
ENTROPYD_SYSFS_ROOT=$tmp/sys "$entropyd" -l -x all >"$tmp/list" 2>/dev/null
ENTROPYD_SYSFS_ROOT=$tmp/nosys "$entropyd" -l -x all >"$tmp/list2" 2>/dev/null
check "-l: a generation ID device bound to vmgenid is detected; none, and what to do then" sh -c \
    "grep -q '^clone detection: VM generation ID device VMGENCTR:00 (driver vmgenid on the platform bus): changes are acted on' '$tmp/list' &&
     grep -q '^clone detection: not available: no VM generation ID device .*entropyctl vmgenid or send SIGUSR2' '$tmp/list2'"
head -c 100000 /dev/urandom >"$tmp/data"
ENTROPYD_SYSFS_ROOT=$tmp/sys run_entropyd -f -t -x all -n file -O "file:path:$tmp/data" \
    --control-socket "$tmp/s1" 2>"$tmp/log1" &
pid=$!
track $pid
wait_for 100 test -S "$tmp/s1"
wait_for 100 grep -q "clone detection:" "$tmp/log1"
check "at start: clone detection armed, naming the device" \
    grep -q "clone detection: armed: VM generation ID device VMGENCTR:00" "$tmp/log1"
"$entropyctl" -s "$tmp/s1" -j health >"$tmp/h1"
armed=$(metric "$tmp/s1" vmgenid_armed)
check "/health: vmgenid:cloneDetection armed, pass; /metrics: armed $armed" sh -c \
    "python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))[\"checks\"][\"vmgenid:cloneDetection\"][0]; sys.exit(not (c[\"observedValue\"] == \"armed\" and c[\"status\"] == \"pass\"))' '$tmp/h1' &&
     test '$armed' = 1"
stop $pid
rm -f "$tmp/sys/bus/platform/drivers/vmgenid/VMGENCTR:00"
ENTROPYD_SYSFS_ROOT=$tmp/sys run_entropyd -f -t -x all -n file -O "file:path:$tmp/data" \
    --control-socket "$tmp/s1" 2>"$tmp/log1" &
pid=$!
track $pid
wait_for 100 test -S "$tmp/s1"
wait_for 100 grep -q "clone detection:" "$tmp/log1"
"$entropyctl" -s "$tmp/s1" -j health >"$tmp/h1"
check "a device without its driver: not armed, a warning that says why" sh -c \
    "grep -q 'clone detection: not armed: VM generation ID device VMGENCTR:00 has no driver bound' '$tmp/log1' &&
     python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); c = d[\"checks\"][\"vmgenid:cloneDetection\"][0]; sys.exit(not (d[\"status\"] != \"pass\" and c[\"status\"] == \"warn\" and \"no driver\" in c[\"output\"]))' '$tmp/h1'"
stop $pid

if [ "$(id -u)" -ne 0 ]; then
	for i in $(seq 5 48); do skip "needs root (the control action, the kernel sink, network namespaces)"; done
	finish
fi

# 5-13: SIGUSR2, then POST /vmgenid, with the held bytes known in advance.
# shellcheck source=vmgenid-marks.sh
. "$top_srcdir/tests/integration/vmgenid-marks.sh"
marks_entropyd=$entropyd
marks_entropyctl=$entropyctl
# 100 FIPS blocks: more than the sink's pipe, its pending buffer and a
# reserve take, so all three hold bytes when reading stops.
head -c 250004 /dev/urandom >"$tmp/marks.data"
marks_data=$tmp/marks.data
for trigger in signal control; do
	marks_dir=$tmp/marks-$trigger
	mkdir -p "$marks_dir"
	marks_start
	started=$?
	track $marks_pid $marks_reader $marks_writer
	if [ $started -ne 0 ]; then
		not_ok "$trigger: the scenario settles with bytes held"
		diag_file "$marks_dir/log"
		for i in 1 2 3; do not_ok "$trigger: (not run)"; done
		continue
	fi
	marks_before
	if [ $trigger = signal ]; then
		kill -USR2 "$marks_pid"
	else
		"$entropyctl" -s "$marks_dir/ctl.sock" vmgenid >"$marks_dir/ctl.out"
	fi
	if marks_after; then
		python3 "$top_srcdir/tests/integration/vmgenid-marks.py" \
		    "$marks_data" "$marks_dir/out.bin" \
		    "$marks_dir/before" "$marks_dir/after" >"$marks_dir/check"
	else
		echo "not ok the scenario did not drain" >"$marks_dir/check"
		diag_file "$marks_dir/log"
	fi
	checker_points "$marks_dir/check" 4 "$trigger"
done
check "entropyctl vmgenid says what was discarded; the log names each trigger" sh -c \
    "grep -q '^VM generation change sent: [1-9][0-9]* bytes held from before discarded' '$tmp/marks-control/ctl.out' &&
     grep -q 'VM generation changed (signal)' '$tmp/marks-signal/log' &&
     grep -q 'VM generation changed (control)' '$tmp/marks-control/log'"

# 14-16: the refill reaches the real kernel: RNDADDENTROPY of at least
# --refill-bits, then RNDRESEEDCRNG, seen by strace.
source=
if "$entropyd" -l 2>/dev/null | awk '$1 == "rdseed" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	source=rdseed
elif "$entropyd" -l 2>/dev/null | awk '$1 == "hwrng" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	source=hwrng
fi
if [ -z "$source" ] || ! command -v strace >/dev/null 2>&1; then
	for i in 1 2 3; do skip "no rdseed or hwrng here, or strace is not installed"; done
else
	# The kernel sink's feeder is under its seccomp filter.
	no_leak_check_under_seccomp
	run_entropyd -f -d -x all -n "$source" -R 86400 --refill-bits 4096 \
	    --control-socket "$tmp/sk" 2>"$tmp/klog" &
	pid=$!
	track $pid
	wait_for 300 grep -q "first feed" "$tmp/klog"
	strace -f -tt -e trace=ioctl -o "$tmp/trace" -p $pid 2>"$tmp/strace.err" &
	spid=$!
	track $spid
	wait_for 50 grep -q "attached" "$tmp/strace.err"
	sleep 0.5
	t0=$(date +%H:%M:%S.%N | cut -c1-15)
	kill -USR2 $pid
	wait_for 300 grep -q "reseeded .* after the change" "$tmp/klog"
	sleep 0.5
	kill -INT $spid
	wait $spid 2>/dev/null
	awk -v t0="$t0" '$2 >= t0' "$tmp/trace" | grep -E 'RNDADDENTROPY|RNDRESEEDCRNG' >"$tmp/after"
	credited=$(sed -n 's/.*RNDADDENTROPY, {entropy_count=\([0-9]*\).*/\1/p' "$tmp/after" |
	    awk '{ n += $1 } END { print n + 0 }')
	check "$source: after the change the kernel is credited $credited bits (--refill-bits 4096)" \
	    test "$credited" -ge 4096
	check "$source: then RNDRESEEDCRNG, the last call, once" sh -c \
	    "test \"\$(tail -n 1 '$tmp/after' | grep -c 'RNDRESEEDCRNG) = 0')\" = 1 &&
	     test \"\$(grep -c RNDRESEEDCRNG '$tmp/after')\" = 1"
	refills=$(metric "$tmp/sk" vmgenid_refills_total)
	seconds=$(metric "$tmp/sk" vmgenid_refill_seconds)
	check "$source: the log gives the time from the change to the reseed; /metrics too ($seconds s)" sh -c \
	    "grep -q 'VM generation change: 4096 fresh bits fed and the kernel.s CRNG reseeded [0-9.]* ms after the change' '$tmp/klog' &&
	     test '$refills' = 1 && test -n '$seconds'"
	show_if_failed "$tmp/klog" "$tmp/after"
	stop $pid
fi

# 17-19: unprivileged users cannot trigger it.
run_entropyd -f -t -x all -n file -O "file:path:$tmp/data" --control-socket "$tmp/s2" \
    2>"$tmp/log2" &
pid=$!
track $pid
wait_for 100 test -S "$tmp/s2"
chmod 755 "$tmp"
cp "$entropyctl" "$tmp/entropyctl"
chmod 755 "$tmp/entropyctl"
setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/entropyctl" -s "$tmp/s2" vmgenid \
    >/dev/null 2>"$tmp/nobody.err"
rc=$?
check "nobody cannot reach the socket (mode 0660): exit 69" test $rc -eq 69
chmod 666 "$tmp/s2"
setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/entropyctl" -s "$tmp/s2" vmgenid \
    >/dev/null 2>"$tmp/nobody.err"
rc=$?
check "nobody on a socket opened to all: 403, exit 77, logged" sh -c \
    "test $rc -eq 77 && grep -q 'only root may say' '$tmp/nobody.err' &&
     grep -q 'POST /vmgenid refused: peer uid 65534 is not root' '$tmp/log2'"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "kill -USR2 $pid" 2>/dev/null
"$entropyctl" -s "$tmp/s2" metrics >"$tmp/m2"
check "nobody cannot signal it; no change happened" sh -c \
    "grep -q '^entropyd_vmgenid_changes_total{trigger=\"signal\"} 0$' '$tmp/m2' &&
     ! grep -q '^entropyd_vmgenid_changes_total{.*} [1-9]' '$tmp/m2' &&
     ! grep -q 'VM generation changed' '$tmp/log2'"
stop $pid

# 20-22: drop-in sources hear of a change through forget() (ABI 1.2); an
# ABI 1.1 plugin without it keeps loading and running.
mkdir -p "$tmp/plugins"
cp "$top_builddir/tests/plugins/.libs/testforget.so" "$top_builddir/tests/plugins/.libs/testold.so" \
    "$tmp/plugins/"
run_entropyd -f -d -t -x all -n testforget -n testold --plugin-dir "$tmp/plugins" \
    --control-socket "$tmp/s3" 2>"$tmp/log3" &
pid=$!
track $pid
wait_for 100 sh -c "grep -q 'testforget: reading' '$tmp/log3' && grep -q 'testold: reading' '$tmp/log3'"
kill -USR2 $pid
wait_for 50 grep -q "testforget: forget called" "$tmp/log3"
check "an ABI 1.2 plugin's forget() is called on a change" grep -q "testforget: forget called" "$tmp/log3"
check "an ABI 1.1 plugin loads (no forget())" grep -q "testold.so: source testold (ABI 1.1) loaded" "$tmp/log3"
wait_for 50 sh -c "\"$entropyctl\" -s '$tmp/s3' -j sources testold | grep -q '\"state\": \"running\"'"
check "both run on after the change" sh -c \
    "\"$entropyctl\" -s '$tmp/s3' -j sources testold | grep -q '\"state\": \"running\"' &&
     \"$entropyctl\" -s '$tmp/s3' -j sources testforget | grep -q '\"state\": \"running\"'"
stop $pid

# 23-42: the generation ID for applications, end to end on this machine,
# with the control trigger (and vmclock's counter, from a file): the real
# kernel sink, whose refill really reseeds this kernel; a supervisor running
# hooks, one of them world-writable; waiters as root and as nobody.
generation_points=20
genfailed() {
	diag_file "$tmp/glog"
	while [ "$tap_n" -lt $((22 + generation_points)) ]; do not_ok "generation: $1"; done
}
# vmclock_page FILE COUNTER: a vmclock structure as /dev/vmclock0 reads
# (little-endian, version 1, a generation counter, no notifications),
# written in place as a hypervisor updates the page: seq_count odd, the
# counter, seq_count even again (the daemon keeps the file open).
vmclock_page() {
	python3 -c 'import os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
page = bytearray(4096)
struct.pack_into("<IIHBBIQQ", page, 0, 0x4b4c4356, 4096, 1, 1, 0, 2, 0, 1 << 8)
if os.fstat(fd).st_size < 4096:
    os.pwrite(fd, page, 0)
seq = struct.unpack("<I", os.pread(fd, 4, 12))[0]
os.pwrite(fd, struct.pack("<I", seq + 1), 12)
os.pwrite(fd, struct.pack("<Q", int(sys.argv[2])), 104)
os.pwrite(fd, struct.pack("<I", seq + 2), 12)' "$1" "$2"
}
gen=$tmp/gen/generation
mkdir -p "$tmp/hooks" "$tmp/gen"
printf '#!/bin/sh\n# What the hook saw: its environment, and the file as it found it.\n%s\n' \
    "echo \"\$ENTROPYD_GENERATION \$ENTROPYD_GENERATION_ID \$ENTROPYD_TRIGGER \$(cat '$gen')\" >>'$tmp/hookrun'" \
    >"$tmp/hooks/10-record"
printf '#!/bin/sh\n: >%s\n' "'$tmp/world-ran'" >"$tmp/hooks/20-world"
chmod 755 "$tmp/hooks/10-record"
chmod 757 "$tmp/hooks/20-world"
mkfifo "$tmp/noise"
(while :; do cat /dev/urandom; done >"$tmp/noise" 2>/dev/null) &
noise=$!
track $noise
vmclock_page "$tmp/vmclock" 41
no_leak_check_under_seccomp
ENTROPYD_VMCLOCK=$tmp/vmclock run_entropyd -f -d -x all -n file -O "file:path:$tmp/noise" \
    -O file:entropy:8 -R 86400 --control-socket "$tmp/sg" --generation-file "$gen" \
    --generation-hooks "$tmp/hooks" 2>"$tmp/glog" &
pid=$!
track $pid
if ! wait_for 300 grep -q "first feed" "$tmp/glog" || ! wait_for 100 test -S "$gen.sock"; then
	genfailed "the daemon did not start"
else
	first=$(cat "$gen")
	"$entropyctl" -g "$gen" -j generation >"$tmp/g0"
	check "at start: a fresh ID in the file, mode 0644, generation 0 (start)" sh -c \
	    "test \"\$(stat -c %a '$gen')\" = 644 && grep -q '\"id\": \"$first\"' '$tmp/g0' &&
	     grep -q '\"generation\": 0' '$tmp/g0' && grep -q '\"trigger\": \"start\"' '$tmp/g0'"
	wait_for 50 grep -q "20-world refused" "$tmp/glog"
	check "the world-writable hook is refused at start already, and reported" sh -c \
	    "grep -q 'generation hook $tmp/hooks/20-world refused: writable by group or others' '$tmp/glog' &&
	     \"$entropyctl\" -s '$tmp/sg' -j health | grep -q '20-world refused: writable by group or others'"
	# Two waiters: root on the generation socket, nobody with a copy of entropyctl.
	chmod 755 "$tmp" "$tmp/gen"
	cp "$entropyctl" "$tmp/entropyctl"
	chmod 755 "$tmp/entropyctl"
	"$entropyctl" -g "$gen" wait-generation >"$tmp/w.root" 2>&1 &
	wroot=$!
	track $wroot
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/entropyctl" -g "$gen" \
	    wait-generation >"$tmp/w.nobody" 2>&1 &
	wnobody=$!
	track $wnobody
	wait_for 100 sh -c "\"$entropyctl\" -s '$tmp/sg' metrics | grep -q '^entropyd_generation_waiters 2'"
	check "both wait in long polls (entropyd_generation_waiters 2)" sh -c \
	    "\"$entropyctl\" -s '$tmp/sg' metrics | grep -q '^entropyd_generation_waiters 2'"
	"$entropyctl" -s "$tmp/sg" vmgenid >/dev/null
	wait_for 300 sh -c "test \"\$(cat '$gen')\" != '$first'"
	wait $wroot
	rc_root=$?
	wait $wnobody
	rc_nobody=$?
	second=$(cat "$gen")
	check "a new ID in the file after the change ($first -> $second)" \
	    test -n "$second" -a "$second" != "$first"
	check "root's wait-generation woke with it (exit $rc_root)" sh -c \
	    "test $rc_root -eq 0 && test \"\$(cat '$tmp/w.root')\" = '$second'"
	check "nobody's wait-generation woke with it too (exit $rc_nobody)" sh -c \
	    "test $rc_nobody -eq 0 && test \"\$(cat '$tmp/w.nobody')\" = '$second'"
	# The order the promise makes: reseed, then the ID, then the hooks.
	check "the kernel was reseeded before the ID was published" \
	    awk "/CRNG reseeded .* after the change/ && !r { r = NR }
	         /generation 1: $second/ && !g { g = NR }
	         END { exit !(r && g && r < g) }" "$tmp/glog"
	wait_for 100 test -s "$tmp/hookrun"
	check "the hook ran after the publish, with the ID in the file, once" \
	    test "$(cat "$tmp/hookrun")" = "1 $second control $second"
	"$entropyctl" -g "$gen" -j generation >"$tmp/g1"
	reseed=$(sed -n 's/.*"reseed_seconds": \([0-9.e-]*\).*/\1/p' "$tmp/g1")
	check "/generation: generation 1, control, reseeded, reseed_seconds $reseed" sh -c \
	    "grep -q '\"generation\": 1' '$tmp/g1' && grep -q '\"trigger\": \"control\"' '$tmp/g1' &&
	     grep -q '\"reseeded\": true' '$tmp/g1' && test -n '$reseed'"
	check "the world-writable hook never ran" test ! -e "$tmp/world-ran"
	"$entropyctl" -s "$tmp/sg" metrics >"$tmp/gm1"
	"$entropyctl" -s "$tmp/sg" -j health >"$tmp/gh1"
	check "/metrics: the hook ok, the world-writable one refused, the reseed time" sh -c \
	    "grep -q '^entropyd_generation_hook_runs_total{hook=\"10-record\",result=\"ok\"} 1' '$tmp/gm1' &&
	     grep -q '^entropyd_generation_hook_runs_total{hook=\"20-world\",result=\"refused\"} 1' '$tmp/gm1' &&
	     grep -q '^entropyd_generation_reseed_seconds [0-9]' '$tmp/gm1'"
	check "/health: generation:hooks warns, naming the refused hook" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["checks"]["generation:hooks"][0]
sys.exit(not (c["status"] == "warn" and "20-world refused" in c["output"]))' "$tmp/gh1"
	check "the supervisor logged the refusal at the change too" \
	    test "$(grep -c "generation hook $tmp/hooks/20-world refused" "$tmp/glog")" -ge 2
	# vmclock's counter moves, as a hypervisor's restore moves it.
	check "vmclock's counter is watched (from the file named as the device)" \
	    grep -q "vmclock: watching the VM generation counter of $tmp/vmclock (41)" "$tmp/glog"
	vmclock_page "$tmp/vmclock" 42
	wait_for 300 grep -q "generation 2:" "$tmp/glog"
	third=$(cat "$gen")
	"$entropyctl" -g "$gen" -j generation >"$tmp/g2"
	check "the counter moving is a change: generation 2 (vmclock), another ID" sh -c \
	    "grep -q 'VM generation changed (vmclock)' '$tmp/glog' &&
	     grep -q '\"trigger\": \"vmclock\"' '$tmp/g2' && test '$third' != '$second' &&
	     grep -q '\"generation\": 2' '$tmp/g2'"
	wait_for 100 sh -c "test \"\$(wc -l <'$tmp/hookrun')\" -ge 2"
	check "the hook ran once per change" sh -c \
	    "test \"\$(wc -l <'$tmp/hookrun')\" = 2 &&
	     tail -n 1 '$tmp/hookrun' | grep -qx '2 $third vmclock $third'"
	"$entropyctl" -g "$gen" -t 1 wait-generation >/dev/null 2>&1
	rc=$?
	check "wait-generation -t 1 with no change: exit 1 ($rc)" test $rc -eq 1
	"$entropyctl" -g "$gen" -t 10 --after "$second" wait-generation >"$tmp/w.after"
	check "wait-generation --after an older ID: at once, the current one" \
	    test "$(cat "$tmp/w.after")" = "$third"
	stop $pid
	"$entropyctl" -g "$gen" generation >/dev/null 2>&1
	rc=$?
	check "the file goes with the daemon; then entropyctl generation exits 69 ($rc)" sh -c \
	    "test ! -e '$gen' && test $rc -eq 69"
	# No privilege split (-t): no supervisor, no hooks; the control trigger still changes the ID.
	rm -f "$tmp/hookrun"
	run_entropyd -f -t -x all -n file -O "file:path:$tmp/data" --control-socket "$tmp/st" \
	    --generation-file "$gen" --generation-hooks "$tmp/hooks" 2>"$tmp/tlog" &
	pid=$!
	track $pid
	wait_for 100 test -S "$gen.sock"
	before=$(cat "$gen" 2>/dev/null)
	"$entropyctl" -s "$tmp/st" vmgenid >/dev/null
	wait_for 100 sh -c "test \"\$(cat '$gen')\" != '$before'"
	"$entropyctl" -s "$tmp/st" -j health >"$tmp/th"
	check "without the split: POST /vmgenid changes the ID at once (not reseeded), no hook runs" sh -c \
	    "test \"\$(cat '$gen')\" != '$before' && test ! -e '$tmp/hookrun' &&
	     \"$entropyctl\" -g '$gen' -j generation | grep -q '\"reseeded\": false' &&
	     grep -q 'not run: no supervisor' '$tmp/th'"
	stop $pid
fi
stop $noise
show_if_failed "$tmp/glog"

# 43-48: the listener, in a private network namespace, where nothing from
# the rest of the machine (or from this test) crosses.
if ! unshare -nm true 2>/dev/null; then
	for i in 1 2 3 4 5 6; do skip "unshare -nm is not permitted here"; done
	finish
fi
cat >"$tmp/forge.py" <<'EOF'
# Send one uevent to the kernel's group from this process: as root may.
import socket, sys
msg = b"\0".join([b"change@/devices/platform/VMGENCTR:00", b"ACTION=change",
    b"DEVPATH=/devices/platform/VMGENCTR:00", b"SUBSYSTEM=platform", b"NEW_VMGENID=1",
    b"DRIVER=vmgenid", b"SEQNUM=1", b""])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
s.bind((0, 0))
s.sendto(msg, (0, 1))
EOF
cat >"$tmp/listen.py" <<'EOF'
# Count the kernel's uevents reaching this namespace for a while.
import socket, sys, time
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
s.bind((0, 1))
s.settimeout(0.5)
open(sys.argv[2], "w").close()
n, end = 0, time.time() + float(sys.argv[1])
while time.time() < end:
    try:
        data, (pid, groups) = s.recvfrom(8192)
        n += pid == 0 and groups == 1
    except socket.timeout:
        pass
print(n)
EOF
cat >"$tmp/netns.sh" <<EOF
# Runs in the private namespaces: the daemon, then uevents, then its counters.
# No generation ID device in its sysfs: it does not read the kernel log,
# whose records (from anything else on this machine) would wake it.
mount -t sysfs sysfs /sys || exit 1
ENTROPYD_SYSFS_ROOT="$tmp/nosys" "$entropyd" -f -d -x all -n file -O "file:path:$tmp/data" \
    -o "$tmp/ns.out" --control-socket "$tmp/s4" 2>"$tmp/log4" &
pid=\$!
i=0; while ! grep -q "source drained" "$tmp/log4" && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
sleep 1
w0=\$(cat /proc/\$pid/task/*/status | awk '/ctxt_switches:/ { n += \$2 } END { print n }')
python3 "$tmp/listen.py" 10 "$tmp/listening" >"$tmp/seen" &
lpid=\$!
i=0; while [ ! -e "$tmp/listening" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
i=0
while [ \$i -lt 10 ]; do
	echo change >/sys/class/net/lo/uevent
	echo "change 2a3f4b5c-1111-4222-8333-94445555666\$i NEWVMGENID=1" >/sys/class/net/lo/uevent
	i=\$((i + 1))
done
wait \$lpid
w1=\$(cat /proc/\$pid/task/*/status | awk '/ctxt_switches:/ { n += \$2 } END { print n }')
echo "wakeups=\$((w1 - w0))" >"$tmp/ns.result"
"$entropyctl" -s "$tmp/s4" metrics >"$tmp/ns.metrics.1"
python3 "$tmp/forge.py"
i=0; while ! grep -q "ignored a uevent" "$tmp/log4" && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
"$entropyctl" -s "$tmp/s4" metrics >"$tmp/ns.metrics.2"
kill \$pid
wait \$pid
EOF
unshare -nm sh "$tmp/netns.sh" >/dev/null 2>"$tmp/netns.err"
seen=$(cat "$tmp/seen" 2>/dev/null)
check "kernel uevents reach the namespace ($seen of 20 seen by a listener of our own)" \
    test "${seen:-0}" -ge 20
check "synthetic kernel uevents (port 0, no NEW_VMGENID=1) did not wake the daemon" \
    grep -qx "wakeups=0" "$tmp/ns.result"
check "and changed nothing" sh -c \
    "grep -q '^entropyd_vmgenid_changes_total{trigger=\"uevent\"} 0' '$tmp/ns.metrics.1' &&
     grep -q '^entropyd_vmgenid_ignored_total 0' '$tmp/ns.metrics.1'"
check "a root process's uevent with NEW_VMGENID=1 is refused: not the kernel's" \
    grep -q "vmgenid: ignored a uevent from port [1-9][0-9]*: sent by a process, not the kernel" "$tmp/log4"
check "it is counted, and nothing changed" sh -c \
    "grep -q '^entropyd_vmgenid_ignored_total 1' '$tmp/ns.metrics.2' &&
     grep -q '^entropyd_vmgenid_changes_total{trigger=\"uevent\"} 0' '$tmp/ns.metrics.2' &&
     grep -q '^entropyd_vmgenid_discarded_bytes_total 0' '$tmp/ns.metrics.2' &&
     ! grep -q 'VM generation changed' '$tmp/log4'"
check "the daemon in the namespace ran to the end" grep -q "Terminated: exiting" "$tmp/log4"
show_if_failed "$tmp/log4" "$tmp/netns.err"
finish
