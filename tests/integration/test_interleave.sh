#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Integration test of nfsd-uc's boundary cache (issue 4): the seeds' workload, 32 connections
# writing interleaved records (record i at i*R, writer t writes records t, t+32, ...), so that
# every block at a record boundary is shared by two WRITEs from two connections arriving in any
# order. On XFS made on a loop device with 4096-byte sectors, with 4 KiB blocks and again with
# 16 KiB blocks (block larger than a page), for R = 47008, 6000, 4097 and 49152, UNSTABLE + one
# COMMIT and FILE_SYNC, a fresh file and an overwrite of it after drop_caches. Each case checks:
#   - every byte read back through the daemon (its cache overlay) equals what was written;
#   - the daemon counted exactly the WRITEs the client sent;
#   - after the final COMMIT (or the last FILE_SYNC WRITE) no entry is left dirty, and at most the
#     file's partial last block is still held (clean) in the cache;
#   - UNSTABLE: completing the shared blocks read nothing from disk (cache_fill_reads 0 for a
#     fresh file; at most the last block, which nobody completes, for an overwrite);
#   - the cache was used at all for misaligned records, and not for block-aligned ones (49152);
#   - all of it twice: write_mode = direct (the checks above) and write_mode = cached, where
#     the cache holds every WRITE's blocks and the checks are: nothing dirty once committed, no
#     shared block of a new file read back (whatever the sync mode: the bytes a missing neighbour
#     would bring are a hole), none for the memory bound, no middle unaligned in memory, frames
#     for writers filling a new file (check_cached);
#   - then the daemon is SIGKILLed, so that whatever it held only in memory is lost, restarted
#     after drop_caches, and every byte is read back again from disk: COMMIT and FILE_SYNC really
#     left the data there. The last daemon of each case must stop with status 0 on SIGTERM.
# And once, cached with 4 KiB blocks: 128 writers x 4 in flight into a 512 MiB file, the frames
# coming back warm and the cache staying near its written share (run_many_writers).
#
# usage: test_interleave.sh NFSD_UC NFS_INTERLEAVE NFSDUC_STAT
# Needs root, loop devices and XFS: otherwise exit 77 (skipped) with the reason on stderr.
# NFSDUC_IT_RECORDS (default 512) records per case; NFSDUC_BENCH_LIB the path of
# bench/run-interleave.sh (default: found beside this file's checkout); BENCH_KEEP=1 keeps the
# image and logs.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 NFSD_UC NFS_INTERLEAVE NFSDUC_STAT" >&2
	exit 2
fi
EXE=$1 INTERLEAVE=$2 STAT=$3
# 512 records: 16 per writer; the files of R = 47008 (both block sizes) and 6000 (4 KiB blocks) then
# end on a block boundary, where no cache entry at all may be left.
NREC=${NFSDUC_IT_RECORDS:-512}
WRITERS=32
LIB=${NFSDUC_BENCH_LIB:-$(dirname "$0")/../../bench/run-interleave.sh}
# shellcheck source=../../bench/run-interleave.sh
. "$LIB" || { echo "cannot read $LIB" >&2; exit 2; }

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (loop devices, mount, drop_caches)"
for t in losetup mkfs.xfs mount umount ss; do
	command -v "$t" >/dev/null || skip "$t not installed"
done
grep -qw xfs /proc/filesystems || modprobe xfs 2>/dev/null || skip "no XFS in this kernel"

FAILS=0
CASE=""

fail() {
	echo "FAIL [$CASE]: $*" >&2
	FAILS=$((FAILS + 1))
	if [ -n "$BENCH_LOG" ] && [ -f "$BENCH_LOG" ]; then
		echo "--- daemon log (last 15 lines)" >&2
		tail -15 "$BENCH_LOG" >&2
	fi
	return 1
}

# interleave ARGS...: nfs-interleave against our daemon and file $FILE with the case's sizes;
# prints its result line.
interleave() {
	"$INTERLEAVE" --writers "$WRITERS" --qd 4 --record "$REC" --records "$NREC" "$@" \
		127.0.0.1 "$BENCH_PORT" "$BENCH_MPORT" "$BENCH_EXPORT" "$FILE"
}

