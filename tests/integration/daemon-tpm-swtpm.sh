#!/bin/sh
# The tpm source against swtpm on a private Unix socket: TPM 2.0 with and
# without Startup, the rate limit, swtpm killed and restarted under a
# running daemon, and TPM 1.2.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
command -v swtpm >/dev/null 2>&1 || skip_all "swtpm not installed (Debian packages swtpm, swtpm-tools)"
plan 18

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# FIPS successes reported in an entropytest log.
successes() { sed -n 's/.*FIPS 140-2 successes: //p' "$1"; }

# 1-2: TPM 2.0 started by swtpm: data flows and passes FIPS 140-2.
start_swtpm "$tmp/a" --tpm2 --flags not-need-init,startup-clear
( "$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/a/S" -O tpm:max_rate:100000 -o - \
    2>"$tmp/log1"; echo $? >"$tmp/rc1" ) | "$entropytest" -c 5 >/dev/null 2>"$tmp/fips1"
check "TPM 2.0 over a swtpm socket: 5 blocks pass FIPS 140-2 ($(successes "$tmp/fips1"))" \
    fips_ok "$tmp/fips1" 5
wait_for 50 test -s "$tmp/rc1"
check "the daemon read the socket from a reader thread and exited 0 with its reader" sh -c \
    "grep -q 'tpm: reading $tmp/a/S (reader thread' '$tmp/log1' && test \"\$(cat '$tmp/rc1')\" = 0"

# 3: max_rate bounds what is read; an upper bound only, so a slow machine cannot fail it.
start=$(date +%s)
"$entropyd" -f -t -x all -n tpm -O "tpm:device:$tmp/a/S" -O tpm:max_rate:300 2>"$tmp/log3" &
pid=$!
track $pid
wait_for 100 grep -q "tpm: reading" "$tmp/log3"
sleep 2
# SIGUSR1 until a report shows bytes read (a loaded swtpm may not have
# answered within the two seconds); the bound counts the time it took.
read_some() {
	kill -USR1 "$pid" && sleep 0.3 && grep -q "tpm: .* read [1-9][0-9]* bytes" "$tmp/log3"
}
wait_for 100 read_some
end=$(date +%s)
read3=$(sed -n 's/.*tpm: .* read \([0-9]*\) bytes.*/\1/p' "$tmp/log3" | tail -n 1)
limit=$((300 * (end - start + 1) + 300))
check "max_rate 300: ${read3:-?} bytes read in about $((end - start)) s, at most $limit" \
    test "${read3:-999999}" -gt 0 -a "${read3:-999999}" -le "$limit"
stop $pid
stop $swtpm_pid

# 4-5: swtpm not started: entropyd sends TPM2_Startup(CLEAR) and proceeds.
start_swtpm "$tmp/b" --tpm2 --flags not-need-init
( "$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/b/S" -O tpm:max_rate:100000 -o - \
    2>"$tmp/log4" ) | "$entropytest" -c 3 >/dev/null 2>"$tmp/fips4"
check "no Startup yet: TPM_RC_INITIALIZE answered with Startup(CLEAR)" sh -c \
    "grep -q 'GetRandom: TPM_RC_INITIALIZE: the TPM is not started; sending Startup(CLEAR)' \
    '$tmp/log4' && grep -q 'TPM 2.0 started' '$tmp/log4'"
check "after Startup the data passes FIPS 140-2" fips_ok "$tmp/fips4" 3
stop $swtpm_pid

# 6-11: swtpm killed under a running daemon, then restarted on the same socket.
start_swtpm "$tmp/c" --tpm2 --flags not-need-init,startup-clear
"$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/c/S" -O tpm:max_rate:20000 \
    -o "$tmp/out" 2>"$tmp/log6" &
pid=$!
track $pid
wait_for 300 sh -c "test \$(stat -c %s '$tmp/out' 2>/dev/null || echo 0) -gt 0"
check "data flows to the output file ($(size "$tmp/out") bytes)" test "$(size "$tmp/out")" -gt 0
stop $swtpm_pid
wait_for 100 grep -q "tpm: read: .*; absent" "$tmp/log6"
check "swtpm killed: a clear log line, the source goes absent" sh -c \
    "grep -q 'tpm: $tmp/c/S: the TPM closed the connection' '$tmp/log6' &&
     grep -q 'tpm: read: .*; absent' '$tmp/log6'"
