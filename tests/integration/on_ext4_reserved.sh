#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run an integration program with its tree on a small ext4 whose blocks are half reserved for
# root (mkfs.ext4 -m 50, on a loop device): on_ext4_reserved.sh PROGRAM ARGS...
# Root; exit 77 (skipped) without loop devices.
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
W=$(mktemp -d /var/tmp/nfsd-uc-ext4.XXXXXX) || exit 1
LOOP=""
cleanup() {
	mountpoint -q "$W/mnt" && umount "$W/mnt"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$W"
}
trap cleanup EXIT
truncate -s 48M "$W/img"
LOOP=$(losetup -f --show "$W/img" 2>/dev/null) || { LOOP=""; echo "SKIP: no loop device" >&2; exit 77; }
mkfs.ext4 -q -F -m 50 "$LOOP" >/dev/null 2>&1 || { echo "mkfs.ext4 failed" >&2; exit 1; }
mkdir "$W/mnt" && mount "$LOOP" "$W/mnt" || exit 1
NFSD_UC_IT_TMPDIR=$W/mnt "$@"
