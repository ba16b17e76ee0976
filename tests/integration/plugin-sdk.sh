#!/bin/sh
# SPDX-License-Identifier: MIT
# The installed SDK is enough to build a plugin: install into a staging
# root (which makes the plugin directory), build the example serial source
# and the man page's complete plugin with nothing but pkg-config's flags,
# then load and run both: the man page's reads real bytes, credited only
# when the operator asks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/control-lib.sh"
entropyd=$top_builddir/entropyd
entropytest=$top_builddir/entropytest
ptynoise=$top_builddir/tests/fakes/ptynoise
: "${CC:=cc}" "${MAKE:=make}"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config not installed"
command -v "$CC" >/dev/null 2>&1 || skip_all "no C compiler ($CC)"
plan 14

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

# 2-4: pkg-config, pointed at the staging root only.
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
check "make install creates the plugin directory, writable by its owner alone" sh -c \
    'test -d "$1" && test "$(stat -c %a "$1")" = 755' sh "$tmp/root$plugindir"

# 5-6: the example and the man page's minimal plugin, built the documented way.
mkdir "$tmp/plugins"
sed -n '/^\.\\" minimal plugin begin/,/^\.\\" minimal plugin end/p' \
    "$top_srcdir/man/entropyd-source.3" | sed '/^\./d' >"$tmp/demo.c"
for src in "$top_srcdir/examples/serial.c" "$tmp/demo.c"; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2086
	$CC -shared -fPIC -fvisibility=hidden -Wall -Werror $cflags -o "$tmp/plugins/$name.so" \
	    "$src" 2>"$tmp/$name.cc"
	rc=$?
	check "$name.c builds against the installed SDK alone" test $rc -eq 0
	sed 's/^/# /' "$tmp/$name.cc"
done

# 7: only the entry symbol is exported.
if command -v nm >/dev/null 2>&1; then
	check "the plugins export exactly entropyd_source_entry" sh -c '
	    for so in "$1"/*.so; do
	        test "$(nm -D --defined-only "$so" | awk "{ print \$3 }")" = entropyd_source_entry ||
	            exit 1
	    done' sh "$tmp/plugins"
else
	skip "nm not installed (binutils)"
fi

# 8: both load and are listed.
"$entropyd" -l --plugin-dir "$tmp/plugins" -O demo:device:/dev/urandom >"$tmp/list" \
    2>"$tmp/log"
check "-l lists both plugins' sources" sh -c \
    'grep -qx "plugin $2/serial.so: source serial" "$1" &&
     grep -qx "plugin $2/demo.so: source demo" "$1" &&
     grep -q "^demo .* usable: demo (/dev/urandom), 0 bits per byte credited" "$1" &&
     ! grep -q refused "$1"' sh "$tmp/list" "$tmp/plugins"

# 9-12: the man page's plugin reads real bytes; credited only on request.
# demo_run [entropyd arguments]: run it on /dev/urandom until it has read,
# keeping its /sources entry in $tmp/demo.json.
demo_run() {
	rm -f "$tmp/s"
	"$entropyd" -f -x all -n demo -O demo:device:/dev/urandom --plugin-dir "$tmp/plugins" \
	    --control-socket "$tmp/s" -o "$tmp/demo.out" "$@" 2>"$tmp/demo.log" &
	dpid=$!
	track $dpid
	wait_for 100 test -S "$tmp/s"
	wait_for 100 sh -c 'test -s "$1"' sh "$tmp/demo.out"
	ucurl "$tmp/s" /sources/demo >"$tmp/demo.json"
	stop $dpid
}
demo_run
n=$(json "d['counters']['bytes_read']" <"$tmp/demo.json")
check "it reads real bytes ($n read) into the sink" sh -c \
    'test "${1:-0}" -gt 0 && test -s "$2"' sh "$n" "$tmp/demo.out"
show_if_failed "$tmp/demo.log"
check "uncredited unless asked" test "$(json "d['estimate']['credited'], d['estimate']['bits']" \
    <"$tmp/demo.json")" = "False 0.0"
demo_run -O demo:entropy:6
check "credited as asked (-O demo:entropy:6)" test \
    "$(json "d['estimate']['credited'], d['estimate']['bits']" <"$tmp/demo.json")" = "True 6.0"
"$entropyd" -l -O demo:entropy:9 --plugin-dir "$tmp/plugins" >/dev/null 2>"$tmp/log"
check "never above its own ceiling (-O demo:entropy:9 is a usage error)" \
    grep -q "demo:entropy: 9 is above the source's own estimate of 8 bits" "$tmp/log"

# 13-14: the SDK-built serial source fed by a pseudo-terminal, tested like a built-in.
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
