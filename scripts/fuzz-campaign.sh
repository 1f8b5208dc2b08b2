#!/usr/bin/env bash
# fuzz-campaign.sh GPURC SHARDS OUTDIR [gpurc fuzz options...]
#
# Runs one differential campaign as SHARDS shards (`gpurc fuzz --shard K/N`)
# with GNU parallel and merges their summaries (`gpurc fuzz merge`); exit
# status is the merge's (0: the whole campaign ran without a mismatch).
# OUTDIR gets shard-K.json, shard-K.log, merged.json and the reproducers.
# The options are passed to every shard, e.g. --isa tesla --iterations 20000
# --seed 1. PARALLEL_JOBS (default: the number of cores) limits concurrent
# shards; PARALLEL_ARGS adds parallel options, e.g.
# PARALLEL_ARGS="--sshloginfile hosts.txt" to spread shards over machines
# that have gpurc at the same path and OUTDIR on a shared file system
# (docs/fuzzing.md "Campaigns on many machines").
# Without GNU parallel the shards run through xargs -P on this machine.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 GPURC SHARDS OUTDIR [gpurc fuzz options...]" >&2
  exit 2
fi
gpurc=$1 shards=$2 out=$3
shift 3
mkdir -p "$out"
jobs=${PARALLEL_JOBS:-$(nproc)}

status=0
if command -v parallel >/dev/null 2>&1 && parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
  # Each job's exit status is its shard's (1 on a mismatch): parallel's own
  # status counts failed jobs, so it is not an error of this script; the
  # merge below decides.
  # shellcheck disable=SC2086
  parallel --will-cite --jobs "$jobs" ${PARALLEL_ARGS:-} \
    "$gpurc" fuzz "$@" --shard "{}/$shards" --json "$out/shard-{}.json" --out "$out" '>' "$out/shard-{}.log" '2>&1' \
    ::: $(seq 0 $((shards - 1))) || status=$?
  runner="GNU parallel"
else
  export gpurc shards out
  seq 0 $((shards - 1)) | xargs -P "$jobs" -I{} sh -c \
    '"$gpurc" fuzz "$@" --shard "{}/$shards" --json "$out/shard-{}.json" --out "$out" > "$out/shard-{}.log" 2>&1' \
    sh "$@" || status=$?
  runner="xargs -P (GNU parallel not installed)"
fi
echo "fuzz-campaign: $shards shards through $runner ($jobs at once)"
files=()
for k in $(seq 0 $((shards - 1))); do
  [ -f "$out/shard-$k.json" ] && files+=("$out/shard-$k.json")
  if [ ! -f "$out/shard-$k.json" ]; then
    echo "fuzz-campaign: shard $k wrote no summary:" >&2
    tail -5 "$out/shard-$k.log" >&2 || true
  fi
done
[ ${#files[@]} -gt 0 ] || exit 2
"$gpurc" fuzz merge "${files[@]}" --json "$out/merged.json"
