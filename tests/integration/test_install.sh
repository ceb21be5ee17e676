#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `meson install` into a DESTDIR puts every file in place: the daemon (sbin), nfsd-uc-stat
# (bin), the systemd unit and its generator, the man pages, the example conf, an empty
# exports_dir and an /etc conf that a second install leaves alone; the unit (with the drop-in
# the generator writes: RequiresMountsFor= each export) passes `systemd-analyze verify`, and
# the installed conf is valid.
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
for page in man8/nfsd-uc.8 man5/nfsd-uc.conf.5 man8/nfsd-uc-stat.8 man7/nfsd-uc-metrics.7; do
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
# What an administrator relies on in the unit: a config error is not restarted in a loop, a
# reload checks the file first, and the kernel's server and Ganesha are stopped when it starts.
grep -q '^RestartPreventExitStatus=2$' "$unit" || fail "unit: no RestartPreventExitStatus=2"
grep -q '^ExecReload=/.*/nfsd-uc --check --reload -c /.*/nfsd-uc.conf$' "$unit" ||
	fail "unit: reload does not check the file first"
grep -q '^Conflicts=.*nfs-server.service.*nfs-ganesha.service' "$unit" || fail "unit: no Conflicts="
[ -d "$(dirname "$conf")/nfsd-uc.d" ] || fail "no exports_dir (nfsd-uc.d) beside the conf"
# The generator: every export of the file and of its exports_dir, relative ones against the
# file's directory, odd characters quoted; a conf without exports writes nothing.
gen=$(find_one /lib/systemd/system-generators/nfsd-uc-generator)
[ -x "$gen" ] || fail "generator not executable"
G=$D/gen
mkdir -p "$G/etc/more" "$G/out"
cat > "$G/etc/nfsd-uc.conf" <<CONF
[server]
exports_dir = "more"   # quoted, relative
[export /srv/nfs/a]
clients = *
# [export /srv/commented]
[export rel/b]
clients = *
CONF
printf '[export /srv/100%%/with space]\nclients = *\n' > "$G/etc/more/10-x.conf"
printf '[export /srv/hidden]\nclients = *\n' > "$G/etc/more/.20-y.conf"
NFSD_UC_CONF=$G/etc/nfsd-uc.conf "$gen" "$G/out" "$G/early" "$G/late" || fail "generator failed"
dropin=$G/out/nfsd-uc.service.d/50-exports.conf
[ -f "$dropin" ] || fail "generator wrote no drop-in"
want=$(printf '%s\n' 'RequiresMountsFor="/srv/nfs/a"' "RequiresMountsFor=\"$G/etc/rel/b\"" \
	'RequiresMountsFor="/srv/100%%/with space"')
got=$(grep '^RequiresMountsFor=' "$dropin")
[ "$got" = "$want" ] || fail "generator: got [$got], want [$want]"
mkdir -p "$G/none"
printf '[server]\nport = 2049\n' > "$G/none/nfsd-uc.conf"
NFSD_UC_CONF=$G/none/nfsd-uc.conf "$gen" "$G/none/out" || fail "generator failed without exports"
[ ! -e "$G/none/out" ] || fail "generator wrote a drop-in for a conf without exports"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$D/nfsd-uc.service.d"
	cp "$dropin" "$D/nfsd-uc.service.d/"
	v=$(cd "$D" && systemd-analyze verify --man=no ./nfsd-uc.service 2>&1) ||
		fail "systemd-analyze verify: $v"
	# verify only warns about a line of a drop-in it ignores
	case $v in *50-exports.conf*) fail "systemd-analyze verify: $v" ;; esac
else
	echo "systemd-analyze not found: unit not verified" >&2
fi
# A second install leaves an administrator's conf alone.
echo "# edited by the administrator" >> "$conf"
meson install -C "$BUILD" --no-rebuild --destdir "$D" >/dev/null 2>&1 || fail "second meson install"
grep -q "edited by the administrator" "$conf" || fail "a second install overwrote $conf"
echo "1 passed, 0 failed"
