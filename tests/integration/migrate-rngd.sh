#!/bin/sh
# contrib/entropyd-migrate-rngd: a table of rngd settings (rng-tools-debian's
# rngd 2 and rngd 6) with the DAEMON_ARGS each becomes and what is reported
# as not translated; every translation is a command line entropyd takes.
# Then settings files, -a on a defaults file, and bad input.
. "$(dirname "$0")/lib.sh"
helper=$top_srcdir/contrib/entropyd-migrate-rngd
entropyd=$top_builddir/entropyd
plan 45
set -f

# row SYNTAX ARGUMENTS EXPECTED [NOTE...]: the helper turns rngd ARGUMENTS
# into DAEMON_ARGS="EXPECTED", reports one line for each NOTE (a piece of
# that line) and nothing else, exits 1 when something was not translated
# (else 0: a warning alone is no failure), and entropyd accepts EXPECTED.
row() {
	syntax=$1
	input=$2
	want=$3
	shift 3
	sh "$helper" "--$syntax" "$input" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	good=yes
	[ "$(cat "$tmp/out")" = "DAEMON_ARGS=\"$want\"" ] || good=no
	if grep -q 'not translated' "$tmp/err"; then [ "$rc" -eq 1 ] || good=no
	else [ "$rc" -eq 0 ] || good=no; fi
	[ "$(wc -l <"$tmp/err")" -eq $# ] || good=no
	for note; do
		grep -qF -- "$note" "$tmp/err" || good=no
	done
	# shellcheck disable=SC2086 # the arguments split into words
	if [ -n "$want" ] && ! "$entropyd" $want -l >"$tmp/list" 2>&1; then
		good=no
		diag "entropyd refuses: $(tail -n 1 "$tmp/list")"
	fi
	if [ "$good" = yes ]; then
		ok "$syntax '$input' -> '$want'${1:+ ($# not translated)}"
	else
		not_ok "$syntax '$input' -> '$want' (exit $rc)"
		diag "got: $(cat "$tmp/out")"
		diag_file "$tmp/err"
	fi
}

# rng-tools-debian (rngd 2): its documented examples first.
row rngd2 "" ""
row rngd2 "--hrng=intelfwh --fill-watermark=90% --feed-interval=1" "-W 3686 -R 1 -O hwrng:entropy:7.984" \
    "--feed-interval 1 becomes -R 1: entropyd would top the kernel up and reseed its CRNG every 1 s"
row rngd2 "--hrng=viakernel --fill-watermark=90% --feed-interval=1" "-W 3686 -R 1 -O hwrng:entropy:6" \
    "--feed-interval 1 becomes -R 1: entropyd would top the kernel up and reseed its CRNG every 1 s"
row rngd2 "--hrng=viapadlock --fill-watermark=90% --feed-interval=1" "-W 3686 -R 1" \
    "--hrng=viapadlock: entropyd has no source for VIA PadLock" "--feed-interval 1 becomes -R 1: entropyd would top the kernel up and reseed its CRNG every 1 s"
row rngd2 "--fill-watermark=90% --feed-interval=1" "-W 3686 -R 1" "--feed-interval 1 becomes -R 1: entropyd would top the kernel up and reseed its CRNG every 1 s"
row rngd2 "-W 90% -t1 -s 128 -o /dev/random -b" "-W 3686 -R 1 -s 128 -o /dev/random" \
    "-t 1 becomes -R 1: entropyd would top the kernel up and reseed its CRNG every 1 s"
row rngd2 "-W 2048 --timeout=30 --fill=50%" "-W 2048 -R 30 -W 2048" \
    "--timeout 30 becomes -R 30: entropyd would top the kernel up and reseed its CRNG every 30 s"
row rngd2 "--feed-interval=60 -t 600" "-R 60 -R 600"
row rngd2 "-H 0.5 --hrng=intelfwh" "-O hwrng:entropy:4"
row rngd2 "--rng-entropy=1.0 -R stream" ""
row rngd2 "-r /dev/ttyACM0 -f" "-r /dev/ttyACM0"
row rngd2 "-R viapadlock -Q high" "" "-R viapadlock: entropyd reads devices as streams" \
    "-Q high: only VIA PadLock has qualities"
row rngd2 "--rng-buffers=5 -S 3600 -T 10 -p /run/rngd.pid" "" \
    "--rng-buffers 5: entropyd keeps a reserve of its own" \
    "-S 3600: entropyd logs statistics on SIGUSR1" \
    "-T 10: entropyd does not wait for a source at start" \
    "-p /run/rngd.pid: the init script sets the pidfile"
row rngd2 "--feed-interval=0 -W 4097 -s 0 -H 2 -W 101%" "" \
    "--feed-interval 0: entropyd always tops the kernel up" \
    "-W 4097: entropyd takes 0 to 4096" "-s 0: entropyd takes 1 to 4096" \
    "-H 2: not a number above 0 and at most 1" "-W 101%: not a share from 0% to 100%"
row rngd2 "-V --help --bogus --r /dev/x -x rdrand stray -t" "" \
    "-V: it makes the daemon exit at once" "--help: it makes the daemon exit at once" \
    "--bogus: not an option of rngd2" "--r: not an option of rngd2, or an ambiguous one" \
    "/dev/x: rngd takes no arguments" \
    "-x: not an option of rngd2" "rdrand: rngd takes no arguments" \
    "stray: rngd takes no arguments" "-t: its value is missing"
row rngd2 '-o /tmp/a"b -r $HOME' "" '-o /tmp/a"b: not a plain path' '-r $HOME: not a plain path'

# rngd 6.
row rngd6 "-x nist -x pkcs11 -x darn --exclude=qrypt" ""
row rngd6 "-x rdrand" "-x rdrand"
row rngd6 "-x 2 -x0 -n 5" "-x rdrand -x hwrng" \
    "-n 5: rngd's source numbers above 3 changed between its versions"
row rngd6 "--exclude=jitter --include tpm -n rtlsdr -x bogus" "-x jitter -n tpm" \
    "-n rtlsdr: entropyd has no rtlsdr source" "-x bogus: not a source of rngd"
row rngd6 "-d -q -i -u -b --ignorefail" "-d -q -i -i"
row rngd6 "-W 2048 -R 300 -e 7 -s 64 -o /dev/random -r /dev/hwrng" \
    "-W 2048 -R 300 -e 7 -s 64 -o /dev/random"
row rngd6 "--force-reseed=30 --entropy-count 0 --fill-watermark 5000" "-R 30" \
    "--entropy-count 0: entropyd takes 1 to 8" "--fill-watermark 5000: entropyd takes 0 to 4096" \
    "--force-reseed 30 becomes -R 30: entropyd would top the kernel up and reseed its CRNG every 30 s"
row rngd6 "-O rdrand:use_aes:1 -O jitter:thread_count:4 -O nist -O pkcs11:chunk_size:1" "" \
    "-O rdrand:use_aes:1: entropyd's rdrand source has no such option" \
    "-O jitter:thread_count:4: entropyd's jitter source has no such option" \
    "-O nist: it lists the source's options and exits" \
    "-O pkcs11:chunk_size:1: entropyd has no pkcs11 source"
row rngd6 "-O namedpipe:path:/run/rngd.fifo" "-n file -O file:path:/run/rngd.fifo" \
    "credits nothing unless told; add -O file:entropy:BITS"
row rngd6 "-x namedpipe -O namedpipe:path:/run/rngd.fifo" ""
row rngd6 "-D rngd:rngd --pid-file /run/rngd.pid" "" \
    "-D rngd:rngd: set DAEMON_USER=\"rngd:rngd\" in /etc/default/entropyd" \
    "--pid-file /run/rngd.pid: the init script sets the pidfile"
row rngd6 "-l -t -v --usage" "" "-l: it makes the daemon exit at once" \
    "-t: test mode feeds the kernel nothing" "-v: it makes the daemon exit at once" \
    "--usage: it makes the daemon exit at once"

# Settings files, read as their init scripts read them.
cat >"$tmp/rng-tools-debian" <<'EOT'
# -*- mode: sh -*-
HRNGDEVICE=/dev/hwrng
RNGDOPTIONS="--fill-watermark=90% --feed-interval=1"
EOT
sh "$helper" "$tmp/rng-tools-debian" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a rng-tools-debian file: HRNGDEVICE and RNGDOPTIONS, the 1 s interval warned of ($(cat "$tmp/out"))" sh -c \
    "test $rc -eq 0 && test \"\$(cat '$tmp/out')\" = 'DAEMON_ARGS=\"-W 3686 -R 1\"' &&
     test \$(wc -l <'$tmp/err') -eq 1 && grep -q 'warning: --feed-interval 1 becomes -R 1' '$tmp/err'"
cat >"$tmp/rng-tools-debian" <<'EOT'
HRNGDEVICE=/dev/ttyUSB0
HRNGSELECT="virtio_rng.0"
RNGDOPTIONS="-r /dev/ttyACM0 -W 50%"
EOT
sh "$helper" "$tmp/rng-tools-debian" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-r in RNGDOPTIONS wins over HRNGDEVICE; HRNGSELECT becomes HWRNG_SELECT ($(cat "$tmp/out"))" sh -c \
    "test $rc -eq 0 && test \"\$(sed -n 1p '$tmp/out')\" = 'DAEMON_ARGS=\"-r /dev/ttyACM0 -W 2048\"' &&
     test \"\$(sed -n 2p '$tmp/out')\" = 'HWRNG_SELECT=\"virtio_rng.0\"' && test ! -s '$tmp/err'"
cp "$top_srcdir/contrib/entropyd.default" "$tmp/defaults-select"
sh "$helper" -a "$tmp/defaults-select" "$tmp/rng-tools-debian" >/dev/null 2>&1
check "-a carries HRNGSELECT into the defaults file, which the start applies" sh -c \
    "grep -qx 'HWRNG_SELECT=\"virtio_rng.0\"' '$tmp/defaults-select' &&
     test \$(grep -c '^HWRNG_SELECT=' '$tmp/defaults-select') -eq 1 &&
     . '$tmp/defaults-select' && test \"\$HWRNG_SELECT\" = virtio_rng.0"
printf 'HRNGDEVICE=/dev/null\nRNGDOPTIONS="--hrng=viapadlock"\n' >"$tmp/padlock"
sh "$helper" "$tmp/padlock" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "HRNGDEVICE=/dev/null (VIA PadLock) is reported, not passed on" sh -c \
    "test $rc -eq 1 && test \"\$(cat '$tmp/out')\" = 'DAEMON_ARGS=\"\"' &&
     grep -q 'HRNGDEVICE=/dev/null: it selects VIA PadLock' '$tmp/err'"
printf '# all commented out, as shipped\n#HRNGDEVICE=/dev/hwrng\n' >"$tmp/shipped"
sh "$helper" "$tmp/shipped" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a file that sets nothing: empty DAEMON_ARGS, exit 0" sh -c \
    "test $rc -eq 0 && test \"\$(cat '$tmp/out')\" = 'DAEMON_ARGS=\"\"' && test ! -s '$tmp/err'"
printf 'RNGD_OPTS="-x rdrand -W 2048"\n' >"$tmp/rngd6"
printf 'RNGD_ARGS="-R 120"\n' >"$tmp/rngd6b"
sh "$helper" "$tmp/rngd6" "$tmp/rngd6b" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "rngd 6's RNGD_OPTS and RNGD_ARGS, two files in order ($(cat "$tmp/out"))" sh -c \
    "test $rc -eq 0 && test \"\$(cat '$tmp/out')\" = 'DAEMON_ARGS=\"-x rdrand -W 2048 -R 120\"'"
(cd "$tmp" && sh "$helper" rngd6 >"$tmp/out" 2>"$tmp/err")
check "a file named without a directory is read from the current one, not PATH" \
    test "$(cat "$tmp/out")" = 'DAEMON_ARGS="-x rdrand -W 2048"'

# -a: the line goes into the defaults file, the rest of it kept.
cp "$top_srcdir/contrib/entropyd.default" "$tmp/defaults"
chmod 640 "$tmp/defaults"
sh "$helper" -a "$tmp/defaults" --rngd2 "-W 90% -B 3" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-a writes DAEMON_ARGS into the defaults file, keeping the rest (exit $rc)" sh -c \
    "test $rc -eq 1 && grep -qx 'DAEMON_ARGS=\"-W 3686\"' '$tmp/defaults' &&
     grep -qx 'DAEMON_USER=\"entropyd:entropyd\"' '$tmp/defaults' &&
     test \$(grep -c '^DAEMON_ARGS=' '$tmp/defaults') -eq 1 &&
     test \$(grep -vc '^DAEMON_ARGS=\\|^# Translated from' '$tmp/defaults') -eq \\
         \$(grep -vc '^DAEMON_ARGS=' '$top_srcdir/contrib/entropyd.default') &&
     test \$(stat -c %a '$tmp/defaults') = 640 && grep -q -- '-B 3: entropyd keeps' '$tmp/err'"
sh "$helper" -a "$tmp/defaults" --rngd6 "-x rdrand" >/dev/null 2>&1
check "-a again replaces the line, with one note above it" sh -c \
    "grep -qx 'DAEMON_ARGS=\"-x rdrand\"' '$tmp/defaults' &&
     test \$(grep -c '^# Translated from' '$tmp/defaults') -eq 1"
# The result works with the init script's defaults as sh reads them.
check "the defaults file still reads as sh" sh -c \
    ". '$tmp/defaults' && test \"\$DAEMON_ARGS\" = '-x rdrand'"
printf 'FOO=1\n' >"$tmp/noline"
sh "$helper" -a "$tmp/noline" --rngd6 "-d" >/dev/null 2>&1
check "-a adds the line to a file without one" sh -c \
    "grep -qx 'FOO=1' '$tmp/noline' && grep -qx 'DAEMON_ARGS=\"-d\"' '$tmp/noline'"

# Bad input: a clear line and a sysexits status.
sh "$helper" "$tmp/nonexistent" >/dev/null 2>"$tmp/err"
rc=$?
check "a file that cannot be read: exit 66 ($(cat "$tmp/err"))" sh -c \
    "test $rc -eq 66 && grep -q 'cannot be read' '$tmp/err'"
printf 'RNGDOPTIONS="-W 1\nif then\n' >"$tmp/broken"
sh "$helper" "$tmp/broken" >/dev/null 2>"$tmp/err"
rc=$?
check "a file that is not a shell fragment: exit 66 ($(cat "$tmp/err"))" sh -c \
    "test $rc -eq 66 && grep -q 'cannot be read as a shell fragment' '$tmp/err'"
sh "$helper" -a "$tmp/nodir/defaults" --rngd6 -d >/dev/null 2>"$tmp/err"
check "-a on a file that cannot be written: exit 73" test $? -eq 73
sh "$helper" --bogus >/dev/null 2>"$tmp/err"
rc=$?
check "an unknown option: exit 64 with the usage" sh -c \
    "test $rc -eq 64 && grep -q '^usage:' '$tmp/err'"
sh "$helper" --rngd2 >/dev/null 2>&1
check "--rngd2 without its arguments: exit 64" test $? -eq 64
if command -v shellcheck >/dev/null 2>&1; then
	check "shellcheck: the helper is clean" shellcheck -s sh "$helper"
else
	skip "shellcheck is not installed"
fi
finish
