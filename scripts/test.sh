#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# kube-apiserver and kube-scheduler v1.20.2 (and etcd) for tests/e2e/real:
# built once into ~/.cache/copse (about 10 minutes on 2 cores), then reused.
scripts/real-apiserver.sh build
cd build && ctest --output-on-failure -j 2 --timeout 600
