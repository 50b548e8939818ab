# Sourced by the build scripts (build.sh, fuzz.sh, sanitize.sh): one ccache
# shared by build/, build-fuzz/ and build-tsan/ and by every checkout.
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Paths relative to the checkout, so clones in other folders share cache hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# -g puts the build directory into the object files; ignore it so that clones
# in other folders hit the same cache entries.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
# The test executables' precompiled header (COPSE_PCH): ccache caches files
# compiled with one only when it may ignore the __DATE__/__TIME__ and
# PCH-defined macros it cannot see (copse's code uses none).
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
# Three build configurations (RelWithDebInfo with gcc, ASan+UBSan+fuzzer and
# TSan with clang) must fit, or each CI run evicts the others' objects and
# starts cold again; ccache's default of 5 GB does not hold them. Raise the
# limit only, never lower one set by hand (0 is unlimited).
if command -v ccache >/dev/null; then
  copse_ccache_max=$(numfmt --from=auto "$(ccache --get-config max_size)" 2>/dev/null || echo 1)
  ((copse_ccache_max == 0 || copse_ccache_max >= 20000000000)) || ccache --max-size=20G >/dev/null
  unset copse_ccache_max
fi
