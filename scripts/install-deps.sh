#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what nfsd-uc needs to build, run and test, from Debian 12's packages. Idempotent.
# --test: also what only the test suites run (a Kerberos KDC for the RPCSEC_GSS tests: not
# services a server should carry). --bench: what bench/run compares against and draws with
# (Ganesha, fio, gnuplot, qemu; a KDC and openssl for its gss workload).
set -eu
pkgs="build-essential meson ninja-build pkg-config rpcsvc-proto libtirpc-dev liburing-dev
      libsodium-dev libjemalloc-dev libcmocka-dev libnfs-dev libnfs-utils rpcbind xfsprogs e2fsprogs util-linux dmsetup xfslibs-dev
      libmicrohttpd-dev libsystemd-dev scdoc systemd python3-prometheus-client
      clang libclang-rt-14-dev libkrb5-dev libssl-dev"
if [ "${1:-}" = --test ]; then
	pkgs="$pkgs krb5-kdc krb5-admin-server"
fi
if [ "${1:-}" = --bench ]; then
	pkgs="$pkgs fio gnuplot-nox nfs-ganesha nfs-ganesha-vfs iproute2 qemu-system-x86
	      busybox-static cpio kmod xz-utils zstd krb5-kdc krb5-admin-server openssl"
fi
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
