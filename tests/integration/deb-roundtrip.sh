#!/bin/sh
# SPDX-License-Identifier: MIT
#
# deb-roundtrip.sh [TARBALL]
#
# The Debian package end to end, on this machine, as root: built from the
# release tarball (make dist when none is given) with dpkg-buildpackage -b,
# checked by lintian at warning level, installed with apt-get, started by its
# postinst through the sysvinit script as the entropyd user with the default
# settings (or by the unit where systemd is PID 1), /health asked, upgraded
# with an edited defaults file, removed and purged; the SDK package builds
# and loads the example plugin. Not part of make check (it needs root, a
# clean machine and minutes): contrib/quickstart check runs it after make
# distcheck and counts its points. DEB_BUILD_OPTIONS defaults to nocheck,
# since the suite runs on its own.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "installing a package needs root"
for tool in dpkg-buildpackage apt-get lintian dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "$tool is not installed (not Debian, or no dpkg-dev, lintian)"
done
if dpkg-query -W -f '${db:Status-Abbrev}' entropyd entropyd-dev 2>/dev/null | grep -q '^i'; then
	echo "Bail out! entropyd is installed on this machine already; the round trip needs it absent"
	exit 1
fi
if [ -e /run/entropyd.pid ] || [ -S /run/entropyd/entropyd.sock ]; then
	echo "Bail out! another entropyd uses /run/entropyd.pid or /run/entropyd/entropyd.sock"
	exit 1
fi
plan 36

# The system daemon and the tools must not follow the tests' private socket.
unset ENTROPYD_CONTROL_SOCKET
export DEBIAN_FRONTEND=noninteractive
: "${DEB_BUILD_OPTIONS=nocheck parallel=$(nproc 2>/dev/null || echo 2)}"
export DEB_BUILD_OPTIONS
pkgs=$tmp/pkgs
mkdir -p "$pkgs"
user_before=no
getent passwd entropyd >/dev/null && user_before=yes

# Settings of rng-tools-debian for the postinst to find, put back at the end.
rngd_defaults=/etc/default/rng-tools-debian
rngd_saved=absent
if [ -e "$rngd_defaults" ]; then
	cp -p "$rngd_defaults" "$tmp/rng-tools-debian.saved"
	rngd_saved=$(md5sum <"$rngd_defaults")
fi

# Leave the machine as it was, whatever happened: the packages purged (which
# stops the daemon), the rngd settings put back. The system daemon is never
# tracked by pid: its pid may be another process's by the end.
cleanup() {
	if dpkg-query -W -f '${db:Status-Abbrev}' entropyd entropyd-dev 2>/dev/null | grep -q '^[ir]'; then
		services apt-get purge -y entropyd entropyd-dev >>"$tmp/cleanup.log" 2>&1
	fi
	if [ "$rngd_saved" = absent ]; then
		rm -f "$rngd_defaults"
	elif [ "$(md5sum <"$rngd_defaults")" != "$rngd_saved" ]; then
		cp -p "$tmp/rng-tools-debian.saved" "$rngd_defaults"
	fi
	tap_cleanup
}
trap cleanup EXIT

# services COMMAND...: run COMMAND where invoke-rc.d may start and stop
# services. A container's policy-rc.d often forbids that (exit 101); then the
# command runs in a mount namespace of its own where policy-rc.d allows it,
# so that the maintainer scripts' own start and stop are what is tested.
printf '#!/bin/sh\nexit 0\n' >"$tmp/policy-rc.d"
chmod 755 "$tmp/policy-rc.d"
services() {
	if [ ! -x /usr/sbin/policy-rc.d ] || /usr/sbin/policy-rc.d entropyd start >/dev/null 2>&1; then
		"$@"
		return
	fi
	unshare --mount --propagation private sh -c \
	    'mount --bind "$0" /usr/sbin/policy-rc.d && exec "$@"' "$tmp/policy-rc.d" "$@"
}
if ! services true 2>/dev/null; then
	echo "1..0 # SKIP policy-rc.d forbids starting services, and no mount namespace can be made to allow it"
	trap tap_cleanup EXIT
	exit 0
