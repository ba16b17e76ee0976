#!/bin/sh
# Bad input: one line naming the problem, exit 64, and nothing else happens.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
plan 29

# bad DESCRIPTION ARGS...: exit 64, one line on stderr, no output or pidfile made.
bad() {
	desc=$1
	shift
	"$entropyd" -f -o "$tmp/out" -p "$tmp/pid" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	if [ "$rc" -eq 64 ] && [ "$lines" -eq 1 ] && [ ! -e "$tmp/out" ] && [ ! -e "$tmp/pid" ] &&
	    [ ! -s "$tmp/stdout" ]; then
		ok "$desc: $(cat "$tmp/stderr")"
	else
		not_ok "$desc (exit $rc, $lines lines)"
		sed 's/^/# /' "$tmp/stderr"
	fi
}

bad "unknown flag" --bogus
bad "bad -O syntax" -O "hwrng:"
bad "unknown source in -n" -n nosuch
bad "an rngd source number in -x" -x 2
bad "unknown source in -O" -O nosuch:key:1
bad "unknown option key" -O hwrng:nokey:1
bad "file source without a path" -x all -n file
bad "raising a source's estimate" -O hwrng:entropy:9
bad "a number out of range" -s 0
bad "a stray argument" stray
bad "-W as a share above 100%" -W 101%
bad "rngd's -t N (its feed interval): answered with -R" -t 60
check "... and the answer says what -t is here and names -R" \
    grep -q "rngd's -t, its feed interval, is -R SECONDS" "$tmp/stderr"
bad "--min-credit above 16 bits" --min-credit 17
"$entropyd" -W 90% -x all -n file -O "file:path:$tmp/none" -l >"$tmp/list" 2>"$tmp/stderr"
check "-W 90% (rngd's share of the pool) is accepted" test $? -eq 0

# A device named on the command line must exist: exit 66 naming it, unless
# --wait-for-device says it comes by hotplug.
"$entropyd" -f -t -x all -n hwrng -r "$tmp/no-such-rng" 2>"$tmp/stderr"
rc=$?
check "-r PATH that does not exist: exit 66, one line naming the path ($(cat "$tmp/stderr"))" \
    sh -c "test $rc -eq 66 && test \$(wc -l <'$tmp/stderr') -eq 1 &&
        grep -q 'hwrng: $tmp/no-such-rng: No such file or directory' '$tmp/stderr' &&
        grep -q -- '--wait-for-device' '$tmp/stderr'"
"$entropyd" -f -t -x all -n tpm -O "tpm:device:$tmp/no-such-tpm" 2>"$tmp/stderr"
check "-O SOURCE:device:PATH that does not exist: exit 66 too" test $? -eq 66
timeout 2 "$entropyd" -f -t -x all -n hwrng -r "$tmp/no-such-rng" --wait-for-device \
    --control-socket "$tmp/wait.sock" 2>"$tmp/stderr"
check "--wait-for-device: the daemon starts and waits for it (ended by the timeout: $?)" test $? -eq 124

"$entropyd" -D no-such-user-entropyd:nogroup -f -o "$tmp/out" 2>"$tmp/stderr"
check "-D with an unknown user exits 67 (EX_NOUSER)" test $? -eq 67

"$entropyd" -l >"$tmp/list" 2>&1
check "-l exits 0 and lists every source" sh -c "grep -q '^hwrng ' '$tmp/list' && grep -q '^file ' '$tmp/list'"
check "-l says why an unusable source cannot be used" grep -q "file .*unusable: no path given" "$tmp/list"

# From rngd: excluding a source that is not here warns and carries on.
"$entropyd" -x nist -x pkcs11 -l >"$tmp/list" 2>"$tmp/stderr"
rc=$?
check "-x of unknown sources warns about each and carries on (exit $rc)" sh -c \
    "test $rc -eq 0 && grep -q \"no source 'nist' here\" '$tmp/stderr' &&
     grep -q \"no source 'pkcs11' here\" '$tmp/stderr' && grep -q '^hwrng ' '$tmp/list'"
# selected NAME: the SELECTED column of -l for source NAME.
selected() { awk -v n="$1" '$1 == n { print $3 }' "$tmp/list"; }
"$entropyd" -x rdrand -l >"$tmp/list" 2>"$tmp/stderr"
check "-x rdrand in rngd's sense excludes rdseed too and says so" sh -c \
    "test '$(selected rdrand) $(selected rdseed)' = 'no no' &&
     grep -q 'rdrand: rdseed excluded as well' '$tmp/stderr'"
"$entropyd" -x rdrand -n rdseed -l >"$tmp/list" 2>"$tmp/stderr"
check "-x rdrand with rdseed named keeps rdseed, silently" sh -c \
    "test '$(selected rdrand) $(selected rdseed)' = 'no yes' &&
     ! grep -q 'as well' '$tmp/stderr'"
"$entropyd" --use-slow-sources -x all -n jitter -l >"$tmp/list" 2>&1
check "rngd 6's --use-slow-sources is accepted" test "$(selected jitter)" = yes

"$entropyd" -O file >"$tmp/opts" 2>&1
check "-O SOURCE prints its options with help" sh -c \
    "grep -q 'file:path' '$tmp/opts' && grep -q 'file:entropy' '$tmp/opts'"

"$entropyd" --help >"$tmp/help" 2>&1
check "--help exits 0 and names every flag" sh -c \
    "for f in -f -b -d -q -l -x -n -O -o -r -p -s -W -R -e -t -i -D -v -h --plugin-dir --control-socket; do
         grep -q -- \"\$f\" '$tmp/help' || exit 1; done"
"$entropyd" --version >"$tmp/version" 2>&1
check "--version names the program" grep -q "^entropyd [0-9]" "$tmp/version"

# A second instance on the same pidfile is refused and names the first.
mkfifo "$tmp/fifo"
"$entropyd" -f -t -x all -n file -O "file:path:$tmp/fifo" -p "$tmp/run.pid" 2>/dev/null &
pid=$!
track $pid
wait_for 50 test -s "$tmp/run.pid"
"$entropyd" -f -t -x all -n file -O "file:path:$tmp/fifo" -p "$tmp/run.pid" 2>"$tmp/stderr"
rc=$?
check "a second instance is refused (exit 73) naming pid $pid" sh -c \
    "test $rc -eq 73 && grep -q 'running (pid $pid)' '$tmp/stderr'"
finish
