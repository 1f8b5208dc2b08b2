#!/usr/bin/env bash
# oss-fuzz-build.sh: builds every libFuzzer target the way OSS-Fuzz /
# ClusterFuzz build scripts do (docs/fuzzing.md). Reads $CC, $CXX,
# $CFLAGS/$CXXFLAGS (sanitizer and coverage flags chosen by the
# infrastructure), $LIB_FUZZING_ENGINE (the engine to link: -fsanitize=fuzzer,
# AFL's driver, ...) and writes to $OUT: fuzz_<target> binaries,
# fuzz_<target>_seed_corpus.zip and fuzz_<target>.dict. $SRC defaults to the
# repository; $WORK (default a temporary folder) holds the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${CC:?set CC}" "${CXX:?set CXX}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
work=${WORK:-$(mktemp -d)}
build=$work/gpurc-oss-fuzz
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  "-DCMAKE_CXX_FLAGS=${CXXFLAGS:-}" -DGPURC_LIBFUZZER=ON -DGPURC_FUZZ_OSS=ON "-DGPURC_FUZZ_ENGINE=$LIB_FUZZING_ENGINE"
cmake --build "$build" -j"$(nproc)" --target fuzz_targets gpurc
python3 "$root/scripts/fuzz-corpus.py" "$build/gpurc" "$build/seeds"
mkdir -p "$OUT"
for t in $("$root/scripts/fuzz.sh" list); do
  cp "$build/fuzz_$t" "$OUT/"
  if [ -d "$build/seeds/$t" ]; then
    (cd "$build/seeds/$t" && zip -q -r "$OUT/fuzz_${t}_seed_corpus.zip" .)
  fi
  [ -f "$build/seeds/dict/$t.dict" ] && cp "$build/seeds/dict/$t.dict" "$OUT/fuzz_$t.dict"
done
echo "oss-fuzz-build: $(ls "$OUT"/fuzz_* | grep -vc '\.') targets in $OUT"
