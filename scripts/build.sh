#!/usr/bin/env bash
# build.sh DIR [cmake options...]: configure (once) and build with two jobs.
set -euo pipefail
dir=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -G Ninja "$@" >/dev/null
cmake --build "$dir" -j2
