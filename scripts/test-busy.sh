#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The suite on a busy machine: CI runs beside other work, so no test may need an idle one.
# Beside `stress-ng --cpu 2 --io 1` (started here, stopped at the end), runs ./scripts/test.sh
# once (every build and suite; its output goes to a file in $TMPDIR, named at the end), then the
# integration suites of the plain and the ASan build ROUNDS times in a row (default 5), each run's
# log kept as build-{test,asan}/meson-logs/testlog-busyK.{txt,json}. Prints a line per run and a
# total; exits non-zero if any failed.
#
# usage: scripts/test-busy.sh [ROUNDS]        (as root, like scripts/test.sh)
set -u
cd "$(dirname "$0")/.."
rounds=${1:-5}
if ! command -v stress-ng >/dev/null &&
	! DEBIAN_FRONTEND=noninteractive apt-get install -y -q stress-ng >/dev/null; then
	echo "test-busy: needs stress-ng, which apt-get could not install" >&2
	exit 2
fi
stress-ng --cpu 2 --io 1 --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT INT TERM
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
failed=0
whole=$(mktemp "${TMPDIR:-/tmp}/nfsd-uc-test-busy.XXXXXX")
t0=$(date +%s)
if ./scripts/test.sh >"$whole" 2>&1; then r=ok; else r=FAILED; failed=$((failed + 1)); fi
echo "scripts/test.sh: $r ($(grep '^tests: ' "$whole" | tail -n 1)), $(($(date +%s) - t0)) s," \
	"output in $whole"
k=1
while [ "$k" -le "$rounds" ]; do
	for b in build-test build-asan; do
		t0=$(date +%s)
		if meson test -C "$b" --suite integration --logbase "testlog-busy$k" >/dev/null 2>&1; then
			r=ok
		else
			r=FAILED
			failed=$((failed + 1))
		fi
		echo "round $k $b integration: $r, $(($(date +%s) - t0)) s," \
			"$(grep -c '"result": "OK"' "$b/meson-logs/testlog-busy$k.json") tests ok"
	done
	k=$((k + 1))
done
echo "test-busy: $failed failed run(s) of $((1 + 2 * rounds))"
[ "$failed" -eq 0 ]
