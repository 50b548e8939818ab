#!/usr/bin/env bash
# Installs what is needed, builds, and starts `copse local` with a small synthetic cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/copse local --nodes 16 --topology zone=2,block=2,rack=2 \
  --node-shape cpu=64,memory=512Gi,nvidia.com/gpu=8 --kubeconfig-out "${KUBECONFIG_OUT:-$PWD/copse.kubeconfig}" "$@"
