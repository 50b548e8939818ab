#!/usr/bin/env bash
# Formats every tracked C++ file to .clang-format (clang-format 14, Debian
# bookworm's: other versions format some constructs differently).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list the files that differ and exit 1 if any do
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "format: clang-format not found (scripts/setup.sh installs clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    printf 'format: %s differs from .clang-format\n' "${bad[@]}" >&2
    echo "format: ${#bad[@]} file(s); run scripts/format.sh" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  "$cf" -i "${files[@]}"
fi
