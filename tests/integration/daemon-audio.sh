#!/bin/sh
# The audio source through ALSA's file plugin over the null plugin, replaying
# synthetic captures (tests/fakes/audio-gen): noise passes FIPS; input that
# ends, a pure tone and a clipped signal are rejected, each naming its cause in
# the log and in the SIGUSR1 statistics; a device that cannot be opened leaves
# the daemon running on another source.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
gen=$top_builddir/tests/fakes/audio-gen
alsaconf=/usr/share/alsa/alsa.conf

"$entropyd" -l -x all -n audio 2>/dev/null | grep -q "built without ALSA" &&
    skip_all "entropyd was built without ALSA"
[ -r "$alsaconf" ] || skip_all "no $alsaconf (alsa-lib's configuration)"
plan 17

# One fake capture device per prepared recording: S16_LE mono at 48 kHz.
# The noise must outlast any run on it: past its end the file plugin gives
# zeros, and the daemon rightly says "silence". A daemon writing to a pipe
# reads only while its reader takes what it writes, but entropytest stops
# reading only once it has its blocks, after a last read of up to a pipe
# buffer (64 KiB), and leaves the daemon at most another pipe buffer, its
# pending write (16 KiB) and its reserve (16 KiB) ahead: under 180 kB of
# output, 320 s of this recording at about 560 bytes of output a second.
# (With 40 s, a reader slow to exit under load let the daemon reach the end.)
"$gen" noise 320 >"$tmp/noise.raw"
"$gen" noise 3 >"$tmp/ends.raw"
"$gen" tone 4 >"$tmp/tone.raw"
"$gen" clipped 4 >"$tmp/clipped.raw"
# The click's noise too must outlast the run, else the daemon, silent past
# its end, never writes again to notice its reader gone (the timeout ends it).
{ "$gen" clipped 1; "$gen" noise 320; } >"$tmp/click.raw"
: >"$tmp/alsa.conf"
for dev in noise ends tone clipped click; do
	cat >>"$tmp/alsa.conf" <<EOC
pcm.fake$dev { type file; slave.pcm "nullpcm"; file "/dev/null"; infile "$tmp/$dev.raw"; format "raw" }
EOC
done
echo 'pcm.nullpcm { type null }' >>"$tmp/alsa.conf"
ALSA_CONFIG_PATH=$alsaconf:$tmp/alsa.conf
export ALSA_CONFIG_PATH

# Noise through the whole pipeline into entropytest.
( timeout 60 "$entropyd" -f -x all -n audio -O audio:device:fakenoise -o - 2>"$tmp/noise.log"
    echo $? >"$tmp/noise.rc" ) | "$entropytest" -c 5 2>"$tmp/noise.fips" >/dev/null
wait_for 100 test -s "$tmp/noise.rc"
check "recorded-noise-like capture: 5 conditioned blocks pass FIPS 140-2" \
    fips_ok "$tmp/noise.fips" 5
check "the device is read at its native format and rate" \
    grep -q "audio: fakenoise: S16_LE, 16 significant bits, 48000 Hz, 1 channel" "$tmp/noise.log"
check "the noise raised no signal error; the daemon ended with its reader" sh -c \
    "! grep -Eq 'silence|clipping|tone|repeating' '$tmp/noise.log' &&
     grep -q 'closed by its reader' '$tmp/noise.log'"
show_if_failed "$tmp/noise.log"

# The other extraction settings deliver too; a bad value is a usage error.
( timeout 60 "$entropyd" -f -x all -n audio -O audio:device:fakenoise -O audio:bits:4 \
    -O audio:debias:none -o - 2>"$tmp/none.log"; echo $? >"$tmp/none.rc" ) |
    "$entropytest" -c 3 2>"$tmp/none.fips" >/dev/null
wait_for 100 test -s "$tmp/none.rc"
check "4 bits without debiasing: conditioned blocks pass FIPS 140-2" \
    fips_ok "$tmp/none.fips" 3
"$entropyd" -f -x all -n audio -O audio:bits:5 -o /dev/null 2>"$tmp/bits.err"
echo $? >"$tmp/bits.rc"
check "bits out of range: exit 64 and one line saying why" sh -c \
    "test \$(cat '$tmp/bits.rc') = 64 && grep -qx 'entropyd: audio: bits: 5: not a number from 1 to 4' '$tmp/bits.err'"

# The first second (a start-up click, here a clipped one) is thrown away.
( timeout 60 "$entropyd" -f -x all -n audio -O audio:device:fakeclick -o - 2>"$tmp/click.log"
    echo $? >"$tmp/click.rc" ) | "$entropytest" -c 3 2>"$tmp/click.fips" >/dev/null
wait_for 100 test -s "$tmp/click.rc"
check "a clipped first second is discarded, not judged; the daemon ended with its reader" \
    eval "fips_ok '$tmp/click.fips' 3 && ! grep -q clipping '$tmp/click.log' &&
    grep -q 'closed by its reader' '$tmp/click.log'"

# reject NAME LOGLINE: run the daemon on fakeNAME until the log names the
# cause, then until SIGUSR1's statistics carry it as the last error.
reject() {
	name=$1
	line=$2
	"$entropyd" -f -x all -n audio -O audio:device:fake$name -o /dev/null \
	    2>"$tmp/$name.log" &
	pid=$!
	track $pid
	check "$name: the log says \"$line\"" wait_for 200 grep -qF "audio: $line" "$tmp/$name.log"
	check "$name: SIGUSR1 statistics give it as the last error, source absent" \
	    wait_for 200 sh -c "kill -USR1 $pid; grep -q 'audio: absent for .*last error: $line.*; absent' '$tmp/$name.log'"
	check "$name: the daemon runs on and retries the source" \
	    wait_for 200 sh -c "test \$(grep -c 'audio: reading fake$name' '$tmp/$name.log') -ge 2 && kill -0 $pid"
	stop $pid
}
reject ends "silence on fakeends (all samples zero for 1.0 s)"
reject tone "pure tone on faketone (about "
reject clipped "clipping on fakeclipped ("

# A device that cannot be opened: one clear line, and the other source delivers.
head -c 200000 /dev/urandom >"$tmp/bytes"
( timeout 60 "$entropyd" -f -x all -n audio -O audio:device:nosuch -n file \
    -O "file:path:$tmp/bytes" -o - 2>"$tmp/nosuch.log"; echo $? >"$tmp/nosuch.rc" ) |
    "$entropytest" -c 3 2>"$tmp/nosuch.fips" >/dev/null
wait_for 100 test -s "$tmp/nosuch.rc"
check "an unopenable device is reported and the file source still delivers" eval \
    "grep -q 'audio: not used: cannot open ALSA capture device nosuch: No such file or directory' \
    '$tmp/nosuch.log' && fips_ok '$tmp/nosuch.fips' 3"
check "-l says why the device is unusable" sh -c \
    "'$entropyd' -l -O audio:device:nosuch 2>/dev/null | grep -q '^audio .*unusable: cannot open ALSA capture device nosuch'"

finish
