#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the libFuzzer harnesses (clang, ASan + UBSan, coverage everywhere), write the seed corpus
# and run each harness for SECONDS (default 10) one after the other, with hang detection
# (-timeout), a memory bound (-rss_limit_mb) and leak detection. Prints each target's inputs and
# a closing "fuzz: N inputs in all, C crashes" line; exits non-zero if any harness found a crash,
# leak, hang, UBSan report or failed reply check (its input is in FUZZ_BUILD/fuzz-artifacts/).
#
#   tests/fuzz/run.sh [SECONDS]
#   FUZZ_BUILD=dir       build directory (default build-fuzz)
#   FUZZ_TARGETS="a b"   a subset of: recmark rpc_call nfs3_args mount_args dispatch conn metrics
#   FUZZ_ARGS="..."      more libFuzzer flags (e.g. -runs=0 to only replay the corpus)
#
# Each target keeps what it learnt in FUZZ_BUILD/fuzz-corpus/TARGET and starts from it, the
# generated seeds (mkcorpus) and the regression inputs of tests/fuzz/corpus/TARGET. Run as root:
# the dispatch and connection harnesses switch credentials and open handles as the daemon does.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-10}
b=${FUZZ_BUILD:-build-fuzz}
targets=${FUZZ_TARGETS:-"recmark rpc_call gss nfs3_args mount_args dispatch conn metrics"}

if [ ! -d "$b" ]; then
	CC=clang meson setup "$b" -Dfuzz=true -Dtests=false -Db_sanitize=address,undefined \
		-Db_lundef=false >/dev/null
fi
exes="tests/fuzz/mkcorpus"
for t in $targets; do
	exes="$exes tests/fuzz/fuzz_$t"
done
# shellcheck disable=SC2086
ninja -C "$b" $exes >/dev/null

rm -rf "$b/fuzz-seeds"
"$b/tests/fuzz/mkcorpus" "$b/fuzz-seeds"
# The server's temporary export trees go here, so that a crashed run's are found and removed.
tmp="$b/fuzz-tmp"
rm -rf "$tmp"
mkdir -p "$tmp" "$b/fuzz-logs"
TMPDIR=$(cd "$tmp" && pwd)
export TMPDIR
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

total=0
bad=0
for t in $targets; do
	work="$b/fuzz-corpus/$t"
	art="$b/fuzz-artifacts/$t/"
	log="$b/fuzz-logs/$t.log"
	mkdir -p "$work" "$art"
	reg=""
	[ -d "tests/fuzz/corpus/$t" ] && reg="tests/fuzz/corpus/$t"
	rc=0
	# shellcheck disable=SC2086
	"$b/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=30 -rss_limit_mb=3072 \
		-detect_leaks=1 -print_final_stats=1 -artifact_prefix="$art" ${FUZZ_ARGS:-} \
		"$work" "$b/fuzz-seeds/$t" $reg >"$log" 2>&1 || rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	n=${n:-0}
	total=$((total + n))
	if [ "$rc" -ne 0 ]; then
		bad=$((bad + 1))
		echo "fuzz: $t: FAILED (exit $rc) after $n inputs; log $log, input in $art"
		grep -E 'ERROR:|SUMMARY:|reply check failed|runtime error|^fuzz_|\.c:[0-9]+: ' "$log" | head -n 5
	else
		echo "fuzz: $t: $n inputs in ${secs} s, no crash"
	fi
done
rm -rf "$tmp"
echo "fuzz: $total inputs in all, $bad crashes"
[ "$bad" -eq 0 ]
