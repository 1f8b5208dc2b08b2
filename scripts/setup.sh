#!/usr/bin/env bash
# Installs what gpurc needs on Debian 12. Idempotent: does nothing when every
# package is already installed.
#   scripts/setup.sh          the native build, and on an x86-64 machine also
#                             the ARM64 cross build and qemu (scripts/test.sh
#                             builds and tests both; cmake/aarch64-linux-gnu.cmake)
#   scripts/setup.sh --native only the native build
#   scripts/setup.sh --a64    the same as no option (kept for old callers)
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
  libasmjit-dev libxbyak-dev libzydis-dev doctest-dev libmimalloc-dev
  nlohmann-json3-dev libcli11-dev libxxhash-dev libfmt-dev
  parallel clang-16 libfuzzer-16-dev  # sharded fuzz campaigns; the libFuzzer targets (docs/fuzzing.md)
  libclang-rt-16-dev  # clang-16's sanitizer runtimes: only a Recommends of clang-16, which --no-install-recommends skips
  ccache)  # scripts/build.sh compiles through it: the embedding test's second build of the library hits it
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
a64=1
[ "${1:-}" = "--native" ] && a64=0
[ "$(dpkg --print-architecture)" = "amd64" ] || a64=0
if [ "$a64" = 1 ]; then
  # The cross compiler, qemu's user-mode emulator and the target's libraries
  # (header-only packages are shared; xbyak and Zydis are x86-64 only). The
  # emulator runs the tests with the :arm64 loader and libraries (libc6,
  # libstdc++6: one glibc build, see cmake/aarch64-linux-gnu.cmake).
  packages+=(g++-aarch64-linux-gnu qemu-user libc6:arm64 libstdc++6:arm64
    libasmjit-dev:arm64 libmimalloc-dev:arm64 libxxhash-dev:arm64 libfmt-dev:arm64)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "setup: adding the arm64 architecture"
    $SUDO dpkg --add-architecture arm64
  fi
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
