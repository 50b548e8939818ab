#!/usr/bin/env bash
# Installs the Debian packages copse needs. A no-op when they are all present.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libtbb-dev nlohmann-json3-dev libsimdjson-dev
  libboost-program-options1.81-dev libssl-dev openssl libyaml-cpp-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libgoogle-perftools-dev
  libprotobuf-dev
  curl
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v kubectl >/dev/null || echo "setup: note: kubectl not found; the e2e tests need it and will be skipped"
