#!/bin/sh
# SPDX-License-Identifier: MIT
# The tree keeps the shape the layout gave it: each folder's include list
# (Makefile.am's IN_* lists, as this build has them) lets a file include
# its own folder and those below, and refuses one above (each probe is
# compiled with that folder's list: a header above must not be found); no
# .c file of src/, sources/ or examples/ is over 1,000 lines; each opens,
# after its licence line, with a comment saying what it is for.
. "$(dirname "$0")/lib.sh"

command -v "${CC:-cc}" >/dev/null 2>&1 || skip_all "no C compiler (${CC:-cc})"
# folder list: a header it may include, then one it must not.
probes="IN_LIB:clock.h:fips.h
IN_HEALTH:clock.h:feedproto.h
IN_HEALTH:fips.h:engine.h
IN_PROTO:feedproto.h:fips.h
IN_SYSTEM:notify.h:feedproto.h
IN_BUILTINS:builtin.h:engine.h
IN_FEEDER:feeder.h:engine.h
IN_WORKER:engine.h:control.h
IN_WORKER:engine.h:privsep.h
IN_PLUGINS:loader.h:control.h
IN_CONTROL:control.h:privsep.h
IN_PLUGHOST:confine.h:engine.h
IN_PLUGHOST:confine.h:loader.h"
plan $(($(printf '%s\n' "$probes" | wc -l) + 2))

# A folder's -I flags, read from this build's Makefile.
include_list() {
	printf 'print:\n\t@echo $(%s)\n' "$1" |
	    make -s --no-print-directory -C "$top_builddir" -f Makefile -f - print |
	    tr ' ' '\n' | grep '^-I'
}
# Does a file holding only `#include "HEADER"` compile with these flags?
# (Not finding it reads "No such file" from gcc, "file not found" from clang.)
compiles() {
	header=$1
	shift
	printf '#include "%s"\nint probe;\n' "$header" >"$tmp/probe.c"
	"${CC:-cc}" -fsyntax-only "$@" "$tmp/probe.c" 2>"$tmp/probe.err"
}

while IFS=: read -r list may must_not; do
	# shellcheck disable=SC2046 # one flag a line, no spaces in them
	set -- $(include_list "$list")
	if [ $# -eq 0 ]; then
		not_ok "$list: no include list in the Makefile"
	elif ! compiles "$may" -include "$top_builddir/config.h" "$@"; then
		not_ok "$list: includes $may (its own or below)"
		diag_file "$tmp/probe.err"
	elif compiles "$must_not" -include "$top_builddir/config.h" "$@" ||
	    ! grep -qE "$must_not.*No such file|$must_not'? file not found" "$tmp/probe.err"; then
		not_ok "$list: $must_not, from a layer above, is not found"
		diag_file "$tmp/probe.err"
	else
		ok "$list: includes $may and not $must_not"
	fi
done <<LISTS
$probes
LISTS

long=""
bare=""
for f in "$top_srcdir"/src/*/*.c "$top_srcdir"/sources/*.c "$top_srcdir"/examples/*.c; do
	n=$(wc -l <"$f")
	[ "$n" -le 1000 ] || long="$long ${f#"$top_srcdir"/}:$n"
	# Line 1 the licence, line 2 opens the comment on what the file is for.
	sed -n 2p "$f" | grep -q '^/\*' || bare="$bare ${f#"$top_srcdir"/}"
done
check "no .c file is over 1,000 lines${long:+ (over:$long)}" test -z "$long"
check "every .c file says what it is for${bare:+ (not:$bare)}" test -z "$bare"
exit $tap_failed
