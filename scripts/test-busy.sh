#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The suite on a busy machine: CI runs beside other work, so no test may need an idle one.
# Beside `stress-ng --cpu 2 --io 1` (started here, stopped at the end), runs ./scripts/test.sh
# once (every build and suite; its output goes to a file in $TMPDIR, named at the end), then the
# integration suites of the plain and the ASan build ROUNDS times in a row (default 5), each run's
# log kept as BUILD/meson-logs/testlog-busyK.{txt,json}. Prints a line per run and a total;
# exits non-zero if any failed.
#
# usage (as root, like scripts/test.sh):
#   scripts/test-busy.sh [-r] [ROUNDS [BUILD...]]
#     -r      the rounds only, on builds scripts/test.sh has already set up
#     BUILD   build-test, build-asan (default: both)
set -u
cd "$(dirname "$0")/.."
full=1
[ "${1:-}" = -r ] && { full=0; shift; }
rounds=${1:-5}
[ $# -gt 0 ] && shift
builds=${*:-build-test build-asan}
if ! command -v stress-ng >/dev/null &&
	! DEBIAN_FRONTEND=noninteractive apt-get install -y -q stress-ng >/dev/null; then
	echo "test-busy: needs stress-ng, which apt-get could not install" >&2
	exit 2
fi
if [ $full = 0 ]; then
	for b in $builds; do
		ninja -C "$b" >/dev/null ||
			{ echo "test-busy: $b does not build: run ./scripts/test.sh first" >&2; exit 2; }
	done
fi
stress-ng --cpu 2 --io 1 --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
trap 'exit 130' INT TERM   # stop here: the EXIT trap ends the load
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=0
runs=0
if [ $full = 1 ]; then
	whole=$(mktemp "${TMPDIR:-/tmp}/nfsd-uc-test-busy.XXXXXX")
	t0=$(date +%s)
	if ./scripts/test.sh >"$whole" 2>&1; then r=ok; else r=FAILED; failed=$((failed + 1)); fi
	runs=1
	echo "scripts/test.sh: $r ($(grep '^tests: ' "$whole" | tail -n 1)), $(($(date +%s) - t0)) s," \
		"output in $whole"
fi
k=1
while [ "$k" -le "$rounds" ]; do
	for b in $builds; do
		t0=$(date +%s)
		if meson test -C "$b" --no-rebuild --suite integration --logbase "testlog-busy$k" \
			>/dev/null 2>&1; then
			r=ok
		else
			r=FAILED
			failed=$((failed + 1))
		fi
		runs=$((runs + 1))
		echo "round $k $b integration: $r, $(($(date +%s) - t0)) s," \
			"$(grep -c '"result": "OK"' "$b/meson-logs/testlog-busy$k.json") tests ok," \
			"log $b/meson-logs/testlog-busy$k.txt"
	done
	k=$((k + 1))
done
echo "test-busy: $failed failed run(s) of $runs"
[ "$failed" -eq 0 ]
