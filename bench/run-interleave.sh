#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run-interleave.sh: the seeds' interleaved-record benchmark (shared/seeds/000) against nfsd-uc on
# XFS made on a loop device with 4096-byte sectors, and on XFS with 16 KiB blocks. For each record
# size x (UNSTABLE + COMMIT, FILE_SYNC) x (fresh file, overwrite after drop_caches) it runs
# nfs-interleave's write phase and measures, over that phase alone:
#   dev rd/W     the server's /proc/PID/io read_bytes delta / 4096 / WRITEs: 4 KiB device reads
#                per WRITE, the seeds' figure (0.97 before their fix, 0.0005 after)
#   loop rd/W    the same from the loop device's /sys/block/loopN/stat (sectors of 512 bytes)
#   fill reads   the daemon's cache_fill_reads counter (blocks it had to read to complete)
#   cache peak   the daemon's cache_bytes_peak (memory held for boundary blocks)
#   fincore %    the file's pages resident in the page cache afterwards, % of bytes written
#   Cached %     /proc/meminfo Cached growth, % of bytes written (machine-wide: noisy)
#   MiB/s        nfs-interleave's write phase, final COMMIT included
#   CPU s        the server's utime + stime
# The read-back (every byte compared) runs after the measurement, through the same daemon.
# A fresh daemon serves each case, so its peaks are the case's.
#
# usage (as root): bench/run-interleave.sh [--quick] [--exe PATH] [--tools DIR] [--total SIZE]
#                  [--sync-total SIZE] [--fs 4k|16k|both] [--record-sizes "R R .."]
#                  [--writers N] [--qd N] [--threads N] [--cache SIZE] [--keep]
#   --exe     the daemon (default ./build/src/nfsd-uc)
#   --tools   directory holding nfs-interleave and nfsduc-stat (default: bench/ beside the
#             daemon's build directory, i.e. EXE/../../bench)
#   --total   bytes written per UNSTABLE case (default 1G, as the seeds' v8 runs: a run's few
#             metadata reads are then 0.0005 per WRITE at most; --quick 32M)
#   --sync-total  bytes per FILE_SYNC case (default 1G; --quick 4M): every WRITE is an fsync
#   --record-sizes  default "47008 6000" (the seeds' figures; the suite's test adds 4097 and
#             49152); --writers 32, --qd 4 (nfs-interleave)
#   --threads N   the daemon's worker threads (default 8, as the daemon's own default)
#   --cache SIZE  its [cache] size (64M)
#   --keep    keep the image, conf and daemon log (in /var/tmp/nfsd-uc-bench.*)
# Full matrix with the defaults: about 11 minutes on a 2-CPU VM, 5.5 per file system (--quick:
# about 1).
#
# This file is also a library: sourced (as tests/integration/test_interleave.sh does), it only
# defines the bench_* functions below.

# ---------------------------------------------------------------- library
BENCH_WORK=""      # temporary directory (image, mount point, conf, state, logs)
BENCH_LOOP=""      # /dev/loopN
BENCH_MNT=""       # mount point of the XFS
BENCH_EXPORT=""    # exported directory on it
BENCH_BLOCK=0      # XFS block size
BENCH_DPID=""      # the daemon this script started
BENCH_PORT=0
BENCH_MPORT=0
BENCH_CONF=""
BENCH_LOG=""

bench_say() { echo "$*" >&2; }

