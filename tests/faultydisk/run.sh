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
J="" QPID=""

say() { printf '[faultydisk] %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

cleanup() {
	[[ -n $QPID ]] && kill -KILL "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	if [[ -n $J && ${NFSD_UC_FD_KEEP:-0} != 1 ]]; then rm -rf "$J"; elif [[ -n $J ]]; then say "kept $J"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

copy_with_libs() {  # $1=root $2=host binary $3=path in root
	local R=$1 l
	install -D -m755 "$2" "$R$3"
	for l in $(ldd "$2" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}'); do
		[[ -e $R$l ]] || install -D -m755 "$(readlink -f "$l")" "$R$l"
	done
}

# The cached image with the three binaries appended as a second cpio archive (the kernel unpacks
# concatenated archives in order).
make_initrd() {  # $1=image dir
	mkdir -p "$J/root"
	copy_with_libs "$J/root" "$UC" /usr/local/bin/nfsd-uc
	copy_with_libs "$J/root" "$IL" /usr/local/bin/nfs-interleave
	copy_with_libs "$J/root" "$ST" /usr/local/bin/nfsduc-stat
	(cd "$J/root" && find . -print0 | cpio --null -o -H newc --quiet) >"$J/extra.cpio"
	cat "$1/initrd.img" "$J/extra.cpio" >"$J/initrd.img"
	rm -rf "$J/root" "$J/extra.cpio"
}

run_guest() {  # $1=image dir; prints the guest's log lines as they come
	local t0 shown=0 n
	t0=$(date +%s)
	qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp 2 -machine q35 -nodefaults -no-reboot \
		-display none -monitor none -serial "file:$J/console.log" \
		-kernel "$1/vmlinux" -initrd "$J/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
		-fsdev "local,id=fs0,path=$J/share,security_model=none" -device virtio-9p-pci,fsdev=fs0,mount_tag=hostjob \
		-drive "file=$J/disk.img,if=none,id=d0,format=raw,cache=none,aio=native" \
		-device virtio-blk-pci,drive=d0,logical_block_size=4096,physical_block_size=4096 \
		</dev/null >"$J/qemu.log" 2>&1 &
	QPID=$!
	while kill -0 "$QPID" 2>/dev/null; do
		if (($(date +%s) - t0 > TIMEOUT)); then
			say "the guest still ran after $TIMEOUT s: stopped"
			kill -KILL "$QPID"
			break
		fi
		n=$(wc -l <"$J/share/log" 2>/dev/null || echo 0)
		if ((n > shown)); then
			sed -n "$((shown + 1)),${n}p" "$J/share/log" | sed 's/^/  guest| /'
			shown=$n
		fi
		sleep 1
	done
	wait "$QPID" 2>/dev/null
	QPID=""
	n=$(wc -l <"$J/share/log" 2>/dev/null || echo 0)
	((n > shown)) && sed -n "$((shown + 1)),${n}p" "$J/share/log" | sed 's/^/  guest| /'
	say "the guest ran $(($(date +%s) - t0)) s"
}

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
	make_initrd "$img"
	truncate -s 2G "$J/disk.img"
	cp "$HERE/guest.sh" "$J/share/main.sh"
	printf 'RECORD=%s\nTOTAL=%s\nCACHE=%s\n' "$RECORD" "$TOTAL" "$CACHE" >"$J/share/env"
	say "kernel $(cat "$img/kver"), TCG; $RECORD-byte records, $TOTAL a file, cache $CACHE"
	run_guest "$img"
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
