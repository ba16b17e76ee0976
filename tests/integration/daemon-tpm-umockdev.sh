#!/bin/sh
# The tpm source on its character-device path: /dev/tpmrm0 replayed by
# umockdev from scripts of write/read exchanges, with good answers, Startup,
# busy answers, a hung TPM and malformed answers (short, wrong tag, wrong
# size, error codes, bad lengths): each rejected with a clear log line, the
# source absent, the daemon still running.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
command -v umockdev-run >/dev/null 2>&1 ||
    skip_all "umockdev-run not installed (Debian packages umockdev, libumockdev-dev)"
# umockdev's preload library comes before the ASan runtime in a sanitized build.
if sanitized; then asan_option verify_asan_link_order=0; fi
plan 36

# The device as udev would describe it.
cat >"$tmp/tpm.umockdev" <<'DEV'
P: /devices/virtual/tpmrm/tpmrm0
N: tpmrm0
E: DEVNAME=/dev/tpmrm0
E: MAJOR=253
E: MINOR=65536
E: SUBSYSTEM=tpmrm
DEV

# Escape hex bytes the umockdev script way: b < 32 as ^(b+64), '^' as ^`,
# the rest as raw (latin-1) bytes.
esc() {
	for h in $(echo "$1" | sed 's/../& /g'); do
		b=$((0x$h))
		if [ "$b" -lt 32 ]; then
			printf "^\\$(printf %o $((b + 64)))"
		elif [ "$b" -eq 94 ]; then
			printf '^`'
		else
			printf "\\$(printf %o "$b")"
		fi
	done
}
# Script lines: the daemon writes HEX; the device answers HEX.
w() { printf 'w 0 '; esc "$1"; printf '\n'; }
r() { printf 'r 0 '; esc "$1"; printf '\n'; }

# 32 and 64 bytes of payload; 0x5e ('^'), 0x20 and small values exercise the escapes.
p32=00015e20a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babb
p64=${p32}c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf
get64=80010000000c0000017b0040
get32=80010000000c0000017b0020

# The TPM's time-out where a script ends in a hang (the TPM stops answering).
# umockdev answers from a thread of the daemon's process: on a loaded
# machine that thread can wait its turn for hundreds of milliseconds, and
# an answer later than the time-out is taken for a hang (300 ms was too
# short: a round cut short, or no malformed answer seen at all).
hang_ms=3000
# run NAME [TIMEOUT_MS]: replay $tmp/NAME.script as /dev/tpmrm0 under a daemon
# (64 bytes a second, so each read() asks for 64 bytes; by default a time-out
# no answer meets: only scripts that end in a hang need one).
run() {
	rm -f "$tmp/pid"
	umockdev-run -d "$tmp/tpm.umockdev" -s "/dev/tpmrm0=$tmp/$1.script" -- \
	    "$entropyd" -f -d -t -x all -n tpm -O tpm:max_rate:64 -O "tpm:timeout_ms:${2:-60000}" \
	    -p "$tmp/pid" >"$tmp/$1.log" 2>&1 &
	runner=$!
	track $runner
	wait_for 300 test -s "$tmp/pid"
	pid=$(cat "$tmp/pid" 2>/dev/null)
}

# end_run NAME: the daemon is alive; stop it and its runner.
end_run() {
	check "$1: the daemon is still running" kill -0 "$pid"
	kill "$pid" 2>/dev/null
	wait "$runner" 2>/dev/null
}

# report NAME: SIGUSR1, then the tpm instance's newest statistics line.
report() {
	reports=$(grep -c "tpm: [a-z]* for" "$tmp/$1.log")
	kill -USR1 "$pid" || return 1
	wait_for 50 sh -c "test \$(grep -c 'tpm: [a-z]* for' '$tmp/$1.log') -gt $reports"
	grep "tpm: [a-z]* for" "$tmp/$1.log" | tail -n 1
}
# absent_report NAME: a fresh report finds the instance absent (a retry,
# once a second, reopens it for a moment); it is kept in $tmp/report.
absent_report() { report "$1" >"$tmp/report" && grep -q "tpm: absent for" "$tmp/report"; }

# rejected NAME MESSAGE: the message is logged and SIGUSR1 says absent.
rejected() {
	check "$1: rejected with '$2'" wait_for 300 grep -qF "tpm: /dev/tpmrm0: $2" "$tmp/$1.log"
	show_if_failed "$tmp/$1.log"
	wait_for 100 absent_report "$1"
	check "$1: SIGUSR1 statistics say absent, nothing read" \
	    grep -q "tpm: absent for [0-9]* s; read 0 bytes" "$tmp/report"
	end_run "$1"
}

# bytes_read NAME: the bytes the tpm instance read, from a report made while
# it is absent: between rounds, so a whole number of them.
bytes_read() {
	wait_for 100 absent_report "$1"
	sed -n 's/.*tpm: absent for [0-9]* s; read \([0-9]*\) bytes.*/\1/p' "$tmp/report"
}