fi
apt_install() {
	services apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "$@"
}

# running_as UID: the processes of UID that have not ended (zombies left out).
running_as() {
	ps -o pid=,stat=,etime=,args= -u "$1" | awk '$2 !~ /^Z/'
}
# nothing_left: $left is empty, and no entropyd of the package runs.
nothing_left() {
	[ -z "$left" ] && ! pgrep -r R,S,D,T -x -f '/usr/sbin/entropyd.*' >/dev/null
}
# daemon_pid: the pid the pidfile names, if that process runs.
daemon_pid() {
	running=$(cat /run/entropyd.pid 2>/dev/null) || return 1
	[ -n "$running" ] && kill -0 "$running" 2>/dev/null && echo "$running"
}
# healthy: the system daemon answers /health with pass (entropyctl: OK).
# Healthy: OK, or a warning only because a source's online entropy
# estimate lowered its credit (a machine whose jitter measures low is told
# the truth; the package is not at fault).
healthy() {
	/usr/bin/entropyctl health >"$tmp/health" 2>&1 ||
	    grep -q '^ENTROPYD WARNING .*credited less than they claim' "$tmp/health"
}
# The daemon's command line, one line.
cmdline() { tr '\0' ' ' <"/proc/$1/cmdline" | sed 's/ $//'; }

# --- build ---------------------------------------------------------------
tarball=${1:-}
if [ -z "$tarball" ]; then
	(unset MAKEFLAGS MFLAGS MAKELEVEL; make -C "$top_builddir" dist) >"$tmp/dist.log" 2>&1
	tarball=$(ls "$top_builddir"/entropyd-*.tar.gz 2>/dev/null | tail -n 1)