# A TCP port nobody listens on (random in 30000..59999, checked with ss).
bench_free_port() {
	local p
	for _ in $(seq 100); do
		# Below the kernel's ephemeral range (32768-60999 by default), where any client's
		# connection may hold a port as its local end; and no socket of any state on it.
		p=$((20000 + RANDOM % 12000))
		if ! ss -Htan "sport = :$p" 2>/dev/null | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# bench_make_fs 4k|16k SIZE: a sparse image in a fresh /var/tmp directory, a loop device with
# 4096-byte sectors and direct I/O on it (no second copy in the host's page cache), XFS on it,
# mounted. 0; 77 when loop devices cannot be made here; 3 when this kernel cannot mount that XFS
# (e.g. blocks larger than pages before Linux 6.12); 1 on other failures (message on stderr).
bench_make_fs() {
	local variant=$1 size=$2 bsize=4096
	[ "$variant" = 16k ] && bsize=16384
	BENCH_WORK=$(mktemp -d /var/tmp/nfsd-uc-bench.XXXXXX) || return 1
	truncate -s "$size" "$BENCH_WORK/xfs.img" || return 1
	if ! BENCH_LOOP=$(losetup --direct-io=on --sector-size 4096 -f --show "$BENCH_WORK/xfs.img" 2>&1); then
		bench_say "cannot make a loop device: $BENCH_LOOP"
		BENCH_LOOP=""
		return 77
	fi
	if ! mkfs.xfs -q -f -b size=$bsize "$BENCH_LOOP" >"$BENCH_WORK/mkfs.log" 2>&1; then
		bench_say "mkfs.xfs -b size=$bsize failed: $(cat "$BENCH_WORK/mkfs.log")"
		return 1
	fi
	BENCH_MNT=$BENCH_WORK/mnt
	mkdir -p "$BENCH_MNT" "$BENCH_WORK/state"
	if ! mount -t xfs "$BENCH_LOOP" "$BENCH_MNT" 2>"$BENCH_WORK/mount.log"; then
		bench_say "mount of XFS with $bsize-byte blocks failed: $(cat "$BENCH_WORK/mount.log")"
		BENCH_MNT=""
		return 3
	fi
	BENCH_BLOCK=$(stat -f -c %S "$BENCH_MNT")
	BENCH_EXPORT=$BENCH_MNT/export
	mkdir -p "$BENCH_EXPORT"
	return 0
}

# bench_write_conf THREADS [CACHE_SIZE] [WRITE_MODE]: the daemon's conf for BENCH_EXPORT on two
# free ports (write_mode direct unless told), and no lock manager: its fixed default port
# (32803) is any other NFS server's on this host, which made a start fail on a shared machine.
bench_write_conf() {
	BENCH_PORT=$(bench_free_port) && BENCH_MPORT=$(bench_free_port) || return 1
	[ "$BENCH_PORT" != "$BENCH_MPORT" ] || BENCH_MPORT=$((BENCH_PORT + 1))
	BENCH_CONF=$BENCH_WORK/nfsd-uc.conf
	BENCH_LOG=$BENCH_WORK/daemon.log
	cat >"$BENCH_CONF" <<-EOF
	# written by bench/run-interleave.sh
	[server]
	listen = 127.0.0.1
	port = $BENCH_PORT
	mount_port = $BENCH_MPORT
	threads = ${1:-2}
	state_dir = $BENCH_WORK/state
	rpcbind = no
	[cache]
	size = ${2:-64M}
	[lock]
	port = 0
	[export $BENCH_EXPORT]
	clients = 127.0.0.1(rw,no_root_squash,insecure)
	write_mode = ${3:-direct}
	read_mode = direct
	EOF
}

# bench_start EXE: start the daemon on BENCH_CONF, wait (10 s at most) for its "ready" line.
bench_start() {
	local exe=$1 try
	for try in 1 2 3 4 5; do
		bench_start_once "$exe" && return 0
		# Another program took a port since we chose it: choose again (the conf keeps the rest).
		tail -n 5 "$BENCH_LOG" | grep -q "Address already in use" || return 1
		BENCH_PORT=$(bench_free_port) && BENCH_MPORT=$(bench_free_port) || return 1
		[ "$BENCH_PORT" != "$BENCH_MPORT" ] || BENCH_MPORT=$((BENCH_PORT + 1))
		sed -i -e "s/^port = .*/port = $BENCH_PORT/" -e "s/^mount_port = .*/mount_port = $BENCH_MPORT/" \
			"$BENCH_CONF"
		bench_say "ports taken: retrying on $BENCH_PORT/$BENCH_MPORT (try $try)"
	done
	return 1
}

bench_start_once() {
	local exe=$1
	: >>"$BENCH_LOG"
	local from=$(($(wc -l <"$BENCH_LOG") + 1))
	"$exe" -c "$BENCH_CONF" >>"$BENCH_LOG" 2>&1 &
	BENCH_DPID=$!
	# Longer than the daemon's own 10 s retry of a port in use, so that its "Address already in
	# use" is seen and bench_start tries other ports.
	for _ in $(seq 150); do
		if tail -n +"$from" "$BENCH_LOG" | grep -q ready; then
			return 0
		fi
		if ! kill -0 "$BENCH_DPID" 2>/dev/null; then
			wait "$BENCH_DPID"
			bench_say "nfsd-uc exited with status $? at start:"
			tail -n +"$from" "$BENCH_LOG" | tail -20 >&2
			BENCH_DPID=""
			return 1
		fi
		sleep 0.1
	done
	bench_say "nfsd-uc did not say ready in 15 s:"
	tail -20 "$BENCH_LOG" >&2
	return 1
}

# bench_stop: SIGTERM our daemon, wait 10 s at most (then SIGKILL). Its exit status, or 1 when it
# had to be killed.
bench_stop() {
	local pid=$BENCH_DPID rc
	[ -n "$pid" ] || return 0
	BENCH_DPID=""
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		bench_say "nfsd-uc (pid $pid) ignored SIGTERM for 10 s: killed"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 1
	fi
	wait "$pid"
	rc=$?
	[ $rc -eq 0 ] || { bench_say "nfsd-uc exited with status $rc:"; tail -20 "$BENCH_LOG" >&2; }
	return $rc
}

# bench_kill: SIGKILL our daemon (what it held only in memory is lost) and reap it.
bench_kill() {
	local pid=$BENCH_DPID
	[ -n "$pid" ] || return 0
	BENCH_DPID=""
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# bench_cleanup: our daemon, the mount, the loop device, the directory. Safe to call twice.
bench_cleanup() {
	bench_stop >/dev/null 2>&1
	if [ -n "$BENCH_MNT" ]; then
		umount "$BENCH_MNT" 2>/dev/null || { sleep 1; umount "$BENCH_MNT"; }
		BENCH_MNT=""
	fi
	[ -n "$BENCH_LOOP" ] && losetup -d "$BENCH_LOOP"
	BENCH_LOOP=""
	if [ -n "$BENCH_WORK" ] && [ -z "${BENCH_KEEP:-}" ]; then
		rm -rf "$BENCH_WORK"
	elif [ -n "$BENCH_WORK" ]; then
		bench_say "kept $BENCH_WORK"
	fi
	BENCH_WORK=""
}

bench_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# bench_stat TOOL NAME: one counter of our daemon, or "-" when it does not report it.
bench_stat() {
	"$1" 127.0.0.1 "$BENCH_PORT" "$2" 2>/dev/null || echo -
}

# Counters of the running daemon and of the machine, as "key=value" words (for bench_delta).
bench_sample() {
	local dev=${BENCH_LOOP#/dev/}
	local io_read cpu cached loop_sect
	io_read=$(awk '/^read_bytes:/ {print $2}' "/proc/$BENCH_DPID/io")
	# utime and stime are fields 14 and 15; the command name (field 2) may hold spaces
	cpu=$(sed 's/^.*) //' "/proc/$BENCH_DPID/stat" | awk '{print $12 + $13}')
	cached=$(awk '/^Cached:/ {printf "%.0f\n", $2 * 1024}' /proc/meminfo)   # %.0f: awk prints big products as 2.1e+09
	loop_sect=$(awk '{print $3}' "/sys/block/$dev/stat")
	echo "io_read=$io_read cpu=$cpu cached=$cached loop_sect=$loop_sect"
}

# bench_get KEY WORDS...: the value of KEY in "key=value" words.
bench_get() {
	local key=$1 w
	shift
	for w in "$@"; do
		[ "${w%%=*}" = "$key" ] && { echo "${w#*=}"; return 0; }
	done
	echo -
}

# ---------------------------------------------------------------- the benchmark
bench_usage() {
	sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

# One measured case; prints its table row. Args: record sync mode file
bench_case() {
	local rec=$1 sync=$2 mode=$3 file=$4 total seed out before after rc
	total=$TOTAL
	[ "$sync" = file ] && total=$SYNC_TOTAL
	seed=$((RANDOM * 32768 + RANDOM + 1))
	bench_drop_caches
	bench_start "$EXE" || return 1
	before=$(bench_sample)
	out=$("$INTERLEAVE" --write-only --"$mode" --sync "$sync" --record "$rec" --total "$total" \
		--writers "$WRITERS" --qd "$QD" --seed "$seed" 127.0.0.1 "$BENCH_PORT" "$BENCH_MPORT" \
		"$BENCH_EXPORT" "$file")
	rc=$?
	after=$(bench_sample)
	if [ $rc -ne 0 ]; then
		bench_say "nfs-interleave failed (status $rc): record $rec sync $sync $mode"
		bench_stop
		return 1
	fi
	bench_row "$rec" "$sync" "$mode" "$file" "$out" "$before" "$after"
	if ! "$INTERLEAVE" --verify-only --"$mode" --record "$rec" --total "$total" --writers "$WRITERS" \
		--qd "$QD" --seed "$seed" 127.0.0.1 "$BENCH_PORT" "$BENCH_MPORT" "$BENCH_EXPORT" \
		"$file" >/dev/null; then
		bench_say "read-back FAILED: record $rec sync $sync $mode"
		bench_stop
		return 1
	fi
	# the figures stand even if the daemon's exit is unclean: say so, go on
	bench_stop || bench_say "warning: nfsd-uc did not exit cleanly after record $rec $sync $mode"
	return 0
}

# Print one Markdown row from nfs-interleave's line and the two samples.
bench_row() {
	local rec=$1 sync=$2 mode=$3 file=$4 out=$5 before=$6 after=$7
	local writes bytes mibs d_io d_loop d_cpu d_cached res peak fills
	# shellcheck disable=SC2086
	{
		writes=$(bench_get writes $out)
		bytes=$(bench_get bytes $out)
		mibs=$(bench_get MiB/s $out)
		d_io=$(( $(bench_get io_read $after) - $(bench_get io_read $before) ))
		d_loop=$(( $(bench_get loop_sect $after) - $(bench_get loop_sect $before) ))
		d_cpu=$(( $(bench_get cpu $after) - $(bench_get cpu $before) ))
		d_cached=$(( $(bench_get cached $after) - $(bench_get cached $before) ))
	}
	res=$(fincore --bytes --noheadings --output RES "$BENCH_EXPORT/$file" 2>/dev/null || echo -)
	peak=$(bench_stat "$STAT" cache_bytes_peak)
	fills=$(bench_stat "$STAT" cache_fill_reads)
	LC_ALL=C awk -v fs="$FSNAME" -v rec="$rec" -v sync="$sync" -v mode="$mode" -v mibs="$mibs" \
		-v writes="$writes" -v bytes="$bytes" -v io="$d_io" -v loop="$d_loop" -v fills="$fills" \
		-v peak="$peak" -v res="$res" -v cached="$d_cached" -v cpu="$d_cpu" -v tck="$CLK_TCK" '
	function pct(v) { return v == "-" ? "-" : sprintf("%.2f", 100 * v / bytes) }
	BEGIN {
		printf "| %s | %d | %s | %s | %.1f | %d | %.4f | %.4f | %s | %s | %s | %s | %.2f |\n",
			fs, rec, sync, mode, mibs, writes, io / 4096 / writes, loop * 512 / 4096 / writes,
			fills, peak == "-" ? "-" : sprintf("%.1f MiB", peak / 1048576), pct(res),
			pct(cached), cpu / tck
	}'
}

bench_header() {
	echo "| fs | record | sync | file | MiB/s | WRITEs | dev rd/W | loop rd/W | fill reads | cache peak | fincore % | Cached % | CPU s |"
	echo "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
}

bench_variant() {
	local variant=$1 rc rec sync
	FSNAME="xfs-$variant"
	bench_make_fs "$variant" "$IMG_SIZE"
	rc=$?
	if [ $rc -ne 0 ]; then
		bench_cleanup
		if [ $rc -eq 3 ] && [ "$variant" = 16k ]; then
			bench_say "skipping $FSNAME: this kernel does not mount it"
			echo "| $FSNAME | skipped: the kernel does not mount XFS with 16 KiB blocks |"
			return 0
		fi
		return $rc
	fi
	FSNAME="xfs-$((BENCH_BLOCK / 1024))k"
	bench_write_conf "$THREADS" "$CACHE" || return 1
	for rec in $RECORDS; do
		for sync in unstable file; do
			local f="il-$rec-$sync"
			bench_case "$rec" "$sync" fresh "$f" || { bench_cleanup; return 1; }
			bench_case "$rec" "$sync" overwrite "$f" || { bench_cleanup; return 1; }
			rm -f "$BENCH_EXPORT/$f"
		done
	done
	bench_cleanup
}

bench_main() {
	local fsvariants=both tools="" v
	EXE=./build/src/nfsd-uc TOTAL=1G SYNC_TOTAL=1G WRITERS=32 QD=4 THREADS=8 CACHE=64M IMG_SIZE=4G
	RECORDS="47008 6000"
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) TOTAL=32M SYNC_TOTAL=4M ;;
		--exe) EXE=$2; shift ;;
		--tools) tools=$2; shift ;;
		--total) TOTAL=$2; shift ;;
		--sync-total) SYNC_TOTAL=$2; shift ;;
		--fs) fsvariants=$2; shift ;;
		--record-sizes) RECORDS=$2; shift ;;
		--writers) WRITERS=$2; shift ;;
		--qd) QD=$2; shift ;;
		--threads) THREADS=$2; shift ;;
		--cache) CACHE=$2; shift ;;
		--keep) BENCH_KEEP=1 ;;
		-h|--help) bench_usage; return 0 ;;
		*) bench_usage; return 2 ;;
		esac
		shift
	done
	[ "$(id -u)" -eq 0 ] || { bench_say "run-interleave.sh must run as root (loop devices, mount)"; return 2; }
	[ -n "$tools" ] || tools=$(dirname "$EXE")/../bench
	INTERLEAVE=$tools/nfs-interleave STAT=$tools/nfsduc-stat
	for v in "$EXE" "$INTERLEAVE" "$STAT"; do
		[ -x "$v" ] || { bench_say "not found or not executable: $v (see --exe, --tools)"; return 2; }
	done
	CLK_TCK=$(getconf CLK_TCK)
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	echo "nfsd-uc interleaved records: $WRITERS writers, qd $QD, $THREADS server threads, cache $CACHE," \
		"UNSTABLE $TOTAL per case, FILE_SYNC $SYNC_TOTAL per case, $(uname -r), $(nproc) CPUs"
	echo
	bench_header
	case $fsvariants in
	4k) bench_variant 4k ;;
	16k) bench_variant 16k ;;
	both) bench_variant 4k && bench_variant 16k ;;
	*) bench_usage; return 2 ;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	bench_main "$@"
	exit $?
fi
