#!/usr/bin/env bash
# Configures (once) a clang sanitizer build directory next to build/:
#   scripts/configure-sanitizer.sh build-fuzz   ASan+UBSan+libFuzzer coverage
#                                               (-DCOPSE_FUZZ=ON): the fuzz
#                                               targets and the ASan tests
#   scripts/configure-sanitizer.sh build-tsan   ThreadSanitizer
# Both use -O1 with line tables only: enough for readable reports at about
# half the compile time of RelWithDebInfo. ccache is shared with build/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: configure-sanitizer.sh build-fuzz|build-tsan}
case "$dir" in
  build-fuzz) flags=(-DCOPSE_FUZZ=ON) ;;
  build-tsan) flags=(-DCOPSE_SANITIZE=thread) ;;
  *) echo "configure-sanitizer: unknown build directory $dir" >&2; exit 2 ;;
esac
[ -f "$dir/build.ninja" ] && exit 0
CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" "${flags[@]}"
