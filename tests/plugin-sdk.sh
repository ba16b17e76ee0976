#!/bin/sh
# SPDX-License-Identifier: MIT
# The installed SDK is enough to build a plugin: install into a staging
# root, build the example serial source and the man page's minimal plugin
# with nothing but pkg-config's flags, then load and run both.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
ptynoise=$top_builddir/tests/ptynoise
: "${CC:=cc}" "${MAKE:=make}"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config not installed"
command -v "$CC" >/dev/null 2>&1 || skip_all "no C compiler ($CC)"
plan 9

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# 1: make install into a staging root (not this make's jobs: its own make).
(unset MAKEFLAGS MFLAGS MAKELEVEL; cd "$top_builddir" &&
    $MAKE install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1)
rc=$?
pc=$(find "$tmp/root" -name entropyd.pc | head -n 1)
header=$(find "$tmp/root" -path '*/include/entropyd/source.h' | head -n 1)
check "make install DESTDIR= installs <entropyd/source.h> and entropyd.pc" \
    sh -c 'test "$1" -eq 0 && test -f "$2" && test -f "$3"' sh $rc "$header" "$pc"
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/install.log"

# 2-3: pkg-config, pointed at the staging root only.
PKG_CONFIG_LIBDIR=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR=$tmp/root
PKG_CONFIG_PATH=
export PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH
cflags=$(pkg-config --cflags entropyd)
incdir=$(echo $cflags | sed 's/^-I//')
check "pkg-config --cflags entropyd finds the installed header ($cflags)" \
    test -f "$incdir/entropyd/source.h"
# pkgconf puts the sysroot in front of path variables too; the daemon's is without.
plugindir=$(pkg-config --variable=plugindir entropyd)
plugindir=${plugindir#"$tmp/root"}
check "pkg-config --variable=plugindir is the daemon's default ($plugindir)" sh -c \
    'test -n "$1" && "$2" --help | grep -qF -- "(default: $1)"' sh "$plugindir" "$entropyd"

# 4-5: the example and the man page's minimal plugin, built the documented way.
mkdir "$tmp/plugins"
sed -n '/^\.\\" minimal plugin begin/,/^\.\\" minimal plugin end/p' \
    "$top_srcdir/man/entropyd-source.3" | sed '/^\./d' >"$tmp/demo.c"
for src in "$top_srcdir/contrib/serial.c" "$tmp/demo.c"; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2086
	$CC -shared -fPIC -fvisibility=hidden -Wall -Werror $cflags -o "$tmp/plugins/$name.so" \
	    "$src" 2>"$tmp/$name.cc"
	rc=$?
	check "$name.c builds against the installed SDK alone" test $rc -eq 0
	sed 's/^/# /' "$tmp/$name.cc"
done

# 6: only the entry symbol is exported.
if command -v nm >/dev/null 2>&1; then
	check "the plugins export exactly entropyd_source_entry" sh -c '
	    for so in "$1"/*.so; do
	        test "$(nm -D --defined-only "$so" | awk "{ print \$3 }")" = entropyd_source_entry ||
	            exit 1
	    done' sh "$tmp/plugins"
else
	skip "nm not installed (binutils)"
fi

# 7: both load and are listed.
"$entropyd" -l --plugin-dir "$tmp/plugins" >"$tmp/list" 2>"$tmp/log"
check "-l lists both plugins' sources" sh -c \
    'grep -qx "plugin $2/serial.so: source serial" "$1" &&
     grep -qx "plugin $2/demo.so: source demo" "$1" &&
     grep -q "^demo .* usable: demo (/dev/urandom), 0 bits per byte credited" "$1" &&
     ! grep -q refused "$1"' sh "$tmp/list" "$tmp/plugins"

# 8-9: the SDK-built serial source fed by a pseudo-terminal, tested like a built-in.
[ -c /dev/ptmx ] || { skip "no /dev/ptmx"; skip "no /dev/ptmx"; finish; }
head -c 800000 /dev/urandom >"$tmp/noise"
"$ptynoise" "$tmp/tty" <"$tmp/noise" &
track $!
wait_for 50 test -L "$tmp/tty"
"$entropyd" -f -x all -n serial -O "serial:device:$tmp/tty" -O serial:entropy:8 \
    --plugin-dir "$tmp/plugins" -o "$tmp/out" 2>"$tmp/log" &
pid=$!
track $pid
wait_for 300 size_at_least "$tmp/out" 200000
check "the SDK-built serial source delivers through the pipeline ($(size "$tmp/out") bytes)" \
    test "$(size "$tmp/out")" -ge 200000
stop $pid
"$entropytest" <"$tmp/out" >/dev/null 2>"$tmp/fips"
passed=$(sed -n 's/.*FIPS 140-2 successes: //p' "$tmp/fips")
check "its output passes FIPS 140-2 ($passed blocks)" test "${passed:-0}" -ge 70
finish
