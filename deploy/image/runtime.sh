#!/usr/bin/env bash
# The runtime stage of the copse image, in one place for deploy/image/Dockerfile
# and deploy/image/assemble.sh, so that what assemble.sh proves is what the
# image holds:
#
#   runtime.sh libs BINARY         the shared libraries BINARY loads (ldd, the
#                                  dynamic loader included), one canonical path a line
#   runtime.sh stage BINARY ROOT   ROOT/usr/local/bin/copse (debug info stripped)
#                                  and each of those libraries at its own path under ROOT
#   runtime.sh user ROOT           the copse user and group (65532) in ROOT/etc/passwd
#                                  and ROOT/etc/group (appended; created with root if absent)
#
# Paths are canonical (merged /usr: /usr/lib/x86_64-linux-gnu/..., not /lib/...),
# so copying ROOT over a Debian image never writes through or replaces its
# /lib and /lib64 symlinks.
set -euo pipefail

readonly COPSE_UID=65532
readonly COPSE_USER=copse

die() {
  echo "runtime.sh: $*" >&2
  exit 1
}

# Canonical path of a library: its directory resolved, its file name (the
# soname the loader asks for) kept, so that symlinked sonames stay sonames.
canonical() {
  local dir
  dir=$(readlink -f "$(dirname "$1")") || die "cannot resolve $1"
  echo "$dir/$(basename "$1")"
}

libs() {
  local binary=$1 out line path
  [ -x "$binary" ] || die "$binary: not an executable"
  out=$(ldd "$binary") || die "ldd $binary failed"
  if grep -q "not found" <<<"$out"; then
    die "$binary: missing shared libraries: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
  fi
  while read -r line; do
    case "$line" in
      *"=> /"*) path=${line#*=> }; path=${path%% (*} ;;  # libfoo.so.1 => /path (0x...)
      /*) path=${line%% (*} ;;                           # the loader: /lib64/ld-linux-x86-64.so.2 (0x...)
      *) continue ;;                                     # linux-vdso.so.1 (0x...): in the kernel
    esac
    canonical "$path"
  done <<<"$out" | sort -u
}

stage() {
  local binary=$1 root=$2 lib list
  list=$(libs "$binary")
  mkdir -p "$root/usr/local/bin"
  install -m 0755 "$binary" "$root/usr/local/bin/copse"
  # The image needs no debug info (RelWithDebInfo keeps it in build/copse).
  strip --strip-debug "$root/usr/local/bin/copse"
  for lib in $list; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"  # the file itself, under the name the loader looks for
  done
}

user() {
  local root=$1
  mkdir -p "$root/etc"
  [ -e "$root/etc/passwd" ] || echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
  [ -e "$root/etc/group" ] || echo "root:x:0:" >"$root/etc/group"
  grep -q "^$COPSE_USER:" "$root/etc/passwd" ||
    echo "$COPSE_USER:x:$COPSE_UID:$COPSE_UID:copse:/nonexistent:/usr/sbin/nologin" >>"$root/etc/passwd"
  grep -q "^$COPSE_USER:" "$root/etc/group" || echo "$COPSE_USER:x:$COPSE_UID:" >>"$root/etc/group"
}

case "${1:-}" in
  libs) [ $# -eq 2 ] || die "usage: runtime.sh libs BINARY"; libs "$2" ;;
  stage) [ $# -eq 3 ] || die "usage: runtime.sh stage BINARY ROOT"; stage "$2" "$3" ;;
  user) [ $# -eq 2 ] || die "usage: runtime.sh user ROOT"; user "$2" ;;
  *) die "usage: runtime.sh libs BINARY | stage BINARY ROOT | user ROOT" ;;
esac
