#!/usr/bin/env bash
# The torch backend against pip's PyTorch 2, as CI runs it after scripts/test.sh (which runs
# every test against Debian's PyTorch 1.13):
#   1. scripts/torch-venvs.sh makes or reuses the environments (default: torch 2.11.0, the GPU
#      machines' PyTorch, and the newest release pip serves);
#   2. the build (scripts/env.sh's BUILD_DIR) is configured with them (STRATA_TORCH_VENVS) and
#      with 2.11's Python for the NCCL drop-in's import test (STRATA_DROPIN_TORCH_PYTHON);
#   3. ctest runs, for each environment, torch-<release>.pip_install (pip install of strata_torch
#      against this build's libstrata, then a 2-rank all_reduce from another folder) and every
#      torch entry with that environment's Python (label torch2), plus the drop-in's entries that
#      need PyTorch 2 (nccl_dropin.torch_import; nccl_dropin.exports against the wheel's NCCL).
#
#   bash scripts/test-torch2.sh [RELEASE...]      RELEASE as scripts/torch-venvs.sh takes them
# Extra ctest arguments: TORCH2_CTEST_ARGS (e.g. "-R ops"). Exit status: ctest's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
strata_loopback_mpi
"$STRATA_ROOT/scripts/install-deps.sh"
bash "$STRATA_ROOT/scripts/torch-venvs.sh" "$@"

venvs=() dropin_python=""
while read -r release dir; do
  venvs+=("$dir")
  case "$release" in 2.11.*) dropin_python="$dir/bin/python" ;; esac
done < <(bash "$STRATA_ROOT/scripts/torch-venvs.sh" --print "$@")
[ -n "$dropin_python" ] || dropin_python="${venvs[0]}/bin/python"

strata_build
list=$(IFS=';'; echo "${venvs[*]}")
cmake -S "$STRATA_ROOT" -B "$BUILD_DIR" -DSTRATA_TORCH_VENVS="$list" \
  -DSTRATA_DROPIN_TORCH_PYTHON="$dropin_python" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
cd "$BUILD_DIR"
read -r -a extra <<< "${TORCH2_CTEST_ARGS:-}"
# The drop-in's entries that read the environments (registered only with a GPU-capable build).
rc=0
ctest --output-on-failure -R '^nccl_dropin\.(torch_import|exports)$' "${extra[@]}" || rc=1
ctest --output-on-failure -L torch2 "${extra[@]}" || rc=1
exit $rc
