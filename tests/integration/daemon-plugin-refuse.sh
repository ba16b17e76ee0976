#!/bin/sh
# SPDX-License-Identifier: MIT
# Every kind of bad plugin is refused with one log line naming the file and
# the reason, and the daemon carries on: the file source still delivers.
. "$(dirname "$0")/lib.sh"
entropyd=$top_builddir/entropyd
libs=$top_builddir/tests/plugins/.libs
plan 20

size() { stat -c %s "$1" 2>/dev/null || echo 0; }
head -c 100000 /dev/urandom >"$tmp/data"

# refused CASE REASON FILE [entropyd arguments]: CASE's plugin dir must hold
# FILE; the daemon runs with the file source and a file sink.
refused() {
	name=$1 reason=$2 file=$3
	shift 3
	dir=$tmp/$name log=$tmp/$name.log out=$tmp/$name.out
	"$entropyd" -f -x all -n file -O "file:path:$tmp/data" --plugin-dir "$dir" -o "$out" \
	    "$@" 2>"$log" &
	pid=$!
	track "$pid"
	wait_for 100 grep -qs "source drained" "$log"
	check "$name: one log line: $dir/$file: refused: $reason" sh -c \
	    'test $(grep -c refused "$1") -eq 1 && grep -qF "$2" "$1"' sh "$log" \
	    "plugin $dir/$file: refused: $reason"
	check "$name: the daemon carries on; the file source delivers" sh -c \
	    'kill -0 "$1" && grep -q "file: input ended; source drained" "$2" &&
	     test "$3" -gt 40000' sh "$pid" "$log" "$(size "$out")"
	stop "$pid"
	grep 'refused' "$log" | sed 's/^/# /'
}

# plugin CASE FILE...: a plugin directory holding the built test plugins named.
plugin() {
	name=$1
	shift
	mkdir -p "$tmp/$name"
	for f; do cp "$libs/$f" "$tmp/$name/"; done
}

mkdir "$tmp/junk" && echo "not a plugin" >"$tmp/junk/junk.so"
refused junk "not a shared object (no ELF header)" junk.so
plugin nosym bad_nosym.so
refused nosym "no entropyd_source_entry symbol" bad_nosym.so
plugin major bad_major.so
refused major "wrong ABI major: built for 2.2, this daemon speaks 1.2" bad_major.so
plugin minor bad_minor.so
refused minor "newer ABI minor: built for 1.3, this daemon speaks 1.2" bad_minor.so
plugin size bad_size.so
refused size "descriptor too small: size 16" bad_size.so
plugin builtin bad_clash.so
refused builtin "source name 'file' is taken by a built-in source" bad_clash.so
# Two plugins of one name: the first in name order wins.
plugin twice testgood.so
cp "$libs/testgood.so" "$tmp/twice/testgood2.so"
refused twice "source name 'testgood' is taken by $tmp/twice/testgood.so" testgood2.so
plugin init bad_init.so
refused init "init failed: the test device is on fire" bad_init.so -n bad_init
plugin daemonsym bad_daemonsym.so
refused daemonsym "cannot load: undefined symbol: log_warnx" bad_daemonsym.so

# -l: every refused plugin with its reason, and the good ones' sources.
mkdir "$tmp/all"
cp "$libs"/bad_*.so "$libs/testgood.so" "$tmp/junk/junk.so" "$tmp/all/"
"$entropyd" -l -n bad_init --plugin-dir "$tmp/all" >"$tmp/list" 2>"$tmp/list.log"
rc=$?
sed 's/^/# /' "$tmp/list"
check "-l exits 0 and lists the plugin directory, every refusal, and the good plugin" sh -c "
	test $rc -eq 0 && grep -qx 'plugin directory: $tmp/all' '$tmp/list' &&
	test \$(grep -c '^refused plugin $tmp/all/' '$tmp/list') -eq 8 &&
	grep -q '^refused plugin $tmp/all/bad_init.so: init failed: the test device is on fire' '$tmp/list' &&
	grep -q '^refused plugin $tmp/all/bad_major.so: wrong ABI major' '$tmp/list' &&
	grep -q '^refused plugin $tmp/all/junk.so: not a shared object' '$tmp/list' &&
	grep -q '^testgood .* usable: testgood (/dev/urandom)' '$tmp/list' &&
	grep -qx 'plugin $tmp/all/testgood.so: source testgood' '$tmp/list' &&
	! grep -q '^bad_init ' '$tmp/list'"

# A refused source is unknown to -O: a usage error, not a crash.
"$entropyd" -l --plugin-dir "$tmp/major" -O bad_major:limit:1 2>"$tmp/usage.log" >/dev/null
rc=$?
check "-O for a refused plugin's source: exit 64, one line" sh -c \
    "test $rc -eq 64 && grep -q \"unknown source 'bad_major'\" '$tmp/usage.log'"
finish
