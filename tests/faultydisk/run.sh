#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - nfsd-uc on a disk that fails: EIO and ENOSPC under write-behind, injected with device
# mapper in a Debian kernel under QEMU (this host's kernel has no device mapper). The guest runs
# the daemon, the load generator and the checks of guest.sh; see there for what is checked.
#
#   run.sh NFSD_UC NFS_INTERLEAVE NFSDUC_STAT
#
# The guest image is bench/guest/image.sh's (cached; a Debian kernel with XFS and dm-mod, busybox,
# mkfs.xfs, xfs_io, dmsetup); the three binaries are appended to it for each run, so a rebuilt
# daemon does not rebuild the image. Exit 0 every check passed, 1 one failed, 77 skipped (not
# root, no QEMU, no kernel image, the guest did not boot: the reason is printed).
#
# Environment: NFSD_UC_FD_RECORD (47008), NFSD_UC_FD_TOTAL (bytes a file, 16M),
#   NFSD_UC_FD_CACHE (the daemon's [cache] size, 64M), NFSD_UC_FD_TIMEOUT (seconds, 600),
#   NFSD_UC_FD_KEEP=1 (keep the job directory), and image.sh's NFSD_UC_KG_* variables.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
UC=${1:-} IL=${2:-} ST=${3:-}
RECORD=${NFSD_UC_FD_RECORD:-47008}
TOTAL=${NFSD_UC_FD_TOTAL:-16M}
CACHE=${NFSD_UC_FD_CACHE:-64M}
TIMEOUT=${NFSD_UC_FD_TIMEOUT:-600}
J=""
# shellcheck source=../../bench/guest/lib.sh
. "$HERE/../../bench/guest/lib.sh"

say() { printf '[faultydisk] %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

cleanup() {
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	if [[ -n $J && ${NFSD_UC_FD_KEEP:-0} != 1 ]]; then rm -rf "$J"; elif [[ -n $J ]]; then say "kept $J"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

main() {
	local b
	for b in "$UC" "$IL" "$ST"; do
		[[ -n $b && -x $b ]] || { say "usage: $0 NFSD_UC NFS_INTERLEAVE NFSDUC_STAT ('$b' is not executable)"; exit 2; }
	done
	[[ $(id -u) == 0 ]] || skip "needs root (the guest image's cache, QEMU's disk)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (tests/linux-client/setup.sh installs it)"
	command -v cpio >/dev/null || skip "cpio is not installed"
	local img
	img=$("$HERE/../../bench/guest/image.sh" | tail -n 1)
	[[ -n $img && -f $img/ok ]] || skip "no guest image (bench/guest/image.sh said why above)"
	grep -q 'dm-mod' "$img/../kernel/$(cat "$img/kpkg")/modules.list" 2>/dev/null ||
		skip "the guest kernel has no dm-mod module"
	J=$(mktemp -d /var/tmp/nfsd-uc-fd.XXXXXX) || exit 1
	mkdir -p "$J/share"
	: >"$J/share/log"
	guest_initrd "$img/initrd.img" "$J/initrd.img" "$UC:/usr/local/bin/nfsd-uc" \
		"$IL:/usr/local/bin/nfs-interleave" "$ST:/usr/local/bin/nfsduc-stat" || exit 1
	truncate -s 2G "$J/disk.img"
	cp "$HERE/guest.sh" "$J/share/main.sh"
	printf 'RECORD=%s\nTOTAL=%s\nCACHE=%s\n' "$RECORD" "$TOTAL" "$CACHE" >"$J/share/env"
	say "kernel $(cat "$img/kver"), TCG; $RECORD-byte records, $TOTAL a file, cache $CACHE"
	guest_run "$img" "$J" 2048 2 "$TIMEOUT"
	say "the guest ran $GUEST_ELAPSED s"
	if ! grep -q 'GUEST up' "$J/console.log" 2>/dev/null; then
		sed 's/^/  console| /' "$J/console.log" 2>/dev/null
		sed 's/^/  qemu| /' "$J/qemu.log"
		skip "the guest did not boot"
	fi
	local rc
	rc=$(cat "$J/share/rc" 2>/dev/null || echo none)
	if [[ $rc != 0 ]]; then
		say "FAIL: the guest's checks ended with status $rc; console:"
		tail -n 40 "$J/console.log" | sed 's/^/  console| /'
		exit 1
	fi
	say "$(grep -c '^ok - ' "$J/share/log") checks passed"
}

main
