#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Writers faster than the disk, write_mode = cached: the daemon's writes to its file system are
# throttled to 24 MiB/s (a blkio cgroup, v1, or io.max, v2, on the loop device), its cache is
# 16M, and 32 writers send 64 MiB of misaligned records as fast as they can. The bound must hold
# (the cache never holds much more than 16M: WRITE replies wait for write-behind instead),
# backpressure must be what held it (the counter), write-behind must still write large runs,
# and every byte must read back right after the COMMIT.
#
# usage: test_slowdisk.sh NFSD_UC NFS_INTERLEAVE NFSDUC_STAT     (root; exit 77 = skipped)
set -u
EXE=$1 INTERLEAVE=$2 STAT=$3
# shellcheck source=../../bench/run-interleave.sh
. "${NFSDUC_BENCH_LIB:-$(dirname "$0")/../../bench/run-interleave.sh}"
CG=""
fail() { echo "FAIL: $*" >&2; [ -n "$BENCH_LOG" ] && tail -30 "$BENCH_LOG" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
cleanup() {
	bench_cleanup
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
}
trap cleanup EXIT

# throttle MAJ:MIN: a cgroup whose writes to that device go at 24 MiB/s; sets CG.
throttle() {
	local v1=/sys/fs/cgroup/blkio v2=/sys/fs/cgroup bps=$((24 << 20))
	if [ -d "$v1" ]; then
		CG=$v1/nfsd-uc-slow.$$
		mkdir "$CG" || { CG=""; return 1; }
		echo "$1 $bps" >"$CG/blkio.throttle.write_bps_device"
	elif grep -qw io "$v2/cgroup.controllers" 2>/dev/null; then
		grep -qw io "$v2/cgroup.subtree_control" || echo +io >"$v2/cgroup.subtree_control" || return 1
		CG=$v2/nfsd-uc-slow.$$
		mkdir "$CG" || { CG=""; return 1; }
		echo "$1 wbps=$bps" >"$CG/io.max"
	else
		return 1
	fi
}

[ "$(id -u)" = 0 ] || skip "needs root for a loop device and a cgroup"
bench_make_fs 4k 512M
rc=$?
[ $rc = 77 ] && skip "no loop device"
[ $rc = 0 ] || fail "no XFS on a loop device"
throttle "$(lsblk -ndo MAJ:MIN "$BENCH_LOOP" | tr -d ' ')" || skip "no blkio (v1) or io (v2) cgroup throttling here"
bench_write_conf 2 16M cached || fail "conf"
bench_start "$EXE" || fail "daemon did not start"
echo "$BENCH_DPID" >"$CG/cgroup.procs" || fail "cannot move the daemon into the cgroup"
P=$BENCH_PORT M=$BENCH_MPORT
start=$SECONDS
out=$("$INTERLEAVE" -r 47008 -t 64M --seed 7 --write-only 127.0.0.1 "$P" "$M" "$BENCH_EXPORT" f 2>&1) ||
	fail "writing 64 MiB: $out"
took=$((SECONDS - start))
echo "  $out"
counter() { "$STAT" 127.0.0.1 "$P" "$1" || fail "no counter $1"; }
peak=$(counter cache_bytes_peak) waits=$(counter cache_backpressure_waits)
big=$(counter cache_wb_ge_1m) dirty=$(counter cache_dirty_bytes)
hist=$(for k in 8k 16k 32k 64k 128k 256k 512k 1m; do printf '<%s:%s ' $k "$(counter cache_wb_lt_$k)"; done)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$BENCH_DPID/status")
echo "  ${took}s at 24 MiB/s; cache_bytes_peak=$peak backpressure_waits=$waits VmHWM=${hwm}K"
echo "  write-behind runs: $hist>=1m:$big"
[ "$took" -ge 2 ] || fail "64 MiB in ${took}s: the throttle did not slow the disk, the test shows nothing"
# Each WRITE puts its blocks in before it waits for room: the 128 in flight (32 writers, 4 each,
# a record and its partial blocks: under 64K apiece) may sit above the bound at once; nothing else may.
[ "$peak" -le $(((16 << 20) + 128 * (64 << 10))) ] ||
	fail "the cache peaked at $peak bytes: more than its 16M bound and the WRITEs in flight"
[ "$waits" -gt 0 ] || fail "no WRITE waited for room, yet the disk was slower than the writers"
[ "$big" -gt 0 ] || fail "write-behind wrote no run of 1 MiB or more"
[ "$dirty" -eq 0 ] || fail "$dirty bytes still dirty after the final COMMIT"
"$INTERLEAVE" -r 47008 -t 64M --seed 7 --verify-only 127.0.0.1 "$P" "$M" "$BENCH_EXPORT" f >/dev/null ||
	fail "read-back after the COMMIT: the file differs from what was written"
bench_stop || fail "daemon exit status $? after SIGTERM"
echo "1 passed, 0 failed"
