#!/usr/bin/env bash
# Installs what gpurc needs on Debian 12. Idempotent: does nothing when every
# package is already installed.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
  libasmjit-dev libxbyak-dev libzydis-dev doctest-dev libmimalloc-dev
  nlohmann-json3-dev libcli11-dev libxxhash-dev libfmt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
