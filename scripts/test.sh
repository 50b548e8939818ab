#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite, then the
# fuzzers and the sanitizer builds' tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# kube-apiserver and kube-scheduler v1.20.2 (and etcd) for tests/e2e/real:
# built once into ~/.cache/copse (about 10 minutes on 2 cores), then reused.
scripts/real-apiserver.sh build
ctest_out=build/Testing/ctest-output.log
mkdir -p build/Testing
(cd build && ctest --output-on-failure -j 2 --timeout 600) 2>&1 | tee "$ctest_out"
# No silent skips in CI: a test that skipped (gtest's "[  SKIPPED ]", or
# ctest's Skipped / Not Run / Disabled) fails the run, named. Locally a skip
# is reported only by ctest itself.
if [ "${CI:-}" = true ]; then
  scripts/check-no-skips.sh build/Testing/Temporary/LastTest.log "$ctest_out"
fi

# Fuzzers and sanitizers, each failing the run on any report
# (-fno-sanitize-recover=all, halt_on_error; a fuzz crash, leak or timeout).
# CI has 90 minutes on a fresh 2-core machine with an empty ccache. Measured
# cold (2026-11-27, 2 cores, empty ccache): build/ 10.4 min, kube-apiserver
# about 12, this ctest about 6; then
#   fuzz build (clang ASan+UBSan+libFuzzer) + 4 min of runs   13.0 min
#   ASan+UBSan build of the other tests + their run            16.9 min
#   TSan build of the named tests + their run                  11.6 min
#     (measured before the client's tests joined it; they add their own
#     test files' compile and 41 s of tests)
# about 75 minutes with setup. `cd build && ctest` alone runs the main suite.
scripts/fuzz.sh 240
scripts/sanitize.sh asan
# TSan: the scheduler, client and Grove integration tests (the loop,
# informers, ApiWriter, the HTTP client's pool, pipelining and watches, the
# operator's controllers); the list is sanitize.sh's default.
scripts/sanitize.sh tsan