fi
mkdir "$tmp/src"
tar -xzf "$tarball" -C "$tmp/src" 2>"$tmp/tar.log"
srcdir=$(find "$tmp/src" -mindepth 1 -maxdepth 1 -type d | head -n 1)
start=$(date +%s)
(cd "$srcdir" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1
rc=$?
for f in "$tmp"/src/*.deb "$tmp"/src/*.buildinfo "$tmp"/src/*.changes; do
	[ -e "$f" ] && mv "$f" "$pkgs/"
done
deb=$(ls "$pkgs"/entropyd_*.deb 2>/dev/null)
dev=$(ls "$pkgs"/entropyd-dev_*.deb 2>/dev/null)
check "dpkg-buildpackage -us -uc -b from the release tarball (exit $rc, $(($(date +%s) - start)) s)" \
    sh -c "test $rc -eq 0 && test -f '$deb' && test -f '$dev'"
show_if_failed "$tmp/build.log"
if [ -z "$deb" ] || [ -z "$dev" ]; then
	echo "Bail out! no packages to test"
	exit 1
fi
lintian --fail-on error,warning "$pkgs"/entropyd_*.changes >"$tmp/lintian.log" 2>&1
rc=$?
check "lintian: no error or warning (exit $rc)" test "$rc" -eq 0
show_if_failed "$tmp/lintian.log"
dpkg-deb -c "$deb" >"$tmp/deb.list"
dpkg-deb -c "$dev" >"$tmp/dev.list"
check "entropyd holds the daemon, plugin host, tools, unit, init script, sysusers file and plugin directory" sh -c \
    "for f in ./usr/sbin/entropyd ./usr/libexec/entropyd/entropyd-plugin \
        ./usr/sbin/entropyd-migrate-rngd ./usr/bin/entropyctl \
        ./usr/bin/entropytest ./lib/systemd/system/entropyd.service ./etc/init.d/entropyd \
        ./usr/lib/sysusers.d/entropyd.conf ./etc/default/entropyd; do
         grep -q \" \$f\$\" '$tmp/deb.list' || exit 1; done
     grep -q ' ./usr/lib/[^/]*/entropyd/sources/\$' '$tmp/deb.list'"
check "entropyd-dev holds the SDK: the header, entropyd.pc, entropyd-source(3)" sh -c \
    "grep -q ' ./usr/include/entropyd/source.h\$' '$tmp/dev.list' &&
     grep -q ' ./usr/lib/[^/]*/pkgconfig/entropyd.pc\$' '$tmp/dev.list' &&
     grep -q ' ./usr/share/man/man3/entropyd-source.3.gz\$' '$tmp/dev.list'"
dpkg-deb -e "$deb" "$tmp/control"
check "/etc/default/entropyd and the init script are conffiles" sh -c \
    "grep -qx /etc/default/entropyd '$tmp/control/conffiles' &&
     grep -qx /etc/init.d/entropyd '$tmp/control/conffiles'"

# --- install --------------------------------------------------------------
printf 'HRNGDEVICE=/dev/hwrng\nRNGDOPTIONS="--fill-watermark=90%% --feed-interval=1 -B 5"\n' \
    >"$rngd_defaults"
apt_install "$deb" "$dev" >"$tmp/install.log" 2>&1
rc=$?
check "apt-get install ./entropyd_*.deb ./entropyd-dev_*.deb (exit $rc)" test "$rc" -eq 0
show_if_failed "$tmp/install.log"
check "the postinst shows the rng-tools-debian settings in entropyd's terms, and what is left out" \
    sh -c "grep -q 'DAEMON_ARGS=\"-W 3686 -R 1\"' '$tmp/install.log' &&
     grep -q 'not translated: -B 5' '$tmp/install.log' &&
     grep -q 'entropyd-migrate-rngd -a /etc/default/entropyd' '$tmp/install.log'"
# Other daemons that feed the kernel, named by the postinst on a first install.
feeders=
for p in rng-tools-debian rng-tools rng-tools5 haveged; do
	dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' && feeders="$feeders $p"
done
check "the postinst names the other feeders installed, and only those:${feeders:- none}" sh -c \
    "test \"\$(sed -n 's/^entropyd: \\([^ ]*\\) is installed too.*/ \\1/p' '$tmp/install.log' |
     tr -d '\\n')\" = '$feeders'"
check "/etc/default/entropyd is the shipped one: the postinst writes no conffile" sh -c \
    "dpkg-query -W -f '\${Conffiles}\n' entropyd | grep ' /etc/default/entropyd ' |
     awk '{ print \$2 \"  /etc/default/entropyd\" }' | md5sum -c --quiet"
uid=$(id -u entropyd 2>/dev/null)
check "the system user entropyd exists (uid $uid), without a login shell" sh -c \
    "getent passwd entropyd | grep -q ':/usr/sbin/nologin\$' && test '$uid' -lt 1000"
check "entropyd is in the groups of its devices that exist (tss, dialout)" sh -c \
    "for g in tss dialout; do
         getent group \$g >/dev/null || continue
         id -nG entropyd | tr ' ' '\n' | grep -qx \$g || exit 1; done"
if [ -d /run/systemd/system ]; then
	check "the unit is enabled" systemctl is-enabled --quiet entropyd.service
else
	check "the init script is enabled (rcS.d)" sh -c "ls /etc/rcS.d/S*entropyd >/dev/null 2>&1"
fi
wait_for 100 daemon_pid >/dev/null
pid=$(daemon_pid)
check "the postinst started the daemon, as entropyd (pid $pid)" sh -c \
    "test -n '$pid' && test \"\$(awk '/^Uid:/ { print \$2 }' /proc/$pid/status)\" = '$uid'"
line=$(cmdline "$pid" 2>/dev/null)
check "with the default settings: $line" \
    test "$line" = "/usr/sbin/entropyd -D entropyd:entropyd -b -p /run/entropyd.pid"
