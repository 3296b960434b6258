#!/usr/bin/env bash
# scripts/gpu-prepare.sh: run on a Debian 12 machine with apt, before a GPU machine is lent.
# Puts into git-ignored folders of the repository what scripts/gpu-check.sh needs on a GPU
# machine that has no package registry and no network:
#   .debs/         the Debian packages of scripts/gpu-debs.sh (Open MPI, hwloc, yaml-cpp, ...)
#   .nccl-tests/   a copy of NVIDIA's nccl-tests source, with the commit it came from in COMMIT
# and prints their sizes: the device tool carries at most 64 MiB with the working tree.
#
#   bash scripts/gpu-prepare.sh NCCL_TESTS_CHECKOUT
#
# NCCL_TESTS_CHECKOUT: a git clone (or bare git directory) of https://github.com/NVIDIA/nccl-tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src=${1:?usage: gpu-prepare.sh NCCL_TESTS_CHECKOUT}
git -C "$src" rev-parse HEAD >/dev/null 2>&1 || { echo "gpu-prepare: $src is not a git checkout" >&2; exit 2; }
bash "$root/scripts/gpu-debs.sh"
rm -rf "$root/.nccl-tests"
mkdir -p "$root/.nccl-tests"
git -C "$src" archive HEAD | tar -x -C "$root/.nccl-tests"
git -C "$src" rev-parse HEAD >"$root/.nccl-tests/COMMIT"
echo "gpu-prepare: nccl-tests $(cat "$root/.nccl-tests/COMMIT")"
du -sh "$root/.debs" "$root/.nccl-tests"
echo "gpu-prepare: carry .debs and .nccl-tests; on the GPU machine: bash scripts/gpu-check.sh"
