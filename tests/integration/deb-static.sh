#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packaging without building it: its version is the configured
# one, its maintainer scripts parse and pass shellcheck, and the package
# lists hold every program make install installs (the daemon's plugin host
# too). The packages themselves are built and tried by deb-roundtrip.sh.
. "$(dirname "$0")/lib.sh"
plan 5

version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
changelog=$(sed -n '1s/^entropyd (\([^)]*\)).*/\1/p' "$top_srcdir/debian/changelog")
check "debian/changelog's version is the configured one ($changelog, $version)" \
    test -n "$version" -a "$changelog" = "$version"
check "debian/rules is executable" test -x "$top_srcdir/debian/rules"
check "sh -n: the maintainer scripts parse" sh -c \
    "sh -n '$top_srcdir/debian/entropyd.postinst' && sh -n '$top_srcdir/debian/entropyd.postrm'"
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck -s sh "$top_srcdir/debian/entropyd.postinst" "$top_srcdir/debian/entropyd.postrm" \
	    >"$tmp/sc" 2>&1
	check "shellcheck: the maintainer scripts are clean" test $? -eq 0
	sed 's/^/# /' "$tmp/sc"
else
	skip "shellcheck is not installed"
fi

# Where a Debian build (debhelper compat 13: prefix /usr, libexecdir
# /usr/libexec) installs each program the Makefile installs, and whether a
# line of debian/entropyd.install (a path, a directory or a pattern) takes it.
programs() { sed -n "s/^$1 = //p" "$top_builddir/Makefile" | sed 's/\$(EXEEXT)//g'; }
missing=""
for p in $(programs bin_PROGRAMS); do set -- "$@" "usr/bin/$p"; done
for p in $(programs sbin_PROGRAMS) $(programs dist_sbin_SCRIPTS); do
	set -- "$@" "usr/sbin/${p##*/}"
done
for p in $(programs pkglibexec_PROGRAMS); do set -- "$@" "usr/libexec/entropyd/$p"; done
for path in "$@"; do
	taken=""
	while read -r line; do
		# shellcheck disable=SC2254 # the line is a pattern
		case $path in $line | $line/*) taken=1 ;; esac
	done <"$top_srcdir/debian/entropyd.install"
	[ -n "$taken" ] || missing="$missing $path"
done
check "debian/entropyd.install takes every installed program, the plugin host too ($*)${missing:+; missing:$missing}" \
    sh -c 'test -z "$1" && case " $2 " in *" usr/libexec/entropyd/entropyd-plugin "*) ;; *) exit 1 ;; esac' \
    sh "$missing" "$*"
finish
