#!/bin/sh
# SPDX-License-Identifier: MIT
# The front page stays a front page: at most 250 lines, and every file it
# points to (the per-folder READMEs, SECURITY.md, NEWS) exists, as does
# every manual page it names.
. "$(dirname "$0")/lib.sh"
plan 3

readme=$top_srcdir/README.md
lines=$(wc -l <"$readme")
check "README.md is at most 250 lines ($lines)" test "$lines" -le 250
missing=
for link in $(grep -o '](\([^)#:]*\))' "$readme" | sed 's/^](//; s/)$//'); do
	[ -e "$top_srcdir/$link" ] || missing="$missing $link"
done
check "every file README.md links to exists${missing:+ (missing:$missing)}" test -z "$missing"
missing=
for page in $(grep -o '[a-z-]*([1-8])' "$readme" | sort -u); do
	name=${page%(*}
	section=${page#*(}
	section=${section%)}
	case $name in getrandom | inotify | rngd) continue ;; esac
	[ -e "$top_srcdir/man/$name.$section" ] || missing="$missing $page"
done
check "every manual page of entropyd's README.md names is in man/${missing:+ (missing:$missing)}" \
    test -z "$missing"
finish
