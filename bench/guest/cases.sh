#!/bin/sh
# cases.sh - runs inside the benchmark guest (busybox sh, as /host/main.sh): XFS on /dev/vda,
# in-kernel knfsd and then nfsd-uc exporting it, the interleaved-record workload against each
# over the guest's loopback, one CSV row per case appended to /host/rows.csv.
#
# Input (written by bench/knfsd-guest.sh): /host/env (WRITERS QD KTHREADS UCTHREADS UCCACHE
# CASE_TIMEOUT) and /host/plan, one case a line: SERVER MODE RECORD SYNC FILE TOTAL_BYTES, in the
# order to run (a fresh case before the overwrite of the same file). Output: /host/rows.csv
# (rows, no header), /host/skipped (cases this kernel cannot run, with the reason), /host/info.
#
# Each case, over its write phase alone (nfs-interleave --write-only, final COMMIT included):
#   vda read sectors / 8 / WRITEs     4 KiB device reads per WRITE (both servers: knfsd has no PID)
#   vda written sectors * 512 / bytes write amplification (XFS log included)
#   fincore RES of the file, and /proc/meminfo Cached growth, % of bytes written
#   CPU: utime+stime of the nfsd kernel threads, or of the nfsd-uc process
# then the whole file is read back through the same server and every byte checked.

. /host/env
ROWS=/host/rows.csv
KV=$(uname -r)
DIR=/srv/xfs
KEXP=$DIR/knfsd
UEXP=$DIR/uc
KNOB=/sys/kernel/debug/nfsd
TR=/sys/kernel/tracing
UPORT=20497
UMPORT=20047
UPID=""
KNFSD_UP=0
KNFSD_ERR=""
UC_ERR=""
HZ=100   # USER_HZ on x86: the unit of utime/stime in /proc/PID/stat

say() { echo "GUEST $*"; echo "$*" >>/host/log; }

# ---- set-up
make_fs() {
	# 4096-byte sectors as the issue asks; the device itself has 4096-byte logical blocks when
	# QEMU gives it logical_block_size=4096
	mkfs.xfs -q -f -s size=4096 /dev/vda >/tmp/mkfs.log 2>&1 || { cat /tmp/mkfs.log; return 1; }
	mount -o noatime /dev/vda $DIR || return 1
	mkdir -p $KEXP $UEXP
	FSINFO="vda $(cat /sys/block/vda/queue/logical_block_size)/$(cat /sys/block/vda/queue/physical_block_size)-byte blocks; xfs bsize $(stat -f -c %S $DIR)"
	say "$FSINFO"
}

KNFSD_SETUP=0
knfsd_start() {
	if [ $KNFSD_SETUP = 0 ]; then
		mkdir -p /proc/fs/nfsd /run/rpcbind /var/lib/nfs
		touch /var/lib/nfs/etab /var/lib/nfs/rmtab
		mount -t nfsd nfsd /proc/fs/nfsd || { KNFSD_ERR="mount of the nfsd file system failed"; return 1; }
		rpcbind -w || { KNFSD_ERR="rpcbind did not start"; return 1; }
		echo "$KEXP 127.0.0.1(rw,no_root_squash,no_subtree_check,insecure,fsid=1)" >/etc/exports
		if [ -d $TR/events/nfsd/nfsd_write_direct ]; then
			echo 4096 >$TR/buffer_size_kb
			echo 1 >$TR/events/nfsd/nfsd_write_direct/enable
			echo 1 >$TR/events/nfsd/nfsd_write_vector/enable
		fi
		KNFSD_SETUP=1
	fi
	exportfs -ra || { KNFSD_ERR="exportfs -ra failed"; return 1; }
	rpc.mountd -N 4 -p 20048 || { KNFSD_ERR="rpc.mountd did not start"; return 1; }
	echo 1048576 >/proc/fs/nfsd/max_block_size 2>/dev/null   # before the threads start
	rpc.nfsd -N 4 -N 4.1 -N 4.2 -p 2049 "$KTHREADS" || { KNFSD_ERR="rpc.nfsd failed"; return 1; }
	KNFSD_UP=1
	say "knfsd: versions $(cat /proc/fs/nfsd/versions) threads $(cat /proc/fs/nfsd/threads)" \
		"max_block_size $(cat /proc/fs/nfsd/max_block_size)"
}

