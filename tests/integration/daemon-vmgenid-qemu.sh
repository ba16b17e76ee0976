#!/bin/sh
# A genuine VM generation change, end to end. entropyd runs in a QEMU guest
# with a vmgenid device; the test saves the running guest (a snapshot) and
# restores it in a new QEMU with another generation ID, as a hypervisor
# restoring a snapshot or starting a clone does. The guest's own kernel
# then reseeds and says so: in its log, from the kernel facility (Linux
# 5.18 and later), and with a NEW_VMGENID=1 uevent from port 0 where it
# sends one (Linux 6.8 only; Debian's kernels do not). Nothing is faked
# (see daemon-vmgenid.sh for why nothing on the host can send either).
# A notice a process writes into the guest's kernel log is refused first.
# In the guest run two daemons, restored with the rest of its memory:
#   - one feeding the guest kernel for real (RNDADDENTROPY, RNDRESEEDCRNG):
#     the bytes it held are discarded, a refill is fed and reseeded; then it
#     publishes a new generation ID, which an unprivileged process blocked
#     in entropyctl wait-generation since before the snapshot receives, and
#     its supervisor runs the generation hooks (one of them world-writable,
#     which must never run);
#   - the "marks" scenario (vmgenid-marks.sh): every byte it held is
#     known, none reaches its sink after the change (vmgenid-marks.py).
# The same snapshot is restored twice, as two clones: each gets a
# generation ID of its own.
# Needs qemu-system-x86_64, a static busybox and a kernel with
# CONFIG_VMGENID=y: $ENTROPYD_TEST_KERNEL, else the newest /boot/vmlinuz-*
# whose config says so (Debian's linux-image-amd64 does). QEMU's TCG runs
# it anywhere; ENTROPYD_TEST_QEMU_ACCEL=kvm uses KVM where nested guests
# work.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
qemu=$(command -v qemu-system-x86_64) || skip_all "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox=$(command -v busybox) || skip_all "busybox is not installed (apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && skip_all "$busybox is not static (apt-get install busybox-static)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
command -v ldd >/dev/null 2>&1 || skip_all "ldd is not installed"
[ "$(uname -m)" = x86_64 ] || skip_all "the guest is x86-64"

kernel=${ENTROPYD_TEST_KERNEL:-}
if [ -z "$kernel" ]; then
	for k in $(ls -t /boot/vmlinuz-* 2>/dev/null); do
		config=/boot/config-${k#/boot/vmlinuz-}
		if [ -r "$k" ] && { [ ! -e "$config" ] || grep -qx 'CONFIG_VMGENID=y' "$config"; }; then
			kernel=$k
			break
		fi
	done
fi
[ -n "$kernel" ] && [ -r "$kernel" ] ||
    skip_all "no readable kernel with CONFIG_VMGENID=y (set ENTROPYD_TEST_KERNEL, or install linux-image-amd64)"
plan 20

# The guest's root: busybox, the two programs and their libraries, the
# scenario, its data and the script that runs as init.
root=$tmp/root
mkdir -p "$root/bin" "$root/data"
cp "$busybox" "$root/bin/busybox"
cp "$entropyd" "$entropyctl" "$root/bin/"
for lib in $({ ldd "$entropyd"; ldd "$entropyctl"; } |
    awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# libseccomp is loaded on first use (the worker's allow-list), not linked:
# the guest has it as an installed package would.
seclib=$(ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libseccomp\.so\.2 .* => //p' | head -n 1)
if [ -n "$seclib" ]; then
	mkdir -p "$root$(dirname "$seclib")"
	cp -L "$seclib" "$root$seclib"
fi
cp "$top_srcdir/tests/integration/vmgenid-marks.sh" "$root/data/"
# The generation hooks: one records what it saw (its environment, the file,
# and how often the guest kernel had logged its reseed for a VM fork: from
# the kernel facility, <0> to <7>, not the forgery below); one is
# world-writable and must never run. A user for the unprivileged waiter.
mkdir -p "$root/etc/entropyd/generation.d"
cat >"$root/etc/entropyd/generation.d/10-record" <<'EOF'
#!/bin/sh
echo "$ENTROPYD_GENERATION $ENTROPYD_GENERATION_ID $ENTROPYD_TRIGGER $(cat /run/entropyd/generation) $(dmesg -r | grep -c '^<[0-7]>.*crng reseeded due to virtual machine fork')" >>/tmp/hookrun
EOF
printf '#!/bin/sh\n: >/tmp/world-ran\n' >"$root/etc/entropyd/generation.d/20-world"
chmod 755 "$root/etc/entropyd/generation.d/10-record"
chmod 757 "$root/etc/entropyd/generation.d/20-world"
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
chmod 755 "$root"
head -c 250004 /dev/urandom >"$root/data/marks.data"
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /run /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /tmp
echo "GUEST BOOTED"
say() { echo "GUEST $*"; }
until_log() { i=0; while ! grep -q "$2" "$1" && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done; grep -q "$2" "$1"; }
num() { sed -n "s/.*\"$1\": \([0-9][0-9]*\).*/\1/p"; }

# The kernel's daemon: RDSEED where the CPU has it, else a credited FIFO
# fed from the guest's own /dev/urandom (a stand-in; RDRAND's 1/64 bit per
# byte would make an emulated refill slow).
source=
entropyd -l -x all -n rdseed 2>/dev/null | grep -q "^rdseed .* usable:" && source=rdseed
if [ -z "$source" ]; then
	mkfifo /tmp/noise
	(while :; do cat /dev/urandom; done >/tmp/noise) &
	args="-x all -n file -O file:path:/tmp/noise -O file:entropy:8"
	source=file
else
	args="-x all -n $source"
fi
say "SOURCE $source"
entropyd -f -d $args -R 86400 --control-socket /run/k.sock \
    --generation-file /run/entropyd/generation --generation-hooks /etc/entropyd/generation.d \
    2>/tmp/klog &
kpid=$!
until_log /tmp/klog "first feed" 600 || say "NO FIRST FEED"
grep "clone detection" /tmp/klog | sed 's/^/GUEST K /'
say "GEN0 $(cat /run/entropyd/generation)"

# The marks scenario.
marks_dir=/tmp/marks marks_entropyd=entropyd marks_entropyctl=entropyctl
marks_data=/data/marks.data
mkdir -p $marks_dir
. /data/vmgenid-marks.sh
marks_start --generation-file $marks_dir/generation || say "MARKS DID NOT SETTLE"
# A process writes the kernel's notice into the log: it gets the user
# facility, and both daemons must refuse it.
echo "<5>random: crng reseeded due to virtual machine fork" >/dev/kmsg
until_log /tmp/klog "ignored a VM fork notice" 100
until_log $marks_dir/log "ignored a VM fork notice" 100
say "FORGED $(grep -c 'ignored a VM fork notice' /tmp/klog $marks_dir/log | awk -F: '{ n += $2 } END { print n }') $(grep -c 'VM generation changed' /tmp/klog $marks_dir/log | awk -F: '{ n += $2 } END { print n }')"
marks_before
# The kernel's daemon holds its reserves' bytes (its sink holds none).
sleep 1
held=$(entropyctl -s /run/k.sock -j sources | num held_bytes | awk '{ n += $1 } END { print n + 0 }')
say "HELD $held"
# An unprivileged process waits for the next generation, across the snapshot.
su nobody -s /bin/sh -c 'entropyctl -g /run/entropyd/generation wait-generation >/tmp/w.nobody 2>&1; echo $? >/tmp/w.nobody.rc' &
i=0
while ! entropyctl -s /run/k.sock metrics | grep -q '^entropyd_generation_waiters 1' && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
say "WAITING $(entropyctl -s /run/k.sock metrics | sed -n 's/^entropyd_generation_waiters //p')"
say "READY"

# Restored from here on, with another generation ID.
until_log /tmp/klog "reseeded .* after the change" 1200 || say "NO REFILL"
until_log /tmp/klog "generation 1:" 600 || say "NO GENERATION"
i=0; while [ ! -e /tmp/w.nobody.rc ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
i=0; while [ ! -s /tmp/hookrun ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
say "GEN1 $(cat /run/entropyd/generation)"
say "WAITED $(cat /tmp/w.nobody.rc 2>/dev/null) $(cat /tmp/w.nobody 2>/dev/null)"
say "HOOKRUN $(cat /tmp/hookrun 2>/dev/null)"
say "WORLD $(if [ -e /tmp/world-ran ]; then echo ran; else echo never; fi)"
entropyctl -g /run/entropyd/generation -j generation | sed 's/^/GUEST G /'
marks_after || say "MARKS DID NOT DRAIN"
entropyctl -s /run/k.sock metrics | sed -n -E 's/^(entropyd_(vmgenid|generation)[a-z_]*)/GUEST METRIC \1/p'
kill $kpid
wait $kpid
say "MARKS BEFORE"; sed 's/^/GUEST M /' $marks_dir/before
say "MARKS AFTER"; sed 's/^/GUEST M /' $marks_dir/after
say "KLOG"; sed 's/^/GUEST K /' /tmp/klog
say "MLOG"; sed 's/^/GUEST L /' $marks_dir/log
say "OUT $(wc -c <$marks_dir/out.bin)"
base64 $marks_dir/out.bin | sed 's/^/GUEST B /'
say "DONE"
poweroff -f
EOF
chmod 755 "$root/init"
# Root's files, whoever builds it: the hooks must be root's to run.
(cd "$root" && find . | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$tmp/initrd.gz"

# qmp COMMAND-JSON...: send commands to a QEMU's monitor socket, print the returns.
cat >"$tmp/qmp.py" <<'EOF'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
for _ in range(100):
    try:
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.1)
f = s.makefile("rw")
f.readline()
def cmd(c):
    f.write(json.dumps(c) + "\n")
    f.flush()
    while True:
        reply = json.loads(f.readline())
        if "return" in reply or "error" in reply:
            return reply
cmd({"execute": "qmp_capabilities"})
for arg in sys.argv[2:]:
    c = json.loads(arg)
    if c["execute"] == "wait-migration":
        for _ in range(600):
            r = cmd({"execute": "query-migrate"})["return"].get("status")
            if r in ("completed", "failed"):
                break
            time.sleep(0.1)
        print(json.dumps({"migration": r}))
    elif c["execute"] == "wait-status":
        for _ in range(600):
            r = cmd({"execute": "query-status"})["return"]["status"]
            if r == c["arguments"]["status"]:
                break
            time.sleep(0.1)
        print(json.dumps({"status": r}))
    else:
        print(json.dumps(cmd(c)))
EOF
accel=${ENTROPYD_TEST_QEMU_ACCEL:-tcg}
cpu=max
[ "$accel" = kvm ] && cpu=host
# Two sanitized daemons need more room than two plain ones.
mem=256
if sanitized; then mem=768; fi
# qemu_run NAME GUID [ARGS]: a guest in the background, console in $tmp/NAME.console.
# Emulation takes a whole CPU: at a low priority, so tests run alongside
# keep theirs.
qemu_run() {
	name=$1 guid=$2
	shift 2
	nice -n 10 "$qemu" -accel "$accel" -cpu $cpu -m $mem -smp 1 -display none -monitor none -net none \
	    -serial "file:$tmp/$name.console" -no-reboot -kernel "$kernel" -initrd "$tmp/initrd.gz" \
	    -append "console=ttyS0 panic=-1 quiet no_timer_check" -device "vmgenid,guid=$guid,id=vmgenid0" \
	    -qmp "unix:$tmp/$name.qmp,server=on,wait=off" "$@" 2>"$tmp/$name.err" &
	qpid=$!
	track $qpid
}
console_has() { grep -q "$2" "$tmp/$1.console" 2>/dev/null; }

qemu_run first 11111111-2222-4333-8444-555555555555
first=$qpid
wait_for 3000 console_has first "GUEST READY"
if ! console_has first "GUEST READY"; then
	diag_file "$tmp/first.console" "$tmp/first.err"
	stop $first
	# Every point needs the guest: each fails, none is skipped.
	while [ "$tap_n" -lt 20 ]; do
		check "the guest came up within 300 s (accelerator $accel)" false
	done
	exit 1
fi
# The serial console ends lines with CR LF.
tr -d '\r' <"$tmp/first.console" >"$tmp/first.txt"
check "the guest's daemon is armed: the vmgenid driver is bound to the device" \
    grep -q "clone detection: armed: VM generation ID device QEMUVGID:00" "$tmp/first.txt"
check "a notice written into the kernel log by a process is refused by both daemons" \
    grep -qx "GUEST FORGED 2 0" "$tmp/first.txt"
# The snapshot: stop the guest, save its state, end this QEMU.
python3 "$tmp/qmp.py" "$tmp/first.qmp" '{"execute": "stop"}' \
    '{"execute": "migrate", "arguments": {"uri": "exec:cat >'"$tmp"'/state"}}' \
    '{"execute": "wait-migration"}' '{"execute": "quit"}' >"$tmp/save.log" 2>&1
wait $first 2>/dev/null
check "the guest is saved" grep -q '"migration": "completed"' "$tmp/save.log"
# The restore, with another generation ID.
qemu_run second 66666666-7777-4888-9999-aaaaaaaaaaaa -incoming "exec:cat $tmp/state"
second=$qpid
python3 "$tmp/qmp.py" "$tmp/second.qmp" '{"execute": "wait-status", "arguments": {"status": "paused"}}' \
    '{"execute": "cont"}' >"$tmp/restore.log" 2>&1
wait_for 3000 console_has second "GUEST DONE"
check "the restored guest resumes and finishes" console_has second "GUEST DONE"
stop $second
tr -d '\r' <"$tmp/second.console" >"$tmp/second.txt"
sed -n 's/^GUEST K //p' "$tmp/second.txt" >"$tmp/klog"
sed -n 's/^GUEST L //p' "$tmp/second.txt" >"$tmp/mlog"
sed -n 's/^GUEST M //p' "$tmp/second.txt" | sed -n '/^read=/,/^written=/p' >"$tmp/before"
sed -n "s/^GUEST M \(discarded\|failed_end\)=/\1=/p" "$tmp/second.txt" >"$tmp/after"
sed -n 's/^GUEST B //p' "$tmp/second.txt" | base64 -d >"$tmp/out.bin" 2>/dev/null
held=$(sed -n 's/^GUEST HELD //p' "$tmp/first.txt")
discarded=$(sed -n 's/.*VM generation changed ([a-z]*): discarded \([0-9]*\) bytes.*/\1/p' "$tmp/klog" |
    head -n 1)
how=$(sed -n 's/.*VM generation changed (\([a-z]*\)).*/\1/p' "$tmp/klog" | sort -u | tr '\n' ' ' | sed 's/ $//')
check "the guest kernel's report of the change reaches the daemon (by: $how)" sh -c \
    "grep -q 'VM generation changed (kmsg)' '$tmp/klog' || grep -q 'VM generation changed (uevent)' '$tmp/klog'"
check "it discards what it held ($discarded bytes discarded, $held held)" sh -c \
    "test -n '$held' && test '$discarded' = '$held' && test '$held' -gt 0"
check "a refill of 2048 bits is fed and the guest kernel reseeded (real ioctls)" \
    grep -q "VM generation change: 2048 fresh bits fed and the kernel's CRNG reseeded [0-9.]* ms after the change" "$tmp/klog"
kmsg=$(sed -n 's/^GUEST METRIC entropyd_vmgenid_changes_total{trigger="kmsg"} //p' "$tmp/second.txt")
uevent=$(sed -n 's/^GUEST METRIC entropyd_vmgenid_changes_total{trigger="uevent"} //p' "$tmp/second.txt")
check "/metrics: the change by kernel log ($kmsg) or uevent ($uevent), a refill, the forgery ignored" sh -c \
    "test \$(( ${kmsg:-0} + ${uevent:-0} )) -ge 1 &&
     grep -q 'GUEST METRIC entropyd_vmgenid_refills_total [1-9]' '$tmp/second.txt' &&
     grep -q 'GUEST METRIC entropyd_vmgenid_ignored_total 1' '$tmp/second.txt'"
python3 "$top_srcdir/tests/integration/vmgenid-marks.py" \
    "$root/data/marks.data" "$tmp/out.bin" \
    "$tmp/before" "$tmp/after" >"$tmp/marks.check" 2>&1
checker_points "$tmp/marks.check" 4 marks
check "the marks daemon saw the same change" grep -q "VM generation changed (kmsg\|VM generation changed (uevent" "$tmp/mlog"
show_if_failed "$tmp/second.txt" "$tmp/restore.log"

# The generation for applications, as the restored guest saw it.
gen0=$(sed -n 's/^GUEST GEN0 //p' "$tmp/first.txt")
gen1=$(sed -n 's/^GUEST GEN1 //p' "$tmp/second.txt")
check "an unprivileged process blocked in wait-generation before the snapshot wakes after the restore with the new ID" sh -c \
    "grep -qx 'GUEST WAITING 1' '$tmp/first.txt' && test -n '$gen1' &&
     grep -qx 'GUEST WAITED 0 $gen1' '$tmp/second.txt'"
check "the generation file's ID changed ($gen0 -> $gen1)" sh -c \
    "test -n '$gen0' && test -n '$gen1' && test '$gen0' != '$gen1'"
hookrun=$(sed -n 's/^GUEST HOOKRUN //p' "$tmp/second.txt")
check "the hook ran after the kernel's reseed notice and the daemon's reseed, with the new ID in the file ($hookrun)" sh -c \
    "echo '$hookrun' | grep -Eq '^1 $gen1 (kmsg|uevent) $gen1 [1-9][0-9]*$' &&
     awk '/CRNG reseeded .* after the change/ && !r { r = NR } /generation 1: $gen1/ && !g { g = NR }
          END { exit !(r && g && r < g) }' '$tmp/klog'"
check "the world-writable hook never ran, and is reported" sh -c \
    "grep -qx 'GUEST WORLD never' '$tmp/second.txt' && grep -q '20-world refused' '$tmp/klog' &&
     grep -q 'GUEST METRIC entropyd_generation_hook_runs_total{hook=\"20-world\",result=\"refused\"} 1' '$tmp/second.txt'"
reseed=$(sed -n 's/^GUEST G *"reseed_seconds": \([0-9.e-]*\),*$/\1/p' "$tmp/second.txt")
diag "from the restore to the new ID in the guest's file: $reseed s (reseed_seconds, TCG)"
check "reseed_seconds is reported: $reseed s from the change to the new ID" sh -c \
    "test -n '$reseed' && grep -q 'GUEST METRIC entropyd_generation_reseed_seconds [0-9]' '$tmp/second.txt'"
# The same snapshot restored again: a second clone.
qemu_run third 99999999-aaaa-4bbb-8ccc-dddddddddddd -incoming "exec:cat $tmp/state"
third=$qpid
python3 "$tmp/qmp.py" "$tmp/third.qmp" '{"execute": "wait-status", "arguments": {"status": "paused"}}' \
    '{"execute": "cont"}' >"$tmp/restore3.log" 2>&1
wait_for 3000 console_has third "GUEST DONE"
check "the same snapshot, restored again as another clone, resumes and finishes" console_has third "GUEST DONE"
stop $third
tr -d '\r' <"$tmp/third.console" >"$tmp/third.txt"
clone=$(sed -n 's/^GUEST GEN1 //p' "$tmp/third.txt")
check "two clones of one snapshot get two different IDs ($gen1, $clone), neither the snapshot's" sh -c \
    "test -n '$gen1' && test -n '$clone' && test '$clone' != '$gen1' && test '$clone' != '$gen0'"
show_if_failed "$tmp/third.txt"
finish
