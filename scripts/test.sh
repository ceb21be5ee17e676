#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install dependencies, build three times (plain; ASan + UBSan; TSan) and run every test suite:
# unit (CMocka), integration (the daemon driven by libnfs) and linux-client (a Debian kernel in
# qemu mounting the daemon); the TSan build runs the unit suite (the cache's concurrent writers,
# fibers of two threads sharing a lock), and two integration programs. Exits non-zero if any
# test fails.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
if [ -x tests/linux-client/setup.sh ]; then
	tests/linux-client/setup.sh
fi
[ -d build-test ] || meson setup build-test
[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
[ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
ninja -C build-test
ninja -C build-asan
ninja -C build-tsan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1
rc=0
meson test -C build-tsan --print-errorlogs --suite unit || rc=1
# Two integration programs under TSan: a daemon started and stopped with pool work and lock
# calls in flight (a ring's teardown once raced a pool thread's wake-up). The others' NLM
# decoding trips a benign race inside libtirpc (xdr_opaque's static padding buffer).
meson test -C build-tsan --print-errorlogs --logbase testlog-it integration-mount \
	integration-stat || rc=1
meson test -C build-asan --print-errorlogs --suite unit --suite integration || rc=1
meson test -C build-test --print-errorlogs --suite unit --suite integration --suite linux-client || rc=1
# Every libFuzzer harness for 15 s under ASan + UBSan (tests/fuzz/run.sh; its own clang build).
tests/fuzz/run.sh 15 || rc=1
# One closing line over both builds, in the form CI reads.
python3 - <<'PY'
import json, sys
ok = bad = skip = 0
for f in ("build-tsan/meson-logs/testlog.json", "build-tsan/meson-logs/testlog-it.json",
          "build-asan/meson-logs/testlog.json",
          "build-test/meson-logs/testlog.json"):
    try:
        lines = open(f).read().splitlines()
    except OSError:
        continue
    for line in lines:
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): ok += 1
        elif r == "SKIP": skip += 1
        else: bad += 1
print(f"tests: {ok} passed, {bad} failed, {skip} skipped")
PY
exit $rc
