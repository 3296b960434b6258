#!/usr/bin/env bash
# Installs what strata needs to build and test on Debian 12, skipping what is already there.
# Run as root (or with sudo available). CUDA/NCCL are optional and not installed here.
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build pkg-config libopenmpi-dev openmpi-bin
          libhwloc-dev hwloc libyaml-cpp-dev catch2 libcli11-dev libpugixml-dev
          nlohmann-json3-dev iproute2 gnuplot-nox
          python3-dev pybind11-dev python3-torch libtorch-dev)
# Callers that need more (scripts/fuzz.sh: clang) name it here.
read -r -a extra <<< "${STRATA_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "strata: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
