#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/quickstart configures ./build afresh whenever what configure would
# find has changed: a tree configured before criterion was installed (as
# `quickstart run` leaves it on a fresh machine) finds criterion once it is
# there, instead of silently not running the unit tests. Run on a copy of
# what configure needs, with a pkg-config that hides criterion at first.
. "$(dirname "$0")/lib.sh"
pkg-config --exists criterion 2>/dev/null || skip_all "criterion is not installed"
[ -x "$top_srcdir/configure" ] || skip_all "the source tree has no configure script"
plan 4

tree=$tmp/tree
mkdir -p "$tree/contrib" "$tree/src/daemon"
# Timestamps kept, so that configure stays newer than its inputs (no autoreconf).
cp -p "$top_srcdir/configure" "$top_srcdir/configure.ac" "$top_srcdir/Makefile.am" \
    "$top_srcdir/Makefile.in" "$top_srcdir/config.h.in" "$top_srcdir/entropyd.pc.in" "$tree/"
cp -pR "$top_srcdir/build-aux" "$tree/"
cp -p "$top_srcdir/src/daemon/entropyd.c" "$tree/src/daemon/"
cp -p "$top_srcdir/contrib/quickstart" "$tree/contrib/"
# A pkg-config that does not know criterion: the machine before `check`
# installed it.
mkdir "$tmp/bin"
real=$(command -v pkg-config)
cat >"$tmp/bin/pkg-config" <<EOT
#!/bin/sh
case " \$* " in *criterion*) exit 1 ;; esac
if [ "\$1" = --list-all ]; then "$real" --list-all | grep -v '^criterion'; exit 0; fi
exec "$real" "\$@"
EOT
chmod 755 "$tmp/bin/pkg-config"

PATH=$tmp/bin:$PATH sh "$tree/contrib/quickstart" configure >"$tmp/first" 2>&1
rc=$?
check "configure without criterion: exit 0, the summary says no ($rc)" sh -c \
    "test $rc -eq 0 && grep -q 'criterion tests: *no' '$tmp/first'"
show_if_failed "$tmp/first"
sh "$tree/contrib/quickstart" configure >"$tmp/second" 2>&1
rc=$?
check "criterion installed since: the build directory is configured afresh ($rc)" sh -c \
    "test $rc -eq 0 && grep -q 'starting it afresh' '$tmp/second'"
check "... and criterion is found" grep -q 'criterion tests: *yes' "$tmp/second"
show_if_failed "$tmp/second"
sh "$tree/contrib/quickstart" configure >"$tmp/third" 2>&1
check "nothing changed since: the configured directory is kept" sh -c \
    "! grep -q 'configuring in' '$tmp/third'"
finish