# counter NAME: the daemon's counter, or fail when it does not report it.
counter() {
	local v
	if ! v=$("$STAT" 127.0.0.1 "$BENCH_PORT" "$1"); then
		echo "the daemon reports no counter '$1'; it reports:" >&2
		"$STAT" 127.0.0.1 "$BENCH_PORT" >&2
		return 1
	fi
	echo "$v"
}

# check_counters SYNC MODE RESULT_LINE: what the daemon's counters must say after the writes.
check_counters() {
	local sync=$1 mode=$2 out=$3 writes served entries peak fills dirty allow=0
	# shellcheck disable=SC2086
	writes=$(bench_get writes $out)
	if ! { entries=$(counter cache_entries) && peak=$(counter cache_entries_peak) &&
		fills=$(counter cache_fill_reads) && served=$(counter writes); }; then
		fail "the daemon does not report the counters this test needs"
		return 1
	fi
	[ "$served" = "$writes" ] || { fail "the client sent $writes WRITEs, the daemon counted $served"; return 1; }
	dirty=$(bench_stat "$STAT" cache_dirty)
	[ "$WMODE" = cached ] && { check_cached "$sync" "$mode" "$fills" "$dirty"; return; }
	# UNSTABLE runs end with a COMMIT of the whole file, after which nothing may be held;
	# FILE_SYNC runs send no COMMIT, and the image of the last block, when the file ends inside
	# one, stays for an append
	[ "$sync" = file ] && [ $((NREC * REC % BENCH_BLOCK)) -ne 0 ] && allow=1
	[ "$dirty" = - ] || [ "$dirty" -eq 0 ] || { fail "cache_dirty $dirty after the final COMMIT"; return 1; }
	[ "$entries" -le $allow ] ||
		{ fail "cache_entries $entries after the last WRITE or COMMIT (at most $allow)"; return 1; }
	if [ $((REC % BENCH_BLOCK)) -eq 0 ]; then
		[ "$peak" -eq 0 ] || { fail "block-aligned records, yet $peak entries were cached"; return 1; }
	else
		[ "$peak" -gt 0 ] ||
			{ fail "misaligned records, yet the boundary cache was never used (write_mode = direct)"; return 1; }
	fi
	# The payload's one copy is socket -> placed buffer: a middle the cache had to bounce means a
	# second copy of the data on its way to disk.
	local bounced
	bounced=$(counter cache_bounced_middles) || { fail "no cache_bounced_middles counter"; return 1; }
	[ "$bounced" -eq 0 ] || { fail "$bounced WRITE middles were copied again (unaligned in memory)"; return 1; }
	if [ "$sync" = unstable ]; then
		local most=0
		[ "$mode" = overwrite ] && [ $((NREC * REC % BENCH_BLOCK)) -ne 0 ] && most=1
		[ "$fills" -le $most ] ||
			{ fail "$fills blocks read back from disk to complete shared blocks (at most $most)"; return 1; }
	fi
	echo "    counters: writes=$writes cache_entries=$entries cache_entries_peak=$peak" \
		"cache_fill_reads=$fills cache_dirty=$dirty cache_bytes_peak=$(bench_stat "$STAT" cache_bytes_peak)"
}

