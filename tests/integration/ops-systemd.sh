#!/bin/sh
# The systemd unit: it verifies, and its exposure is at most 1.5, alone and
# with the EGD broker's drop-in; the init script passes sh -n and shellcheck.
. "$(dirname "$0")/lib.sh"
unit=$top_builddir/contrib/entropyd.service
init=$top_builddir/contrib/entropyd.init
plan 12

check "the unit is generated with every @variable@ replaced" sh -c \
    "test -s '$unit' && ! grep -q '@[a-z]*@' '$unit' && grep -q '^ExecStart=/.*/entropyd ' '$unit'"
# Settings in one place: the init script's defaults file, read if present,
# its arguments before the unit's own -f (which so wins over a -b there).
check "the unit reads the defaults file and passes DAEMON_ARGS before its -f" sh -c \
    "grep -qx 'EnvironmentFile=-/.*/default/entropyd' '$unit' &&
     grep -qx 'ExecStart=/[^ ]*/entropyd \\\$DAEMON_ARGS -f' '$unit'"
check "the unit is Type=notify at early boot with an explicit device list" sh -c \
    "grep -qx 'Type=notify' '$unit' && grep -qx 'DefaultDependencies=no' '$unit' &&
     grep -q '^Before=.*sysinit.target' '$unit' && grep -qx 'Conflicts=shutdown.target' '$unit' &&
     grep -qx 'DevicePolicy=closed' '$unit' && grep -qx 'DeviceAllow=/dev/random rw' '$unit' &&
     grep -qx 'CapabilityBoundingSet=CAP_SYS_ADMIN' '$unit' && ! grep -q PrivateDevices '$unit'"
check "sh -n: the init script parses" sh -n "$init"
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck -s sh "$init" >"$tmp/sc" 2>&1
	check "shellcheck: the init script is clean" test $? -eq 0
	sed 's/^/# /' "$tmp/sc"
else
	skip "shellcheck is not installed"
fi

# The user the unit runs as, as systemd-sysusers (and the Debian package's
# postinst under systemd) makes it from the sysusers.d file.
if command -v systemd-sysusers >/dev/null 2>&1; then
	mkdir -p "$tmp/sysroot/etc"
	systemd-sysusers --root="$tmp/sysroot" "$top_srcdir/contrib/entropyd.sysusers" \
	    >"$tmp/sysusers" 2>&1
	check "systemd-sysusers makes the system user entropyd, in the tss and dialout groups" sh -c \
	    "grep -q '^entropyd:x:[0-9]*:[0-9]*:[^:]*:[^:]*:/usr/sbin/nologin\$' '$tmp/sysroot/etc/passwd' &&
	     grep -q '^entropyd:' '$tmp/sysroot/etc/group' &&
	     grep -q '^tss:x:[0-9]*:entropyd\$' '$tmp/sysroot/etc/group' &&
	     grep -q '^dialout:x:[0-9]*:entropyd\$' '$tmp/sysroot/etc/group'"
	show_if_failed "$tmp/sysusers"
else
	skip "systemd-sysusers is not installed (package systemd)"
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6; do skip "systemd-analyze is not installed (package systemd)"; done
	finish
fi
# A copy that runs the daemon just built; man pages are not installed yet.
mkdir "$tmp/unit"
sed -e "s|^ExecStart=[^ ]*|ExecStart=$top_builddir/entropyd|" -e '/^Documentation=/d' \
    "$unit" >"$tmp/unit/entropyd.service"
systemd-analyze verify "$tmp/unit/entropyd.service" >"$tmp/verify" 2>&1
rc=$?
check "systemd-analyze verify: no complaint (exit $rc)" sh -c "test $rc -eq 0 && test ! -s '$tmp/verify'"
sed 's/^/# /' "$tmp/verify"
systemd-analyze security --offline=true "$tmp/unit/entropyd.service" >"$tmp/security" 2>&1
rc=$?
exposure=$(sed -n 's/.*Overall exposure level for entropyd.service: \([0-9.]*\).*/\1/p' "$tmp/security")
check "systemd-analyze security --offline=true runs (exit $rc)" test -n "$exposure"
check "exposure $exposure is at most 1.5" awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 1.5) }'
grep '✗' "$tmp/security" | sed 's/  */ /g; s/^/# /'
check "the unit runs as its own user, not root" sh -c \
    "grep -qx 'User=entropyd' '$unit' && ! grep -q 'Service runs as root' '$tmp/security'"

# The EGD broker's drop-in (contrib/entropyd-egd.conf) where an operator
# puts it, read from the unit's directory (the security report's
# supplementary groups show that it was).
mkdir "$tmp/unit/entropyd.service.d"
cp "$top_srcdir/contrib/entropyd-egd.conf" "$tmp/unit/entropyd.service.d/egd.conf"
SYSTEMD_UNIT_PATH="$tmp/unit:" systemd-analyze verify "$tmp/unit/entropyd.service" \
    >"$tmp/verify-egd" 2>&1
rc=$?
check "with the EGD drop-in: systemd-analyze verify, no complaint (exit $rc)" sh -c \
    "test $rc -eq 0 && test ! -s '$tmp/verify-egd'"
sed 's/^/# /' "$tmp/verify-egd"
SYSTEMD_UNIT_PATH="$tmp/unit:" systemd-analyze security --offline=true \
    "$tmp/unit/entropyd.service" >"$tmp/security-egd" 2>&1
exposure=$(sed -n 's/.*Overall exposure level for entropyd.service: \([0-9.]*\).*/\1/p' \
    "$tmp/security-egd")
check "with the EGD drop-in, read (its supplementary group counted): exposure $exposure is at most 1.5" \
    sh -c "grep -q 'Service runs with supplementary groups' '$tmp/security-egd' &&
           awk -v e='${exposure:-99}' 'BEGIN { exit !(e <= 1.5) }'"
finish
