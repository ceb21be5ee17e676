#!/usr/bin/env bash
# knfsd-guest.sh - in-kernel knfsd against nfsd-uc on the SAME virtual disk inside ONE QEMU guest
# (TCG: KVM cannot run guests on this machine), with the seeds' interleaved-record workload
# (shared/seeds/000): 32 writers, records of 47008 and 6000 bytes, UNSTABLE + COMMIT and
# FILE_SYNC, a fresh file and then an overwrite of it after drop_caches.
#
#   bench/knfsd-guest.sh [--quick] [--build DIR] [--nfsd-uc EXE] [--interleave EXE] [--stat EXE]
#                        [--records "R .."] [--total SIZE] [--sync-total SIZE] [--writers N]
#                        [--qd N] [--servers "SERVER:MODE .."] [--keep]
#
# CSV on stdout (header line first), one row per case; a short summary on stderr. The guest:
# Debian's kernel (sid 7.x by default, see bench/guest/image.sh; Debian 12's 6.1 when sid cannot
# be had: the rows' note says which), 2 vCPUs, a sparse virtio disk on the host (cache=none,
# 4096-byte logical and physical blocks) with XFS (4096-byte sectors), knfsd exporting it, and
# then nfsd-uc (write_mode cached, its default, and direct) exporting another directory of the
# same XFS; nfs-interleave drives both over the guest's loopback. knfsd runs in its default mode (buffered) and, where the
# kernel has /sys/kernel/debug/nfsd/io_cache_write (7.x), in dontcache and direct modes too.
#
# Per case, over the write phase alone (final COMMIT included):
#   dev_reads_per_write  4 KiB reads of the guest's /dev/vda (/sys/block/vda/stat) per WRITE: the
#                        seeds' figure (0.97 before their fix, 0.0005 after); both servers
#                        measured the same way (knfsd has no PID); nfsd-uc's own /proc/PID/io
#                        figure is in the note
#   write_amp            bytes written to /dev/vda (XFS log included) / bytes the client wrote
#   pagecache_pct        the file's pages in the page cache afterwards (fincore), % of bytes
#   cached_pct           /proc/meminfo Cached growth, % of bytes (guest-wide)
#   mib_s, seconds       nfs-interleave's write phase: under TCG this measures the emulator as
#                        much as the server; compare the counts, not the speeds
#   cpu_s_per_gib        utime+stime of the nfsd kernel threads / of the nfsd-uc process, per GiB
#                        (emulated CPU too); peak_rss_mib: nfsd-uc's VmHWM (a fresh daemon per case)
#   verified             every byte read back through the same server and compared; a failed
#                        read-back gives a row with verified=no and no figures
# loop_reads_per_write is empty (there is no loop device here).
#
# knfsd's modes: io_cache_write (and io_cache_read) 0 = buffered, 1 = dontcache, 2 = direct, the
# NFSD_IO_* enum of fs/nfsd/nfsd.h in Linux 7.2 (its debugfs.c takes 0..2; the guest also checks
# which values the knob takes). knfsd's direct mode writes a WRITE's aligned middle with O_DIRECT
# only when the payload sits at an aligned address in the receive buffer; otherwise the whole
# WRITE goes buffered with IOCB_DONTCACHE. The direct rows' note counts both kinds of segment
# (trace events nfsd_write_direct / nfsd_write_vector).
#
# Options:
#   --quick        records 47008 only, 8 MiB per UNSTABLE and 4 MiB per FILE_SYNC case: 16 cases,
#                  about 4 min (default: 47008 and 6000, 24 MiB UNSTABLE, 8 MiB FILE_SYNC: 32
#                  cases, about 13 min on an idle 2-core host, 21 min with other jobs beside it)
#   --build DIR    meson build directory holding src/nfsd-uc, bench/nfs-interleave and
#                  bench/nfsduc-stat (default: $NFSD_UC_BUILD, else build/ at the top of the tree)
#   --nfsd-uc, --interleave, --stat   the binaries one by one (override --build)
#   --records, --total, --sync-total, --writers (32), --qd (4): the workload
#   --servers "SERVER:MODE .."  what to run, in order (default "knfsd:buffered knfsd:dontcache
#                  knfsd:direct nfsd-uc:cached nfsd-uc:direct"); an nfsd-uc MODE is its write_mode
#   --keep         keep the job directory (console log, guest log) in /var/tmp
# Environment: NFSD_UC_KG_MEM (guest MiB, 2048), NFSD_UC_KG_SMP (vCPUs, 2), NFSD_UC_KG_TIMEOUT
#   (seconds for the whole guest run, a guard against a hung guest; default 2700, --quick 1200),
#   NFSD_UC_KG_KTHREADS and NFSD_UC_KG_UCTHREADS (server threads, 8 each), and
#   bench/guest/image.sh's NFSD_UC_KG_CACHE, NFSD_UC_KG_SUITE, NFSD_UC_KG_KERNEL.
# Host packages: qemu-system-x86 busybox-static cpio kmod xz-utils zstd xfsprogs util-linux rpcbind
#   (and the project's build dependencies). Run as root (the image cache is in /var/cache).
# Exit status: 0 rows produced (failed cases are rows saying so); 77 QEMU or a kernel cannot be
#   had, or the guest does not boot (reason on stderr); 2 usage or a missing binary.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COLUMNS_CSV="server,mode,workload,record,sync,file,writers,qd,bytes,seconds,mib_s,writes,dev_reads,dev_reads_per_write,loop_reads_per_write,write_amp,pagecache_pct,cached_pct,cpu_s_per_gib,peak_rss_mib,verified,note"
MEM=${NFSD_UC_KG_MEM:-2048}
SMP=${NFSD_UC_KG_SMP:-2}
KTHREADS=${NFSD_UC_KG_KTHREADS:-8}
UCTHREADS=${NFSD_UC_KG_UCTHREADS:-8}
J=""
# shellcheck source=guest/lib.sh
. "$HERE/guest/lib.sh"

