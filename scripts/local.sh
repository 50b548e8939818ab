#!/usr/bin/env bash
# Installs what is needed, builds, and starts `copse local` with a small synthetic cluster
# whose objects survive restarts: kept in COPSE_DATA_DIR (default
# ${XDG_DATA_HOME:-~/.local/share}/copse/local; delete it to start empty).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
data_dir="${COPSE_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/copse/local}"
mkdir -p "$data_dir"
echo "copse local: cluster data in $data_dir (set COPSE_DATA_DIR to change, delete it to start empty)"
exec build/copse local --data-dir "$data_dir" --nodes 16 --topology zone=2,block=2,rack=2 \
  --node-shape cpu=64,memory=512Gi,nvidia.com/gpu=8 --kubeconfig-out "${KUBECONFIG_OUT:-$PWD/copse.kubeconfig}" "$@"
