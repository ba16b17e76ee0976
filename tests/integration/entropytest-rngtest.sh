#!/bin/sh
# SPDX-License-Identifier: MIT
# entropytest against rngtest on the same data: clean random data and data
# with faults injected, compared on the statistics lines and the exit status;
# then -c, -p, -b, a file argument, the SP 800-90B lines and bad flags.
. "$(dirname "$0")/lib.sh"

et="$top_builddir/entropytest"
command -v rngtest >/dev/null 2>&1 || skip_all "rngtest not installed (rng-tools-debian)"
[ -x "$et" ] || skip_all "entropytest not built"

blocks=1000
block=2500

# write_at FILE OFFSET: copy standard input over FILE at byte OFFSET.
write_at() {
	dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# Offset of byte $2 of block $1 (blocks follow the 4 bootstrap bytes).
at() { echo $((4 + $1 * block + $2)); }

head -c $((4 + blocks * block)) /dev/urandom >"$tmp/clean.bin"

cp "$tmp/clean.bin" "$tmp/zeros.bin"
for b in 10 200 700; do
	head -c 100 /dev/zero | write_at "$tmp/zeros.bin" "$(at $b 1001)"
done

cp "$tmp/clean.bin" "$tmp/repeat.bin"
dd if="$tmp/clean.bin" bs=1 skip="$(at 50 400)" count=4 status=none |
	write_at "$tmp/repeat.bin" "$(at 50 404)"
# The last word of block 80 again as the first of block 81.
dd if="$tmp/clean.bin" bs=1 skip="$(at 80 2496)" count=4 status=none |
	write_at "$tmp/repeat.bin" "$(at 81 0)"

cp "$tmp/clean.bin" "$tmp/longrun.bin"
printf '\377\377\377\377' | write_at "$tmp/longrun.bin" "$(at 333 1234)"
printf '\000\000\000\000' | write_at "$tmp/longrun.bin" "$(at 334 2)"

cp "$tmp/clean.bin" "$tmp/biased.bin"
head -c $block /dev/urandom | tr '\200-\377' '\000-\177' |
	write_at "$tmp/biased.bin" "$(at 500 0)"
head -c $block /dev/urandom | tr '\001-\377' '\000-\376' |
	write_at "$tmp/biased.bin" "$(at 501 0)"

# stats FILE: the statistics lines of a report, without the program name.
stats() {
	sed -n -e 's/^[a-z]*: \(bits received from input: .*\)/\1/p' \
	    -e 's/^[a-z]*: \(bits sent to output: .*\)/\1/p' \
	    -e 's/^[a-z]*: \(FIPS 140-2 .*\)/\1/p' "$1"
}

# compare NAME ARGS... (input on stdin): both tools, same stats and status.
compare() {
	name=$1
	shift
	cat >"$tmp/in"
	rngtest "$@" <"$tmp/in" >"$tmp/r.out" 2>"$tmp/r.err"
	rs=$?
	"$et" "$@" <"$tmp/in" >"$tmp/e.out" 2>"$tmp/e.err"
	es=$?
	stats "$tmp/r.err" >"$tmp/r.stats"
	stats "$tmp/e.err" >"$tmp/e.stats"
	if [ "$rs" -ne "$es" ]; then
		not_ok "$name: exit status rngtest $rs, entropytest $es"
	elif [ ! -s "$tmp/r.stats" ]; then
		not_ok "$name: rngtest printed no statistics"
	elif ! cmp -s "$tmp/r.stats" "$tmp/e.stats"; then
		not_ok "$name: statistics differ"
		diff "$tmp/r.stats" "$tmp/e.stats" | sed 's/^/# /'
	else
		ok "$name (exit $es)"
	fi
}

plan 21

for f in clean zeros repeat longrun biased; do
	compare "$f data" <"$tmp/$f.bin"
done

# The faults were seen: every faulty file has failed blocks.
for f in zeros repeat longrun biased; do
	"$et" <"$tmp/$f.bin" 2>"$tmp/e.err"
	n=$(sed -n 's/^entropytest: FIPS 140-2 failures: //p' "$tmp/e.err")
	[ "${n:-0}" -gt 0 ] || echo "$f: no failures" >>"$tmp/unseen"
done
check "every injected fault fails a block" test ! -e "$tmp/unseen"

compare "-c 17" -c 17 <"$tmp/zeros.bin"
compare "--blockcount=250 past a fault" --blockcount=250 <"$tmp/repeat.bin"
compare "-b 100 reports every 100 blocks" -b 100 <"$tmp/biased.bin"
head -c 2000 "$tmp/clean.bin" >"$tmp/short.bin"
compare "input shorter than a block" <"$tmp/short.bin"

compare "-p: statistics" -p <"$tmp/longrun.bin"
if [ -s "$tmp/r.out" ] && cmp -s "$tmp/r.out" "$tmp/e.out"; then
	ok "-p: output equals rngtest -p byte for byte ($(wc -c <"$tmp/e.out") bytes)"
else
	not_ok "-p: output differs from rngtest -p"
fi

"$et" "$tmp/zeros.bin" 2>"$tmp/file.err"
stats "$tmp/file.err" >"$tmp/file.stats"
"$et" <"$tmp/zeros.bin" 2>"$tmp/e.err"
stats "$tmp/e.err" >"$tmp/e.stats"
check "a file argument reads the same as standard input" \
    cmp -s "$tmp/file.stats" "$tmp/e.stats"

# A regular file is tested through a mapping, a pipe through read(): both
# must count as rngtest does, also with a short block at the end.
cat "$tmp/biased.bin" "$tmp/short.bin" >"$tmp/tail.bin"
compare "a mapped file with a short last block" <"$tmp/tail.bin"
rngtest <"$tmp/tail.bin" 2>"$tmp/r.err" >/dev/null
cat "$tmp/tail.bin" | "$et" 2>"$tmp/e.err" >/dev/null
stats "$tmp/r.err" >"$tmp/r.stats"
stats "$tmp/e.err" >"$tmp/e.stats"
check "piped input (read()) counts as rngtest does" cmp -s "$tmp/r.stats" "$tmp/e.stats"
rngtest -p <"$tmp/tail.bin" 2>/dev/null >"$tmp/r.out"
cat "$tmp/tail.bin" | "$et" -p 2>/dev/null >"$tmp/e.out"
check "-p over a pipe: output equals rngtest -p" cmp -s "$tmp/r.out" "$tmp/e.out"

# SP 800-90B: 300 zero bytes break the RCT; random bits pass at H=0.5.
"$et" -w 8 -H 8 "$tmp/zeros.bin" 2>"$tmp/sp.err"
st=$?
if [ "$st" -eq 1 ] &&
    grep -Eq '^entropytest: SP 800-90B RCT \(cutoff 4\): [1-9][0-9]* failures$' "$tmp/sp.err" &&
    grep -Eq '^entropytest: SP 800-90B APT \(window 512, cutoff 13\): [0-9]+ failures$' "$tmp/sp.err"; then
	ok "-w 8 -H 8: RCT failures reported, exit 1"
else
	not_ok "-w 8 -H 8 on zero runs: exit $st"
	sed 's/^/# /' "$tmp/sp.err"
fi
"$et" --sample-bits=1 --min-entropy=0.5 "$tmp/clean.bin" 2>"$tmp/sp.err"
if grep -q '^entropytest: SP 800-90B RCT (cutoff 41): 0 failures$' "$tmp/sp.err" &&
    grep -q '^entropytest: SP 800-90B APT (window 1024, cutoff 793): 0 failures$' "$tmp/sp.err"; then
	ok "--sample-bits=1 --min-entropy=0.5: random bits pass"
else
	not_ok "random bits failed SP 800-90B at H=0.5"
	sed 's/^/# /' "$tmp/sp.err"
fi

# usage_error NAME ARGS...: exit 64 and one line on stderr naming the flag.
usage_error() {
	name=$1
	flag=$2
	shift 2
	"$et" "$@" </dev/null >"$tmp/u.out" 2>"$tmp/u.err"
	st=$?
	if [ "$st" -eq 64 ] && [ "$(wc -l <"$tmp/u.err")" -eq 1 ] &&
	    grep -q -e "$flag" "$tmp/u.err" && [ ! -s "$tmp/u.out" ]; then
		ok "$name: exit 64, $(cat "$tmp/u.err")"
	else
		not_ok "$name: exit $st"
		sed 's/^/# /' "$tmp/u.err"
	fi
}
usage_error "unknown flag" "-x" -x
usage_error "bad -c value" "-c" -c abc
usage_error "-H above the sample width" "-H" -w 4 -H 5
finish
