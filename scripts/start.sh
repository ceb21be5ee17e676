#!/bin/sh
# Install dependencies, build, and run nfsd-uc in the foreground on the repo's nfsd-uc.conf
# (exports ./export to 127.0.0.1; NFS on 2049, MOUNT on 20048). Ctrl-C stops it.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -d build ] || meson setup build -Dtests=false
ninja -C build
mkdir -p export
exec ./build/src/nfsd-uc -c nfsd-uc.conf
