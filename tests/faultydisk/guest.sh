#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# guest.sh - runs inside the guest of tests/faultydisk/run.sh (busybox sh, as /host/main.sh):
# XFS on a device-mapper device over /dev/vda, nfsd-uc (write_mode = cached) exporting it, and
# nfs-interleave as the client over the guest's loopback. Faults are injected under write-behind:
#
#   eio     the device fails every write to one file's blocks (dm "error" target over its
#           extents, the rest of the disk linear) while a client overwrites that file UNSTABLE:
#           write-behind fails, the data stays in the cache (a READ gets the new bytes), COMMIT
#           fails with NFS3ERR_IO; once the table is linear again the client's retry succeeds
#           and, after a restart, the file read from disk is byte-identical.
#   kept    the same fault, but after it clears the client sends only a COMMIT: what the cache
#           kept is written, and the file on disk is the client's data with nothing resent.
#   enospc  the file system is filled to a few MiB; a client writes a fresh file larger than
#           that UNSTABLE: write-behind fails, the client gets NFS3ERR_NOSPC, the daemon keeps
#           serving; once space is freed the client's retry succeeds, byte-identical on disk.
#
# Input: /host/env (RECORD TOTAL CACHE). Output: /host/log, one line per check; exit 0 when every
# check passed.
. /host/env
export DM_DISABLE_UDEV=1   # no udev here: libdevmapper makes the /dev/mapper nodes itself
DEV=/dev/vda
DM=/dev/mapper/disk
DIR=/srv/xfs
EXP=$DIR/export
PORT=20497
MPORT=20047
PID=""
FAILED=0

say() { echo "GUEST $*"; echo "$*" >>/host/log; }
fail() {
	say "FAIL: $*"
	FAILED=1
}
die() {
	fail "$*"
	say "server log (last lines):"
	tail -n 30 /tmp/uc.log | sed 's/^/  server| /' >>/host/log
	dmesg | tail -n 20 | sed 's/^/  dmesg| /' >>/host/log
	exit 1
}

# ---- the disk: linear, or with the error target over some sector ranges
SECTORS=$(cat /sys/block/vda/size)   # 512-byte sectors, the unit of dm tables and of fiemap

table_linear() { echo "0 $SECTORS linear $DEV 0"; }

# The table that fails I/O to the blocks of file $1 (its extents, from FIEMAP) and passes the
# rest of the disk through.
table_failing() {
	xfs_io -r -c fiemap "$1" | awk '$3 ~ /^[0-9]+\.\.[0-9]+$/ { split($3, a, /\.\./); print a[1], a[2] }' |
		sort -n | awk -v total="$SECTORS" -v dev="$DEV" '
		BEGIN { pos = 0 }
		{ if ($1 > pos) print pos, $1 - pos, "linear", dev, pos
		  print $1, $2 - $1 + 1, "error"; pos = $2 + 1; n++ }
		END { if (pos < total) print pos, total - pos, "linear", dev, pos; if (!n) exit 1 }'
}

load_table() {  # $1=file holding the table; swaps it in (the file system is frozen meanwhile)
	dmsetup reload disk "$1" && dmsetup resume disk
}

make_fs() {
	table_linear >/tmp/linear.table
	dmsetup create disk /tmp/linear.table || die "dmsetup create"
	[ -b $DM ] || dmsetup mknodes
	mkfs.xfs -q -f $DM >/tmp/mkfs.log 2>&1 || die "mkfs.xfs: $(cat /tmp/mkfs.log)"
	mount -o noatime $DM $DIR || die "mount"
	mkdir -p $EXP /tmp/state
}

# ---- the server
start_server() {
	cat >/tmp/uc.conf <<-EOF
	[server]
	listen = 127.0.0.1
	port = $PORT
	mount_port = $MPORT
	threads = 2
	state_dir = /tmp/state
	rpcbind = no
	[cache]
	size = $CACHE
	[export $EXP]
	clients = 127.0.0.1(rw,no_root_squash,insecure)
	write_mode = cached
	EOF
	local off i=0
	touch /tmp/uc.log
	off=$(wc -c </tmp/uc.log)
	nfsd-uc -c /tmp/uc.conf >>/tmp/uc.log 2>&1 &
	PID=$!
	while [ $i -lt 600 ]; do
		tail -c +$((off + 1)) /tmp/uc.log | grep -q ready && return 0
		kill -0 $PID 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	die "nfsd-uc did not start"
}

stop_server() {  # SIGTERM: the daemon writes back what it holds and exits 0
	kill -TERM $PID
	wait $PID
	local st=$?
	PID=""
	[ $st = 0 ] || fail "nfsd-uc exited with status $st after SIGTERM"
}

alive() { kill -0 $PID 2>/dev/null || die "nfsd-uc died"; }

counter() { nfsduc-stat 127.0.0.1 $PORT "$1" 2>/dev/null || echo -1; }

# nfs-interleave on export file $1 with seed $2, then its options; its output in /tmp/il.out
il() {
	local f=$1 seed=$2
	shift 2
	nfs-interleave -r "$RECORD" -t "$TOTAL" --seed "$seed" "$@" 127.0.0.1 $PORT $MPORT $EXP "$f" \
		>/tmp/il.out 2>&1
}
il_ok() {  # il that must succeed
	il "$@" || die "nfs-interleave $*: exit $?: $(tail -n 3 /tmp/il.out | tr '\n' ' ')"
}

