#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: entropyd against what it replaces, side by side.  Each
# comparison interleaves its two sides over BENCH_RUNS runs and prints one
# line: both sides (medians), the ratio, the ratio's min/median/max over the
# runs, and the target from the performance issue with PASS or MISS.
#
# Environment: BENCH_MB (test data, default 100), BENCH_RUNS (default 5),
# BENCH_IDLE (seconds of the idle window, default 60), BENCH_NO_INSTALL=1
# (never apt-get rngtest), top_builddir (where the binaries are).
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
mb=${BENCH_MB:-100}
runs=${BENCH_RUNS:-5}
idle=${BENCH_IDLE:-60}
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
entropyctl=$top_builddir/entropyctl
bench=$top_builddir/tests/bench/entropyd-bench
plugins=$top_builddir/tests/plugins/.libs
# Plugins run in the plugin host built here.
ENTROPYD_PLUGIN_HOST=${ENTROPYD_PLUGIN_HOST:-$top_builddir/entropyd-plugin}
export ENTROPYD_PLUGIN_HOST
shm=/dev/shm
[ -d "$shm" ] && [ -w "$shm" ] || shm=${TMPDIR:-/tmp}
work=$(mktemp -d "$shm/entropyd-bench.XXXXXX") || exit 1
# The daemons here keep their generation file, its socket and their hooks to
# themselves: never the system's.
ENTROPYD_GENERATION_FILE=$work/generation
ENTROPYD_GENERATION_HOOKS=$work/generation.d
export ENTROPYD_GENERATION_FILE ENTROPYD_GENERATION_HOOKS
pids=""

# Stop what was started (by PID) and remove the scratch directory.
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for f in "$entropyd" "$entropytest" "$entropyctl" "$bench" "$ENTROPYD_PLUGIN_HOST"; do
	[ -x "$f" ] || { echo "bench: $f is not built (run make bench)" >&2; exit 1; }
done

# Seconds since the epoch, to the nanosecond.
now() { date +%s.%N; }
# calc EXPR: arithmetic on decimals.
calc() { awk "BEGIN { printf \"%.9g\\n\", $* }"; }
# Elapsed seconds of a command (its output thrown away).
timed() {
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	calc "$t1 - $t0"
}
# min median max of the numbers on standard input, one per line.
stats() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "- - -"; exit }
	m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "%.3g %.3g %.3g\n", v[1], m, v[NR] }'; }
# median of the numbers on standard input.
median() { stats | cut -d' ' -f2; }
# Human rate: bytes per second as kB/s, MB/s or GB/s.
rate() { awk -v r="$1" 'BEGIN { u = "B/s"; if (r >= 1e3) { r /= 1e3; u = "kB/s" }
	if (r >= 1e3) { r /= 1e3; u = "MB/s" } if (r >= 1e3) { r /= 1e3; u = "GB/s" }
	printf "%.3g %s", r, u }'; }
# verdict VALUE OP TARGET: PASS or MISS.
verdict() { awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
	ok = op == ">=" ? v >= t : v <= t; print ok ? "PASS" : "MISS" }'; }
# line FIGURE TEXT: one figure line.
line() { printf '%-12s %s\n' "$1" "$2"; }
# ratio_line FIGURE LEFT RIGHT RATIOS_FILE OP TARGET: both sides, ratios, target.
ratio_line() {
	set -- "$1" "$2" "$3" "$(stats <"$4")" "$5" "$6"
	med=$(echo "$4" | cut -d' ' -f2)
	line "$1" "$2 | $3 | ratio $med (min/median/max $(echo "$4" | tr ' ' /)) | target $5 $6 $(verdict "$med" "$5" "$6")"
}

echo "entropyd bench: ${mb} MB of test data in $shm, $runs runs per comparison"

