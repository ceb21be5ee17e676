#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run an integration program with its tree on XFS (4096-byte sectors on a loop device, as the
# benchmarks use): on_xfs.sh PROGRAM ARGS...   Root; exit 77 (skipped) without loop devices.
set -u
# shellcheck source=../../bench/run-interleave.sh
. "${NFSDUC_BENCH_LIB:-$(dirname "$0")/../../bench/run-interleave.sh}"
trap bench_cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
bench_make_fs 4k 1G
rc=$?
[ $rc = 0 ] || exit $rc
NFSD_UC_IT_TMPDIR=$BENCH_MNT "$@"