# check_cached SYNC MODE FILLS DIRTY: the same for write_mode = cached, where the cache holds
# every WRITE's blocks: nothing dirty once committed (UNSTABLE + COMMIT, or each FILE_SYNC
# WRITE), and every whole block either adopted from its record or copied into a frame, never
# bounced (the payload is placed aligned in memory). Writers filling a new file side by side with
# UNSTABLE WRITEs put their blocks in frames laid out as the file, so that a run leaves as one
# piece of memory (test_recycle.c checks it; not asked of an overwrite: the read-back before it
# left every block cached, and a WRITE into a cached block makes no new one; nor of FILE_SYNC:
# a frame opens where a block finds its neighbour in the cache, and a stable WRITE's blocks are
# written and let go before it is answered, so whether one is still there is timing: 0 frames
# seen once on a busy machine with 49152-byte records; nor of records smaller than a block,
# whose blocks the neighbours' records complete at once and write-behind takes: 0 frames seen
# once with 6000-byte records on 16 KiB blocks, two suites and stress-ng sharing two cores).
# No block is read back to complete a shared one on a new file (the missing bytes are a hole),
# none for the memory bound; on an overwrite, at most the file's last block and, for FILE_SYNC,
# the two ends of each stable WRITE that completed its blocks without its neighbour
# (stable_writes_alone: it waited as long as it should, or nothing else was writing; on a busy
# machine the neighbour's WRITE can be further away than that).
check_cached() {
	local sync=$1 mode=$2 fills=$3 dirty=$4 adopted bounced frames bound alone most=0
	[ "$dirty" -eq 0 ] || { fail "cache_dirty $dirty after everything was committed"; return 1; }
	adopted=$(counter cache_adopted_blocks) && bounced=$(counter cache_bounced_middles) &&
		frames=$(counter cache_frames_opened) && bound=$(counter cache_fill_reads_bound) &&
		alone=$(counter stable_writes_alone) || { fail "counters missing"; return 1; }
	[ "$bounced" -eq 0 ] || { fail "$bounced middles unaligned in memory"; return 1; }
	if [ "$mode" = fresh ] && [ "$sync" = unstable ] && [ $((NREC * REC)) -ge $((2 << 20)) ] &&
		[ "$REC" -ge "$BENCH_BLOCK" ]; then
		[ "$frames" -gt 0 ] || { fail "writers filling a new file opened no frame"; return 1; }
	fi
	[ "$bound" -eq 0 ] || { fail "$bound blocks read back for the memory bound"; return 1; }
	if [ "$mode" = overwrite ]; then
		[ $((NREC * REC % BENCH_BLOCK)) -ne 0 ] && most=1
		[ "$sync" = file ] && most=$((most + 2 * alone))
	fi
	[ "$fills" -le $most ] ||
		{ fail "$fills blocks read back from disk to complete shared blocks (at most $most)"; return 1; }
	echo "    counters: writes=$writes cache_fill_reads=$fills stable_writes_alone=$alone" \
		"adopted=$adopted frames=$frames runs>=1M=$(bench_stat "$STAT" cache_wb_ge_1m)" \
		"cache_bytes_peak=$(bench_stat "$STAT" cache_bytes_peak)"
}

# write_and_check SYNC MODE SEED: write the file, check counters and read back through the same
# daemon, then SIGKILL it, restart it on cold caches and read everything back from disk.
write_and_check() {
	local sync=$1 mode=$2 seed=$3 out
	CASE="$FSNAME $WMODE R=$REC $sync $mode"
	out=$(interleave --"$mode" --sync "$sync" --write-only --seed "$seed") ||
		{ fail "nfs-interleave (writes) failed"; return 1; }
	echo "  $CASE: $out"
	check_counters "$sync" "$mode" "$out" || return 1
	interleave --"$mode" --verify-only --seed "$seed" >/dev/null ||
		{ fail "read-back through the daemon that took the writes"; return 1; }
	bench_kill
	bench_drop_caches
	bench_start "$EXE" || { fail "daemon restart"; return 1; }
	interleave --"$mode" --verify-only --seed "$seed" >/dev/null ||
		{ fail "read-back from disk after SIGKILL and restart: data the daemon acknowledged" \
			"as committed was not on disk"; return 1; }
}

# One record size and sync mode: a fresh file, then an overwrite of it after drop_caches.
run_pair() {
	local sync=$1 s1=$((RANDOM * 32768 + RANDOM + 1)) s2=$((RANDOM * 32768 + RANDOM + 2))
	FILE="t-$REC-$sync"
	CASE="$FSNAME R=$REC $sync"
	bench_start "$EXE" || { fail "daemon start"; return 1; }
	write_and_check "$sync" fresh "$s1" || { bench_kill; return 1; }
	bench_drop_caches
	write_and_check "$sync" overwrite "$s2" || { bench_kill; return 1; }
	bench_stop || { fail "the daemon did not stop with status 0 on SIGTERM"; return 1; }
	rm -f "$BENCH_EXPORT/$FILE"
}