# stopped while nfsd-uc runs, so that it does not compete with idle kernel threads or hold files
knfsd_stop() {
	[ $KNFSD_UP = 1 ] || return 0
	rpc.nfsd 0
	exportfs -ua
	killall rpc.mountd 2>/dev/null
	KNFSD_UP=0
}

# knfsd's write mode: io_cache_write (and io_cache_read, so that a "direct" server reads direct
# too, as nfsd-uc's does). The numbers are those of fs/nfsd/nfsd.h in 7.2: NFSD_IO_BUFFERED 0,
# NFSD_IO_DONTCACHE 1, NFSD_IO_DIRECT 2. 0 = set (or buffered on a kernel without the knob).
knfsd_mode() {
	local n
	case $1 in buffered) n=0 ;; dontcache) n=1 ;; direct) n=2 ;; *) return 1 ;; esac
	if [ ! -e $KNOB/io_cache_write ]; then
		[ "$1" = buffered ]
		return
	fi
	echo $n >$KNOB/io_cache_write 2>/dev/null || return 1
	echo $n >$KNOB/io_cache_read 2>/dev/null
	[ "$(cat $KNOB/io_cache_write)" = $n ]
}

uc_start() {
	mkdir -p /tmp/uc-state
	cat >/tmp/uc.conf <<-EOF
	[server]
	listen = 127.0.0.1
	port = $UPORT
	mount_port = $UMPORT
	threads = $UCTHREADS
	state_dir = /tmp/uc-state
	rpcbind = no
	[cache]
	size = $UCCACHE
	[export $UEXP]
	clients = 127.0.0.1(rw,no_root_squash,insecure)
	write_mode = $1
	read_mode = direct
	EOF
	: >/tmp/uc.log
	nfsd-uc -c /tmp/uc.conf >>/tmp/uc.log 2>&1 &
	UPID=$!
	local i=0
	while [ $i -lt 600 ]; do
		grep -q ready /tmp/uc.log && return 0
		kill -0 $UPID 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	UC_ERR="nfsd-uc did not say ready: $(tail -3 /tmp/uc.log | tr '\n,' '  ')"
	kill -KILL $UPID 2>/dev/null
	wait $UPID 2>/dev/null
	UPID=""
	return 1
}

uc_stop() {  # SIGTERM, 20 s at most; prints nothing, 1 when it had to be killed or failed
	local pid=$UPID i=0 st
	[ -n "$pid" ] || return 0
	UPID=""
	kill -TERM $pid 2>/dev/null
	while kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL $pid
		wait $pid 2>/dev/null
		return 1
	fi
	wait $pid
	st=$?
	return $st
}

# ---- measurement
# sample SERVER before|after -> "rd wr cached_kB cpu_ticks io_read_bytes": vda sectors read and
# written, page cache, the server's CPU (knfsd: 0 before, the threads' delta after), nfsd-uc's
# read_bytes (0 for knfsd)
sample() {
	local cpu io=0
	if [ "$1" = knfsd ]; then
		# per thread: knfsd 7.x starts and stops nfsd threads as load comes and goes, so a sum
		# over the threads alive at each end would lose or gain whole threads
		awk '$2 == "(nfsd)" { print $1, $14 + $15 }' /proc/[0-9]*/stat >/tmp/kcpu.$2 2>/dev/null
		cpu=0
		[ "$2" = after ] && cpu=$(awk 'NR == FNR { b[$1] = $2; next } { s += $2 - b[$1] } END { print s + 0 }' \
			/tmp/kcpu.before /tmp/kcpu.after)
	else
		cpu=$(sed 's/^.*) //' /proc/$UPID/stat | awk '{ print $12 + $13 }')
		io=$(awk '/^read_bytes:/ { print $2 }' /proc/$UPID/io)
	fi
	echo "$(awk '{ print $3, $7 }' /sys/block/vda/stat) $(awk '/^Cached:/ { print $2 }' /proc/meminfo) $cpu $io"
}

get() {  # get KEY "k=v k=v ...": value of KEY
	echo "$2" | tr ' ' '\n' | sed -n "s|^$1=||p" | head -1
}

