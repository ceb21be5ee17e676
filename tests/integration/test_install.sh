#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `meson install` into a DESTDIR puts every file in place: the daemon (sbin), nfsd-uc-stat
# (bin), the systemd unit, the three man pages, the example conf, and an /etc conf that a second
# install leaves alone; the unit passes `systemd-analyze verify` and the installed conf is valid.
# usage: test_install.sh BUILD_DIR
set -u
BUILD=$1
D=$(mktemp -d /tmp/nfsd-uc-install.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
meson install -C "$BUILD" --no-rebuild --destdir "$D" >"$D.log" 2>&1 || { cat "$D.log" >&2; fail "meson install"; }
rm -f "$D.log"
find_one() { f=$(find "$D" -path "*$1" -print -quit); [ -n "$f" ] || fail "no $1 installed"; echo "$f"; }
daemon=$(find_one /sbin/nfsd-uc)
stat=$(find_one /bin/nfsd-uc-stat)
unit=$(find_one /lib/systemd/system/nfsd-uc.service)
for page in man8/nfsd-uc.8 man5/nfsd-uc.conf.5 man8/nfsd-uc-stat.8; do
	f=$(find_one "/share/man/$page")
	grep -q '^\.TH' "$f" || fail "$page is not a man page"
done
find_one /share/doc/nfsd-uc/nfsd-uc.conf.example >/dev/null
conf=$(find_one /etc/nfsd-uc.conf)
[ -x "$daemon" ] && [ -x "$stat" ] || fail "binaries not executable"
"$daemon" --version >/dev/null || fail "the installed daemon does not run"
"$stat" --help >/dev/null || fail "the installed nfsd-uc-stat does not run"
# The installed conf is valid as it is (nothing exported yet, state in /var/lib/nfsd-uc).
grep -q '^state_dir = /var/lib/nfsd-uc$' "$conf" || fail "installed conf keeps a relative state_dir"
"$daemon" --check -c "$conf" || fail "the installed conf does not pass --check"
# The unit names the installed paths; verified with those paths moved under DESTDIR.
grep -q "^ExecStart=/.*/nfsd-uc -c /.*/nfsd-uc.conf$" "$unit" || fail "unit ExecStart: $(grep ExecStart= "$unit")"
prefix=${daemon%/sbin/nfsd-uc}
prefix=${prefix#"$D"}
sed -e "s|=$prefix/sbin/|=$D$prefix/sbin/|" "$unit" > "$D/nfsd-uc.service"
if command -v systemd-analyze >/dev/null; then
	(cd "$D" && systemd-analyze verify --man=no ./nfsd-uc.service) || fail "systemd-analyze verify"
else
	echo "systemd-analyze not found: unit not verified" >&2
fi
# A second install leaves an administrator's conf alone.
echo "# edited by the administrator" >> "$conf"
meson install -C "$BUILD" --no-rebuild --destdir "$D" >/dev/null 2>&1 || fail "second meson install"
grep -q "edited by the administrator" "$conf" || fail "a second install overwrote $conf"
echo "1 passed, 0 failed"
