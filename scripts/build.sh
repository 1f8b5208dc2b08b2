#!/usr/bin/env bash
# build.sh DIR [cmake options...]: configure (once) and build with two jobs.
# Compiles through ccache when it is installed (scripts/setup.sh installs it),
# with CCACHE_BASEDIR at the source root so builds at the same depth (the
# embedding test's add_subdirectory build beside build/release) share objects;
# a -DCMAKE_CXX_COMPILER_LAUNCHER=... option overrides it.
set -euo pipefail
dir=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  # A cache inside the tree unless the caller has one: always writable.
  export CCACHE_DIR=${CCACHE_DIR:-$root/build/ccache}
fi
cmake -S "$root" -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j2
