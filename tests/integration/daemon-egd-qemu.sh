#!/bin/sh
# SPDX-License-Identifier: MIT
# The EGD broker with real guests: two QEMU guests (TCG, a busybox
# initramfs, a distribution kernel) each with a virtio-rng device whose
# backend is rng-egd on a socket of its own:
#   -chardev socket,id=c0,path=SOCK,reconnect=1 -object rng-egd,id=r0,chardev=c0
#   -device virtio-rng-pci,rng=r0
# Each guest reads /dev/hwrng and reports what it got on its console. The
# two get bytes with no 16-byte window in common (checked here, on the
# host), each at the configured rate within 10% (the daemon's own count,
# GET /clients, over a window); stopping one leaves the other at its rate;
# after the daemon restarts, QEMU reconnects and the guest reads again.
# Needs qemu-system-x86_64, a static busybox and a kernel with virtio-rng
# (built in, or as a module beside it): $ENTROPYD_TEST_KERNEL (a vmlinuz
# whose modules are in ../lib/modules/VERSION, as a kernel package
# unpacked with dpkg-deb -x leaves them), else the newest /boot/vmlinuz-*.
# QEMU's TCG runs it anywhere; ENTROPYD_TEST_QEMU_ACCEL=kvm uses KVM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
qemu=$(command -v qemu-system-x86_64) || skip_all "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox=$(command -v busybox) || skip_all "busybox is not installed (apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && skip_all "$busybox is not static (apt-get install busybox-static)"
[ "$(uname -m)" = x86_64 ] || skip_all "the guest is x86-64"
kernel=${ENTROPYD_TEST_KERNEL:-$(ls -t /boot/vmlinuz-* 2>/dev/null | head -n 1)}
[ -n "$kernel" ] && [ -r "$kernel" ] ||
    skip_all "no readable kernel (set ENTROPYD_TEST_KERNEL, or install linux-image-amd64)"
version=${kernel##*/vmlinuz-}
base=${kernel%/boot/vmlinuz-*}
[ "$base" = "$kernel" ] && base=$(dirname "$(dirname "$kernel")")
moddir=$base/lib/modules/$version
config=$base/boot/config-$version

# The modules virtio-rng needs, dependencies first, into the guest's /lib.
root=$tmp/root
mkdir -p "$root/bin" "$root/lib"
# modfile NAME: the module's file (its name or its name with '-' for '_').
modfile() {
	find "$moddir" \( -name "$1.ko*" -o -name "$(echo "$1" | tr _ -).ko*" \) 2>/dev/null | head -n 1
}
# depends NAME: the modules NAME's file says it needs.
depends() {
	f=$(modfile "$1")
	case $f in
	*.ko) tr '\0' '\n' <"$f" ;;
	*.ko.xz) xz -dc "$f" | tr '\0' '\n' ;;
	*.ko.zst) zstd -dcq "$f" | tr '\0' '\n' ;;
	esac | sed -n 's/^depends=//p' | tr , ' '
}
if grep -qx 'CONFIG_HW_RANDOM_VIRTIO=y' "$config" 2>/dev/null; then
	order=""
else
	[ -n "$(modfile virtio_rng)" ] ||
	    skip_all "$kernel: no virtio-rng built in or in $moddir"
	need="virtio_pci virtio_rng" all=""
	while [ -n "$need" ]; do
		set -- $need
		m=$1
		shift
		need=$*
		case " $all " in *" $m "*) continue ;; esac
		[ -n "$(modfile "$m")" ] || continue # built in
		all="$all $m"
		need="$need $(depends "$m")"
	done
	# A module after what it depends on.
	order=""
	while [ "$(echo $order | wc -w)" -lt "$(echo $all | wc -w)" ]; do
		for m in $all; do
			case " $order " in *" $m "*) continue ;; esac
			ready=1
			for d in $(depends "$m"); do
				case " $all " in *" $d "*) ;; *) continue ;; esac
				case " $order " in *" $d "*) ;; *) ready=0 ;; esac
			done
			[ $ready = 1 ] && order="$order $m"
		done
	done
	for m in $order; do
		f=$(modfile "$m")
		case $f in
		*.ko) cp "$f" "$root/lib/$m.ko" ;;
		*.ko.xz) xz -dc "$f" >"$root/lib/$m.ko" ;;
		*.ko.zst) zstd -dcq "$f" >"$root/lib/$m.ko" ;;
		esac || skip_all "cannot unpack $f"
	done
fi
echo "$order" >"$root/lib/order"
plan 8