# trace events of the direct path since the last clear: "DIRECT_SEGMENTS BUFFERED_SEGMENTS"
trace_counts() {
	[ -e $TR/trace ] || { echo "- -"; return; }
	echo "$(grep -c 'nfsd_write_direct:' $TR/trace) $(grep -c 'nfsd_write_vector:' $TR/trace)"
	echo >$TR/trace
}

fail_row() {  # SERVER MODE RECORD SYNC FILE NOTE
	echo "$1,$2,interleave,$3,$4,$5,$WRITERS,$QD,,,,,,,,,,,,,no,kernel $KV; guest/TCG; FAILED: $6" >>$ROWS
	say "FAILED $1 $2 $3 $4 $5: $6"
}

run_case() {  # SERVER MODE RECORD SYNC FILE TOTAL
	local srv=$1 mode=$2 rec=$3 sync=$4 file=$5 total=$6
	local exp port mport f seed out rc before after res vrc note tc="- -" fills=- hwm="" vnote=""
	f=il-$mode-$rec-$sync
	if [ "$srv" = knfsd ]; then
		exp=$KEXP port=2049 mport=20048
		[ $KNFSD_UP = 1 ] || { fail_row "$srv" "$mode" "$rec" "$sync" "$file" "knfsd did not start: $KNFSD_ERR"; return; }
		if ! knfsd_mode "$mode"; then
			echo "$srv $mode $rec $sync $file: no $mode mode on $KV (io_cache_write absent or refused)" >>/host/skipped
			return
		fi
	else
		exp=$UEXP port=$UPORT mport=$UMPORT
		command -v nfsd-uc >/dev/null || { fail_row "$srv" "$mode" "$rec" "$sync" "$file" "nfsd-uc binary not supplied"; return; }
		uc_start "$mode" || { fail_row "$srv" "$mode" "$rec" "$sync" "$file" "$UC_ERR"; return; }
	fi
	[ "$file" = fresh ] && rm -f "$exp/$f"
	# a new seed per case: the overwrite's bytes differ from the fresh run's, so stale data fails
	seed=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') + 1 ))
	sync
	echo 3 >/proc/sys/vm/drop_caches
	[ "$srv" = knfsd ] && trace_counts >/dev/null
	before=$(sample "$srv" before)
	out=$(timeout "$CASE_TIMEOUT" nfs-interleave --write-only --"$file" --sync "$sync" --record "$rec" \
		--total "$total" --writers "$WRITERS" --qd "$QD" --seed "$seed" \
		127.0.0.1 $port $mport "$exp" "$f" 2>/tmp/il.err)
	rc=$?
	after=$(sample "$srv" after)
	if [ $rc -ne 0 ]; then
		fail_row "$srv" "$mode" "$rec" "$sync" "$file" "write phase: nfs-interleave exit $rc: $(tail -2 /tmp/il.err | tr '\n,' '  ')"
		[ "$srv" = nfsd-uc ] && uc_stop
		return
	fi
	res=$(fincore --bytes --noheadings --output RES "$exp/$f" 2>/dev/null | tr -d ' ')
	if [ "$srv" = knfsd ]; then
		tc=$(trace_counts)
	else
		fills=$(nfsduc-stat 127.0.0.1 $port cache_fill_reads 2>/dev/null || echo -)
		hwm=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' /proc/$UPID/status)
	fi
	timeout "$CASE_TIMEOUT" nfs-interleave --verify-only --"$file" --sync "$sync" --record "$rec" \
		--total "$total" --writers "$WRITERS" --qd "$QD" --seed "$seed" \
		127.0.0.1 $port $mport "$exp" "$f" >/dev/null 2>/tmp/il.err
	vrc=$?
	case $vrc in
	0) verified=yes ;;
	1) verified=no vnote="read-back: bytes differ: $(tail -2 /tmp/il.err | tr '\n,' '  ')" ;;
	*) verified=no vnote="read-back failed (exit $vrc): $(tail -2 /tmp/il.err | tr '\n,' '  ')" ;;
	esac
	if [ "$srv" = nfsd-uc ]; then
		uc_stop || vnote="$vnote${vnote:+; }nfsd-uc did not exit cleanly after the case"
	fi
	# the data must be right before any figure counts: a failed read-back is a failure row
	if [ $verified != yes ]; then
		fail_row "$srv" "$mode" "$rec" "$sync" "$file" "$vnote"
		return
	fi
	note="kernel $KV; guest/TCG: MiB/s and CPU measure the emulator as much as the server"
	if [ "$srv" = knfsd ]; then
		if [ -e $KNOB/io_cache_write ]; then
			note="$note; io_cache_write=$(cat $KNOB/io_cache_write) io_cache_read=$(cat $KNOB/io_cache_read)"
		else
			note="$note; no io_cache_write knob: buffered only"
		fi
		[ "$mode" = direct ] && note="$note; WRITE segments direct/buffered(dontcache) ${tc% *}/${tc#* }"
		note="$note; cpu: nfsd threads (not writeback kworkers)"
	else
		note="$note; cache_fill_reads=$fills; cpu: the process"
	fi
	[ -n "$vnote" ] && note="$note; $vnote"
	note="$note; $FSINFO; $KTHREADS knfsd threads / $UCTHREADS nfsd-uc threads"
	awk -v srv="$srv" -v mode="$mode" -v rec="$rec" -v sync="$sync" -v file="$file" -v w="$WRITERS" \
		-v qd="$QD" -v out="$out" -v before="$before" -v after="$after" -v res="$res" -v hz=$HZ \
		-v hwm="$hwm" -v note="$note" '
	function kv(k,   i, n, a, p) {
		n = split(out, a, " ")
		for (i = 1; i <= n; i++) { p = index(a[i], "="); if (substr(a[i], 1, p - 1) == k) return substr(a[i], p + 1) }
		return ""
	}
	BEGIN {
		split(before, b, " "); split(after, a, " ")
		bytes = kv("bytes"); writes = kv("writes")
		rd = (a[1] - b[1]) / 8; wr = (a[2] - b[2]) * 512
		cpu = (a[4] - b[4]) / hz
		uio = (a[5] - b[5]) / 4096
		if (srv == "nfsd-uc") note = note sprintf("; /proc/PID/io reads per WRITE %.4f", writes ? uio / writes : 0)
		printf "%s,%s,interleave,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%.4f,,%.3f,%s,%.2f,%.1f,%s,yes,%s\n",
			srv, mode, rec, sync, file, w, qd, bytes, kv("seconds"), kv("MiB/s"), writes, rd,
			writes ? rd / writes : 0, bytes ? wr / bytes : 0,
			res == "" ? "" : sprintf("%.2f", 100 * res / bytes),
			100 * (a[3] - b[3]) * 1024 / bytes, cpu / (bytes / 1073741824), hwm, note
	}' >>$ROWS
	say "done $srv $mode $rec $sync $file: $(tail -1 $ROWS | cut -d, -f10-14,16-19)"
}

