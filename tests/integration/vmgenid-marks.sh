# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# The "marks" scenario of the clone-detection tests, for a POSIX shell or
# busybox sh (daemon-vmgenid.sh runs it on the host, and
# daemon-vmgenid-qemu.sh inside a QEMU guest). A daemon reads known
# data (its conditioned output is SHA-256 of 64-byte pieces of it, so every
# byte it can hold is known in advance: the marks) from a FIFO with the
# uncredited file source, and writes to a FIFO sink whose reader does not
# read until told: the pipe fills, the sink holds bytes it took, the
# reserve fills and reading stops. Then the VM generation changes; the
# daemon reads the rest of the data, and the reader drains everything.
# vmgenid-marks.py checks the output: before the change only marked
# bytes, after it not one of them, and the bytes discarded are the bytes
# held.
#
# Set before use: marks_dir (a scratch directory), marks_entropyd,
# marks_entropyctl, marks_data (the known data). Optional: marks_name, the
# source reading it (default the built-in file; any source with a path
# option), and marks_total, the bytes it will have read at least at the end
# (default all of the data).

# marks_num KEY: the first number of "KEY": N in the JSON on standard input.
marks_num() { sed -n "s/.*\"$1\": \\([0-9][0-9]*\\).*/\\1/p" | head -n 1; }
# marks_ctl ARGS: entropyctl on the scenario's socket.
marks_ctl() { "$marks_entropyctl" -s "$marks_dir/ctl.sock" "$@"; }
# marks_source KEY, marks_sink KEY: a number of the file source or of the sink.
marks_source() { marks_ctl -j sources "${marks_name:-file}" | marks_num "$1"; }
marks_sink() { marks_ctl -j health | marks_num "$1"; }
# marks_wait TENTHS COMMAND...: wait up to TENTHS tenths of a second.
marks_wait() {
	marks_t=$1
	shift
	while [ "$marks_t" -gt 0 ]; do
		if "$@"; then return 0; fi
		sleep 0.1
		marks_t=$((marks_t - 1))
	done
	return 1
}
# Whether the daemon stopped reading with bytes held in its sink.
marks_settled() {
	marks_r1=$(marks_source bytes_read)
	marks_p1=$(marks_sink pending_bytes)
	sleep 1
	marks_r2=$(marks_source bytes_read)
	[ -n "$marks_r1" ] && [ "$marks_r1" = "$marks_r2" ] && [ "${marks_r1:-0}" -gt 0 ] &&
	    [ "${marks_p1:-0}" -gt 0 ] && [ "$(marks_sink pending_bytes)" = "$marks_p1" ]
}

# marks_start [ENTROPYD ARGS]: FIFOs, the writer, the held-back reader and the
# daemon; its PID in marks_pid, the reader's in marks_reader. False when it
# does not settle within 60 s.
marks_start() {
	rm -f "$marks_dir/src" "$marks_dir/out" "$marks_dir/go" "$marks_dir/out.bin"
	mkfifo "$marks_dir/src" "$marks_dir/out"
	(exec 4<"$marks_dir/out"
	 while [ ! -e "$marks_dir/go" ]; do sleep 0.1; done
	 cat <&4 >"$marks_dir/out.bin") &
	marks_reader=$!
	cat "$marks_data" >"$marks_dir/src" &
	marks_writer=$!
	"$marks_entropyd" -f -d -x all -n "${marks_name:-file}" \
	    -O "${marks_name:-file}:path:$marks_dir/src" -o "$marks_dir/out" \
	    --control-socket "$marks_dir/ctl.sock" "$@" 2>"$marks_dir/log" &
	marks_pid=$!
	marks_wait 100 test -S "$marks_dir/ctl.sock" && marks_wait 600 marks_settled
}

# marks_before: what the daemon read, wrote and holds, into $marks_dir/before.
marks_before() {
	marks_ctl -j sources "${marks_name:-file}" >"$marks_dir/source.json"
	marks_ctl -j health >"$marks_dir/health.json"
	{
		echo "read=$(marks_num bytes_read <"$marks_dir/source.json")"
		echo "tested=$(marks_num blocks_tested <"$marks_dir/source.json")"
		echo "failed=$(marks_num blocks_failed <"$marks_dir/source.json")"
		echo "held=$(( $(marks_num held_bytes <"$marks_dir/source.json") + \
		    $(marks_num pending_bytes <"$marks_dir/health.json") ))"
		echo "written=$(marks_num bytes_written <"$marks_dir/health.json")"
	} >"$marks_dir/before"
}

# The bytes discarded by the last change, from the daemon's log.
marks_discarded() {
	sed -n 's/.*VM generation changed ([a-z]*): discarded \([0-9]*\) bytes.*/\1/p' \
	    "$marks_dir/log" | tail -n 1
}

# Whether all the data was read and everything output was written.
marks_drained() {
	[ "$(marks_source bytes_read)" -ge "${marks_total:-$(wc -c <"$marks_data" | tr -d ' ')}" ] &&
	    [ "$(marks_ctl -j sources "${marks_name:-file}" | sed -n '/"reserve"/,/}/p' | marks_num bytes)" = 0 ] &&
	    [ "$(marks_sink pending_bytes)" = 0 ]
}

# marks_after: once a change was acted on, let the daemon read the rest and
# the reader drain it all; the change's count in $marks_dir/after. False
# when that does not happen within 60 s.
marks_after() {
	marks_wait 600 sh -c "grep -q 'VM generation changed' '$marks_dir/log'" || return 1
	echo "discarded=$(marks_discarded)" >"$marks_dir/after"
	touch "$marks_dir/go"
	marks_wait 600 marks_drained || return 1
	echo "failed_end=$(marks_source blocks_failed)" >>"$marks_dir/after"
	kill "$marks_pid"
	wait "$marks_pid"
	wait "$marks_reader"
	wait "$marks_writer" 2>/dev/null
	return 0
}
