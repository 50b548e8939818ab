#!/usr/bin/env bash
# Builds and runs the sanitizer test builds (clang, next to build/):
#   scripts/sanitize.sh asan   ASan+UBSan (+LeakSanitizer) in build-fuzz/,
#                              the directory scripts/fuzz.sh uses too
#   scripts/sanitize.sh tsan   ThreadSanitizer in build-tsan/
# Each compiles only the libraries its test binaries need and runs only
# those binaries (ctest -L selects them by name). Any sanitizer report fails
# the run: -fno-sanitize-recover=all (CMakeLists.txt) and halt_on_error.
# The binaries (COPSE_ASAN_TESTS / COPSE_TSAN_TESTS, space-separated, to
# override) and why these: scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: sanitize.sh asan|tsan}
source scripts/ccache-env.sh

case "$mode" in
  asan)
    dir=build-fuzz
    # Every unit and integration binary except copse_integration_bench and
    # copse_integration_replay, for CI's time: they run 35 s and 16 s at -O2
    # (RelWithDebInfo, 2 cores, 2026-11-27), nearly all of it whole
    # scheduling runs (benchmark clusters, replays) that ASan slows
    # severalfold, and they alone need the copse_bench and copse_replay
    # libraries built with clang and ASan. The scheduler, API server and
    # client they drive run under ASan in the other binaries here (though
    # not every path they take); bench/ and replay/ themselves get no ASan
    # run (COPSE_ASAN_TESTS adds them).
    list=${COPSE_ASAN_TESTS:-$(
      cd tests && ls -d unit/*/ integration/*/ | sed 's|/$||; s|/|_|; s|^|copse_|' |
        grep -v -x -E 'copse_integration_(bench|replay)'
    )}
    # detect_stack_use_after_return: a coroutine frame or a callback that
    # outlives the stack it points into is the bug class Beast code has.
    export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    # Narrow suppressions for third-party code, each with its reason.
    [ ! -f tests/sanitizers/lsan.supp ] ||
      export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    ;;
  tsan)
    dir=build-tsan
    list=${COPSE_TSAN_TESTS:-copse_integration_scheduler copse_integration_client copse_integration_grove}
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    [ ! -f tests/sanitizers/tsan.supp ] ||
      TSAN_OPTIONS+=":suppressions=$PWD/tests/sanitizers/tsan.supp"
    ;;
  *)
    echo "sanitize: unknown mode $mode (asan or tsan)" >&2
    exit 2
    ;;
esac
read -r -d '' -a tests <<<"$list" || true
((${#tests[@]})) || { echo "sanitize: no test binaries selected" >&2; exit 2; }

command -v clang++ >/dev/null || {
  echo "sanitize: clang++ not found (scripts/setup.sh installs it)" >&2
  exit 2
}
scripts/configure-sanitizer.sh "$dir"
start=$SECONDS
cmake --build "$dir" -j "$(nproc)" --target "${tests[@]}"
echo "sanitize: $mode build took $((SECONDS - start)) s"

labels=$(IFS='|'; echo "^(${tests[*]})\$")
start=$SECONDS
# --no-tests=error: a selection that matches nothing is a failure, not a pass.
(cd "$dir" && ctest --output-on-failure --no-tests=error -j "$(nproc)" --timeout 1200 -L "$labels")
echo "sanitize: $mode tests took $((SECONDS - start)) s"
