#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cc) with clang into
# build-fuzz/ and runs each for its share of SECONDS (default 280).
#   scripts/fuzz.sh [SECONDS]
# Each target starts from its seeds in tests/fuzz/corpus/<name>/ plus what
# earlier runs found (build-fuzz/fuzz/corpus/<name>/). Exits 1 if any target
# crashed, leaked, hit a sanitizer report or timed out, printing the
# reproducer; re-run one with build-fuzz/tests/copse_fuzz_<name> <file>.
#
# build-fuzz/ is also scripts/test.sh's ASan+UBSan test build: every library
# there is compiled with -fsanitize=fuzzer-no-link,address,undefined
# (-DCOPSE_FUZZ=ON), so one compile serves both.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-280}
source scripts/ccache-env.sh
scripts/configure-sanitizer.sh build-fuzz
mapfile -t names < <(cd tests/fuzz && ls -- *_fuzz.cc | sed 's/_fuzz\.cc$//')
cmake --build build-fuzz -j "$(nproc)" --target "${names[@]/#/copse_fuzz_}"

per=$((total / ${#names[@]}))
((per >= 1)) || per=1
# A sanitizer report is a crash; leaks count (LeakSanitizer runs at exit of
# each input's process only with -detect_leaks, which libFuzzer enables).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
summary=()
for name in "${names[@]}"; do
  work=build-fuzz/fuzz/corpus/$name
  artifacts=build-fuzz/fuzz/artifacts/$name
  mkdir -p "$work" "$artifacts"
  log=build-fuzz/fuzz/$name.log
  # The targets that reach the API server's recursive algorithms take
  # inputs large enough to nest JSON to its depth limit (10,000 levels:
  # 20 KB of arrays, 60 KB of objects; their corpora have such seeds); 16 KB
  # elsewhere keeps the mutations fast.
  case "$name" in
    json | patch | apiserver) max_len=131072 ;;
    *) max_len=16384 ;;
  esac
  echo "fuzz: $name for ${per}s"
  status=0
  # -timeout: one input taking 25 s is a hang; -rss_limit_mb: a blow-up.
  build-fuzz/tests/copse_fuzz_"$name" "$work" "tests/fuzz/corpus/$name" \
    -max_total_time="$per" -timeout=25 -rss_limit_mb=2560 -max_len="$max_len" \
    -artifact_prefix="$artifacts/" -print_final_stats=1 </dev/null >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("$(printf '%-12s %10s executions' "$name" "${execs:-?}")")
  if ((status != 0)); then
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    failed+=("$name")
    echo "fuzz: $name FAILED (exit $status); reproducer: ${reproducer:-none written}" >&2
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|CHECK failed' \
      "$log" >&2 || true
    echo "fuzz: full log: $log" >&2
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#names[@]} targets, no crash"
