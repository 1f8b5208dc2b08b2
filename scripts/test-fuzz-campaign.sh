#!/usr/bin/env bash
# test-fuzz-campaign.sh GPURC WORKDIR: the ctest `fuzz_campaign_parallel`.
# Runs small sharded campaigns through scripts/fuzz-campaign.sh (GNU
# parallel when installed) and checks that the merged summary covers the
# whole campaign: as many programs as the unsharded run, no mismatch.
set -euo pipefail
gpurc=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
export PARALLEL_JOBS=${PARALLEL_JOBS:-2}
check() {  # NAME SHARDS ARGS...: sharded and whole campaign agree on the program count
  local name=$1 shards=$2
  shift 2
  "$here/fuzz-campaign.sh" "$gpurc" "$shards" "$work/$name" "$@"
  "$gpurc" fuzz "$@" --json "$work/$name-whole.json" --out "$work/$name-whole" > /dev/null
  local got want
  got=$(grep -o '"programs": [0-9]*' "$work/$name/merged.json")
  want=$(grep -o '"programs": [0-9]*' "$work/$name-whole.json")
  if [ "$got" != "$want" ]; then
    echo "test-fuzz-campaign: $name: merged $got, unsharded $want" >&2
    exit 1
  fi
  echo "test-fuzz-campaign: $name: $shards shards merged, $got"
}
check ir 4 --ir --iterations 12 --seed 3
check pica200 3 --isa pica200 --iterations 7 --seed 2
check g13 2 --isa g13 --iterations 4 --seed 2   # one random stream: shards generate and skip
