#!/bin/sh
# SPDX-License-Identifier: MIT
# The credit policy where it depends on what stands behind a device:
# /dev/hwrng in a fake sysfs tree (umockdev) backed by a TPM, virtio-rng or
# a driver of lower quality; the tpm source (swtpm) credited only when
# vouched for, never above its ceiling; and both reading one TPM at once,
# where only the tpm source credits it.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
command -v umockdev-run >/dev/null 2>&1 ||
    skip_all "umockdev-run not installed (Debian packages umockdev, libumockdev-dev)"
# umockdev's preload library comes before the ASan runtime in a sanitized build.
if sanitized; then asan_option verify_asan_link_order=0; fi
plan 10

# field SOURCE EXPR: a Python expression over d, the source's /sources object.
field() {
	"$entropyctl" --json sources "$1" 2>/dev/null |
	    python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval("(" + sys.argv[1] + ")"))' "$2"
}

# A kernel hw_random device whose sysfs says which driver is current.
# device CURRENT QUALITY: $tmp/hwrng.umockdev and a script of random reads.
device() {
	cat >"$tmp/hwrng.umockdev" <<DEV
P: /devices/virtual/misc/hw_random
N: hwrng
E: DEVNAME=/dev/hwrng
E: MAJOR=10
E: MINOR=183
E: SUBSYSTEM=misc
A: rng_current=$1
A: rng_quality=$2
DEV
	python3 - "$tmp/hwrng.script" <<'EOF'
import os, sys
def esc(b):
    return "".join("^" + chr(x + 64) if x < 32 else "^`" if x == 94 else chr(x) for x in b)
with open(sys.argv[1], "w", encoding="latin-1") as f:
    for _ in range(20):
        f.write("r 0 " + esc(os.urandom(2500)) + "\n")
EOF
}

# run NAME ARGS...: the daemon under umockdev, /dev/hwrng from the script, in
# the background; waits until /sources answers for hwrng. Sets $pid.
run() {
	name=$1
	shift
	rm -f "$tmp/pid"
	umockdev-run -d "$tmp/hwrng.umockdev" -s "/dev/hwrng=$tmp/hwrng.script" -- \
	    "$entropyd" -f -p "$tmp/pid" "$@" -o "$tmp/$name.out" >"$tmp/$name.log" 2>&1 &
	track $!
	runner=$!
	wait_for 100 test -s "$tmp/pid"
	pid=$(cat "$tmp/pid" 2>/dev/null)
	wait_for 100 sh -c "'$entropyctl' sources hwrng >/dev/null 2>&1"
}
# end: stop the daemon and its runner.
end() {
	kill "$pid" 2>/dev/null
	wait "$runner" 2>/dev/null
}

# 1-2: a TPM behind /dev/hwrng is credited as the tpm source credits a TPM: nothing.
device tpm-rng-0 1024
run tpm -x all -n hwrng
check "hwrng backed by tpm-rng-0: the log says the TPM's figure and why" grep -q \
    "hwrng: current hwrng: tpm-rng-0 (kernel quality 1024/1024): 0 bits per byte, a TPM's DRBG" \
    "$tmp/tpm.log"
check "hwrng backed by tpm-rng-0: credited 0, as the tpm source credits a TPM by default" \
    test "$(field hwrng 'd["estimate"]["bits"] == d["estimate"]["claimed_bits"] == 0 and
    not d["estimate"]["credited"]')" = True
show_if_failed "$tmp/tpm.log"
end

# 3: virtio-rng keeps 8 bits per byte.
device virtio_rng.0 1024
run virtio -x all -n hwrng
check "hwrng backed by virtio_rng.0: 8 bits per byte" \
    test "$(field hwrng 'd["estimate"]["bits"]')" = 8.0
end

# 4: other hardware gets what its driver declares.
device bcm2835-rng 512
run quality -x all -n hwrng
check "hwrng backed by a driver of quality 512/1024: 4 bits per byte" \
    test "$(field hwrng 'd["estimate"]["bits"]')" = 4.0
end

# 5-7: the tpm source credits nothing unless vouched for, and at most 4.
start_swtpm "$tmp/a" --tpm2 --flags not-need-init,startup-clear
"$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/a/S" -o "$tmp/tpm.out" 2>"$tmp/tpm0.log" &
pid=$!
track $pid
wait_for 100 sh -c "'$entropyctl' sources tpm >/dev/null 2>&1"
check "tpm: credited nothing by default" \
    test "$(field tpm 'd["estimate"]["bits"] == 0 and not d["estimate"]["credited"]')" = True
stop $pid
"$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/a/S" -O tpm:entropy:5 -o "$tmp/tpm.out" \
    2>"$tmp/tpm5.log"
rc=$?
check "tpm: a vouch above 4 bits per byte is refused (exit 64)" sh -c \
    "test $rc -eq 64 && grep -q 'above the source.s own estimate of 4' '$tmp/tpm5.log'"
"$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/a/S" -O tpm:entropy:4 -o "$tmp/tpm.out" \
    2>"$tmp/tpm4.log" &
pid=$!
track $pid
wait_for 100 sh -c "'$entropyctl' sources tpm >/dev/null 2>&1"
check "tpm: vouched for at 4 bits per byte, credited 4" \
    test "$(field tpm 'd["estimate"]["bits"]')" = 4.0
stop $pid

# 8-10: the same TPM behind both sources: only the tpm source credits it.
device tpm-rng-0 1024
run both -x all -n hwrng -n tpm -O "tpm:device:$tmp/a/S" -O tpm:entropy:4
wait_for 100 sh -c "'$entropyctl' sources tpm >/dev/null 2>&1"
check "both sources on one TPM: the tpm source credits it (4 bits per byte)" \
    test "$(field tpm 'd["estimate"]["bits"]')" = 4.0
check "both sources on one TPM: hwrng credits it nothing" \
    test "$(field hwrng 'd["estimate"]["bits"]')" = 0.0
# Asked afresh on each try (wait_for's arguments are expanded once).
hwrng_read() { test "$(field hwrng 'd["counters"]["bytes_read"] > 0')" = True; }
wait_for 100 hwrng_read
check "both read: the tpm source is running, hwrng read its device" sh -c \
    "test '$(field tpm 'd["state"]')' = running &&
    test '$(field hwrng 'd["counters"]["bytes_read"] > 0')' = True"
show_if_failed "$tmp/both.log"
end
finish
