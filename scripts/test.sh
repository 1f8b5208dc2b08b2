#!/usr/bin/env bash
# The whole test suite: an optimised build and an ASan+UBSan build, each run
# through ctest, then on an x86-64 machine the ARM64 cross build run under
# qemu-aarch64 (scripts/test-a64.sh). Slow fuzz and benchmark runs are not
# part of it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build/release" -DCMAKE_BUILD_TYPE=Release
(cd "$root/build/release" && ctest --output-on-failure -j2)
"$root/scripts/build.sh" "$root/build/asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DGPURC_SANITIZE=ON
(cd "$root/build/asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 GPURC_TEST_LIGHT=1 ctest --output-on-failure -j2)
# ARM64: the cross build, its ctest under qemu-aarch64 (docs/backend_a64.md).
if [ "$(uname -m)" = "x86_64" ]; then "$root/scripts/test-a64.sh"; fi
# libFuzzer smoke run (docs/fuzzing.md): a clang build of the libraries with
# ASan+UBSan and coverage (build/libfuzzer), then every target for a few
# seconds from its seeds; any finding fails the suite.
"$root/scripts/fuzz.sh" all "${GPURC_FUZZ_SMOKE_SECONDS:-5}"