cp "$busybox" "$root/bin/busybox"
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /tmp
for m in $(cat /lib/order); do insmod "/lib/$m.ko"; done
i=0
while [ ! -c /dev/hwrng ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "GUEST RNG $(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)"
head -c 8192 /dev/hwrng >/tmp/first.bin
echo "GUEST FIRST $(wc -c </tmp/first.bin)"
base64 /tmp/first.bin | sed 's/^/GUEST B /'
echo "GUEST FIRST END"
# Then read on, saying so after every 2 KiB.
n=0
while :; do
	head -c 2048 /dev/hwrng >/dev/null
	n=$((n + 2048))
	echo "GUEST READ $n"
done
EOF
chmod 755 "$root/init"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/initrd.gz"

rate=2048
accel=${ENTROPYD_TEST_QEMU_ACCEL:-tcg}
cpu=max
[ "$accel" = kvm ] && cpu=host
# guest NAME: a guest in the background on egd socket NAME, console in
# $tmp/NAME.console, its PID in $qpid. Emulation takes a whole CPU: at a
# low priority, so tests run alongside keep theirs.
guest() {
	nice -n 10 "$qemu" -accel "$accel" -cpu $cpu -m 128 -smp 1 -display none -monitor none \
	    -net none -serial "file:$tmp/$1.console" -no-reboot -kernel "$kernel" \
	    -initrd "$tmp/initrd.gz" -append "console=ttyS0 panic=-1 quiet" \
	    -chardev "socket,id=c0,path=$tmp/egd/$1.sock,reconnect=1" \
	    -object rng-egd,id=r0,chardev=c0 -device virtio-rng-pci,rng=r0 2>"$tmp/$1.err" &
	qpid=$!
	track $qpid
}
console_has() { grep -q "$2" "$tmp/$1.console" 2>/dev/null; }
# reads NAME: how many "GUEST READ" lines guest NAME has printed.
reads() {
	n=$(grep -c "GUEST READ" "$tmp/$1.console" 2>/dev/null)
	echo "${n:-0}"
}
# read_more NAME N: whether guest NAME has printed more than N of them.
read_more() { [ "$(reads "$1")" -gt "$2" ]; }
# served NAME: the bytes the daemon has served client NAME (0 when not connected).
served() {
	ucurl "$tmp/s" /clients | json "sum(c['bytes_served'] for c in d['clients'] if c['name'] == '$1')"
}
# served_more NAME N: whether the daemon has served client NAME more than N bytes.
served_more() { [ "$(served "$1")" -gt "$2" ] 2>/dev/null; }
# connected N: whether N EGD clients are connected.
connected() { [ "$(ucurl "$tmp/s" /clients | json 'd["connected"]')" = "$1" ]; }
now() { date +%s.%N; }
# rates NAME...: each guest's rate over a window of 15 s, as the daemon
# counted what it served: "NAME BYTES/S" lines into $tmp/rates.
rates() {
	: >"$tmp/rates.0"
	t0=$(now)
	for g in "$@"; do echo "$g $(served "$g")" >>"$tmp/rates.0"; done
	sleep 15
	t1=$(now)
	: >"$tmp/rates"
	for g in "$@"; do
		echo "$g $(served "$g") $(sed -n "s/^$g //p" "$tmp/rates.0") $t0 $t1" |
		    awk '{ printf "%s %.0f\n", $1, ($2 - $3) / ($5 - $4) }' >>"$tmp/rates"
	done
}
# within NAME: whether NAME's rate is within 10% of the configured one.
within() {
	awk -v g="$1" -v r=$rate '$1 == g { ok = $2 >= 0.9 * r && $2 <= 1.1 * r } END { exit !ok }' \
	    "$tmp/rates"
}

feed_random "$tmp/in"
mkdir -p "$tmp/egd"
start_daemon "$tmp/s" "$tmp/log" "$tmp/in" -O file:entropy:8 --egd-rate $rate \
    --egd-socket "g1=$tmp/egd/g1.sock" --egd-socket "g2=$tmp/egd/g2.sock"
wait_for 100 test -S "$tmp/egd/g2.sock"
guest g1
g1=$qpid
guest g2
g2=$qpid
wait_for 3000 sh -c "grep -q 'GUEST FIRST END' '$tmp/g1.console' && grep -q 'GUEST FIRST END' '$tmp/g2.console'"
for g in g1 g2; do
	tr -d '\r' <"$tmp/$g.console" | sed -n 's/^GUEST B //p' | base64 -d >"$tmp/$g.first" 2>/dev/null
done
check "both guests came up with virtio-rng as their hwrng and read 8192 bytes from /dev/hwrng (accelerator $accel)" \
    sh -c "test \"\$(wc -c <'$tmp/g1.first')\" = 8192 && test \"\$(wc -c <'$tmp/g2.first')\" = 8192 &&
     grep -q 'GUEST RNG virtio_rng' '$tmp/g1.console' && grep -q 'GUEST RNG virtio_rng' '$tmp/g2.console'"
show_if_failed "$tmp/g1.console" "$tmp/g1.err" "$tmp/log"
python3 -c '
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:])
wa = {a[i:i + 16] for i in range(len(a) - 15)}
sys.exit(any(b[i:i + 16] in wa for i in range(len(b) - 15)))' "$tmp/g1.first" "$tmp/g2.first"
check "the two guests got disjoint bytes: no 16-byte window in common" test $? = 0
wait_for 600 read_more g1 2
wait_for 600 read_more g2 2
rates g1 g2
check "g1 is served at $(sed -n 's/^g1 //p' "$tmp/rates") B/s, within 10% of --egd-rate $rate" within g1
check "g2 is served at $(sed -n 's/^g2 //p' "$tmp/rates") B/s, within 10% of --egd-rate $rate" within g2

# Stop one guest: the other keeps its rate.
stop $g1
wait_for 100 connected 1
check "g1 stopped: one client left" connected 1
rates g2
check "g2 is still served at $(sed -n 's/^g2 //p' "$tmp/rates") B/s, within 10% of $rate" within g2

# Restart the daemon: QEMU reconnects, the guest reads again.
stop "$daemon"
before=$(reads g2)
start_daemon "$tmp/s" "$tmp/log2" "$tmp/in" -O file:entropy:8 --egd-rate $rate \
    --egd-socket "g1=$tmp/egd/g1.sock" --egd-socket "g2=$tmp/egd/g2.sock"
wait_for 1200 served_more g2 4096
check "after a restart of the daemon QEMU reconnected: the new daemon served g2 $(served g2) bytes" \
    served_more g2 4096
wait_for 600 read_more g2 $((before + 2))
check "and the guest reads /dev/hwrng again ($before reports before the restart, $(reads g2) now)" \
    read_more g2 $((before + 2))
show_if_failed "$tmp/log2" "$tmp/g2.err"
stop $g2 "$daemon"
finish