main() {
	local srv mode rec sync file total last=""
	: >$ROWS
	: >/host/skipped
	say "kernel $KV, $(nproc) CPUs, $(awk '/MemTotal/ { print $2 }' /proc/meminfo) kB"
	make_fs || { say "mkfs/mount of XFS on vda failed"; return 3; }
	{
		echo "kernel=$KV"
		if [ -e $KNOB/io_cache_write ]; then
			echo "io_cache_write=present default=$(cat $KNOB/io_cache_write)"
			# which values this kernel takes: written and read back, then the default restored
			local d n ok=""
			d=$(cat $KNOB/io_cache_write)
			for n in 0 1 2 3; do
				echo $n >$KNOB/io_cache_write 2>/dev/null && [ "$(cat $KNOB/io_cache_write)" = $n ] && ok="$ok$n "
			done
			echo $d >$KNOB/io_cache_write
			echo "io_cache_write_accepts=$ok"
		else
			echo "io_cache_write=absent"
		fi
	} >/host/info
	while read -r srv mode rec sync file total; do
		[ -n "$srv" ] || continue
		if [ "$srv" != "$last" ]; then
			if [ "$srv" = knfsd ]; then
				knfsd_start || say "knfsd did not start: $KNFSD_ERR"
			else
				knfsd_stop
			fi
			last=$srv
		fi
		run_case "$srv" "$mode" "$rec" "$sync" "$file" "$total"
		[ "$file" = overwrite ] && rm -f "$KEXP/il-$mode-$rec-$sync" "$UEXP/il-$mode-$rec-$sync"
	done </host/plan
	knfsd_stop
	umount $DIR
	return 0
}

main
