#!/usr/bin/env bash
# Assembles the copse image's runtime stage (deploy/image/Dockerfile) into a
# directory and runs copse from it, for machines without a container engine:
#
#   deploy/image/assemble.sh DIR [BINARY]      (BINARY default: build/copse)
#
# DIR gets what the stage adds to debian:bookworm-slim - the binary and the
# shared libraries deploy/image/runtime.sh lists, the copse user (65532) -
# plus the merged-/usr links (/lib, /lib64, /bin) the slim image has. Then:
#   1. the dynamic loader in DIR, searching only DIR's library directories,
#      lists what copse loads: every library must resolve inside DIR;
#   2. `copse version` and `copse run --help` run through that loader with an
#      empty environment;
#   3. as root, both run again inside `chroot DIR` as uid 65532 (nothing of
#      the host is visible there).
# Prints "assemble: ok" last on success; any failure exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: assemble.sh DIR [BINARY]" >&2; exit 2; }
dir=$1
binary=${2:-$here/../../build/copse}
[ -x "$binary" ] || { echo "assemble: $binary: not built (scripts/build.sh)" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# The slim image's merged-/usr layout, which the loader path (/lib64/...) relies on.
mkdir -p "$dir/usr/lib" "$dir/usr/lib64" "$dir/usr/bin" "$dir/tmp"
ln -s usr/lib "$dir/lib"
ln -s usr/lib64 "$dir/lib64"
ln -s usr/bin "$dir/bin"
"$here/runtime.sh" stage "$binary" "$dir"
"$here/runtime.sh" user "$dir"

echo "assemble: runtime stage in $dir:"
(cd "$dir" && find . -type f | sort | sed 's/^\./  /')

loader=$(find "$dir/usr/lib64" -maxdepth 1 -name 'ld-linux*.so*' | head -n1)
[ -n "$loader" ] || { echo "assemble: no dynamic loader in $dir/usr/lib64" >&2; exit 1; }
libpath=$(cd "$dir" && find . -name '*.so*' -type f -printf '%h\n' | sort -u |
          sed "s|^\.|$dir|" | paste -sd: -)
copse=$dir/usr/local/bin/copse

# 1. Every library resolves inside DIR (--inhibit-cache: not from the host's ld.so.cache).
listing=$(env -i "$loader" --inhibit-cache --library-path "$libpath" --list "$copse")
echo "assemble: libraries as the loader resolves them:"
echo "$listing" | sed 's/^/  /'
outside=$(echo "$listing" | grep '=>' | grep -v "=> $dir/" || true)
if [ -n "$outside" ]; then
  echo "assemble: libraries resolved outside $dir (missing from the stage):" >&2
  echo "$outside" >&2
  exit 1
fi

# 2. Run through DIR's loader with an empty environment.
run() {
  env -i "$loader" --inhibit-cache --library-path "$libpath" "$copse" "$@"
}
echo "assemble: copse version (loader in $dir):"
run version | sed 's/^/  /'
run run --help >"$dir/tmp/run-help.txt"
grep -q -- "--kubeconfig" "$dir/tmp/run-help.txt" ||
  { echo "assemble: copse run --help printed no --kubeconfig flag" >&2; exit 1; }
echo "assemble: copse run --help: $(wc -l <"$dir/tmp/run-help.txt") lines"

# 3. Inside the directory alone, as the image's user.
if [ "$(id -u)" -eq 0 ]; then
  echo "assemble: copse version (chroot $dir, uid 65532):"
  chroot_bin=$(command -v chroot) || { echo "assemble: chroot not found" >&2; exit 1; }
  env -i "$chroot_bin" --userspec=65532:65532 "$dir" /usr/local/bin/copse version | sed 's/^/  /'
  env -i "$chroot_bin" --userspec=65532:65532 "$dir" /usr/local/bin/copse run --help >/dev/null
else
  echo "assemble: not root: skipped the chroot run (the loader run above used only $dir)"
fi
rm -f "$dir/tmp/run-help.txt"
echo "assemble: ok"
