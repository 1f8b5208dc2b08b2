#!/usr/bin/env bash
# The whole test suite (the README's test command; .ci/run runs it):
#   1. an optimised g++ build and its ctest;
#   2. one clang build with AddressSanitizer + UndefinedBehaviorSanitizer and
#      libFuzzer's coverage instrumentation (build/sanitize): its ctest, then
#      the libFuzzer smoke run, every target a few seconds from its seeds with
#      a fixed libFuzzer seed, from that same build (docs/fuzzing.md);
#   3. on an x86-64 machine, the ARM64 cross build run under qemu-aarch64
#      (scripts/test-a64.sh).
# Slow fuzz campaigns and benchmarks are not part of it. Each phase prints its
# elapsed time, so a CI log shows where the budget goes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
# ccache (scripts/build.sh) keys objects by paths relative to the root: the
# embedding tests' own builds of the library, run by ctest, hit the objects
# of the build that registered them.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_DIR=${CCACHE_DIR:-$root/build/ccache}
# Each phase also prints the CPU seconds it used (user + system of the
# processes this script waited for: compilers, tests, fuzzers), which, unlike
# the wall time, does not depend on what else the machine runs.
mkdir -p "$root/build"
cpu_total=0
phase() {
  local cpu
  times > "$root/build/.test-sh-times"  # a builtin in this shell: $(times) would report a subshell's
  cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] } printf "%d", n }' \
    "$root/build/.test-sh-times")
  echo "== test.sh: $1 done at $((SECONDS - start)) s ($((cpu - cpu_total)) CPU s)"
  cpu_total=$cpu
}

"$root/scripts/setup.sh"
phase setup

"$root/scripts/build.sh" "$root/build/release" -DCMAKE_BUILD_TYPE=Release
(cd "$root/build/release" && ctest --output-on-failure -j2)
phase "release build + ctest"

# One build for both sanitizer uses: the tests link the instrumented libraries
# without the fuzzing engine; the fuzz targets link it. The embedding tests
# (install / add_subdirectory) run in the release build only, so this build
# compiles the libraries in unity batches (GPURC_UNITY_LIBS, docs/testing.md).
sanitize=$root/build/sanitize
CC=clang-16 CXX=clang++-16 "$root/scripts/build.sh" "$sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DGPURC_LIBFUZZER=ON -DGPURC_BUILD_TESTS=ON \
  -DGPURC_INSTALL=OFF -DGPURC_BUILD_EXAMPLES=OFF -DGPURC_UNITY_LIBS=ON
(cd "$sanitize" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 GPURC_TEST_LIGHT=1 \
  ctest --output-on-failure -j2)
phase "sanitizer build + ctest"

# libFuzzer smoke run: any finding fails the suite. A fixed -seed keeps the
# run repeatable; long exploratory runs are scripts/fuzz.sh TARGET SECONDS.
# Two targets at a time (GPURC_FUZZ_JOBS): each is one single-threaded process.
GPURC_FUZZ_BUILD=$sanitize GPURC_FUZZ_JOBS=${GPURC_FUZZ_JOBS:-2} \
  "$root/scripts/fuzz.sh" all "${GPURC_FUZZ_SMOKE_SECONDS:-5}" -seed=1
phase "libFuzzer smoke"

# ARM64: the cross build, its ctest under qemu-aarch64 (docs/backend_a64.md).
if [ "$(uname -m)" = "x86_64" ]; then
  "$root/scripts/test-a64.sh"
  phase "ARM64 cross build + ctest under qemu"
fi
