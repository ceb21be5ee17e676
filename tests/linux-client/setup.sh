#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# setup.sh - prepare the Linux-client test VM on a Debian 12 host (run as root).
#
#   setup.sh                 install the host packages with apt-get, then build the VM image
#   setup.sh --no-install    only build the VM image from what is installed (run.sh uses this)
#   setup.sh --print         also print the image directory on stdout (last line)
#
# The image is a Debian kernel (linux-image package fetched with `apt-get download`, booted
# as an uncompressed ELF through QEMU's PVH entry) plus an uncompressed initramfs holding
# busybox, mount.nfs, fio, coreutils dd/cp/stat/truncate, GNU diff, the static helpers nfst and
# lockt, the NFS client modules (lockd among them, and auth_rpcgss, rpcsec_gss_krb5 and cts
# for Kerberos), for lock.sh rpcbind, rpc.statd, sm-notify and rpcinfo (then the image's
# "features" file says "lock"), and for krb5.sh rpc.gssd, kinit, klist and kdestroy (then it
# says "krb5"). It lives in
# $NFSD_UC_VM_CACHE/img-HASH (default /var/cache/nfsd-uc-vm),
# HASH covering every input: the kernel package and its module list, the versions of the host
# packages copied in, this script, guest/init and the helpers. Idempotent: a second run only
# hashes and exits.
#
# Environment: NFSD_UC_VM_CACHE (cache root), NFSD_UC_VM_KERNEL (exact linux-image package;
# default the one linux-image-6.12-amd64 depends on, else linux-image-amd64's).
# Exit status: 0 ready; 3 a host tool is missing (run setup.sh without --no-install); 1 other.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${NFSD_UC_VM_CACHE:-/var/cache/nfsd-uc-vm}
INSTALL=1 PRINT=0
for a in "$@"; do
	case $a in
	--no-install) INSTALL=0 ;;
	--print) PRINT=1 ;;
	*) echo "usage: $0 [--no-install] [--print]" >&2; exit 2 ;;
	esac
done

