#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bench's two interleaved-record load generators (nfs-interleave: one event loop over
# libnfs's RPC layer; nfs-interleave-threads: a thread per connection through libnfs's blocking
# API) must write the same bytes for the same seed, each must accept what the other wrote and
# refuse what it did not: a comparison of servers under the two is then of the servers.
#
# usage: test_generators.sh NFSD_UC NFS_INTERLEAVE NFS_INTERLEAVE_THREADS   (root; 77 = skipped)
set -u
EXE=$1 ASYNC=$2 THREADS=$3
# shellcheck source=../../bench/run-interleave.sh
. "${NFSDUC_BENCH_LIB:-$(dirname "$0")/../../bench/run-interleave.sh}"
trap bench_cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -n "$BENCH_LOG" ] && tail -30 "$BENCH_LOG" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for a loop device" >&2; exit 77; }
bench_make_fs 4k 1G
rc=$?
[ $rc = 77 ] && { echo "SKIP: no loop device" >&2; exit 77; }
[ $rc = 0 ] || fail "no XFS on a loop device"
bench_write_conf 2 64M cached || fail "conf"
bench_start "$EXE" || fail "daemon did not start"
# gen TOOL FILE SEED RECORD OPTIONS...: one generator on FILE of the export, 8 writers x 2
gen() {
	local tool=$1 file=$2 seed=$3 rec=$4
	shift 4
	"$tool" -w 8 -q 2 -r "$rec" -n 600 --seed "$seed" "$@" 127.0.0.1 "$BENCH_PORT" \
		"$BENCH_MPORT" "$BENCH_EXPORT" "$file" 2>&1
}
passed=0
# check WRITER READER SYNC RECORD: READER verifies what WRITER wrote, and refuses another seed
check() {
	local w=$1 r=$2 sync=$3 rec=$4 f out
	f=$(basename "$w").$sync.$rec
	out=$(gen "$w" "$f" 7 "$rec" --sync "$sync" --fresh --write-only) ||
		fail "$(basename "$w") $sync $rec: $out"
	[ "$(stat -c %s "$BENCH_EXPORT/$f")" = $((600 * rec)) ] ||
		fail "$(basename "$w") $sync $rec: the file is $(stat -c %s "$BENCH_EXPORT/$f") bytes"
	out=$(gen "$r" "$f" 7 "$rec" --verify-only) ||
		fail "$(basename "$r") does not verify what $(basename "$w") wrote ($sync $rec): $out"
	gen "$r" "$f" 8 "$rec" --verify-only >/dev/null
	[ $? = 1 ] || fail "$(basename "$r") verified another seed's bytes ($sync $rec)"
	echo "ok - $(basename "$r") verifies what $(basename "$w") wrote ($sync, $rec-byte records)"
	passed=$((passed + 1))
}
check "$THREADS" "$ASYNC" unstable 47008
check "$THREADS" "$ASYNC" file 6000
check "$ASYNC" "$THREADS" file 47008
check "$ASYNC" "$THREADS" unstable 6000
cmp -s "$BENCH_EXPORT/$(basename "$THREADS").file.6000" \
	"$BENCH_EXPORT/$(basename "$ASYNC").unstable.6000" ||
	fail "the two generators wrote different bytes for one seed"
echo "ok - the two generators write the same bytes for one seed"
bench_stop || fail "daemon exit status after SIGTERM"
echo "$((passed + 1)) passed, 0 failed"
