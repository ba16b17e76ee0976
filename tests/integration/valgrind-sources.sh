#!/bin/sh
# SPDX-License-Identifier: MIT
# Memcheck over the daemon driving each kind of source it has: the CPU
# sources in reader threads, a TPM over a swtpm socket, a OneRNG on a pty
# (its start and stop commands), ALSA capture through the file plugin, and
# a drop-in plugin (its host process under memcheck too), a file read to its end. Each runs until its source delivers, then SIGTERM: a
# clean exit 0, no memory error and no definite leak. A case whose stand-in
# is missing (swtpm, ALSA, RDRAND) is skipped, saying which.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null 2>&1 || skip_all "valgrind is not installed (Debian package valgrind)"
sanitized && skip_all "a sanitizer build: valgrind cannot run an ASan binary"
plan 13

# vg_case NAME READY ARGS...: run entropyd ARGS under memcheck until its log
# matches READY and its file sink has data, then end it; two points.
vg_case() {
	name=$1
	ready=$2
	shift 2
	ENTROPYD_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite --track-fds=no \
${VG_CHILDREN:+--trace-children=yes} --log-file=$tmp/$name.vg.%p"
	export ENTROPYD_WRAPPER
	run_entropyd -f -d -x all "$@" -o "$tmp/$name.out" 2>"$tmp/$name.log" &
	vgpid=$!
	track $vgpid
	wait_for 1200 sh -c "grep -q '$ready' '$tmp/$name.log' && test -s '$tmp/$name.out'"
	check "$name: under memcheck the source delivers ($(stat -c %s "$tmp/$name.out" 2>/dev/null || echo 0) bytes)" \
	    sh -c "grep -q '$ready' '$tmp/$name.log' && test -s '$tmp/$name.out'"
	show_if_failed "$tmp/$name.log"
	kill "$vgpid"
	wait_for 600 gone "$vgpid"
	wait "$vgpid"
	rc=$?
	# Every process's log: the daemon's, and with VG_CHILDREN its plugin launcher's and hosts'.
	cat "$tmp/$name".vg.* >"$tmp/$name.vg" 2>/dev/null
	vglog=$tmp/$name.vg
	check "$name: SIGTERM: exit 0 (status $rc; 99 is a memcheck error), no memory error, no definite leak" \
	    sh -c "test $rc -eq 0 && test -n \"\$(ls '$tmp/$name'.vg.* 2>/dev/null)\" &&
	    ! grep -q 'Invalid \|uninitialised\|Mismatched free\|overlap\|definitely lost' '$vglog'"
	show_if_failed "$vglog"
	unset ENTROPYD_WRAPPER
}

# 1-2: jitter, and RDRAND where the CPU has it, both from reader threads.
if grep -qw rdrand /proc/cpuinfo; then
	vg_case cpu "jitter: start-up tests passed" -n jitter -n rdrand
else
	vg_case cpu "jitter: start-up tests passed" -n jitter
fi

# 3-4: TPM 2.0 over a swtpm socket.
if command -v swtpm >/dev/null 2>&1; then
	start_swtpm "$tmp/tpm" --tpm2 --flags not-need-init,startup-clear
	vg_case tpm "tpm: reading" -n tpm -O "tpm:device:$tmp/tpm/S" -O tpm:max_rate:100000
	stop "$swtpm_pid"
else
	skip "tpm: swtpm not installed (Debian packages swtpm, swtpm-tools)"
	skip "tpm: swtpm not installed"
fi

# 5-6: a OneRNG on a pty: commands on open, stop and flush on close.
start_fake_tty onerng onerng
vg_case onerng "usb:onerng-.*: reading" -n usb -O "usb:tty:$pts" -O usb:model:onerng
stop "$fakepid"

# 7-8: ALSA capture of recorded-noise-like input through the file plugin.
if "$top_builddir/entropyd" -l -x all -n audio 2>/dev/null | grep -q "built without ALSA"; then
	skip "audio: entropyd was built without ALSA"
	skip "audio: entropyd was built without ALSA"
elif [ ! -r /usr/share/alsa/alsa.conf ]; then
	skip "audio: no /usr/share/alsa/alsa.conf (alsa-lib's configuration)"
	skip "audio: no alsa.conf"
else
	"$top_builddir/tests/fakes/audio-gen" noise 20 >"$tmp/noise.raw"
	cat >"$tmp/alsa.conf" <<EOC
pcm.fakenoise { type file; slave.pcm "nullpcm"; file "/dev/null"; infile "$tmp/noise.raw"; format "raw" }
pcm.nullpcm { type null }
EOC
	ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:$tmp/alsa.conf vg_case audio "audio: reading" \
	    -n audio -O audio:device:fakenoise
fi

# 9-10: the example drop-in plugin (examples/serial.c) on a pty, with its
# plugin launcher and host under memcheck too.
mkdir -p "$tmp/plugins"
cp "$top_builddir/examples/.libs/serial.so" "$tmp/plugins/"
start_fake_tty serial truerng
VG_CHILDREN=1 vg_case plugin "serial: reading" --plugin-dir "$tmp/plugins" -n serial \
    -O "serial:device:$pts" -O serial:entropy:8
stop "$fakepid"
check "plugin: the launcher and the plugin host ran under memcheck too" \
    test "$(ls "$tmp"/plugin.vg.* | wc -l)" -ge 3

# 11-12: the file source read to its end (drained); valgrind-daemon.sh covers
# it in depth with the control socket and signals.
head -c 200000 /dev/urandom >"$tmp/in"
vg_case file "file: reading" -n file -O "file:path:$tmp/in" -O file:entropy:8
finish