wait_for 300 healthy
check "/health passes ($(cat "$tmp/health"))" sh -c \
    "grep -Eq '^ENTROPYD (OK|WARNING .*credited less than they claim)' '$tmp/health' &&
     test \"\$(stat -c %U /run/entropyd/entropyd.sock)\" = entropyd"
check "the plugin directory exists" test -d "$(pkg-config --variable=plugindir entropyd 2>/dev/null)"

# The SDK: a plugin built with pkg-config alone is loaded from the directory.
plugindir=$(pkg-config --variable=plugindir entropyd)
# shellcheck disable=SC2046 # the flags split into words
cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags entropyd) \
    -o "$tmp/serial.so" "$top_srcdir/examples/serial.c" >"$tmp/cc.log" 2>&1 &&
    install -m 644 "$tmp/serial.so" "$plugindir/serial.so"
/usr/sbin/entropyd -l >"$tmp/list" 2>&1
check "a plugin built with the installed SDK is listed by the installed daemon" \
    grep -q '^serial ' "$tmp/list"
show_if_failed "$tmp/cc.log" "$tmp/list"
rm -f "$plugindir/serial.so"

# systemd's view of the installed unit.
unit=/lib/systemd/system/entropyd.service
if command -v systemd-analyze >/dev/null 2>&1; then
	systemd-analyze verify "$unit" >"$tmp/verify" 2>&1
	rc=$?
	check "systemd-analyze verify $unit (exit $rc)" sh -c "test $rc -eq 0 && test ! -s '$tmp/verify'"
	show_if_failed "$tmp/verify"
	exposure=$(systemd-analyze security --offline=true "$unit" 2>/dev/null |
	    sed -n 's/.*Overall exposure level for entropyd.service: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: exposure ${exposure:-?} is at most 1.5" \
	    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 1.5) }'
else
	skip "systemd-analyze is not installed (package systemd)"
	skip "systemd-analyze is not installed (package systemd)"
fi

# --- upgrade with an edited defaults file ------------------------------------
services apt-get -o DPkg::Lock::Timeout=300 purge -y entropyd-dev >"$tmp/dev-purge.log" 2>&1
sed -i 's/^DAEMON_ARGS=.*/DAEMON_ARGS="-R 30"/' /etc/default/entropyd
cp /etc/default/entropyd "$tmp/edited"
version=$(dpkg-deb -f "$deb" Version)
dpkg-deb -R "$deb" "$tmp/next"
sed -i "s/^Version: .*/Version: $version+roundtrip1/" "$tmp/next/DEBIAN/control"
dpkg-deb --root-owner-group -b "$tmp/next" "$pkgs/entropyd_${version}+roundtrip1.deb" \
    >"$tmp/repack.log" 2>&1
apt_install "$pkgs/entropyd_${version}+roundtrip1.deb" >"$tmp/upgrade.log" 2>&1
rc=$?
check "upgrade to $version+roundtrip1 with apt-get (exit $rc)" sh -c \
    "test $rc -eq 0 && test \"\$(dpkg-query -W -f '\${Version}' entropyd)\" = '$version+roundtrip1'"
show_if_failed "$tmp/upgrade.log"
check "the edited /etc/default/entropyd is kept, with no .dpkg-new or .dpkg-dist beside it" sh -c \
    "cmp -s '$tmp/edited' /etc/default/entropyd &&
     ! ls /etc/default/entropyd.dpkg-* >/dev/null 2>&1"
check "an upgrade does not show the rngd settings again" \
    sh -c "! grep -q 'rngd settings in' '$tmp/upgrade.log'"
wait_for 100 sh -c "test \"\$(cat /run/entropyd.pid 2>/dev/null)\" != '$pid'"
wait_for 100 daemon_pid >/dev/null
newpid=$(daemon_pid)
line=$(cmdline "$newpid" 2>/dev/null)
check "the daemon was restarted (pid $pid -> $newpid) with the edited settings: $line" sh -c \
    "test -n '$newpid' && test '$newpid' != '$pid' && ! kill -0 '$pid' 2>/dev/null &&
     test '$line' = '/usr/sbin/entropyd -R 30 -D entropyd:entropyd -b -p /run/entropyd.pid'"
wait_for 300 healthy
check "/health passes after the upgrade ($(cat "$tmp/health"))" \
    grep -Eq '^ENTROPYD (OK|WARNING .*credited less than they claim)' "$tmp/health"

# --- remove, then purge ------------------------------------------------------
services apt-get -o DPkg::Lock::Timeout=300 remove -y entropyd >"$tmp/remove.log" 2>&1
rc=$?
check "apt-get remove entropyd (exit $rc)" test "$rc" -eq 0
show_if_failed "$tmp/remove.log"
wait_for 100 gone "$newpid"
# What is left, if anything, named in the check itself. A process that has
# ended is not left: its zombie waits for init, which may reap orphans only
# every second or so (the daemon's processes are orphans once daemonised).
left=$({
	gone "$newpid" || echo "pid $newpid"
	[ -e /run/entropyd.pid ] && echo "/run/entropyd.pid"
	running_as "$uid"
} 2>&1 | tr -s ' \n' ' ;')
check "remove stops the daemon and its pidfile goes${left:+ (left:$left)}" test -z "$left"
show_if_failed "$tmp/remove.log"
check "remove keeps the settings and the user; the programs are gone" sh -c \
    "cmp -s '$tmp/edited' /etc/default/entropyd && getent passwd entropyd >/dev/null &&
     test ! -e /usr/sbin/entropyd && test ! -e /lib/systemd/system/entropyd.service"
services apt-get -o DPkg::Lock::Timeout=300 purge -y entropyd >"$tmp/purge.log" 2>&1
rc=$?
check "apt-get purge entropyd (exit $rc)" sh -c \
    "test $rc -eq 0 && ! dpkg-query -W -f '\${db:Status-Abbrev}' entropyd 2>/dev/null | grep -q '^[ir]'"
show_if_failed "$tmp/purge.log"
check "purge removes the settings, the init script and its links" sh -c \
    "test ! -e /etc/default/entropyd && test ! -e /etc/init.d/entropyd &&
     ! ls /etc/rc?.d/*entropyd >/dev/null 2>&1"
if [ "$user_before" = yes ]; then
	check "the entropyd user, there before the install, stays" getent passwd entropyd
	check "its group stays too" getent group entropyd
else
	check "purge removes the user entropyd" sh -c "! getent passwd entropyd"
	check "purge removes the group entropyd" sh -c "! getent group entropyd"
fi
check "purge removes what the daemon and the postinst made: /var/lib/entropyd, /run/entropyd" \
    sh -c "test ! -e /var/lib/entropyd && test ! -e /run/entropyd"
left=$(running_as "$uid" | tr -s ' \n' ' ;')
check "nothing is left running: no process of uid $uid, no entropyd from the package${left:+ (left:$left)}" \
    nothing_left
check "nothing of the packages is left in dpkg's database" sh -c \
    "! dpkg-query -W -f '\${db:Status-Abbrev}\n' entropyd entropyd-dev 2>/dev/null | grep -q '^[a-z]'"
rngd_now=absent
[ -e "$rngd_defaults" ] && rngd_now=$(md5sum <"$rngd_defaults")
check "rng-tools-debian's settings were never written (the test's own are put back next)" \
    sh -c "grep -q 'feed-interval=1 -B 5' '$rngd_defaults'"
if [ "$rngd_saved" = absent ]; then
	rm -f "$rngd_defaults"
else
	cp -p "$tmp/rng-tools-debian.saved" "$rngd_defaults"
fi
rngd_now=absent
[ -e "$rngd_defaults" ] && rngd_now=$(md5sum <"$rngd_defaults")
check "rng-tools-debian's settings are as they were before the test" test "$rngd_now" = "$rngd_saved"
finish
