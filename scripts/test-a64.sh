#!/usr/bin/env bash
# The ARM64 suite: a cross build for aarch64 (cmake/aarch64-linux-gnu.cmake)
# whose ctest runs every test executable under qemu-aarch64, the NEON tier
# (jit-a64) being the host's JIT. See docs/backend_a64.md.
#   scripts/test-a64.sh [extra cmake options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
# The libraries build in unity batches (GPURC_UNITY_LIBS, docs/testing.md):
# this build runs no embedding test that would want one object per source.
"$root/scripts/build.sh" "$root/build/a64" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" -DGPURC_UNITY_LIBS=ON "$@"
# qemu runs one guest instruction stream per host thread: the lighter test
# configurations keep the run within the ctest timeouts.
(cd "$root/build/a64" && GPURC_TEST_LIGHT=1 ctest --output-on-failure -j2)
