#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The suites on a busy machine: CI runs beside other work, so no test may need an idle one.
# With `stress-ng --cpu 2 --io 1` (Debian's stress-ng) running beside them, run the integration
# suites of the plain and ASan+UBSan builds N times each (default 5), as ./scripts/test.sh sets
# them up, and print how many runs passed. Exit 0 only when every run passed.
#
# usage (as root, after ./scripts/test.sh has set the builds up):
#   scripts/stress-test.sh [N [BUILD...]]    BUILD: build-test, build-asan (default: both)
set -eu
cd "$(dirname "$0")/.."
n=${1:-5}
[ $# -gt 0 ] && shift
builds=${*:-build-test build-asan}
dpkg -s stress-ng >/dev/null 2>&1 || {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends stress-ng
}
for b in $builds; do
	[ -d "$b" ] || { echo "$b is missing: run ./scripts/test.sh first" >&2; exit 2; }
	ninja -C "$b" >/dev/null
done
stress-ng --cpu 2 --io 1 --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM   # stop here: the EXIT trap ends the load
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rc=0
for b in $builds; do
	ok=0
	i=1
	while [ "$i" -le "$n" ]; do
		# each run's whole log kept (meson-logs/stress-N.txt): the console keeps only the
		# last 100 lines of a failure, which a sanitizer's report can fill
		if meson test -C "$b" --print-errorlogs --logbase "stress-$i" --suite integration \
			>"$b/stress-$i.log" 2>&1; then
			ok=$((ok + 1))
		else
			rc=1
			echo "$b run $i failed: $b/stress-$i.log, $b/meson-logs/stress-$i.txt" >&2
		fi
		i=$((i + 1))
	done
	echo "$b: integration suite passed $ok of $n runs beside stress-ng --cpu 2 --io 1"
done
exit $rc
