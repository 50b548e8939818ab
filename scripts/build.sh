#!/usr/bin/env bash
# Configures (once) and builds copse with Ninja into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout, so clones in other folders share cache hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# -g puts the build directory into the object files; ignore it so that clones
# in other folders hit the same cache entries.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build build -j "$(nproc)"
