#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Writers faster than the disk, write_mode = cached: the daemon's writes to its file system are
# throttled to 24 MiB/s (a blkio cgroup on the loop device), its cache is 16M, and 32 writers
# send 64 MiB of misaligned records as fast as they can. The bound must hold (the cache never
# holds much more than 16M: WRITE replies wait for write-behind instead), backpressure must be
# what held it (the counter), write-behind must still write large runs, and every byte must read
# back right after the COMMIT.
#
# usage: test_slowdisk.sh NFSD_UC NFS_INTERLEAVE NFSDUC_STAT     (root; exit 77 = skipped)
set -u
EXE=$1 INTERLEAVE=$2 STAT=$3
W="" LOOP="" PID="" CG=""
fail() { echo "FAIL: $*" >&2; [ -n "$W" ] && tail -30 "$W/log" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
	[ -n "$W" ] && mountpoint -q "$W/mnt" && umount "$W/mnt"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	[ -n "$W" ] && rm -rf "$W"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || skip "needs root for a loop device and a cgroup"
BLKIO=/sys/fs/cgroup/blkio
[ -w "$BLKIO/blkio.throttle.write_bps_device" ] || [ -d "$BLKIO" ] || skip "no blkio cgroup (v1) here"
W=$(mktemp -d /var/tmp/nfsd-uc-slow.XXXXXX) || exit 1
truncate -s 512M "$W/img"
LOOP=$(losetup -f --show "$W/img" 2>/dev/null) || { LOOP=""; skip "no loop device"; }
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4"
mkdir -p "$W/mnt" "$W/state" && mount "$LOOP" "$W/mnt" && mkdir "$W/mnt/export" || fail "mount"
CG=$BLKIO/nfsd-uc-slow.$$
mkdir "$CG" 2>/dev/null || { CG=""; skip "cannot make a blkio cgroup"; }
echo "$(lsblk -ndo MAJ:MIN "$LOOP" | tr -d ' ') $((24 << 20))" > "$CG/blkio.throttle.write_bps_device" ||
	skip "blkio throttling refused"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P=$(port) M=$(port)
cat > "$W/conf" <<CONF
[server]
listen = 127.0.0.1
port = $P
mount_port = $M
state_dir = $W/state
rpcbind = no
[cache]
size = 16M
[export $W/mnt/export]
clients = 127.0.0.1(rw,no_root_squash,insecure)
write_mode = cached
CONF
"$EXE" -c "$W/conf" 2>"$W/log" &
PID=$!
echo "$PID" > "$CG/cgroup.procs" || fail "cannot move the daemon into the cgroup"
for _ in $(seq 100); do grep -q ready "$W/log" && break; sleep 0.1; done
grep -q ready "$W/log" || fail "daemon did not start"
start=$SECONDS
out=$("$INTERLEAVE" -r 47008 -t 64M --seed 7 --write-only 127.0.0.1 "$P" "$M" "$W/mnt/export" f 2>&1) ||
	fail "writing 64 MiB: $out"
took=$((SECONDS - start))
echo "  $out"
counter() { "$STAT" 127.0.0.1 "$P" "$1" || fail "no counter $1"; }
peak=$(counter cache_bytes_peak) waits=$(counter cache_backpressure_waits)
big=$(counter cache_wb_ge_1m) dirty=$(counter cache_dirty_bytes)
hist=$(for k in 8k 16k 32k 64k 128k 256k 512k 1m; do printf '<%s:%s ' $k "$(counter cache_wb_lt_$k)"; done)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
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
"$INTERLEAVE" -r 47008 -t 64M --seed 7 --verify-only 127.0.0.1 "$P" "$M" "$W/mnt/export" f >/dev/null ||
	fail "read-back after the COMMIT: the file differs from what was written"
kill -TERM "$PID"; wait "$PID"; rc=$?; PID=""
[ $rc = 0 ] || fail "daemon exit status $rc after SIGTERM"
echo "1 passed, 0 failed"