# The file on disk, not in the cache: a fresh daemon reads it with O_DIRECT.
check_on_disk() {  # $1=file $2=seed $3=what
	stop_server
	echo 3 >/proc/sys/vm/drop_caches
	start_server
	if il "$1" "$2" --verify-only; then
		say "ok - $3: the file read from disk after a restart is byte-identical"
	else
		fail "$3: after a restart the file differs from what the client wrote: $(tail -n 3 /tmp/il.out | tr '\n' ' ')"
	fi
}

# ---- eio / kept: a device that fails writes to one file's blocks under write-behind
inject_eio() {  # $1=file (written once already, so its extents are allocated)
	sync
	table_failing $EXP/$1 >/tmp/failing.table || die "no extents for $1"
	load_table /tmp/failing.table || die "loading the failing table: $(cat /tmp/failing.table)"
}

clear_fault() { load_table /tmp/linear.table || die "loading the linear table"; }

# A client's UNSTABLE write on the faulty disk: nfs-interleave must end with a server error
# (exit 3) saying $2, write-behind must have failed meanwhile, and the daemon must live on.
write_under_fault() {  # $1=what $2=error $3=file $4=seed, then nfs-interleave's options
	local what=$1 err=$2 f0 f1 rc bad=0
	shift 2
	f0=$(counter cache_writeback_failures)
	il "$@"
	rc=$?
	f1=$(counter cache_writeback_failures)
	alive
	if [ $rc != 3 ] || ! grep -q "$err" /tmp/il.out; then
		fail "$what: exit $rc, want 3 and $err: $(tail -n 2 /tmp/il.out | tr '\n' ' ')"
		bad=1
	fi
	if [ "$f1" -le "$f0" ]; then
		fail "$what: no write-behind failed (cache_writeback_failures $f0 -> $f1)"
		bad=1
	fi
	[ $bad = 0 ] && say "ok - $what: write-behind failed ($((f1 - f0)) runs), the client got $err"
}

overwrite_under_eio() {  # $1=file $2=what; the client's UNSTABLE overwrite (seed 2) must fail
	il_ok "$1" 1
	inject_eio "$1"
	write_under_fault "$2" 'COMMIT: NFS3ERR_IO' "$1" 2 --overwrite --write-only
	# the data is still the client's: served from the cache (the disk would fail the READ)
	if il "$1" 2 --verify-only; then
		say "ok - $2: while the disk fails, READ returns the bytes written (from the cache)"
	else
		fail "$2: while the disk fails, READ does not return what was written: $(tail -n 2 /tmp/il.out | tr '\n' ' ')"
	fi
}

t_eio() {
	overwrite_under_eio eio eio
	clear_fault
	# the client's retry: its WRITEs again (their verifier is not COMMIT's), then COMMIT
	il_ok eio 2 --overwrite
	say "ok - eio: after the fault cleared, the client's retry succeeded and read back"
	check_on_disk eio 2 eio
}

t_kept() {
	overwrite_under_eio kept kept
	clear_fault
	# nothing resent: a bare COMMIT writes what the cache kept
	if nfs-interleave --commit-only 127.0.0.1 $PORT $MPORT $EXP kept >/tmp/il.out 2>&1; then
		say "ok - kept: after the fault cleared, COMMIT alone succeeded"
	else
		fail "kept: COMMIT after the fault cleared: $(tail -n 2 /tmp/il.out | tr '\n' ' ')"
	fi
	check_on_disk kept 2 kept
}

# ---- enospc: a fresh file larger than the space left
t_enospc() {
	local avail
	avail=$(df -k $DIR | awk 'NR == 2 { print $4 }')
	xfs_io -f -c "falloc 0 $(((avail - 4096) * 1024))" $DIR/filler || die "falloc of the filler"
	say "enospc: $(df -k $DIR | awk 'NR == 2 { print $4 }') KiB left for a file of $TOTAL"
	write_under_fault enospc NFS3ERR_NOSPC nospc 3 --write-only
	rm -f $DIR/filler
	il_ok nospc 3
	say "ok - enospc: after space was freed, the client's retry succeeded and read back"
	check_on_disk nospc 3 enospc
}

main() {
	: >/host/log
	say "kernel $(uname -r); $RECORD-byte records, $TOTAL bytes a file, cache $CACHE"
	make_fs
	start_server
	il_ok other 7   # a file the faults never touch
	t_eio
	t_kept
	t_enospc
	il other 7 --verify-only || fail "a file outside the faults differs at the end"
	grep -q "$DIR xfs rw" /proc/mounts || fail "XFS is no longer mounted read-write (shut down?)"
	grep -q 'write-behind failed: Input/output error' /tmp/uc.log ||
		fail "the daemon's log does not say that write-behind failed"
	stop_server
	dmesg | grep -i -e 'xfs.*shut' -e 'I/O error' | tail -n 5 | sed 's/^/  dmesg| /' >>/host/log
	[ $FAILED = 0 ] && say "all checks passed"
	return $FAILED
}

main