# 1-6: good answers, Startup on TPM_RC_INITIALIZE, one TPM_RC_RETRY, a TPM
# returning less than asked, then a TPM that stops answering.
{
	w $get64; r 80010000000a00000100
	w 80010000000c000001440000; r 80010000000a00000000
	w $get64; r 80010000000a00000922
	w $get64; r 80010000002c000000000020$p32
	w $get32; r 80010000002c000000000020$p32
	w $get64; r 80010000004c000000000040$p64
} >"$tmp/good.script"
run good "$hang_ms"
wait_for 300 grep -q "the TPM hangs" "$tmp/good.log"
check "good: TPM_RC_INITIALIZE answered with Startup(CLEAR)" sh -c \
    "grep -qF 'tpm: /dev/tpmrm0: GetRandom: TPM_RC_INITIALIZE: the TPM is not started; sending Startup(CLEAR)' '$tmp/good.log' &&
     grep -qF 'tpm: /dev/tpmrm0: TPM 2.0 started' '$tmp/good.log'"
check "good: TPM_RC_RETRY asked again after a pause" \
    grep -qF "tpm: /dev/tpmrm0: GetRandom: TPM_RC_RETRY; asking again in 10 ms" "$tmp/good.log"
check "good: a TPM that stops answering times out" \
    grep -qF "tpm: /dev/tpmrm0: no answer within $hang_ms ms: the TPM hangs" "$tmp/good.log"
# umockdev replays the script on each open, so count in whole rounds of 128.
check "good: the source went absent" grep -qF "tpm: read: Connection timed out; absent" \
    "$tmp/good.log"
read_bytes=$(bytes_read good)
check "good: every byte answered was read, 32 + 32 + 64 a round (${read_bytes:-?})" \
    test "${read_bytes:-0}" -gt 0 -a "$((${read_bytes:-1} % 128))" -eq 0
show_if_failed "$tmp/good.log"
check "good: the character device was read from a reader thread" \
    grep -qF "tpm: reading /dev/tpmrm0 (reader thread" "$tmp/good.log"
end_run good

# 7-30: malformed answers, one script each.
# bad NAME ANSWER REASON: GetRandom answered with ANSWER is rejected for REASON.
bad() {
	{ w $get64; r "$2"; } >"$tmp/$1.script"
	run "$1"
	rejected "$1" "$3"
}
bad short 80010000 "GetRandom: short response: 4 bytes, a header needs 10"
bad tag 1234000000100000000000040a0b0c0d "GetRandom: wrong tag 0x1234 in a TPM 2.0 response"
bad size 8001000000400000000000040a0b0c0d "GetRandom: wrong size: the header says 64 bytes, 16 arrived"
bad rc 80010000000a00000101 "GetRandom failed: TPM_RC_FAILURE"
bad length 800100000010000000000fff0a0b0c0d "GetRandom: length 4095 is more than the 64 bytes asked for"
bad mismatch 8001000000100000000000300a0b0c0d "GetRandom: length 48 does not match the 4 bytes after it"

i=0
while [ $i -le 8 ]; do
	w $get64
	r 80010000000a00000922
	i=$((i + 1))
done >"$tmp/busy.script"
run busy
rejected busy "GetRandom: still TPM_RC_RETRY after 8 tries"

{
	w $get64; r 00c40000000a0000000a
	w 00c10000000e0000004600000040; r 80010000000a00000000
} >"$tmp/family.script"
run family
rejected family "GetRandom: TPM 1.2 command answered with a TPM 2.0 tag 0x8001 (rc 0x0)"

# 31-33: a TPM 1.2 chip behind the device: detected by its answer's tag.
{
	w $get64; r 00c40000000a0000000a
	w 00c10000000e0000004600000040; r 00c40000004e0000000000000040$p64
} >"$tmp/tpm12.script"
run tpm12 "$hang_ms"
wait_for 300 grep -q "the TPM hangs" "$tmp/tpm12.log"
check "tpm12: a TPM 1.2 answer switches to TPM_ORD_GetRandom" grep -qF \
    "tpm: /dev/tpmrm0: TPM 2.0 command answered with a TPM 1.2 tag 0x00c4 (rc 0xa): speaking TPM 1.2" \
    "$tmp/tpm12.log"
read_bytes=$(bytes_read tpm12)
check "tpm12: the 64 bytes of each round were read (${read_bytes:-?})" \
    test "${read_bytes:-0}" -gt 0 -a "$((${read_bytes:-1} % 64))" -eq 0
end_run tpm12

# 35-36: SIGTERM while the reader waits for an answer (60 s time-out): the
# wait is interrupted at once, not abandoned.
w $get64 >"$tmp/silent.script"
rm -f "$tmp/pid"
umockdev-run -d "$tmp/tpm.umockdev" -s "/dev/tpmrm0=$tmp/silent.script" -- \
    "$entropyd" -f -t -x all -n tpm -O tpm:timeout_ms:60000 -p "$tmp/pid" \
    >"$tmp/silent.log" 2>&1 &
runner=$!
track $runner
wait_for 100 test -s "$tmp/pid"
pid=$(cat "$tmp/pid" 2>/dev/null)
wait_for 100 grep -q "tpm: reading" "$tmp/silent.log"
sleep 1
kill -TERM "$pid"
check "silent TPM: SIGTERM ends the daemon while it waits for an answer" \
    wait_for 50 sh -c "! kill -0 $pid 2>/dev/null"
check "silent TPM: the waiting reader was interrupted, not left stuck" sh -c \
    "grep -q 'SIGTERM\\|Terminated' '$tmp/silent.log' && ! grep -q stuck '$tmp/silent.log'"
wait "$runner" 2>/dev/null
finish
