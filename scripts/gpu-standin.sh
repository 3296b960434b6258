#!/usr/bin/env bash
# scripts/gpu-standin.sh: strata's GPU tests on CPUs, against the CPU stand-in for CUDA
# (tests/cuda_standin; docs/gpu.md, "The CPU stand-in"). Builds the STRATA_CUDA_STANDIN=ON
# configuration in a folder of its own and runs every GPU entry that needs no PyTorch: the GPU
# unit tests, mpi.device.* and the tools' device entries (ctest -L gpu -LE 'torch|multigpu'). CI
# runs it.
# It exits 0 only when every entry passed: a skipped entry, or no entry at all, is a failure.
#
#   bash scripts/gpu-standin.sh [--build DIR] [--delay US] [--repeat N] [CTEST_ARGS...]
#
#   --build DIR   the build folder (default build-standin/ in the repository)
#   --delay US    CUDA_STANDIN_DELAY_US for the tests (default 500): about one queued operation
#                 in four waits up to US microseconds at random before it starts, so that a
#                 missing synchronisation shows; 0 = none. Each process prints its seed, and
#                 CUDA_STANDIN_SEED=N set here repeats those draws
#   --repeat N    run each entry up to N times, stopping at its first failure (more schedules)
#   CTEST_ARGS    further ctest arguments, e.g. -R 'staged fabric'
#
# CUDA's runtime and NVTX headers and nccl.h come from CUDA_HOME or /usr/local/cuda; without a
# toolkit, CUDA 13.0's and NCCL 2.28.9's wheels (nvidia-cuda-runtime, -crt, -cccl, nvidia-nvtx,
# nvidia-nccl-cu13: what the GPU machine has) are fetched once from PyPI and their
# headers kept in ${STRATA_CACHE:-~/.cache/strata}/cuda-headers. Nothing of them is linked: the
# stand-in is the runtime.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
build="$STRATA_ROOT/build-standin"
delay=500
repeat=1
ctest_args=()
while (($#)); do
  case "$1" in
    --build) build="${2:?--build needs a folder}"; shift ;;
    --delay) delay="${2:?--delay needs microseconds}"; shift ;;
    --repeat) repeat="${2:?--repeat needs a count}"; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done
[[ "$delay" =~ ^[0-9]+$ ]] || { echo "gpu-standin: --delay takes whole microseconds" >&2; exit 2; }
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "gpu-standin: --repeat takes a count" >&2; exit 2; }

# ---- headers -------------------------------------------------------------------------------
headers=""
for dir in "${CUDA_HOME:+$CUDA_HOME/include}" /usr/local/cuda/include; do
  if [ -n "$dir" ] && [ -f "$dir/cuda_runtime.h" ] && [ -f "$dir/nccl.h" ] &&
     [ -f "$dir/nvtx3/nvToolsExt.h" ]; then
    headers="$dir"; break
  fi
done
if [ -z "$headers" ]; then
  headers="${STRATA_CACHE:-$HOME/.cache/strata}/cuda-headers"
  if [ ! -f "$headers/.complete" ]; then
    echo "gpu-standin: no CUDA toolkit headers here: fetching them from PyPI's wheels"
    python3 -m pip --version >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip; }
    wheels=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --dest "$wheels" \
      nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 \
      nvidia-nvtx==13.0.85 nvidia-nccl-cu13==2.28.9
    rm -rf "$headers"; mkdir -p "$headers"
    for w in "$wheels"/*.whl; do
      python3 - "$w" "$headers" <<'PYEOF'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        marker = "/include/"
        if marker in name and not name.endswith("/"):
            target = out + "/" + name.split(marker, 1)[1]
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as dst:
                dst.write(src.read())
PYEOF
    done
    rm -rf "$wheels"
    touch "$headers/.complete"
  fi
fi
echo "gpu-standin: CUDA and NCCL headers from $headers"

# ---- build ---------------------------------------------------------------------------------
"$STRATA_ROOT/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  STRATA_CUDA_HEADERS="$headers" cmake -S "$STRATA_ROOT" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_CUDA_STANDIN=ON -DSTRATA_WITH_TORCH=OFF \
    -DSTRATA_BUILD_TESTS=ON
fi
# What the GPU entries run, and nothing else (the host suite is scripts/test.sh's).
cmake --build "$build" -j "$(nproc)" --target strata strata_gpu_unit_tests \
  strata_mpi_collectives strata_mpi_capture strata-kernels strata-perf strata-info

# ---- tests ---------------------------------------------------------------------------------
strata_loopback_mpi
export CUDA_STANDIN_DELAY_US="$delay"
"$build/tools/strata-info" | sed -n '1,6p'
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
# Not torch.cuda.* (PyTorch's own CUDA) nor the multigpu entries (one NCCL group over several
# GPUs: the stand-in has one GPU, and its NCCL one member).
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L gpu -LE 'torch|multigpu' \
  --repeat "until-fail:$repeat" "${ctest_args[@]}" 2>&1 | tee "$log" || rc=$?
total=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
if grep -qE '\*\*\*Skipped|\(Skipped\)|Not Run|No tests were found' "$log"; then
  echo "gpu-standin: FAILED: an entry was skipped or not run (the stand-in is a GPU: none may skip)"
  rc=1
fi
if [ -z "$total" ] || [ "$total" -eq 0 ]; then
  echo "gpu-standin: FAILED: no GPU entry ran"
  rc=1
fi
echo "gpu-standin: ${total:-0} GPU entries against the stand-in (delays up to $delay us): $([ $rc = 0 ] && echo passed || echo FAILED)"
exit $rc