say() { printf '[knfsd-guest] %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }
skip() { say "SKIP: $*"; exit 77; }

# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	if [[ -n $J && ${KEEP:-0} != 1 ]]; then rm -rf "$J"; elif [[ -n $J ]]; then say "kept $J"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

size_bytes() {  # 24M -> bytes
	local n=${1%[KkMmGg]} u=${1: -1}
	case $u in K|k) echo $((n << 10)) ;; M|m) echo $((n << 20)) ;; G|g) echo $((n << 30)) ;; *) echo "$1" ;; esac
}

# The cases, in the order the guest runs them: each SERVER:MODE of --servers; for each record
# size and sync mode a fresh file, then the overwrite of it.
write_plan() {
	local sm srv mode rec sync total
	for sm in $SERVERS; do
		srv=${sm%%:*} mode=${sm#*:}
		for rec in $RECORDS; do
			for sync in unstable file; do
				total=$TOTAL
				[[ $sync == file ]] && total=$SYNC_TOTAL
				echo "$srv $mode $rec $sync fresh $total"
				echo "$srv $mode $rec $sync overwrite $total"
			done
		done
	done
}

summary() {  # the rows, readably, on stderr
	say "summary ($(tr '\n' ' ' <"$J/share/info" 2>/dev/null)):"
	awk -F, 'NR > 1 {
		if ($21 != "yes") { printf "  %-8s %-9s %5s %-8s %-9s FAILED  %s\n", $1, $2, $4, $5, $6, $22; next }
		printf "  %-8s %-9s %5s %-8s %-9s dev rd/W %7s  amp %6s  fincore %6s%%  Cached %7s%%  %6s MiB/s(TCG)\n",
			$1, $2, $4, $5, $6, $14, $16, $17, $18, $11
	}' "$J/rows.out" >&2
	if [[ -s $J/share/skipped ]]; then
		say "not run on this kernel:"
		sed 's/^/  /' "$J/share/skipped" >&2
	fi
}

