#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two exports of one XFS, one cached (nfsd-uc's cache, write-behind) and one buffered (the page
# cache), and a file reached through both (a hard link): each export must see what the other
# wrote, whether it is committed or still only in nfsd-uc's cache, size included.
#
# usage: test_shared.sh NFSD_UC NFS_INTERLEAVE     (root; exit 77 = skipped)
set -u
EXE=$1 INTERLEAVE=$2
# shellcheck source=../../bench/run-interleave.sh
. "${NFSDUC_BENCH_LIB:-$(dirname "$0")/../../bench/run-interleave.sh}"
trap bench_cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -n "$BENCH_LOG" ] && tail -30 "$BENCH_LOG" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
bench_make_fs 4k 1G
rc=$?
[ $rc = 77 ] && { echo "SKIP: no loop device" >&2; exit 77; }
[ $rc = 0 ] || fail "no XFS on a loop device"
PAGED=$BENCH_MNT/paged
mkdir -p "$PAGED"
bench_write_conf 2 64M cached || fail "conf"
cat >>"$BENCH_CONF" <<EOF2
[export $PAGED]
clients = 127.0.0.1(rw,no_root_squash,insecure)
write_mode = buffered
read_mode = buffered
EOF2
bench_start "$EXE" || fail "daemon did not start"
# il EXPORT SEED TOTAL OPTIONS...: nfs-interleave on file f of EXPORT
il() {
	local exp=$1 seed=$2 total=$3
	shift 3
	"$INTERLEAVE" -w 8 -r 47008 -t "$total" --seed "$seed" "$@" 127.0.0.1 "$BENCH_PORT" \
		"$BENCH_MPORT" "$exp" f 2>&1
}
out=$(il "$BENCH_EXPORT" 1 16M) || fail "cached export, first write: $out"
ln "$BENCH_EXPORT/f" "$PAGED/f" || fail "hard link"
out=$(il "$PAGED" 2 16M --overwrite) || fail "paged export, overwrite: $out"
out=$(il "$BENCH_EXPORT" 2 16M --verify-only) ||
	fail "the cached export serves older bytes than the paged export wrote: $out"
echo "ok - the cached export sees what the paged one wrote over its cached blocks"
out=$(il "$BENCH_EXPORT" 3 24M --overwrite --commit none --write-only) ||
	fail "cached export, uncommitted overwrite past the end: $out"
out=$(il "$PAGED" 3 24M --verify-only) ||
	fail "the paged export does not see what the cached one holds uncommitted: $out"
echo "ok - the paged export sees bytes and size the cached one holds uncommitted"
bench_stop || fail "daemon exit status after SIGTERM"
echo "2 passed, 0 failed"
