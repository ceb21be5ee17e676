#!/usr/bin/env bash
# image.sh - the kernel and base initramfs that bench/knfsd-guest.sh boots under QEMU (TCG): a
# Debian kernel with knfsd, XFS and virtio-blk, plus busybox, rpcbind, rpc.nfsd, rpc.mountd,
# exportfs, mkfs.xfs and fincore. The project's own binaries are not in it: knfsd-guest.sh
# appends them to each run's initramfs, so a rebuilt nfsd-uc does not rebuild the image.
#
#   image.sh            prepare (cached) and print the image directory on stdout (last line)
#
# The kernel comes from Debian sid by default (7.x: knfsd there has the io_cache_write modes),
# through a private apt state under the cache, so the host's own apt sources stay untouched.
# When sid cannot be had, the host's default kernel (Debian 12: 6.1) is used and the image's
# "kfallback" file says why. The image lives in $CACHE/img-HASH, HASH covering every input (kernel
# package, the host packages copied in, this script, guest/init), so a second run only hashes.
#
# Environment: NFSD_UC_KG_CACHE (cache root; default /var/cache/nfsd-uc-bench, or
#   ~/.cache/nfsd-uc-bench when that is not writable), NFSD_UC_KG_SUITE (Debian suite of the
#   kernel, default sid; empty = the host's apt sources), NFSD_UC_KG_KERNEL (exact linux-image
#   package, from that suite).
# Exit status: 0 ready; 77 no kernel or a needed host tool is missing (reason on stderr); 1 other.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -n ${NFSD_UC_KG_CACHE:-} ]]; then
	CACHE=$NFSD_UC_KG_CACHE
elif mkdir -p /var/cache/nfsd-uc-bench 2>/dev/null && [[ -w /var/cache/nfsd-uc-bench ]]; then
	CACHE=/var/cache/nfsd-uc-bench
else
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nfsd-uc-bench
fi
SUITE=${NFSD_UC_KG_SUITE-sid}
# modules the guest loads, in this order with their dependencies: the 9p job share, the disk,
# the file system, the server, and device mapper (dm-mod's linear and error targets: the faulty
# disk of tests/faultydisk)
MODULES="virtio_pci virtio_blk 9pnet_virtio 9p xfs nfsd dm_mod"
# host packages whose files go into the image; their versions go into the hash
IMAGE_PKGS=(busybox-static rpcbind xfsprogs util-linux dmsetup libc6 libtirpc3)
NEEDED=(cpio depmod modprobe xz zstd dpkg-deb apt-get /bin/busybox /sbin/rpcbind /sbin/mkfs.xfs
	/usr/sbin/xfs_io /sbin/dmsetup /usr/bin/fincore)

log() { printf '[kg-image] %s\n' "$*" >&2; }
skip() { log "cannot prepare the image: $*"; exit 77; }

APTO=()
set_apt_state() {  # private apt state for $SUITE (none for the host's sources)
	APTO=()
	[[ -n $SUITE ]] || return 0
	local a=$CACHE/apt-$SUITE
	APTO=(-o "Dir::Etc::sourcelist=$a/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$a/lists"
		-o "Dir::Cache=$a/cache")
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main" \
		>"$a/sources.list"
	# refresh a week-old list: sid moves, and its old kernels leave the archive
	if [[ -z $(find "$a/lists" -maxdepth 1 -name '*Packages*' -mtime -7 2>/dev/null | head -1) ]]; then
		log "apt-get update for $SUITE (private state in $a)"
		apt-get "${APTO[@]}" update -qq >&2 2>/dev/null || log "apt-get update for $SUITE failed"
	fi
}

newest_image_pkg() {  # newest linux-image-N...-amd64 of the current apt state
	apt-cache "${APTO[@]}" search --names-only '^linux-image-[0-9].*-amd64$' 2>/dev/null | awk '{print $1}' |
		grep -v -e '-rt-' -e '-cloud-' -e 'dbg' -e 'unsigned' | sort -V | tail -1 || true
}

host_default_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 ~ /Depends:/ && $2 ~ /^linux-image-[0-9]/ {print $2; exit}' || true
}

cached_kernel_pkg() {  # the newest kernel already prepared (when no registry answers)
	local d
	d=$(ls -1d "$CACHE"/kernel/linux-image-*/ok 2>/dev/null | sort -V | tail -1 || true)
	[[ -n $d ]] && basename "$(dirname "$d")"
	return 0
}

# Decompress Debian's bzImage payload into the ELF vmlinux: QEMU boots it through the PVH entry
# point, which skips the in-guest decompressor (seconds under TCG).
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

