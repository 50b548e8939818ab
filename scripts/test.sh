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
(cd build && ctest --output-on-failure -j 2 --timeout 600)

# Fuzzers and sanitizers, each failing the run on any report
# (-fno-sanitize-recover=all, halt_on_error; a fuzz crash, leak or timeout).
# CI has 90 minutes on a fresh 2-core machine with an empty ccache. Measured
# cold (2026-11-27, 2 cores, empty ccache): build/ 13.3 min, kube-apiserver
# about 12, this ctest about 6; then
#   fuzz build (clang ASan+UBSan+libFuzzer) + 4 min of runs   13.0 min
#   ASan+UBSan build of the other tests + their run            16.9 min
#   TSan build of the named tests + their run                  11.6 min
# about 75 minutes with setup. `cd build && ctest` alone runs the main suite.
scripts/fuzz.sh 240
scripts/sanitize.sh asan
# TSan: the scheduler and Grove integration tests (the loop, informers,
# ApiWriter, the operator's controllers). The client's integration tests are
# not in this list yet: they show a race between Beast's timeout handler (on
# the connection's strand) and a read completing on the coroutine's io
# thread (net/client.cc runs its exchanges off the stream's strand); it is
# open in issue 17. `scripts/sanitize.sh tsan` runs them too.
COPSE_TSAN_TESTS="${COPSE_TSAN_TESTS:-copse_integration_scheduler copse_integration_grove}" \
  scripts/sanitize.sh tsan
