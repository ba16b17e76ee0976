#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packaging without building it: its version is the configured
# one, and its maintainer scripts parse and pass shellcheck. The packages
# themselves are built and tried by tests/deb-roundtrip.sh.
. "$(dirname "$0")/lib.sh"
plan 4

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
finish
