#!/usr/bin/env bash
# Installs what is missing, builds an optimised gpurc into build/release and
# replays every bundled example (examples/**/*.json) on the JIT, printing each
# result and its speed. Exits non-zero if any example fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" || exit 1
"$root/scripts/build.sh" "$root/build/release" -DCMAKE_BUILD_TYPE=Release || exit 1
gpurc="$root/build/release/gpurc"
engine=${GPURC_ENGINE:-jit}
pass=0
fail=0
failed=()
while IFS= read -r f; do
  rel=${f#"$root"/}
  # Only replay files (they carry the format version); other JSON data in
  # examples/ (e.g. test vectors) is not run.
  if ! grep -q '"gpurc"' "$f"; then
    echo "== $rel: not a replay file, skipped"
    continue
  fi
  file_engine=$engine
  # Bifrost: a kernel whose instructions the translation to IR does not cover
  # yet (docs/bifrost.md) runs on the reference interpreter instead.
  if grep -q '"isa": *"bifrost"' "$f" && [ "$engine" != interp ] &&
     "$gpurc" replay "$f" --engine "$engine" 2>&1 | grep -q "is not translated to IR yet"; then
    file_engine=interp
  fi
  echo "== $rel (engine $file_engine)"
  "$gpurc" replay "$f" --engine "$file_engine" --count
  rc=$?
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1))
  else
    echo "   FAILED with exit status $rc"
    fail=$((fail + 1))
    failed+=("$rel")
  fi
done < <(find "$root/examples" -name '*.json' | sort)
echo "examples: $pass passed, $fail failed"
for f in "${failed[@]}"; do echo "  failed: $f"; done
[ $fail -eq 0 ]