# $CACHE/kernel/PKG: vmlinux, kver, and $MODULES with their dependencies (decompressed: busybox
# insmod reads no .xz), in load order in modules.list. The .debs are not kept.
prepare_kernel() {  # $1=package (apt state already set)
	local pkg=$1 kd=$CACHE/kernel/$1 tmp dep
	# a kernel prepared for another module list is prepared again
	[[ -f $kd/ok && $(cat "$kd/modules.want" 2>/dev/null) == "$MODULES" ]] && return 0
	mkdir -p "$CACHE/kernel"
	tmp=$(mktemp -d "$CACHE/kernel.tmp.XXXXXX")
	log "downloading $pkg"
	(cd "$tmp" && apt-get "${APTO[@]}" download "$pkg" >&2 2>/dev/null) || { rm -rf "$tmp"; return 1; }
	mkdir -p "$tmp/x" "$tmp/out"
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/x"
	# newer Debian splits the image package into linux-binary-* and linux-modules-*
	for dep in $(dpkg-deb -f "$tmp"/"$pkg"_*.deb Depends | tr ',|' '\n\n' | awk '{print $1}' |
		grep -E '^linux-(binary|modules)-' || true); do
		(cd "$tmp" && apt-get "${APTO[@]}" download "$dep" >&2 2>/dev/null) || { rm -rf "$tmp"; return 1; }
		dpkg-deb -x "$tmp"/"$dep"_*.deb "$tmp/x"
	done
	rm -f "$tmp"/*.deb
	local mroot kv
	for mroot in "$tmp/x/lib/modules" "$tmp/x/usr/lib/modules"; do [[ -d $mroot ]] && break; done
	kv=$(ls -1 "$mroot" | head -1)
	[[ -n $kv ]] || { rm -rf "$tmp"; log "no modules in $pkg"; return 1; }
	local vmlinuz=$tmp/x/boot/vmlinuz-$kv
	[[ -f $vmlinuz ]] || vmlinuz=$mroot/$kv/vmlinuz
	extract_vmlinux "$vmlinuz" "$tmp/out/vmlinux" || { rm -rf "$tmp"; log "cannot extract vmlinux of $pkg"; return 1; }
	[[ -d $tmp/x/lib/modules ]] || { mkdir -p "$tmp/x/lib"; ln -s ../usr/lib/modules "$tmp/x/lib/modules"; }
	depmod -b "$tmp/x" "$kv"
	local m p rel seen=" "
	: >"$tmp/out/modules.list"
	for m in $MODULES; do
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
	grep -q '/nfsd\.ko$' "$tmp/out/modules.list" || log "note: nfsd is not a module of $pkg (built in?)"
	echo "$kv" >"$tmp/out/kver"
	echo "$MODULES" >"$tmp/out/modules.want"
	rm -rf "$kd"
	mv "$tmp/out" "$kd"
	rm -rf "$tmp"
	touch "$kd/ok"
	log "kernel $kv ready in $kd"
}

# rpc.nfsd, rpc.mountd and exportfs: Debian 12's nfs-kernel-server (same glibc as the host),
# unpacked, not installed: the host needs no NFS server of its own.
prepare_nfs_utils() {
	local d=$CACHE/nfs-kernel-server tmp
	[[ -f $d/ok ]] && return 0
	tmp=$(mktemp -d "$CACHE/nks.tmp.XXXXXX")
	(cd "$tmp" && apt-get download nfs-kernel-server >&2 2>/dev/null) || { rm -rf "$tmp"; return 1; }
	rm -rf "$d"
	mkdir -p "$d"
	dpkg-deb -x "$tmp"/nfs-kernel-server_*.deb "$d/x"
	dpkg-deb -f "$tmp"/nfs-kernel-server_*.deb Version >"$d/version"
	rm -rf "$tmp"
	touch "$d/ok"
}

# shellcheck source=lib.sh
. "$HERE/lib.sh"   # copy_with_libs

image_hash() {  # $1=kernel package
	{
		echo "$1"
		cat "$CACHE/kernel/$1/kver" "$CACHE/nfs-kernel-server/version"
		dpkg-query -W -f='${Package} ${Version}\n' "${IMAGE_PKGS[@]}" 2>/dev/null
		cat "$HERE/image.sh" "$HERE/init" "$HERE/lib.sh"
	} | sha256sum | cut -c1-16
}

build_image() {  # $1=kernel package $2=image dir
	local kd=$CACHE/kernel/$1 out=$2 R b nks=$CACHE/nfs-kernel-server/x/usr/sbin
	R=$(mktemp -d "$CACHE/root.XXXXXX")
	chmod 755 "$R"
	mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,proc,sys,dev,run,tmp,mnt,host,root,srv/xfs}
	mkdir -p "$R"/lib/modules "$R"/var/lib/nfs/sm "$R"/var/lib/nfs/v4recovery
	ln -s ../run "$R/var/run"
	install -m755 /bin/busybox "$R/bin/busybox"
	copy_with_libs "$R" /sbin/rpcbind /sbin/rpcbind
	copy_with_libs "$R" /sbin/mkfs.xfs /sbin/mkfs.xfs
	copy_with_libs "$R" /usr/sbin/xfs_io /usr/sbin/xfs_io
	copy_with_libs "$R" /sbin/dmsetup /sbin/dmsetup
	copy_with_libs "$R" /usr/bin/fincore /usr/bin/fincore
	for b in rpc.nfsd rpc.mountd exportfs; do copy_with_libs "$R" "$nks/$b" "/sbin/$b"; done
	cp -a "$kd/modules/." "$R/lib/modules/"
	cp "$kd/modules.list" "$R/etc/modules.list"
	cp "$kd/kver" "$R/etc/kver"
	for b in /etc/netconfig /etc/services /etc/protocols /etc/rpc; do [[ -f $b ]] && cp "$b" "$R$b"; done
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' '_rpc:x:100:65534::/run/rpcbind:/bin/false' \
		'statd:x:101:65534::/var/lib/nfs:/bin/false' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
		>"$R/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$R/etc/group"
	printf 'passwd: files\ngroup: files\nhosts: files\n' >"$R/etc/nsswitch.conf"
	printf '127.0.0.1 localhost\n' >"$R/etc/hosts"
	ln -s /proc/mounts "$R/etc/mtab"
	install -m755 "$HERE/init" "$R/init"
	mkdir -p "$out.tmp"
	# uncompressed: QEMU copies it into guest RAM, decompressing it under TCG would cost seconds
	(cd "$R" && find . -print0 | cpio --null -o -H newc --quiet) >"$out.tmp/initrd.img"
	cp "$kd/vmlinux" "$kd/kver" "$out.tmp/"
	rm -rf "$R" "$out"
	mv "$out.tmp" "$out"
	log "built $out (initrd $(du -h "$out/initrd.img" | cut -f1), kernel $(cat "$out/kver"))"
}

prune() {  # old images and kernels only cost disk: keep the newest few
	local keep=$1 d
	for d in $(ls -1dt "$CACHE"/img-* 2>/dev/null | tail -n +4); do [[ $d == "$keep" ]] || rm -rf "$d"; done
	for d in $(ls -1dt "$CACHE"/kernel/linux-image-* 2>/dev/null | tail -n +4); do
		grep -qx "$(basename "$d")" "$keep/kpkg" 2>/dev/null || rm -rf "$d"
	done
	rm -rf "$CACHE"/root.* "$CACHE"/kernel.tmp.* "$CACHE"/nks.tmp.* 2>/dev/null || true
}

# The kernel package to boot, prepared; sets KPKG and FALLBACK (empty, or why not $SUITE's).
choose_kernel() {
	local p
	KPKG="" FALLBACK=""
	if [[ -n ${NFSD_UC_KG_KERNEL:-} ]]; then
		set_apt_state
		prepare_kernel "$NFSD_UC_KG_KERNEL" && { KPKG=$NFSD_UC_KG_KERNEL; return 0; }
		FALLBACK="$NFSD_UC_KG_KERNEL could not be had"
	fi
	if [[ -n $SUITE && -z $FALLBACK ]]; then
		set_apt_state
		p=$(newest_image_pkg)
		if [[ -n $p ]] && prepare_kernel "$p"; then KPKG=$p; return 0; fi
		FALLBACK="no kernel from Debian $SUITE${p:+ (download of $p failed)}"
	fi
	SUITE="" APTO=()
	p=$(host_default_pkg)
	if [[ -n $p ]] && prepare_kernel "$p"; then KPKG=$p; return 0; fi
	KPKG=$(cached_kernel_pkg)
	[[ -n $KPKG ]] && FALLBACK="${FALLBACK:+$FALLBACK; }no registry: kernel from the cache"
	[[ -n $KPKG ]]
}

main() {
	local t
	for t in "${NEEDED[@]}"; do
		command -v "$t" >/dev/null 2>&1 || [[ -x $t ]] || skip "$t is not installed (see the header of bench/knfsd-guest.sh)"
	done
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock"
	flock 9   # two runs at once would build the same image
	choose_kernel || skip "no Debian linux-image package could be downloaded and none is cached"
	[[ -z $FALLBACK ]] || log "kernel fallback: $FALLBACK"
	prepare_nfs_utils || skip "nfs-kernel-server (rpc.nfsd, rpc.mountd) could not be downloaded"
	local img
	img=$CACHE/img-$(image_hash "$KPKG")
	if [[ ! -f $img/ok ]]; then
		build_image "$KPKG" "$img"
		echo "$KPKG" >"$img/kpkg"
		touch "$img/ok"
		prune "$img"
	fi
	echo "$FALLBACK" >"$img/kfallback"
	touch "$img"
	log "image ready: $img (kernel $(cat "$img/kver"))"
	echo "$img"
}

main
