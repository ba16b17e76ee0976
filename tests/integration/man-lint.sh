#!/bin/sh
# SPDX-License-Identifier: MIT
# Every man page in man/ must be clean under mandoc's linter (warnings and up).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v mandoc >/dev/null 2>&1 || skip_all "mandoc not installed (apt-get install mandoc)"
set -- "$top_srcdir"/man/*.[0-9]
[ -e "$1" ] || skip_all "no man pages in $top_srcdir/man"
plan $#
for page; do
	name=${page##*/}
	if mandoc -Tlint -W warning "$page" >"$tmp/lint" 2>&1; then
		ok "mandoc -Tlint $name"
	else
		not_ok "mandoc -Tlint $name"
		sed 's/^/# /' "$tmp/lint"
	fi
done
finish
