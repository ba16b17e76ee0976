#!/bin/sh
# rdrand and rdseed end to end: the daemon's output passes FIPS 140-2, each is
# credited as documented, and -l says why a source is unusable.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
plan 5

# has_flag FLAG: the kernel lists the CPU flag.
has_flag() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }

for src in rdrand rdseed; do
	if ! has_flag "$src"; then
		skip "$src: this CPU (or its kernel) has no $src"
		skip "$src: this CPU (or its kernel) has no $src"
		continue
	fi
	timeout 120 sh -c "'$entropyd' -f -x all -n $src -o - 2>'$tmp/$src.log' |
	    '$entropytest' -c 20 >/dev/null 2>'$tmp/$src.fips'"
	passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/$src.fips")
	# Good data fails about 1 block in 1300 by chance: allow one.
	check "$src: the daemon's output passes FIPS 140-2 (${passed:-0} of 20 blocks)" \
	    test "${passed:-0}" -ge 19
	[ "$src" = rdrand ] && bits=0.015625 || bits=8
	check "$src: read from a reader thread, credited $bits bits per byte" \
	    grep -q "$src: reading .*(reader thread, $bits bits per byte credited)" "$tmp/$src.log"
done

# A kernel that cleared the flags (a known bad CPU): -l says why.
printf 'processor\t: 0\nflags\t\t: fpu sse2\n' >"$tmp/cpuinfo"
"$entropyd" -l -O "rdrand:cpuinfo:$tmp/cpuinfo" -O "rdseed:cpuinfo:$tmp/cpuinfo" \
    >"$tmp/list" 2>/dev/null
check "-l: rdrand and rdseed unusable without the cpuinfo flags, saying why" sh -c \
    "grep -Eq \"^rdrand .*unusable: (CPUID says|.*lacks the 'rdrand' flag)\" '$tmp/list' &&
    grep -Eq \"^rdseed .*unusable: (CPUID says|.*lacks the 'rdseed' flag)\" '$tmp/list'"
finish