main() {
	local build=${NFSD_UC_BUILD:-$HERE/../build} uc="" il="" st="" quick=0
	RECORDS="" TOTAL="" SYNC_TOTAL="" WRITERS=32 QD=4 KEEP=0
	SERVERS="knfsd:buffered knfsd:dontcache knfsd:direct nfsd-uc:cached nfsd-uc:direct"
	while (($#)); do
		case $1 in
		--quick) quick=1 ;;
		--build) build=$2; shift ;;
		--nfsd-uc) uc=$2; shift ;;
		--interleave) il=$2; shift ;;
		--stat) st=$2; shift ;;
		--records) RECORDS=$2; shift ;;
		--servers) SERVERS=$2; shift ;;
		--total) TOTAL=$2; shift ;;
		--sync-total) SYNC_TOTAL=$2; shift ;;
		--writers) WRITERS=$2; shift ;;
		--qd) QD=$2; shift ;;
		--keep) KEEP=1 ;;
		-h|--help) usage; exit 0 ;;
		*) usage; exit 2 ;;
		esac
		shift
	done
	if ((quick)); then
		RECORDS=${RECORDS:-47008} TOTAL=${TOTAL:-8M} SYNC_TOTAL=${SYNC_TOTAL:-4M}
		TIMEOUT=${NFSD_UC_KG_TIMEOUT:-1200}
	else
		RECORDS=${RECORDS:-47008 6000} TOTAL=${TOTAL:-24M} SYNC_TOTAL=${SYNC_TOTAL:-8M}
		TIMEOUT=${NFSD_UC_KG_TIMEOUT:-2700}
	fi
	TOTAL=$(size_bytes "$TOTAL") SYNC_TOTAL=$(size_bytes "$SYNC_TOTAL")
	local sm
	for sm in $SERVERS; do
		case $sm in
		knfsd:buffered | knfsd:dontcache | knfsd:direct | nfsd-uc:cached | nfsd-uc:direct | nfsd-uc:dontcache | nfsd-uc:buffered) ;;
		*) say "--servers: unknown SERVER:MODE '$sm'"; exit 2 ;;
		esac
	done
	uc=${uc:-$build/src/nfsd-uc} il=${il:-$build/bench/nfs-interleave} st=${st:-$build/bench/nfsduc-stat}
	[[ -x $il ]] || { say "nfs-interleave not found: $il (--build DIR or --interleave EXE)"; exit 2; }
	[[ -x $uc ]] || { say "nfsd-uc not found: $uc: its rows will be failure rows"; uc=""; }
	[[ -x $st ]] || st=""
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
	command -v cpio >/dev/null || skip "cpio is not installed"

	local img
	img=$("$HERE/guest/image.sh" | tail -n 1)
	[[ -n $img && -f $img/ok ]] || skip "no kernel image (bench/guest/image.sh said why above)"
	local kver fallback
	kver=$(cat "$img/kver")
	fallback=$(tr ",\n" "; " <"$img/kfallback" 2>/dev/null)
	fallback=${fallback% }

	J=$(mktemp -d /var/tmp/nfsd-uc-kg.XXXXXX) || exit 1
	mkdir -p "$J/share"
	: >"$J/share/log"
	guest_initrd "$img/initrd.img" "$J/initrd.img" "$il:/usr/local/bin/nfs-interleave" \
		${uc:+"$uc:/usr/local/bin/nfsd-uc"} ${st:+"$st:/usr/local/bin/nfsduc-stat"} || exit 1
	truncate -s 4G "$J/disk.img"
	cp "$HERE/guest/cases.sh" "$J/share/main.sh"
	printf 'WRITERS=%s\nQD=%s\nKTHREADS=%s\nUCTHREADS=%s\nUCCACHE=64M\nCASE_TIMEOUT=%s\n' \
		"$WRITERS" "$QD" "$KTHREADS" "$UCTHREADS" 300 >"$J/share/env"
	write_plan >"$J/share/plan"
	say "kernel $kver${fallback:+ (fallback: $fallback)}, TCG, $SMP vCPUs, ${MEM} MiB; records $RECORDS;" \
		"$((TOTAL >> 20)) MiB per UNSTABLE and $((SYNC_TOTAL >> 20)) MiB per FILE_SYNC case; $(wc -l <"$J/share/plan") cases planned"

	guest_run "$img" "$J" "$MEM" "$SMP" "$TIMEOUT"   # cases not reached become failure rows
	say "guest ran $GUEST_ELAPSED s"
	if ! grep -q 'GUEST up' "$J/console.log" 2>/dev/null; then
		sed 's/^/  console| /' "$J/console.log" >&2 2>/dev/null
		sed 's/^/  qemu| /' "$J/qemu.log" >&2
		skip "the guest did not boot kernel $kver"
	fi
	[[ $(cat "$J/share/rc" 2>/dev/null) == 0 ]] || {
		say "the guest's script ended with status $(cat "$J/share/rc" 2>/dev/null || echo none); console:"
		tail -n 40 "$J/console.log" | sed 's/^/  console| /' >&2
	}

	# rows: what the guest wrote, and a failure row for every planned case it did not reach
	local why="guest stopped before this case (timeout ${TIMEOUT}s or crash: see --keep)"
	local fb=""
	[[ -n $fallback ]] && fb="; kernel fallback: $fallback"
	{
		echo "$COLUMNS_CSV"
		local srv mode rec sync file total
		while read -r srv mode rec sync file total; do
			local row
			row=$(awk -F, -v s="$srv" -v m="$mode" -v r="$rec" -v y="$sync" -v f="$file" \
				'$1 == s && $2 == m && $4 == r && $5 == y && $6 == f' "$J/share/rows.csv" 2>/dev/null | head -1)
			if [[ -n $row ]]; then
				echo "$row$fb"
			elif ! grep -q "^$srv $mode $rec $sync $file:" "$J/share/skipped" 2>/dev/null; then
				echo "$srv,$mode,interleave,$rec,$sync,$file,$WRITERS,$QD,,,,,,,,,,,,,no,kernel $kver; guest/TCG; FAILED: $why$fb"
			fi
		done <"$J/share/plan"
	} >"$J/rows.out"
	cat "$J/rows.out"
	summary
	((KEEP)) && cp "$J/console.log" "$J/share/" 2>/dev/null
	exit 0
}

main "$@"
