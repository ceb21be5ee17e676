#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run an integration program with its tree on XFS (4096-byte sectors on a loop device, as the
# benchmarks use): on_xfs.sh PROGRAM ARGS...   Root; exit 77 (skipped) without loop devices.
set -u
W="" LOOP=""
cleanup() {
	[ -n "$W" ] && mountpoint -q "$W/mnt" && umount "$W/mnt"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	[ -n "$W" ] && rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
W=$(mktemp -d /var/tmp/nfsd-uc-xfs.XXXXXX) || exit 1
truncate -s 1G "$W/img"
LOOP=$(losetup --sector-size 4096 -f --show "$W/img" 2>/dev/null) ||
	{ LOOP=""; echo "SKIP: no loop device" >&2; exit 77; }
mkfs.xfs -q -f "$LOOP" >/dev/null 2>&1 || { echo "FAIL: mkfs.xfs" >&2; exit 1; }
mkdir -p "$W/mnt" && mount -t xfs "$LOOP" "$W/mnt" || { echo "FAIL: mount" >&2; exit 1; }
NFSD_UC_IT_TMPDIR=$W/mnt "$@"
