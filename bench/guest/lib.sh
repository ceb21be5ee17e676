#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - what the scripts that boot a Debian kernel under QEMU share (sourced, bash): host
# binaries copied into an initramfs root with their libraries (same Debian release, so the same
# glibc), binaries appended to a cached image, and a guest run of bench/guest/image.sh's image.
# Users: bench/guest/image.sh, bench/knfsd-guest.sh, tests/faultydisk/run.sh,
# tests/linux-client/setup.sh, run.sh and tapguest.sh.

# copy_with_libs ROOT HOST_BINARY PATH_IN_ROOT
copy_with_libs() {
	local R=$1 l
	install -D -m755 "$2" "$R$3"
	for l in $(ldd "$2" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}'); do
		[[ -e $R$l ]] || install -D -m755 "$(readlink -f "$l")" "$R$l"
	done
}

# guest_initrd IMAGE_INITRD OUT HOST_BINARY:PATH...: OUT is the image's initramfs with the binaries
# appended as a second cpio archive (the kernel unpacks concatenated archives in order), so a
# rebuilt binary does not rebuild the image.
guest_initrd() {
	local base=$1 out=$2 b R
	shift 2
	R=$(mktemp -d "$out.root.XXXXXX") || return 1
	for b in "$@"; do copy_with_libs "$R" "${b%%:*}" "${b#*:}"; done
	(cd "$R" && find . -print0 | cpio --null -o -H newc --quiet) >"$out.extra"
	cat "$base" "$out.extra" >"$out"
	rm -rf "$R" "$out.extra"
}

# guest_run IMAGE_DIR JOB MEM_MIB SMP TIMEOUT_S: boot IMAGE_DIR's kernel with JOB/initrd.img, the
# 9p share JOB/share (the guest's /host) and JOB/disk.img as a virtio disk with 4096-byte blocks,
# under TCG (KVM cannot run guests on these machines); the console goes to JOB/console.log. Lines
# the guest appends to /host/log are shown on stderr as they come. Killed after TIMEOUT_S. QPID is
# the QEMU process while it runs (for the caller's clean-up); GUEST_ELAPSED its seconds after.
# A kernel that dies before the guest's init says "GUEST up" is booted once more: Debian's
# kernel sometimes oopses at boot under TCG with two vCPUs (an int3 left by code patching, in
# sched_clock_cpu), a fault of the emulator's that a second boot does not meet, where the job
# has not started, so that a test is not skipped for it. The first console is kept as
# console.log.1.
QPID=""
guest_run() {
	local img=$1 j=$2 mem=$3 smp=$4 tmo=$5 t0
	t0=$(date +%s)
	guest_boot "$img" "$j" "$mem" "$smp" "$tmo" "$t0"
	guest_died_early "$j" "$t0" "$tmo" && guest_boot "$img" "$j" "$mem" "$smp" "$tmo" "$t0"
	GUEST_ELAPSED=$(($(date +%s) - t0))
}

# guest_died_early JOB T0 TIMEOUT_S: whether the guest of JOB/console.log is worth one more boot
# (guest_run says why): its kernel died before the guest's init said "GUEST up", and less than
# half of TIMEOUT_S went since T0. If so, the console is moved to JOB/console.log.1 and why is
# said on stderr. Also the Linux-client tests' (tests/linux-client), which run QEMU themselves.
guest_died_early() {
	local j=$1 t0=$2 tmo=$3 why
	grep -q 'GUEST up' "$j/console.log" 2>/dev/null && return 1
	(($(date +%s) - t0 < tmo / 2)) || return 1
	why=$(grep -m1 -o 'Kernel panic.*\|Oops.*' "$j/console.log" 2>/dev/null) ||
		why='no panic on its console'
	echo "the guest died before its init ran ($why): booting it again" >&2
	mv "$j/console.log" "$j/console.log.1"
}

# guest_boot IMAGE_DIR JOB MEM_MIB SMP TIMEOUT_S T0: one boot of guest_run's, until QEMU exits or
# TIMEOUT_S after T0
guest_boot() {
	local img=$1 j=$2 mem=$3 smp=$4 tmo=$5 t0=$6 shown=0 n
	qemu-system-x86_64 -accel tcg -cpu max -m "$mem" -smp "$smp" -machine q35 -nodefaults -no-reboot \
		-display none -monitor none -serial "file:$j/console.log" \
		-kernel "$img/vmlinux" -initrd "$j/initrd.img" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
		-fsdev "local,id=fs0,path=$j/share,security_model=none" -device virtio-9p-pci,fsdev=fs0,mount_tag=hostjob \
		-drive "file=$j/disk.img,if=none,id=d0,format=raw,cache=none,aio=native" \
		-device virtio-blk-pci,drive=d0,logical_block_size=4096,physical_block_size=4096 \
		</dev/null >"$j/qemu.log" 2>&1 &
	QPID=$!
	while kill -0 "$QPID" 2>/dev/null; do
		if (($(date +%s) - t0 > tmo)); then
			echo "the guest still ran after $tmo s: stopped" >&2
			kill -KILL "$QPID"
			break
		fi
		n=$(wc -l <"$j/share/log" 2>/dev/null || echo 0)
		if ((n > shown)); then
			sed -n "$((shown + 1)),${n}p" "$j/share/log" | sed 's/^/  guest| /' >&2
			shown=$n
		fi
		sleep 1
	done
	wait "$QPID" 2>/dev/null
	QPID=""
	n=$(wc -l <"$j/share/log" 2>/dev/null || echo 0)
	((n > shown)) && sed -n "$((shown + 1)),${n}p" "$j/share/log" | sed 's/^/  guest| /' >&2
}