# --- FIPS testing: entropytest against rngtest on the same data ---------------
if ! command -v rngtest >/dev/null 2>&1 && [ "${BENCH_NO_INSTALL:-0}" != 1 ] &&
    [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "bench: installing rngtest (rng-tools-debian)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q rng-tools-debian >/dev/null 2>&1 ||
	    { apt-get update -q >/dev/null 2>&1 &&
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q rng-tools-debian >/dev/null 2>&1; }
fi
head -c $((mb * 1000000)) /dev/urandom >"$work/data"
bytes=$(stat -c %s "$work/data")
if command -v rngtest >/dev/null 2>&1; then
	: >"$work/fips.ratio"
	: >"$work/fips.et"
	: >"$work/fips.rt"
	r=0
	while [ $r -lt "$runs" ]; do
		tr=$(timed rngtest <"$work/data")
		te=$(timed "$entropytest" <"$work/data")
		echo "$tr" >>"$work/fips.rt"
		echo "$te" >>"$work/fips.et"
		calc "$tr / $te" >>"$work/fips.ratio"
		r=$((r + 1))
	done
	emed=$(median <"$work/fips.et")
	rmed=$(median <"$work/fips.rt")
	ratio_line fips "entropytest $(rate "$(calc "$bytes / $emed")")" \
	    "rngtest $(rate "$(calc "$bytes / $rmed")")" \
	    "$work/fips.ratio" ">=" 40
	# Failure counts per test, side by side; they must be identical.
	rngtest <"$work/data" 2>"$work/r.err" >/dev/null
	"$entropytest" <"$work/data" 2>"$work/e.err" >/dev/null
	counts=""
	same=1
	for t in "failures" "Monobit" "Poker" "Runs" "Long run" "Continuous run"; do
		rc=$(sed -n "s/^rngtest: FIPS 140-2.* $t: //p" "$work/r.err")
		ec=$(sed -n "s/^entropytest: FIPS 140-2.* $t: //p" "$work/e.err")
		counts="$counts $(echo "$t" | tr ' A-Z' '_a-z') $ec/$rc"
		[ -n "$rc" ] && [ "$rc" = "$ec" ] || same=0
	done
	if [ $same = 1 ]; then
		line fips-counts "entropytest/rngtest:$counts | identical"
	else
		line fips-counts "entropytest/rngtest:$counts | MISMATCH"
	fi
else
	line fips "skipped: rngtest is not installed (apt-get install rng-tools-debian)"
	line fips-counts "skipped: rngtest is not installed"
fi

# --- Conditioning: the conditioner against raw SHA-256 -----------------------
"$bench" condition "$mb" "$runs" >"$work/cond" || { echo "bench: entropyd-bench failed" >&2; exit 1; }
awk '{ print $4 / $2 }' "$work/cond" >"$work/cond.ratio"
cmed=$(awk '{ print $2 }' "$work/cond" | median)
smed=$(awk '{ print $4 }' "$work/cond" | median)
ratio_line condition "conditioner $(rate "$(calc "$bytes / $cmed")")" \
    "raw SHA-256 $(rate "$(calc "$bytes / $smed")")" "$work/cond.ratio" ">=" 0.9

# --- Pipeline: a fast source through FIPS and SHA to a file sink -------------
# pipeline_run SECONDS|- DAEMON-ARGS...: input bytes per second the daemon
# read from the source (its own counter, from the SIGUSR1 statistics) while
# putting them through the tests and SHA-256 to a file sink on tmpfs, from
# exec for SECONDS (or to the source's end with -).
pipeline_run() {
	secs=$1
	shift
	rm -f "$work/out"
	: >"$work/plog"
	t0=$(now)
	"$entropyd" -f -d --control-socket "$work/ctl.sock" -o "$work/out" "$@" 2>"$work/plog" &
	pid=$!
	pids="$pids $pid"
	if [ "$secs" = - ]; then
		while kill -0 "$pid" 2>/dev/null && ! grep -q "source drained" "$work/plog"; do
			sleep 0.01
		done
	else
		sleep "$secs"
	fi
	t1=$(now)
	kill -USR1 "$pid" 2>/dev/null
	n=0
	while ! grep -q "; read [0-9]* bytes" "$work/plog" && [ $n -lt 500 ]; do
		sleep 0.01
		n=$((n + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	read=$(sed -n 's/.*; read \([0-9]*\) bytes.*/\1/p' "$work/plog" | head -1)
	echo "${read:-0} $t0 $t1" | awk '{ printf "%.6g\n", $1 / ($3 - $2) }'
}
# pipeline_case NAME SECONDS|- RAW-SECONDS -- DAEMON-ARGS...: the figure
# lines of the daemon's input rate against the module's own read() rate
# in-process (entropyd-bench source, the same module and options), with the
# repeated-output test (the default: "pipeline") and without it
# (--no-repeat-test: "pipeline-norepeat"), and the cost of the test as the
# ratio of the two ("repeat-cost"), all three interleaved over the runs.
pipeline_case() {
	name=$1
	secs=$2
	rawsecs=$3
	shift 4
	: >"$work/pipe.ratio"
	: >"$work/pipe.d"
	: >"$work/pipe.r"
	: >"$work/pipe.n"
	: >"$work/pipe.nratio"
	: >"$work/pipe.cost"
	r=0
	while [ $r -lt "$runs" ]; do
		d=$(pipeline_run "$secs" -x all -n "$name" "$@")
		w=$("$bench" source "$name" "$rawsecs" "$@" | awk '{ printf "%.6g", $2 / $3 }')
		n=$(pipeline_run "$secs" -x all -n "$name" --no-repeat-test "$@")
		echo "$d" >>"$work/pipe.d"
		echo "$w" >>"$work/pipe.r"
		echo "$n" >>"$work/pipe.n"
		echo "$d $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' >>"$work/pipe.ratio"
		echo "$n $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' >>"$work/pipe.nratio"
		echo "$d $n" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' >>"$work/pipe.cost"
		r=$((r + 1))
	done
	ratio_line "pipeline" "$name via entropyd $(rate "$(median <"$work/pipe.d")")" \
	    "$name read() alone $(rate "$(median <"$work/pipe.r")")" "$work/pipe.ratio" ">=" 0.6
	ratio_line "pipeline-norepeat" \
	    "$name via entropyd --no-repeat-test $(rate "$(median <"$work/pipe.n")")" \
	    "$name read() alone $(rate "$(median <"$work/pipe.r")")" "$work/pipe.nratio" ">=" 0.6
	ratio_line "repeat-cost" "pipeline with the repeat test $(rate "$(median <"$work/pipe.d")")" \
	    "without $(rate "$(median <"$work/pipe.n")")" "$work/pipe.cost" ">=" 0.95
}
# kernel_case NAME SECONDS RAW-SECONDS -- OPTIONS...: the same source through
# the pipeline and the kernel sink's policy to a real feeder process that
# credits /dev/random (entropyd-bench feed), against read() alone.
kernel_case() {
	name=$1
	secs=$2
	rawsecs=$3
	shift 4
	: >"$work/kern.ratio"
	: >"$work/kern.d"
	: >"$work/kern.r"
	r=0
	while [ $r -lt "$runs" ]; do
		d=$("$bench" feed "$name" "$secs" "$@" | awk '{ printf "%.6g", $2 / $3 }')
		w=$("$bench" source "$name" "$rawsecs" "$@" | awk '{ printf "%.6g", $2 / $3 }')
		echo "${d:-0}" >>"$work/kern.d"
		echo "$w" >>"$work/kern.r"
		echo "${d:-0} $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' >>"$work/kern.ratio"
		r=$((r + 1))
	done
	ratio_line "pipeline-kernel" "$name via the feeder $(rate "$(median <"$work/kern.d")")" \
	    "$name read() alone $(rate "$(median <"$work/kern.r")")" "$work/kern.ratio" ">=" 0.6
}
# RDRAND where the daemon has it and says it is usable here; else the file
# source on tmpfs, credited 8 bits per byte.
if "$entropyd" -l 2>/dev/null | awk '$1 == "rdrand" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	pipeline_case rdrand 3 1 --
	kernel_source="rdrand 3 1 --"
else
	pipeline_case file - 5 -- -O "file:path:$work/data" -O file:entropy:8
	kernel_source="file 5 5 -- -O file:path:$work/data -O file:entropy:8"
fi
if [ "$(id -u)" -eq 0 ]; then
	# shellcheck disable=SC2086 # the source's name, times and options
	kernel_case $kernel_source
else
	line pipeline-kernel "skipped: the feeder credits /dev/random: needs root"
fi

# --- SP 800-90B assessment: entropytest -e against NIST's ea_non_iid ---------
# A million 8-bit samples, uniform bytes and the jitter source's own capture;
# both tools on one core (taskset where there is one, one OpenMP thread),
# timed in CPU seconds (user + system), so other work on the machine counts
# against neither; BENCH_ASSESS_RUNS (default 3) runs each, interleaved.
# NIST's tool: ENTROPYD_NIST_EA_NON_IID, else ea_non_iid on the PATH.
# cputime CMD...: the CPU seconds a command took (its output thrown away).
cputime() {
	sh -c '"$@" >/dev/null 2>&1; times' sh "$@" | awk 'NR == 2 {
		t = 0; for (i = 1; i <= 2; i++) { v = $i; sub(/s$/, "", v); split(v, a, "m")
		t += a[1] * 60 + a[2] } printf "%.3f\n", t }'
}
nist=${ENTROPYD_NIST_EA_NON_IID:-$(command -v ea_non_iid 2>/dev/null)}
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
one_core=""
command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null && one_core="taskset -c 0"
if [ -n "$nist" ] && [ -x "$nist" ]; then
	head -c 1000000 /dev/urandom >"$work/assess-random"
	"$entropyd" -f -x all -n jitter -o /dev/null --control-socket "$work/cap.sock" \
	    --capture "jitter:1000000:$work/assess-jitter" 2>"$work/cap.log" &
	pid=$!
	pids="$pids $pid"
	n=0
	while ! grep -q "captured 1000000" "$work/cap.log" && [ $n -lt 6000 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	for kind in random jitter; do
		f=$work/assess-$kind
		if [ ! -s "$f" ]; then
			line "assess-$kind" "skipped: no capture; $(tail -1 "$work/cap.log")"
			continue
		fi
		: >"$work/as.ratio"
		: >"$work/as.et"
		: >"$work/as.n"
		r=0
		while [ $r -lt "${BENCH_ASSESS_RUNS:-3}" ]; do
			# shellcheck disable=SC2086 # one_core is a command and its argument, or nothing
			tn=$(cputime $one_core "$nist" "$f" 8)
			# shellcheck disable=SC2086
			te=$(cputime $one_core "$entropytest" -e -w 8 "$f")
			echo "$tn" >>"$work/as.n"
			echo "$te" >>"$work/as.et"
			calc "$tn / $te" >>"$work/as.ratio"
			r=$((r + 1))
		done
		ratio_line "assess-$kind" "entropytest -e $(median <"$work/as.et") CPU s" \
		    "ea_non_iid $(median <"$work/as.n") CPU s (1000000 8-bit samples, one core)" \
		    "$work/as.ratio" ">=" 20
	done
else
	line assess-random "skipped: NIST's ea_non_iid not found (set ENTROPYD_NIST_EA_NON_IID)"
	line assess-jitter "skipped: NIST's ea_non_iid not found"
fi

# --- The repeat test's CPU cost: the pipeline in one process, no source -------
"$bench" pipeline "$mb" "$runs" >"$work/pcpu" || { echo "bench: entropyd-bench failed" >&2; exit 1; }
awk '{ print $4 / $2 }' "$work/pcpu" >"$work/pcpu.ratio"
pw=$(awk '{ print $2 }' "$work/pcpu" | median)
pn=$(awk '{ print $4 }' "$work/pcpu" | median)
ratio_line repeat-cpu "pipeline in-process with the repeat test $(rate "$(calc "$bytes / $pw")")" \
    "without $(rate "$(calc "$bytes / $pn")")" "$work/pcpu.ratio" ">=" 0.95

# --- Online entropy estimates: their cost on the jitter source -------------
# The jitter source read as the daemon reads it, through a pipeline with the
# estimates on and then off, in one process, BENCH_EST_SECONDS (default 2)
# of CPU time each, interleaved over the runs; the rates are per CPU second
# (other work on the machine counts against neither side), and the ratio is
# the rate with them on over the rate without.
est_secs=${BENCH_EST_SECONDS:-2}
if "$bench" estimate jitter "$est_secs" "$runs" >"$work/est" 2>"$work/est.err"; then
	awk '{ print ($5 > 0 && $4 > 0) ? ($2 / $3) / ($4 / $5) : 0 }' "$work/est" >"$work/est.ratio"
	onmed=$(awk '{ print $2 / $3 }' "$work/est" | median)
	offmed=$(awk '{ print $4 / $5 }' "$work/est" | median)
	ratio_line estimate "jitter with estimates $(rate "$onmed") per CPU s" \
	    "without $(rate "$offmed")" "$work/est.ratio" ">=" 0.9
else
	line estimate "skipped: $(tail -1 "$work/est.err")"
fi

# --- Jitter's credit: its own clock, and an emulated 24 MHz counter ---------
# The jitter source as the daemon runs it (its pipeline with the online
# estimates; a suspension starts it afresh at once), BENCH_JITTER_SECONDS
# (default 10) of CPU time per run: credited bits per CPU second, the credit
# per sample it ended at, and suspensions. On a 24 MHz counter (many arm64
# boards have no finer one) start-up grows the work until the samples carry
# entropy: it must credit at least 1000 bits a second and never be suspended.
jit_secs=${BENCH_JITTER_SECONDS:-10}
for clock in default 24mhz; do
	opt=""
	[ $clock = 24mhz ] && opt="-O jitter:quantize_hz:24M"
	: >"$work/jit.rate"
	: >"$work/jit.susp"
	r=0
	while [ $r -lt "$runs" ]; do
		# shellcheck disable=SC2086 # opt is an option and its value, or nothing
		"$bench" credit jitter "$jit_secs" $opt >"$work/jit" 2>"$work/jit.err" || break
		awk '{ printf "%.6g\n", $2 / $3 }' "$work/jit" >>"$work/jit.rate"
		awk '{ print $4 }' "$work/jit" >>"$work/jit.susp"
		r=$((r + 1))
	done
	if [ ! -s "$work/jit.rate" ]; then
		line "jitter-$clock" "skipped: $(tail -1 "$work/jit.err")"
		continue
	fi
	s=$(stats <"$work/jit.rate")
	med=$(echo "$s" | cut -d' ' -f2)
	susp=$(awk '{ n += $1 } END { print n + 0 }' "$work/jit.susp")
	per=$(awk '{ print $5 }' "$work/jit")
	if [ $clock = 24mhz ]; then
		ok=$(awk -v m="$med" -v s="$susp" 'BEGIN { print (m >= 1000 && s == 0) ? "PASS" : "MISS" }')
		target="target >= 1000 bits/s, no suspension $ok"
	else
		target="target: at least today's default (credited bits per CPU second)"
	fi
	line "jitter-$clock" "$med credited bits per CPU s (min/median/max $(echo "$s" | tr ' ' /)), credit $per bits per sample at the end, $susp suspensions | $target"
done

# --- Plugins: a drop-in in its host process ----------------------------------
# plugin-pipeline: a built-in compiled unchanged as a drop-in, through its
# host and the whole pipeline, against the same module's read() alone (as
# the pipeline line measures the built-in): RDRAND (tests/plugins/
# rdrandplug.c) where the daemon says it is usable; else the file source
# (tests/plugins/fileplug.c) on tmpfs, whose read() alone is a memory copy
# no pipeline comes near, so there the built-in file source through the
# pipeline is the baseline and the line says so. The built-in through the
# pipeline is printed either way, for the cost of the host alone.
mkdir -m 755 "$work/plugins"
cp "$plugins/fileplug.so" "$plugins/rdrandplug.so" "$plugins/many.so" "$work/plugins/"
: >"$work/plug.ratio"
: >"$work/plug.d"
: >"$work/plug.b"
: >"$work/plug.r"
if "$entropyd" -l 2>/dev/null | awk '$1 == "rdrand" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	plug=rdrandplug mod=rdrand secs=3
else
	plug=fileplug mod=file secs=-
fi
r=0
while [ $r -lt "$runs" ]; do
	if [ $mod = rdrand ]; then
		d=$(pipeline_run $secs -x all -n $plug --plugin-dir "$work/plugins")
		b=$(pipeline_run $secs -x all -n $mod)
		w=$("$bench" source $mod 1 | awk '{ printf "%.6g", $2 / $3 }')
	else
		d=$(pipeline_run $secs -x all -n $plug -O "$plug:path:$work/data" -O $plug:entropy:8 \
		    --plugin-dir "$work/plugins")
		b=$(pipeline_run $secs -x all -n $mod -O "$mod:path:$work/data" -O $mod:entropy:8)
		w=$b
	fi
	echo "$d" >>"$work/plug.d"
	echo "$b" >>"$work/plug.b"
	echo "$w" >>"$work/plug.r"
	echo "$d $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }' >>"$work/plug.ratio"
	r=$((r + 1))
done
if [ $mod = rdrand ]; then
	base="rdrand read() alone $(rate "$(median <"$work/plug.r")")"
else
	base="no RDRAND here: the built-in file via entropyd $(rate "$(median <"$work/plug.r")")"
fi
ratio_line plugin-pipeline "$plug via its host and entropyd $(rate "$(median <"$work/plug.d")") (built-in $mod via entropyd $(rate "$(median <"$work/plug.b")"))" \
    "$base" "$work/plug.ratio" ">=" 0.5

# The daemon with the many plugin (N instances of /dev/urandom) and a FIFO
# sink that nobody reads: once the pipe and the reserves are full, nothing
# is wanted. plugin_start N: sets $pid.
mkfifo "$work/sink"
exec 9<>"$work/sink"
plugin_start() {
	"$entropyd" -f -d --control-socket "$work/ctl.sock" -x all -n many \
	    -O "many:instances:$1" --plugin-dir "$work/plugins" -o "$work/sink" 2>"$work/mlog" &
	pid=$!
	pids="$pids $pid"
}
# family: the daemon, its plugin launcher and the hosts.
family() {
	echo "$pid"
	for l in $(pgrep -P "$pid" 2>/dev/null); do echo "$l"; pgrep -P "$l" 2>/dev/null; done
}
# hosts: the plugin hosts alone.
hosts() { for l in $(pgrep -P "$pid" 2>/dev/null); do pgrep -P "$l" 2>/dev/null; done; }
# family_wakeups: voluntary + involuntary context switches of every thread of the family.
family_wakeups() {
	for p in $(family); do cat /proc/"$p"/task/*/status 2>/dev/null; done |
	    awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
# family_settle: wait until the family made no switch for 2 s, up to 30 s.
family_settle() {
	last=$(family_wakeups)
	waited=0
	while [ $waited -lt 30 ]; do
		sleep 2
		cur=$(family_wakeups)
		[ "$cur" = "$last" ] && return 0
		last=$cur
		waited=$((waited + 2))
	done
	return 1
}
# pss PID...: their proportional set size summed, in kB.
pss() {
	for p in "$@"; do cat /proc/"$p"/smaps_rollup 2>/dev/null; done |
	    awk '/^Pss:/ { n += $2 } END { print n + 0 }'
}

# plugin-idle-wakeups: a loaded plugin's instance, reserves full.
plugin_start 1
settled=""
family_settle || settled=" (still busy after 30 s)"
w0=$(family_wakeups)
sleep "$idle"
wk=$(($(family_wakeups) - w0))
line plugin-idle-wakeups "$wk wake-ups in ${idle} s of the daemon, its launcher and a plugin host with one instance, reserves full$settled | target 0 $(verdict "$wk" "<=" 0)"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# plugin-pss: the hosts' PSS with 1, 4 and 16 instances, and the daemon's.
figures=""
dfigures=""
for n in 1 4 16; do
	plugin_start $n
	family_settle
	hp=$(pss $(hosts))
	dp=$(pss "$pid")
	eval "host_$n=$hp daemon_$n=$dp"
	figures="$figures${figures:+/}$(calc "$hp / 1024" | awk '{ printf "%.2f", $1 }')"
	dfigures="$dfigures${dfigures:+/}$(calc "$dp / 1024" | awk '{ printf "%.2f", $1 }')"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done
per=$(calc "($daemon_16 - $daemon_1) / 15" | awk '{ printf "%.1f", $1 }')
hmb=$(calc "$host_16 / 1024")
line plugin-pss "plugin hosts' PSS with 1/4/16 instances $figures MB; daemon's PSS $dfigures MB, +$per kB per instance (its pipeline and its 16 KiB reserve) | target 16 instances <= 8 MB $(verdict "$hmb" "<=" 8)"

# --- The generation's long poll: 1000 waiters, their memory and wake-up ------
# A daemon in test mode (no kernel: a change is published at once, on
# SIGUSR2), 1000 long polls of GET /generation on its generation socket
# (entropyd-bench waiters), its PSS before and once all wait, then a change:
# when each answer arrived after the new ID was written (the file's mtime).
gw=$work/gw
mkdir -p "$gw"
head -c 100000 /dev/urandom >"$gw/data"
"$entropyd" -f -t -x all -n file -O "file:path:$gw/data" --control-socket "$gw/ctl.sock" \
    --generation-file "$gw/generation" 2>"$gw/log" &
pid=$!
pids="$pids $pid"
n=0
while { [ ! -S "$gw/generation.sock" ] || [ ! -s "$gw/generation" ]; } && [ $n -lt 500 ]; do
	sleep 0.01
	n=$((n + 1))
done
sleep 1
p0=$(pss "$pid")
"$bench" waiters "$gw/generation.sock" "$gw/generation" 1000 >"$gw/out" 2>"$gw/err" &
bpid=$!
pids="$pids $bpid"
n=0
while ! "$entropyctl" -s "$gw/ctl.sock" metrics 2>/dev/null |
    grep -q '^entropyd_generation_waiters 1000$' && [ $n -lt 600 ]; do
	sleep 0.05
	n=$((n + 1))
done
p1=$(pss "$pid")
kill -USR2 "$pid"
wait "$bpid"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
grep '^waiters ' "$gw/out" >"$gw/out.line"
read -r _ wn wok wp99 wmax <"$gw/out.line" 2>/dev/null
if [ "${wn:-0}" -eq 1000 ] && [ "${wok:-0}" -eq 1000 ]; then
	cost=$((p1 - p0))
	line generation-waiters "1000 long polls: daemon PSS +$cost kB ($(calc "$cost * 1024 / 1000" | awk '{ printf "%.0f", $1 }') bytes a waiter, kernel socket buffers not counted) | target <= 1024 kB $(verdict "$cost" "<=" 1024); all answered, after the new ID was written p99 $wp99 ms, max $wmax ms | target <= 100 ms $(verdict "$wmax" "<=" 100)"
else
	line generation-waiters "MISS: ${wok:-0} of 1000 waiters answered; $(tail -1 "$gw/err") $(tail -1 "$gw/log")"
fi
# --- The EGD broker: what guests get ------------------------------------------
# The fastest credited source here: RDSEED, else the file source on a FIFO
# fed at RDSEED's rate (14 MB/s, BENCH_EGD_PACE bytes a second), a hardware
# source's pace: unpaced, the FIFO is as fast as the CPU, and the loop's
# time spent serving guests is time it cannot spend conditioning, so no
# broker could serve 0.9 of what it makes alone (on one 2-core machine
# with RDRAND and no RDSEED, unpaced: 32 MB/s served of 76 MB/s with one
# client, 10 MB/s with 100). egd-capacity: its conditioned bytes a second in test mode
# (the discard sink takes them all), over BENCH_EGD_SECONDS (default 5);
# full entropy made of them is half that (two conditioned bytes at 8 bits
# a byte per byte served). Then the same source with a sink nobody reads
# (once it is full the reserves are the broker's), --egd-share 100 and no
# rate limit: 1, 10 and 100 clients each keeping 16 blocking reads of 255
# bytes asked (egd-N): what they were served over that full-entropy rate,
# target 0.9, and Jain's fairness index across them, target 0.95;
# egd-latency: p99 of a 64-byte blocking read when the stock has bytes,
# target 5 ms; egd-rss: the worker's RSS growth per idle client, target 4 KiB.
egd_secs=${BENCH_EGD_SECONDS:-5}
if "$entropyd" -l 2>/dev/null | awk '$1 == "rdseed" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	set -- -x all -n rdseed
	egd_src=rdseed
else
	mkfifo "$work/egd.in"
	egd_pace=${BENCH_EGD_PACE:-14000000}
	"$bench" egdpace "$work/data" "$egd_pace" >"$work/egd.in" 2>/dev/null &
	pids="$pids $!"
	set -- -x all -n file -O "file:path:$work/egd.in" -O file:entropy:8
	egd_src="file on a FIFO at $(rate "$egd_pace")"
fi
# conditioned: the bytes every source conditioned so far, from /sources.
conditioned() {
	"$top_builddir/entropyctl" -s "$work/egd-ctl.sock" -j sources |
	    sed -n 's/.*"bytes_conditioned": \([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}
# egd_capacity ARGS...: the source's full entropy a second in test mode, into $cap.
egd_capacity() {
	"$entropyd" -f -t --control-socket "$work/egd-ctl.sock" "$@" 2>"$work/egd-cap.log" &
	pid=$!
	pids="$pids $pid"
	n=0
	while [ ! -S "$work/egd-ctl.sock" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	sleep 1
	c0=$(conditioned)
	t0=$(now)
	sleep "$egd_secs"
	c1=$(conditioned)
	t1=$(now)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	cap=$(calc "($c1 - $c0) / ($t1 - $t0) / 2")
}
# Measured before and after the clients' runs (the machine's load moves it): the mean.
egd_capacity "$@"
cap0=$cap
mkfifo "$work/egd-sink"
exec 8<>"$work/egd-sink"
"$entropyd" -f --control-socket "$work/egd-ctl.sock" -o "$work/egd-sink" "$@" \
    --egd-socket "$work/egd.sock" --egd-rate 0 --egd-share 100 2>"$work/egd.log" &
pid=$!
pids="$pids $pid"
n=0
while [ ! -S "$work/egd.sock" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
sleep 1
for clients in 1 10 100; do
	"$bench" egd $clients "$egd_secs" "$work/egd.sock" >"$work/egd.$clients" ||
	    echo "failed: $(tail -1 "$work/egd.log")" >"$work/egd.$clients"
done
: >"$work/egd.lines"
if out=$("$bench" egdlat 1000 "$work/egd.sock"); then
	p99=$(echo "$out" | awk '{ print $3 }')
	line egd-latency "64-byte blocking read: median $(echo "$out" | awk '{ print $2 }') ms, p99 $p99 ms | target <= 5 ms $(verdict "$p99" "<=" 5)" >>"$work/egd.lines"
else
	line egd-latency "MISS: the client failed" >>"$work/egd.lines"
fi
if out=$("$bench" egdrss 200 "$work/egd.sock" "$pid"); then
	kib=$(echo "$out" | awk '{ print $2 }')
	line egd-rss "the worker's RSS grew $kib KiB per idle client (200 clients) | target <= 4 KiB $(verdict "$kib" "<=" 4)" >>"$work/egd.lines"
else
	line egd-rss "MISS: the clients failed" >>"$work/egd.lines"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
exec 8>&-
egd_capacity "$@"
full=$(calc "($cap0 + $cap) / 2")
line egd-capacity "$egd_src in test mode: $(rate "$(calc "2 * $full")") conditioned, so $(rate "$full") of full entropy for the broker to make (before and after the runs: $(rate "$cap0"), $(rate "$cap"))"
for clients in 1 10 100; do
	if grep -q '^egd ' "$work/egd.$clients"; then
		served=$(awk '{ print $2 / $3 }' "$work/egd.$clients")
		jain=$(awk '{ print $4 }' "$work/egd.$clients")
		ratio=$(calc "$served / $full")
		line "egd-$clients" "$clients clients served $(rate "$served") of $(rate "$full") full entropy | ratio $(printf '%.3g' "$ratio") | target >= 0.9 $(verdict "$ratio" ">=" 0.9) | Jain's index $(printf '%.4g' "$jain") | target >= 0.95 $(verdict "$jain" ">=" 0.95)"
	else
		line "egd-$clients" "MISS: the clients $(cat "$work/egd.$clients")"
	fi
done
cat "$work/egd.lines"

# --- Start-up and idle: the daemon with its default sources, as root ---------
if [ "$(id -u)" -ne 0 ]; then
	line startup "skipped: crediting the kernel needs root"
	line idle-wakeups "skipped: needs root (the daemon with its default sources)"
	line idle-cpu "skipped: needs root"
	line idle-rss "skipped: needs root"
	line idle-pss "skipped: needs root"
	line clone-refill "skipped: crediting the kernel needs root"
	line generation-publish "skipped: the kernel's reseed needs root"
	line uevent-wakeups "skipped: needs root (a private network namespace)"
	exit 0
fi

# start_daemon: entropyd -f -d with the default sources; sets $pid.
start_daemon() {
	"$entropyd" -f -d --control-socket "$work/ctl.sock" -R "${1:-60}" 2>"$work/dlog" &
	pid=$!
	pids="$pids $pid"
}
# wait_feed TENTHS: wait for the first credited feed, up to TENTHS tenths of a second.
wait_feed() {
	n=0
	while ! grep -q "first feed" "$work/dlog"; do
		kill -0 "$pid" 2>/dev/null || return 1
		[ $n -ge "$1" ] && return 1
		sleep 0.01
		n=$((n + 1))
	done
}
sources=$("$entropyd" -l 2>/dev/null | awk 'NR > 1 && $3 == "yes" { printf "%s%s", s, $1; s = "," }')

: >"$work/start"
r=0
# Timed in C, from just before the exec to the arrival of the "first feed"
# line on the daemon's stderr: polling the log from the shell would add its
# own milliseconds to a 20 ms target.
while [ $r -lt "$runs" ]; do
	"$bench" startup "$work/dlog" "$entropyd" -f -d --control-socket "$work/ctl.sock" -R 60 |
	    awk '{ print $2 }' >>"$work/start"
	r=$((r + 1))
done
if [ -s "$work/start" ]; then
	s=$(stats <"$work/start")
	med=$(echo "$s" | cut -d' ' -f2)
	case ",$sources," in
	*,rdseed,*|*,hwrng,*) target="target <= 0.02 s with rdseed or hwrng $(verdict "$med" "<=" 0.02)" ;;
	*) target="target: none without rdseed or hwrng" ;;
	esac
	line startup "exec to first credited feed (${sources:-no sources}) $med s (min/median/max $(echo "$s" | tr ' ' /)) | $target"
else
	line startup "MISS: no credited feed within 30 s (${sources:-no sources}); $(tail -1 "$work/dlog")"
fi

# procs PID: PID and its descendants, the daemon's processes (feeder,
# supervisor, worker).
procs() {
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do procs "$c"; done
}
# wakeups PID: voluntary + involuntary context switches of every thread of
# every process of the daemon.
wakeups() {
	for p in $(procs "$1"); do cat /proc/"$p"/task/*/status 2>/dev/null; done |
	    awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
# cputicks PID: user + system time in clock ticks, every process of the daemon.
cputicks() {
	for p in $(procs "$1"); do cat /proc/"$p"/stat 2>/dev/null; done |
	    awk '{ sub(/.*\) /, ""); n += $12 + $13 } END { print n + 0 }'
}
# pss PID: the proportional set size of every process of the daemon, summed, in kB.
pss() {
	for p in $(procs "$1"); do cat /proc/"$p"/smaps_rollup 2>/dev/null; done |
	    awk '/^Pss:/ { n += $2 } END { print n + 0 }'
}
# hwm PID: the largest peak RSS (VmHWM) of the daemon's processes, in kB.
hwm() {
	for p in $(procs "$1"); do cat /proc/"$p"/status 2>/dev/null; done |
	    awk '/^VmHWM:/ { if ($2 > n) n = $2 } END { print n + 0 }'
}
# settle PID: wait until no thread of PID switched for 2 s (its reserves are
# full: a slow source such as virtio-rng fills them seconds after the first
# feed), up to 30 s; false if it never did.
settle() {
	last=$(wakeups "$1")
	waited=0
	while [ $waited -lt 30 ]; do
		sleep 2
		cur=$(wakeups "$1")
		[ "$cur" = "$last" ] && return 0
		last=$cur
		waited=$((waited + 2))
	done
	return 1
}
# Top-ups later than the window, so every wake-up in it is one between top-ups.
start_daemon 86400
if wait_feed 3000; then
	settled=""
	settle "$pid" || settled=" (still busy 30 s after the first feed)"
	w0=$(wakeups "$pid")
	c0=$(cputicks "$pid")
	sleep "$idle"
	w1=$(wakeups "$pid")
	c1=$(cputicks "$pid")
	hwm=$(hwm "$pid")
	pss=$(pss "$pid")
	nprocs=$(procs "$pid" | wc -l)
	hz=$(getconf CLK_TCK)
	wk=$((w1 - w0))
	cpu=$(calc "($c1 - $c0) / $hz" | awk '{ printf "%.3g", $1 }')
	line idle-wakeups "$wk wake-ups in ${idle} s quiet$settled (all threads, no top-up due) | target 0 $(verdict "$wk" "<=" 0)"
	line idle-cpu "$cpu s CPU in ${idle} s quiet | target 0 $(verdict "$cpu" "<=" 0)"
	rss=$(echo "$hwm" | awk '{ printf "%.3g", $1 / 1024 }')
	line idle-rss "peak RSS (VmHWM) of the largest of $nprocs processes $rss MB | target <= 4 MB $(verdict "$rss" "<=" 4)"
	pss=$(echo "$pss" | awk '{ printf "%.3g", $1 / 1024 }')
	line idle-pss "PSS of all $nprocs processes (smaps_rollup) $pss MB | target <= 4 MB $(verdict "$pss" "<=" 4)"
else
	line idle-wakeups "MISS: no credited feed within 30 s; $(tail -1 "$work/dlog")"
	line idle-cpu "MISS: the daemon did not settle"
	line idle-rss "MISS: the daemon did not settle"
	line idle-pss "MISS: the daemon did not settle"
fi

# --- Clone refill: from a VM generation change to the kernel's reseed ------
# refill_times NAME DAEMON-ARGS...: the daemon with a kernel sink; after its
# first feed, $changes manual triggers (SIGUSR2, the same forget-and-refill
# as the kernel's report) a second apart, each answered by "reseeded N ms
# after the change" (its own clock, from the trigger's arrival on the loop
# to RNDRESEEDCRNG's return); the times in $work/refill.NAME, one per line.
refill_times() {
	name=$1
	shift
	"$entropyd" -f -d --control-socket "$work/refill.sock" -R 86400 "$@" 2>"$work/rlog" &
	pid=$!
	pids="$pids $pid"
	n=0
	while ! grep -q "first feed" "$work/rlog" && [ $n -lt 3000 ]; do sleep 0.01; n=$((n + 1)); done
	sleep 1
	c=0
	while [ $c -lt "$changes" ] && kill -0 "$pid" 2>/dev/null; do
		before=$(grep -c "reseeded .* after the change" "$work/rlog")
		kill -USR2 "$pid"
		n=0
		while [ "$(grep -c "reseeded .* after the change" "$work/rlog")" -le "$before" ] &&
		    [ $n -lt 1000 ]; do
			sleep 0.01
			n=$((n + 1))
		done
		sleep 1
		c=$((c + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	sed -n 's/.*reseeded \([0-9.]*\) ms after the change.*/\1/p' "$work/rlog" >"$work/refill.$name"
}
# refill_line FIGURE NAME WHAT: one line from $work/refill.NAME, target 50 ms.
refill_line() {
	got=$(wc -l <"$work/refill.$2" | tr -d ' ')
	if [ "$got" -eq 0 ]; then
		line "$1" "MISS: no refill reseeded ($3); $(tail -1 "$work/rlog")"
		return
	fi
	s=$(stats <"$work/refill.$2")
	med=$(echo "$s" | cut -d' ' -f2)
	line "$1" "change to reseed, $3: median $med ms over $got of $changes changes (min/median/max $(echo "$s" | tr ' ' /) ms) | target <= 50 ms $(verdict "$med" "<=" 50)"
}
changes=$((runs * 2 + 1))
refill_times default
refill_line clone-refill default "default sources (${sources:-none})"
for src in rdseed hwrng; do
	if "$entropyd" -l 2>/dev/null | awk -v s=$src '$1 == s && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
		refill_times "$src" -x all -n "$src"
		refill_line "clone-refill-$src" "$src" "$src alone"
	fi
done

# --- The generation: from a change to the new ID in the file ----------------
# The control trigger (POST /vmgenid) to the new ID written and renamed into
# place, after the refill and the kernel's reseed: the daemon's own measure
# (/generation's reseed_seconds) over BENCH_GEN_CHANGES changes (default 50),
# with RDSEED where usable, else the default sources.
gen_changes=${BENCH_GEN_CHANGES:-50}
if "$entropyd" -l 2>/dev/null | awk '$1 == "rdseed" && $4 == "usable:" { ok = 1 } END { exit !ok }'; then
	gen_sources="-x all -n rdseed"
	gen_what=rdseed
else
	gen_sources=
	gen_what="default sources (${sources:-none})"
fi
mkdir -p "$work/gp"
# shellcheck disable=SC2086 # the sources are arguments
"$entropyd" -f -d $gen_sources -R 86400 --control-socket "$work/gp/ctl.sock" \
    --generation-file "$work/gp/generation" 2>"$work/gp/log" &
pid=$!
pids="$pids $pid"
n=0
while ! grep -q "first feed" "$work/gp/log" && [ $n -lt 3000 ]; do sleep 0.01; n=$((n + 1)); done
: >"$work/gp/ms"
c=1
while [ $c -le "$gen_changes" ] && kill -0 "$pid" 2>/dev/null; do
	"$entropyctl" -s "$work/gp/ctl.sock" vmgenid >/dev/null 2>&1
	n=0
	while ! grep -q "^entropyd: generation $c: " "$work/gp/log" && [ $n -lt 1000 ]; do
		sleep 0.01
		n=$((n + 1))
	done
	"$entropyctl" -g "$work/gp/generation" -j generation 2>/dev/null |
	    sed -n 's/.*"reseed_seconds": \([0-9.e-]*\).*/\1/p' | awk '{ print $1 * 1000 }' >>"$work/gp/ms"
	c=$((c + 1))
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
got=$(wc -l <"$work/gp/ms" | tr -d ' ')
if [ "$got" -gt 0 ]; then
	p99=$(sort -g "$work/gp/ms" | awk '{ v[NR] = $1 } END { i = int((NR * 99 + 99) / 100); print v[i] }')
	s=$(stats <"$work/gp/ms")
	line generation-publish "change (POST /vmgenid) to the new ID in the file, $gen_what: p99 $p99 ms over $got changes (min/median/max $(echo "$s" | tr ' ' /) ms) | target p99 <= 50 ms $(verdict "$p99" "<=" 50)"
else
	line generation-publish "MISS: no new ID published; $(tail -1 "$work/gp/log")"
fi

# --- Uevents: the socket filter keeps other uevents from waking the daemon ---
# In a private network namespace (uevents of its loopback device reach only
# it): an idle daemon, 100 kernel uevents, its context switches meanwhile.
# Its sysfs root is empty, so it does not read the kernel log (as on a
# machine without a generation ID device), whose records would wake it.
if unshare -nm true 2>/dev/null; then
	head -c 100000 /dev/urandom >"$work/udata"
	mkdir -p "$work/nosys"
	cat >"$work/uevents.sh" <<EOF
mount -t sysfs sysfs /sys || exit 1
ENTROPYD_SYSFS_ROOT="$work/nosys" "$entropyd" -f -x all -n file -O "file:path:$work/udata" \
    -o "$work/uout" --control-socket "$work/uevent.sock" 2>"$work/ulog" &
pid=\$!
i=0; while ! grep -q "source drained" "$work/ulog" && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
sleep 2
w0=\$(cat /proc/\$pid/task/*/status | awk '/ctxt_switches:/ { n += \$2 } END { print n }')
i=0; while [ \$i -lt 100 ]; do echo change >/sys/class/net/lo/uevent; i=\$((i + 1)); done
sleep 1
w1=\$(cat /proc/\$pid/task/*/status | awk '/ctxt_switches:/ { n += \$2 } END { print n }')
echo \$((w1 - w0))
kill \$pid
wait \$pid
EOF
	wk=$(unshare -nm sh "$work/uevents.sh" 2>/dev/null | tail -1)
	if [ -n "$wk" ]; then
		line uevent-wakeups "$wk wake-ups of an idle daemon while the kernel sent 100 uevents (none NEW_VMGENID) | target 0 $(verdict "$wk" "<=" 0)"
	else
		line uevent-wakeups "MISS: the daemon in a private namespace did not run; $(tail -1 "$work/ulog" 2>/dev/null)"
	fi
else
	line uevent-wakeups "skipped: unshare -nm is not permitted here"
fi