kill -USR1 $pid
wait_for 50 grep -q "tpm: absent for" "$tmp/log6"
check "SIGUSR1 statistics say absent" grep -q "tpm: absent for [0-9]* s; read [1-9]" "$tmp/log6"
check "the daemon keeps running without its TPM" kill -0 $pid
before=$(size "$tmp/out")
start_swtpm "$tmp/c" --tpm2 --flags not-need-init,startup-clear
wait_for 600 sh -c "test \$(stat -c %s '$tmp/out') -gt $before"
check "swtpm restarted: the source recovers, the output grows ($before -> $(size "$tmp/out"))" \
    test "$(size "$tmp/out")" -gt "$before"
kill -USR1 $pid
wait_for 50 sh -c "grep 'tpm: [a-z]* for' '$tmp/log6' | tail -n 1 | grep -q 'running\|starting'"
check "SIGUSR1 statistics no longer say absent" sh -c \
    "grep 'tpm: [a-z]* for' '$tmp/log6' | tail -n 1 | grep -q 'tpm: \(running\|starting\) for'"
stop $pid
stop $swtpm_pid

# 12-13: TPM 1.2 (swtpm without --tpm2), not started: detected, started, read.
start_swtpm "$tmp/d" --flags not-need-init
( "$entropyd" -f -x all -n tpm -O "tpm:device:$tmp/d/S" -O tpm:max_rate:100000 -o - \
    2>"$tmp/log12" ) | "$entropytest" -c 3 >/dev/null 2>"$tmp/fips12"
check "TPM 1.2: detected by the tag of its answer, then started" sh -c \
    "grep -q 'TPM 2.0 command answered with a TPM 1.2 tag 0x00c4.*: speaking TPM 1.2' '$tmp/log12' &&
     grep -q 'TPM_INVALID_POSTINIT: the TPM is not started; sending Startup(CLEAR)' '$tmp/log12' &&
     grep -q 'TPM 1.2 started' '$tmp/log12'"
check "TPM 1.2 GetRandom data passes FIPS 140-2" fips_ok "$tmp/fips12" 3
stop $swtpm_pid

# 14: a socket nobody listens on (swtpm killed with SIGKILL leaves it): the reason, no crash.
start_swtpm "$tmp/e" --tpm2 --flags not-need-init,startup-clear
kill -KILL $swtpm_pid
wait $swtpm_pid 2>/dev/null
"$entropyd" -f -t -x all -n tpm -O "tpm:device:$tmp/e/S" 2>"$tmp/log14" &
pid=$!
track $pid
wait_for 100 grep -q "connect:" "$tmp/log14"
check "a dead socket: 'connect: Connection refused', the daemon keeps running" sh -c \
    "grep -q 'tpm: $tmp/e/S: connect: Connection refused' '$tmp/log14' && kill -0 $pid"
stop $pid

# 15: bad options are one-line usage errors.
"$entropyd" -f -t -x all -n tpm -O tpm:max_rate:0 2>"$tmp/log15"
rc=$?
check "max_rate 0: exit 64 with one line" sh -c \
    "test $rc = 64 && grep -q 'tpm: max_rate 0: not a byte rate' '$tmp/log15'"

# 16-17: what probing says, shown by -l.
: >"$tmp/regular"
"$entropyd" -l -O "tpm:device:$tmp/regular" >"$tmp/list16" 2>&1
check "-l: a regular file is no TPM" \
    grep -q "^tpm .*unusable: $tmp/regular: not a character device or a socket" "$tmp/list16"
start_swtpm "$tmp/f" --tpm2 --flags not-need-init,startup-clear
"$entropyd" -l -O "tpm:device:$tmp/f/S" >"$tmp/list17" 2>&1
check "-l: a swtpm socket is usable" grep -q "^tpm .*usable: tpm ($tmp/f/S)" "$tmp/list17"
stop $swtpm_pid

# 18: a TPM that goes away with a command unread (swtpm killed between a
# command's arrival and its read, as load makes likely) resets the
# connection: the same clear line as a TPM closing it between commands.
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/reset.sock" <<'PY' &
import select, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    select.select([c], [], [], 30)  # the command is in: close with it unread
    c.close()
PY
	track $!
	wait_for 100 test -S "$tmp/reset.sock"
	"$entropyd" -f -t -x all -n tpm -O "tpm:device:$tmp/reset.sock" 2>"$tmp/log18" &
	pid=$!
	track $pid
	check "a reset connection: 'the TPM closed the connection', absent, the daemon runs on" \
	    wait_for 100 sh -c "grep -q 'tpm: $tmp/reset.sock: the TPM closed the connection' '$tmp/log18' &&
	    grep -q 'tpm: read: .*; absent' '$tmp/log18' && kill -0 $pid"
	show_if_failed "$tmp/log18"
	stop $pid
else
	skip "python3 is not installed (it plays a TPM that resets the connection)"
fi
finish