# Many writers with several WRITEs in flight each (128 x 4, 512 MiB of 47008-byte records into a
# new file, cached, the default 1G cache): written data is let go as fast as it is written, so the
# frames that held it come back and take the next WRITEs' blocks warm, and the cache stays near
# its written share (128M) plus the writers' spread. (When each WRITE trimmed only after queueing
# once more for the file's lock, most found the blocks they had picked gone with another's and
# gave up: 455 MiB at the peak, 185 of 256 frames new memory, on a busy machine too.) Every byte
# is read back. New memory is counted whoever mapped it, the WRITEs or the reserve's thread ahead
# of them: that thread runs at idle priority, so how much it has ready depends on how busy the
# machine is, but the memory in all does not (64 of 256 frames on an idle machine; 83 mapped by
# WRITEs alone when the thread got no CPU beside stress-ng, where new frames counted at most a
# quarter of them failed).
run_many_writers() {
	local out frames mapped peak seed=$((RANDOM * 32768 + RANDOM + 3))
	CASE="$FSNAME cached 128x4 R=47008 unstable fresh 512M"
	FILE=t-many
	bench_write_conf 2 1G cached && bench_start "$EXE" || { fail "daemon start"; return 1; }
	out=$("$INTERLEAVE" --writers 128 --qd 4 --record 47008 --total 512M --sync unstable --fresh \
		--seed "$seed" 127.0.0.1 "$BENCH_PORT" "$BENCH_MPORT" "$BENCH_EXPORT" "$FILE") ||
		{ fail "nfs-interleave: $out"; bench_kill; return 1; }
	echo "  $CASE: $out"
	frames=$(counter cache_frames_opened) && mapped=$(counter cache_frames_mapped) &&
		peak=$(counter cache_bytes_peak) || { fail "counters missing"; bench_kill; return 1; }
	echo "    counters: frames=$frames mapped=$mapped cache_bytes_peak=$peak"
	bench_stop || fail "the daemon did not stop with status 0 on SIGTERM"
	rm -f "$BENCH_EXPORT/$FILE"
	[ "$frames" -gt 0 ] || { fail "writers filling a new file opened no frame"; return 1; }
	[ $((mapped * 2)) -le "$frames" ] ||
		{ fail "$mapped of $frames frames were new memory (at most half)"; return 1; }
	[ "$peak" -le $((256 << 20)) ] ||
		{ fail "the cache peaked at $peak bytes (written share 128M + the spread: 256M)"; return 1; }
}

run_variant() {
	local variant=$1 rc
	FSNAME="xfs-$variant"
	CASE=$FSNAME
	bench_make_fs "$variant" 1G
	rc=$?
	if [ $rc -eq 77 ]; then
		bench_cleanup
		skip "loop devices cannot be made here"
	elif [ $rc -eq 3 ] && [ "$variant" = 16k ]; then
		bench_cleanup
		echo "NOTE: this kernel does not mount XFS with 16 KiB blocks (block > page needs Linux" \
			">= 6.12): that half of the test did not run" >&2
		return 0
	elif [ $rc -ne 0 ]; then
		bench_cleanup
		fail "could not make or mount XFS ($variant blocks) on a 4096-byte-sector loop device"
		return 1
	fi
	echo "$FSNAME on $BENCH_LOOP (block $BENCH_BLOCK, sector $(cat "/sys/block/${BENCH_LOOP#/dev/}/queue/logical_block_size"))"
	for WMODE in direct cached; do
		bench_write_conf 2 64M "$WMODE" || { fail "conf"; bench_cleanup; return 1; }
		for REC in 47008 6000 4097 49152; do
			run_pair unstable
			run_pair file
		done
	done
	[ "$variant" = 4k ] && run_many_writers
	bench_cleanup
}

trap bench_cleanup EXIT
trap 'exit 130' INT TERM
start=$SECONDS
run_variant 4k
run_variant 16k
echo "$FAILS failure(s) in $((SECONDS - start)) s"
[ $FAILS -eq 0 ]
