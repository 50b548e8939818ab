#!/usr/bin/env bash
# Fails (exit 1), naming them, when a ctest run skipped any test:
#   scripts/check-no-skips.sh LAST_TEST_LOG [CTEST_OUTPUT]
# LAST_TEST_LOG is ctest's Testing/Temporary/LastTest.log (every test's
# output: gtest prints "[  SKIPPED ] Suite.Name" for a GTEST_SKIP, which
# ctest counts as passed); CTEST_OUTPUT is what ctest printed (its list of
# tests that did not run: "(Skipped)", "(Not Run)", "(Disabled)").
# scripts/test.sh runs it when CI=true.
set -euo pipefail
log=${1:?usage: check-no-skips.sh LAST_TEST_LOG [CTEST_OUTPUT]}
out=${2:-}
[ -f "$log" ] || { echo "check-no-skips: $log not found" >&2; exit 2; }
skipped=$(
  {
    # Per-test lines name the test (Suite.Name, Suite/Param.Name/0); the
    # summary's "[  SKIPPED ] 2 tests, listed below:" does not match.
    grep -a -h -o -E '^\[  SKIPPED \] [A-Za-z_][A-Za-z0-9_/]*\.[A-Za-z0-9_/]+' "$log" |
      sed 's/^\[  SKIPPED \] //; s/$/ (GTEST_SKIP)/' || true
    if [ -n "$out" ] && [ -f "$out" ]; then
      grep -a -h -o -E '[0-9]+ - [^ ]+ \((Skipped|Not Run|Disabled)\)' "$out" |
        sed -E 's/^[0-9]+ - //' || true
    fi
  } | sort -u
)
if [ -n "$skipped" ]; then
  echo "check-no-skips: tests were skipped (CI=true allows none):" >&2
  while IFS= read -r line; do echo "  $line" >&2; done <<<"$skipped"
  exit 1
fi
echo "check-no-skips: no test skipped"