log() { printf '[vm-setup] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit "${2:-1}"; }

# Host packages: qemu and the tools run on the host (loop devices, mkfs, rpcbind), and the
# ones whose binaries are copied into the initramfs (same Debian release, so same glibc).
# krb5-kdc and krb5-admin-server: the KDC of krb5.sh (kdb5_util, kadmin.local, krb5kdc).
HOST_PKGS=(qemu-system-x86 busybox-static cpio kmod xz-utils zstd util-linux iproute2
	xfsprogs e2fsprogs rpcbind nfs-common fio coreutils diffutils gcc libc6-dev
	krb5-user krb5-kdc krb5-admin-server)
# What the initramfs copies; their versions go into the image hash.
IMAGE_PKGS=(busybox-static nfs-common rpcbind fio coreutils diffutils libc6 libtirpc3
	krb5-user libgssapi-krb5-2 libkrb5-3 libk5crypto3 libevent-core-2.1-7)
# The NLM/NSM user space of the lock test (lock.sh): the image has it when the host does.
LOCK_BINS=(/usr/sbin/rpcbind:/sbin/rpcbind /usr/sbin/rpc.statd:/sbin/rpc.statd
	/usr/sbin/sm-notify:/sbin/sm-notify /usr/bin/rpcinfo:/usr/bin/rpcinfo)
# The Kerberos client user space of krb5.sh (RPCSEC_GSS): the image has it when the host does.
KRB5_BINS=(/usr/sbin/rpc.gssd:/sbin/rpc.gssd /usr/bin/kinit:/usr/bin/kinit
	/usr/bin/klist:/usr/bin/klist /usr/bin/kdestroy:/usr/bin/kdestroy)
# The kernel modules of the image (with what they depend on): the NFS client, 9p for the job
# share, and RPCSEC_GSS's krb5 mechanism with cts (cts(cbc(aes)) of the AES enctypes; the
# guest's busybox modprobe has no modules.dep to load them on the kernel's request). The
# kernel's cache is prepared again when this list changes.
KMODS=(virtio_pci virtio_net 9pnet_virtio 9p nfsv3 nfs auth_rpcgss rpcsec_gss_krb5 cts)
NEEDED_TOOLS=(qemu-system-x86_64 cpio depmod modprobe xz zstd gcc losetup mkfs.xfs mkfs.ext4
	/bin/busybox /sbin/mount.nfs /usr/bin/fio)

install_host_pkgs() {
	local missing=() p
	for p in "${HOST_PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	log "installing: ${missing[*]}"
	apt-get update -qq >&2 || log "apt-get update reported errors; trying the install anyway"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

check_tools() {
	local t missing=()
	for t in "${NEEDED_TOOLS[@]}"; do
		command -v "$t" >/dev/null 2>&1 || [[ -x $t ]] || missing+=("$t")
	done
	((${#missing[@]} == 0)) || die "missing host tools: ${missing[*]} (run $0 as root)" 3
}

# The linux-image package to boot: the newest 6.12 of the host's suites, else the default.
resolve_kernel_pkg() {
	[[ -n ${NFSD_UC_VM_KERNEL:-} ]] && { echo "$NFSD_UC_VM_KERNEL"; return; }
	local meta dep
	for meta in linux-image-6.12-amd64 linux-image-amd64; do
		dep=$(apt-cache depends "$meta" 2>/dev/null |
			awk '$1 ~ /Depends:/ && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
		[[ -n $dep ]] && { echo "$dep"; return; }
	done
}

# Boots without the network when apt's lists are gone: the newest kernel already prepared.
cached_kernel_pkg() {
	local d
	d=$(ls -1d "$CACHE"/kernel/linux-image-*/ok 2>/dev/null | sort -V | tail -1 || true)
	[[ -n $d ]] && basename "$(dirname "$d")"
}

# Decompress Debian's bzImage payload into the ELF vmlinux: QEMU boots it through the PVH entry
# point, which skips the in-guest decompressor (seconds of TCG time).
extract_vmlinux() {  # $1=vmlinuz $2=output
	local magic off dec
	for magic in '\x28\xb5\x2f\xfd:zstd -qdc' '\xfd7zXZ\x00:xz -qdc --single-stream' '\x1f\x8b\x08:gzip -qdc'; do
		off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$1" | head -1 | cut -d: -f1 || true)
		[[ -n $off ]] || continue
		dec=${magic#*:}
		tail -c +$((off + 1)) "$1" | $dec 2>/dev/null >"$2.tmp" || true
		if [[ $(head -c4 "$2.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
			mv "$2.tmp" "$2"
			return 0
		fi
	done
	rm -f "$2.tmp"
	return 1
}

# $CACHE/kernel/PKG: vmlinux, kver, and the client modules (decompressed, busybox insmod reads
# no .xz) listed in dependency order in modules.list. The .deb itself is not kept.
prepare_kernel() {  # $1=package
	local pkg=$1 kd=$CACHE/kernel/$1
	[[ -f $kd/ok && $(cat "$kd/kmods" 2>/dev/null) == "${KMODS[*]}" ]] && return 0
	local tmp
	tmp=$(mktemp -d "$CACHE/kernel.tmp.XXXXXX")
	log "downloading $pkg"
	(cd "$tmp" && apt-get download "$pkg" >&2 2>/dev/null) || { rm -rf "$tmp"; return 1; }
	mkdir -p "$tmp/x" "$tmp/out"
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/x"
	# newer Debian splits the image package: pull its linux-binary/linux-modules parts too
	local dep
	for dep in $(dpkg-deb -f "$tmp"/"$pkg"_*.deb Depends | tr ',|' '\n\n' | awk '{print $1}' |
		grep -E '^linux-(binary|modules)-' || true); do
		(cd "$tmp" && apt-get download "$dep" >&2 2>/dev/null) || { rm -rf "$tmp"; return 1; }
		dpkg-deb -x "$tmp"/"$dep"_*.deb "$tmp/x"
	done
	local mroot kv
	for mroot in "$tmp/x/lib/modules" "$tmp/x/usr/lib/modules"; do
		[[ -d $mroot ]] && break
	done
	kv=$(ls -1 "$mroot" | head -1)
	[[ -n $kv ]] || { rm -rf "$tmp"; die "no modules in $pkg"; }
	local vmlinuz=$tmp/x/boot/vmlinuz-$kv
	[[ -f $vmlinuz ]] || vmlinuz=$mroot/$kv/vmlinuz
	extract_vmlinux "$vmlinuz" "$tmp/out/vmlinux" || { rm -rf "$tmp"; die "cannot extract vmlinux of $pkg"; }
	# modprobe wants BASE/lib/modules/KV
	[[ -d $tmp/x/lib/modules ]] || { mkdir -p "$tmp/x/lib"; ln -s ../usr/lib/modules "$tmp/x/lib/modules"; }
	depmod -b "$tmp/x" "$kv"
	local m p rel seen=" "
	: >"$tmp/out/modules.list"
	for m in "${KMODS[@]}"; do
		while read -r _ p; do
			[[ $seen == *" $p "* ]] && continue
			seen+="$p "
			rel=${p#"$tmp/x/lib/modules/$kv/"}
			rel=${rel%.xz}
			rel=${rel%.zst}
			mkdir -p "$tmp/out/modules/$(dirname "$rel")"
			case $p in
			*.xz) xz -dc "$p" >"$tmp/out/modules/$rel" ;;
			*.zst) zstd -qdc "$p" >"$tmp/out/modules/$rel" ;;
			*) cp "$p" "$tmp/out/modules/$rel" ;;
			esac
			echo "$rel" >>"$tmp/out/modules.list"
		done < <(modprobe -d "$tmp/x" -S "$kv" --show-depends "$m" 2>/dev/null | grep '^insmod' || true)
	done
	grep -q 'nfsv3' "$tmp/out/modules.list" || log "note: nfsv3 is not a module in $pkg (built in?)"
	echo "$kv" >"$tmp/out/kver"
	echo "${KMODS[*]}" >"$tmp/out/kmods"
	rm -rf "$kd"
	mkdir -p "$CACHE/kernel"
	mv "$tmp/out" "$kd"
	rm -rf "$tmp"
	touch "$kd/ok"
	log "kernel $kv ready in $kd"
}

# shellcheck source=../../bench/guest/lib.sh
. "$HERE/../../bench/guest/lib.sh"   # copy_with_libs

image_hash() {  # $1=kernel package
	{
		echo "$1"
		cat "$CACHE/kernel/$1/kver" "$CACHE/kernel/$1/modules.list"
		dpkg-query -W -f='${Package} ${Version}\n' "${IMAGE_PKGS[@]}" 2>/dev/null || true
		cat "$HERE/setup.sh" "$HERE/guest/init" "$HERE/helper/nfst.c" "$HERE/helper/lockt.c" \
			"$HERE/../../bench/guest/lib.sh"
	} | sha256sum | cut -c1-16
}

build_image() {  # $1=kernel package $2=image dir
	local kd=$CACHE/kernel/$1 out=$2 R
	R=$(mktemp -d "$CACHE/root.XXXXXX")
	chmod 755 "$R"   # the guest's /: mktemp's 0700 would shut every user but root out
	mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,proc,sys,dev,run,tmp,mnt,host,root,lib/modules}
	install -m755 /bin/busybox "$R/bin/busybox"
	gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$R/usr/local/bin/nfst" "$HERE/helper/nfst.c"
	gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$R/usr/local/bin/lockt" "$HERE/helper/lockt.c"
	copy_with_libs "$R" /sbin/mount.nfs /sbin/mount.nfs
	copy_with_libs "$R" /usr/bin/fio /usr/bin/fio
	# GNU tools where busybox's differ (dd oflag=direct/seek_bytes, cp -a, diff -r): g-prefixed,
	# so that the busybox applets keep their names
	local b
	for b in dd cp stat truncate; do copy_with_libs "$R" "/usr/bin/$b" "/usr/local/bin/g$b"; done
	copy_with_libs "$R" /usr/bin/diff /usr/local/bin/gdiff
	# locking: rpcbind (the kernel's lockd registers through /var/run/rpcbind.sock), rpc.statd
	# (execs /sbin/sm-notify) and its state directories
	mkdir -p "$R/var/lib/nfs/sm" "$R/var/lib/nfs/sm.bak"
	ln -s ../run "$R/var/run"
	local features="" have=1
	for b in "${LOCK_BINS[@]}"; do [[ -x ${b%%:*} ]] || have=0; done
	if ((have)); then
		for b in "${LOCK_BINS[@]}"; do copy_with_libs "$R" "${b%%:*}" "${b#*:}"; done
		features+="lock "
	else
		log "note: rpcbind/rpc.statd/sm-notify/rpcinfo missing on the host: image without locking (lock.sh skips)"
	fi
	# Kerberos (krb5.sh): rpc.gssd and the MIT tools, and the kernel's RPCSEC_GSS krb5 module
	have=1
	for b in "${KRB5_BINS[@]}"; do [[ -x ${b%%:*} ]] || have=0; done
	grep -q 'rpcsec_gss_krb5' "$kd/modules.list" || have=0
	if ((have)); then
		for b in "${KRB5_BINS[@]}"; do copy_with_libs "$R" "${b%%:*}" "${b#*:}"; done
		features+="krb5 "
	else
		log "note: rpc.gssd/kinit/klist/kdestroy (nfs-common, krb5-user) or the kernel's rpcsec_gss_krb5 missing: image without Kerberos (krb5.sh skips)"
	fi
	cp -a "$kd/modules/." "$R/lib/modules/"
	cp "$kd/modules.list" "$R/etc/modules.list"
	cp "$kd/kver" "$R/etc/kver"
	for b in /etc/netconfig /etc/services /etc/protocols /etc/rpc; do [[ -f $b ]] && cp "$b" "$R$b"; done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'user:x:1000:1000:user:/tmp:/bin/sh' \
		'other:x:1001:1001:other:/tmp:/bin/sh' '_rpc:x:100:65534::/run/rpcbind:/bin/false' \
		'statd:x:101:65534::/var/lib/nfs:/bin/false' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$R/etc/passwd"
	printf '%s\n' 'root:x:0:' 'user:x:1000:' 'other:x:1001:' 'nogroup:x:65534:' >"$R/etc/group"
	printf 'passwd: files\ngroup: files\nhosts: files\n' >"$R/etc/nsswitch.conf"
	printf '127.0.0.1 localhost\n10.0.2.15 guest\n10.0.2.2 host\n' >"$R/etc/hosts"
	ln -s /proc/mounts "$R/etc/mtab"
	install -m755 "$HERE/guest/init" "$R/init"
	mkdir -p "$out.tmp"
	# uncompressed: QEMU copies it into guest RAM, decompressing it under TCG would cost seconds
	(cd "$R" && find . -print0 | cpio --null -o -H newc --quiet) >"$out.tmp/initrd.img"
	cp "$kd/vmlinux" "$out.tmp/vmlinux"
	cp "$kd/kver" "$out.tmp/kver"
	echo "$1" >"$out.tmp/kpkg"
	echo "$features" >"$out.tmp/features"
	rm -rf "$R"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	touch "$out/ok"
	log "built $out (initrd $(du -h "$out/initrd.img" | cut -f1), kernel $(cat "$out/kver"))"
}

# Old images and kernels only cost disk: keep the newest few.
prune() {
	local keep=$1 d
	for d in $(ls -1dt "$CACHE"/img-* 2>/dev/null | tail -n +4); do [[ $d == "$keep" ]] || rm -rf "$d"; done
	for d in $(ls -1dt "$CACHE"/kernel/linux-image-* 2>/dev/null | tail -n +3); do
		grep -qx "$(basename "$d")" "$keep/kpkg" 2>/dev/null || rm -rf "$d"
	done
	rm -rf "$CACHE"/root.* "$CACHE"/kernel.tmp.* 2>/dev/null || true
}

main() {
	[[ $(id -u) == 0 ]] || die "run as root (apt-get, $CACHE)"
	((INSTALL)) && install_host_pkgs
	check_tools
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9   # meson and a person may run this at once
	local kpkg
	kpkg=$(resolve_kernel_pkg || true)
	if [[ -z $kpkg && $INSTALL == 1 ]]; then
		apt-get update -qq >&2 || true
		kpkg=$(resolve_kernel_pkg || true)
	fi
	if [[ -n $kpkg ]] && ! prepare_kernel "$kpkg"; then
		log "could not download $kpkg; looking for a kernel already prepared"
		kpkg=""
	fi
	[[ -n $kpkg ]] || kpkg=$(cached_kernel_pkg || true)
	[[ -n $kpkg ]] || die "no Debian linux-image package available (apt-get update?)"
	local img
	img=$CACHE/img-$(image_hash "$kpkg")
	if [[ ! -f $img/ok ]]; then
		build_image "$kpkg" "$img"
		prune "$img"
	fi
	touch "$img" "$CACHE/kernel/$kpkg"   # most recently used, for prune
	log "VM image ready: $img (kernel $(cat "$img/kver"))"
	((PRINT)) && echo "$img"
	return 0
}

main
