#!/usr/bin/env bash
# fuzz.sh TARGET SECONDS [libFuzzer options...]: runs one libFuzzer target
# (docs/fuzzing.md "libFuzzer targets") for SECONDS, after building it with
# clang in build/libfuzzer (GPURC_FUZZ_BUILD overrides) and making the seed
# corpus and dictionary. TARGET is a name of `fuzz.sh list` (e.g. diff_g13)
# or `all`: every target in turn (the smoke run of scripts/test.sh).
# New inputs go to build/libfuzzer/corpus/<target>; a finding (crash, leak,
# timeout, sanitizer report) is saved as build/libfuzzer/findings/<target>/
# and the script exits 1 (its reproducer: build/libfuzzer/fuzz_<target> FILE).
# Prints one line per target: executions, execs/s, edges (cov), corpus size.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPURC_FUZZ_BUILD:-$root/build/libfuzzer}
targets=(disasm_pica200 disasm_tesla disasm_g13 disasm_bifrost asm_picasso asm_envyas asm_applegpu asm_bifrost
  ir_parse shbin cubin replay_json diff_pica200 diff_tesla diff_g13 diff_bifrost)
# The -max_len of a target (docs/fuzzing.md "Throughput (sixth session)"): an
# input costs time in proportion to its length, and libFuzzer's default
# (4096, or the largest seed) lets mutation grow every input toward 4 KiB.
# The differential harness reads two selector bytes and 256 bytes of code
# (pica200: 32 descriptors and 128 code words, or a whole .shbin seed);
# decoders and assemblers get the largest seed (whole containers and example
# sources stay whole), at least 256 bytes; replay_json 32 KiB (its largest
# seeds are regression documents of 60-90 KB whose size is recorded
# inputs and expectations: with libFuzzer's default, the largest seed,
# mutation grew every document toward 90 KB and each input paid for parsing
# it; 47 of its 50 seeds are below 25 KB; docs/fuzzing.md "seventh
# session"); the others libFuzzer's default.
max_len_of() {  # TARGET SEED_DIR
  local largest
  largest=$(find "$2" -type f -printf '%s\n' 2>/dev/null | sort -n | tail -1)
  largest=${largest:-0}
  case $1 in
    diff_pica200) echo $((largest > 642 ? largest : 642)) ;;
    diff_*) echo 258 ;;
    disasm_* | asm_*) echo $((largest > 256 ? largest : 256)) ;;
    replay_json) echo 32768 ;;
  esac
}
if [ "${1:-}" = "list" ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ "${1:-}" = "max-len" ] && [ $# -eq 3 ]; then max_len_of "$2" "$3"; exit 0; fi
if [ $# -lt 2 ]; then
  echo "usage: $0 TARGET|all|list SECONDS [libFuzzer options...]" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
if [ "$target" = all ]; then
  run=("${targets[@]}")
else
  printf '%s\n' "${targets[@]}" | grep -qx "$target" || { echo "fuzz.sh: unknown target $target (fuzz.sh list)" >&2; exit 2; }
  run=("$target")
fi

cc=${CC:-clang-16} cxx=${CXX:-clang++-16}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=$cc CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DGPURC_LIBFUZZER=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "${launcher[@]}" >/dev/null
fi
if [ "$target" = all ]; then
  cmake --build "$build" -j2 --target fuzz_targets gpurc
else
  cmake --build "$build" -j2 --target "fuzz_$target" gpurc
fi
seeds=$build/seeds
python3 "$root/scripts/fuzz-corpus.py" "$build/gpurc" "$seeds"

# GPURC_FUZZ_JOBS targets run at once (default 1). Each libFuzzer process is
# single-threaded: the smoke run of scripts/test.sh runs two, one per core of
# the CI machine, which halves its wall time without shortening any target's
# run. The lines below still come in the order of the target list.
jobs=${GPURC_FUZZ_JOBS:-1}
run_one() {  # TARGET: runs it, writes its summary line to $build/findings/TARGET.result
  local t=$1 corpus=$build/corpus/$1 findings=$build/findings/$1
  mkdir -p "$corpus" "$findings" "$seeds/$t"
  local dict=() max_len log result execs rate cov
  [ -f "$seeds/dict/$t.dict" ] && dict=(-dict="$seeds/dict/$t.dict")
  max_len=$(max_len_of "$t" "$seeds/$t")
  [ -n "$max_len" ] && dict+=(-max_len="$max_len")
  log=$build/findings/$t.log
  # -timeout: an input running longer is a hang (a finding); -rss_limit_mb:
  # a run that needs more is one too (the targets set a 256 MiB guest limit).
  if ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$build/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$findings/" "${dict[@]}" "${extra[@]}" "$corpus" "$seeds/$t" > "$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log and $findings/)"
  fi
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  echo "fuzz $t: ${seconds} s, $execs execs, $rate execs/s, $cov edges, corpus $(ls "$corpus" | wc -l) files: $result" \
    > "$build/findings/$t.result"
}
extra=("$@")
mkdir -p "$build/findings"
status=0
running=0
for t in "${run[@]}"; do
  rm -f "$build/findings/$t.result"
  if [ "$jobs" -le 1 ]; then
    run_one "$t"
  else
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  fi
done
wait
for t in "${run[@]}"; do
  if [ -f "$build/findings/$t.result" ]; then
    cat "$build/findings/$t.result"
    grep -q ': ok$' "$build/findings/$t.result" || status=1
  else
    echo "fuzz $t: no result (the run did not finish)"
    status=1
  fi
done
exit $status
