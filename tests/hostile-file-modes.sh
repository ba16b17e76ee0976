#!/bin/sh
# SPDX-License-Identifier: MIT
# Plugin files are checked before loading, as sshd checks its files: a
# regular file and its directory, owned by root or the daemon's user and
# writable by no one else. Each unsafe case is refused with its reason; the
# same plugin in a safe directory loads.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
libs=$top_builddir/tests/plugins/.libs
plan 6

# list CASE: entropyd -l for the plugin directory $tmp/CASE, into $tmp/CASE.list.
list() { "$entropyd" -l --plugin-dir "$tmp/$1" >"$tmp/$1.list" 2>"$tmp/$1.log"; }
mkdir -m 755 "$tmp/safe" "$tmp/wfile" "$tmp/wdir" "$tmp/gdir" "$tmp/owner"
for d in safe wfile wdir gdir owner; do cp "$libs/testgood.so" "$tmp/$d/"; done
chmod 755 "$tmp"/*/testgood.so
chmod o+w "$tmp/wfile/testgood.so"
chmod 1777 "$tmp/wdir"
chmod 775 "$tmp/gdir"
chown 12345 "$tmp/owner/testgood.so"
for d in safe wfile wdir gdir owner; do list $d; done

check "a safe plugin loads" grep -qx "plugin $tmp/safe/testgood.so: source testgood" "$tmp/safe.list"
check "a world-writable .so is refused" grep -qx \
    "refused plugin $tmp/wfile/testgood.so: unsafe: the file is writable by others (mode 0757)" \
    "$tmp/wfile.list"
check "the refusal is logged" grep -qF \
    "plugin $tmp/wfile/testgood.so: refused: unsafe: the file is writable by others" "$tmp/wfile.log"
check "a world-writable directory is refused" grep -qx \
    "refused plugin $tmp/wdir/testgood.so: unsafe: its directory is writable by others (mode 1777)" \
    "$tmp/wdir.list"
check "a group-writable directory is refused" grep -qx \
    "refused plugin $tmp/gdir/testgood.so: unsafe: its directory is writable by its group (mode 0775)" \
    "$tmp/gdir.list"
if [ "$(id -u)" -eq 0 ]; then
	check "a file owned by another user is refused" grep -qx \
	    "refused plugin $tmp/owner/testgood.so: unsafe: the file is owned by uid 12345, not by root or the daemon's user" \
	    "$tmp/owner.list"
else
	skip "not root: cannot give a file to another user"
fi
finish
