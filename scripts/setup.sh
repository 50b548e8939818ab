#!/usr/bin/env bash
# Installs the Debian packages copse needs. A no-op when they are all present.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libtbb-dev nlohmann-json3-dev libsimdjson-dev
  libboost-program-options1.81-dev libssl-dev openssl libyaml-cpp-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libgoogle-perftools-dev
  libprotobuf-dev
  # RE2 (Go's regexp syntax, linear-time matching) for CEL's matches(),
  # find() and findAll() in cel/.
  libre2-dev
  curl clang-format
  # The linker (CMakeLists.txt: -fuse-ld=lld when it works): it links the
  # test binaries several times faster than ld.bfd.
  lld
  # The sanitizer and fuzz builds (scripts/fuzz.sh, scripts/configure-sanitizer.sh): clang
  # and its runtimes (ASan, UBSan, TSan, libFuzzer), which clang does not
  # pull in by itself.
  clang libclang-rt-14-dev
)
missing=()
# The e2e tests drive kubectl. Any kubectl on PATH will do (this machine's is
# v1.32); without one, Debian's kubernetes-client provides it.
command -v kubectl >/dev/null || pkgs+=(kubernetes-client)
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
