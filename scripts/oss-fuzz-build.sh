#!/usr/bin/env bash
# oss-fuzz-build.sh: builds every libFuzzer target the way OSS-Fuzz /
# ClusterFuzz build scripts do (docs/fuzzing.md). Reads $CC, $CXX,
# $CFLAGS/$CXXFLAGS (sanitizer and coverage flags chosen by the
# infrastructure), $LIB_FUZZING_ENGINE (the engine to link: -fsanitize=fuzzer,
# AFL's driver, ...) and writes to $OUT: fuzz_<target> binaries,
# fuzz_<target>_seed_corpus.zip, fuzz_<target>.dict and fuzz_<target>.options
# (the -max_len scripts/fuzz.sh uses). The sources are this
# repository; $WORK (default a temporary folder) holds the build.
# OSS-Fuzz's CXXFLAGS carry -stdlib=libc++; gpurc links fmt, xxhash, Zydis
# and asmjit from the distribution (built against libstdc++), so that flag
# is dropped (GPURC_OSS_KEEP_LIBCXX=1 keeps it, for dependencies built
# with libc++).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${CC:?set CC}" "${CXX:?set CXX}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
work=${WORK:-$(mktemp -d)}
build=$work/gpurc-oss-fuzz
cxxflags=${CXXFLAGS:-}
if [ -z "${GPURC_OSS_KEEP_LIBCXX:-}" ] && [[ " $cxxflags " == *" -stdlib=libc++ "* ]]; then
  echo "oss-fuzz-build: dropping -stdlib=libc++ (the system libraries gpurc links use libstdc++)" >&2
  cxxflags=$(printf '%s\n' "$cxxflags" | sed 's/\(^\| \)-stdlib=libc++\( \|$\)/ /g')
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  "-DCMAKE_C_FLAGS=${CFLAGS:-}" "-DCMAKE_CXX_FLAGS=$cxxflags" -DGPURC_LIBFUZZER=ON -DGPURC_FUZZ_OSS=ON "-DGPURC_FUZZ_ENGINE=$LIB_FUZZING_ENGINE"
cmake --build "$build" -j"${GPURC_OSS_JOBS:-$(nproc)}" --target fuzz_targets gpurc
# gpurc is built with the sanitizers too: its exit-time leak report is not
# the seeds' concern.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} python3 "$root/scripts/fuzz-corpus.py" "$build/gpurc" "$build/seeds"
mkdir -p "$OUT"
for t in $("$root/scripts/fuzz.sh" list); do
  cp "$build/fuzz_$t" "$OUT/"
  if [ -d "$build/seeds/$t" ]; then
    (cd "$build/seeds/$t" && zip -q -r "$OUT/fuzz_${t}_seed_corpus.zip" .)
  fi
  [ -f "$build/seeds/dict/$t.dict" ] && cp "$build/seeds/dict/$t.dict" "$OUT/fuzz_$t.dict"
  # The -max_len scripts/fuzz.sh gives the target, as ClusterFuzz reads it.
  max_len=$("$root/scripts/fuzz.sh" max-len "$t" "$build/seeds/$t")
  if [ -n "$max_len" ]; then printf '[libfuzzer]\nmax_len = %s\n' "$max_len" > "$OUT/fuzz_$t.options"; fi
done
echo "oss-fuzz-build: $(ls "$OUT"/fuzz_* | grep -vc '\.') targets in $OUT"
