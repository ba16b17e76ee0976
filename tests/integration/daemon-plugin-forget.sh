#!/bin/sh
# SPDX-License-Identifier: MIT
# A drop-in in its host hears of a VM generation change (SIGUSR2): its
# host calls the plugin's forget() for the instance, between reads, and the
# daemon drops what the host had read before and sent on its way (up to a
# window of reads, in the instance's data socket), as it wipes what it holds
# itself. The "marks" scenario (vmgenid-marks.sh) with the testmarks
# plugin, polled by its host and then read from a thread of its host: the
# plugin logs how far it had read when forget() ran, so every output the
# daemon could make from anything read before the change is known, and not
# one of them may come out after it.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropyctl=$top_builddir/entropyctl
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
plan 10

mkdir -m 755 "$tmp/plugins"
cp "$top_builddir/tests/plugins/.libs/testmarks.so" "$tmp/plugins/"
# shellcheck source=vmgenid-marks.sh
. "$top_srcdir/tests/integration/vmgenid-marks.sh"
marks_entropyd=$entropyd
marks_entropyctl=$entropyctl
marks_name=testmarks
# 100 FIPS blocks: more than the sink's pipe, its pending buffer, a reserve
# and the host's window take, so all of them hold bytes when reading stops.
head -c 250004 /dev/urandom >"$tmp/marks.data"
marks_data=$tmp/marks.data
size=$(wc -c <"$marks_data" | tr -d ' ')

# The count testmarks logged at forget(), once.
host_read() {
	sed -n 's/.*testmarks: forget called after \([0-9]*\) bytes read.*/\1/p' \
	    "$marks_dir/log" | tail -n 1
}

for mode in 0 1; do
	[ $mode = 0 ] && how="polled by its host" || how="read from a thread of its host"
	marks_dir=$tmp/marks-$mode
	mkdir -p "$marks_dir"
	unset marks_total
	marks_start --plugin-dir "$tmp/plugins" -O "testmarks:thread:$mode"
	started=$?
	track $marks_pid $marks_reader $marks_writer
	if [ $started -ne 0 ]; then
		not_ok "$how: the scenario settles with bytes held"
		diag_file "$marks_dir/log"
		for i in 1 2 3 4; do not_ok "$how: (not run)"; done
		continue
	fi
	marks_before
	kill -USR2 "$marks_pid"
	wait_for 300 sh -c "grep -q 'testmarks: forget called after' '$marks_dir/log'"
	hr=$(host_read)
	rd=$(sed -n 's/^read=//p' "$marks_dir/before")
	check "$how: its forget() ran in the host with bytes on their way (read there ${hr:-?}, by the daemon $rd)" \
	    test -n "$hr" -a "${hr:-0}" -gt "$rd"
	echo "host_read=${hr:-0}" >>"$marks_dir/before"
	# Those on their way are dropped: the daemon reads the rest.
	marks_total=$((size - ${hr:-0} + rd))
	if marks_after; then
		python3 "$top_srcdir/tests/integration/vmgenid-marks.py" \
		    "$marks_data" "$marks_dir/out.bin" \
		    "$marks_dir/before" "$marks_dir/after" >"$marks_dir/check"
	else
		echo "not ok the scenario drains (read $(marks_source bytes_read) of $marks_total)" \
		    >"$marks_dir/check"
		diag_file "$marks_dir/log"
	fi
	checker_points "$marks_dir/check" 4 "$how"
	stop $marks_pid $marks_reader $marks_writer
done
finish
