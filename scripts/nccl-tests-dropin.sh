#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests against the stock NCCL (MPI=1), then runs all_reduce_perf with
# results checked (-c 1) under strata's drop-in (LD_PRELOAD=libstrata_nccl.so) for float, half
# and bfloat16: the issue's acceptance run on a GPU machine. Without a GPU the build is still
# checked and the run reports that there is no GPU.
#
#   bash scripts/nccl-tests-dropin.sh NCCL_TESTS_CHECKOUT [BUILD_DIR] [-- mpirun arguments]
#
# NCCL_TESTS_CHECKOUT: a clone of https://github.com/NVIDIA/nccl-tests. BUILD_DIR: strata's
# build tree (default build/). NVCC_GENCODE chooses the GPU code nccl-tests builds (default
# sm_90 only, to keep the build short).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src=${1:?usage: nccl-tests-dropin.sh NCCL_TESTS_CHECKOUT [BUILD_DIR] [-- mpirun args]}
shift
build="$root/build"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
dropin="$build/nccl_dropin/libstrata_nccl.so"
[ -f "$dropin" ] || { echo "nccl-tests-dropin: no $dropin (build strata with CUDA and NCCL)" >&2; exit 1; }
cuda=${CUDA_HOME:-/usr/local/cuda}
nccl=${NCCL_HOME:-$cuda}
# Open MPI keeps include/ and lib/ under one prefix (Debian: /usr/lib/x86_64-linux-gnu/openmpi).
mpi_home=${MPI_HOME:-$(dirname "$(mpicc --showme:incdirs | tr " " "\n" | head -1)")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/nccl-tests"
echo "nccl-tests-dropin: building $(git -C "$src" describe --always 2>/dev/null || echo nccl-tests) against $nccl"
make -C "$work/nccl-tests" -j"$(nproc)" MPI=1 MPI_HOME="$mpi_home" CUDA_HOME="$cuda" \
  NCCL_HOME="$nccl" NVCC_GENCODE="${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}" \
  src.build >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
perf="$work/nccl-tests/build/all_reduce_perf"
echo "nccl-tests-dropin: built $perf; it needs: $(ldd "$perf" | grep -o 'libnccl[^ ]*' | head -1)"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "nccl-tests-dropin: no GPU here: the build is checked, the run is not"
  exit 0
fi
status=0
for type in float half bfloat16; do
  out=$(mpirun "${@:--np 1}" -x LD_PRELOAD="$dropin" -x NCCL_DEBUG=INFO \
    "$perf" -b 8 -e 64M -f 4 -c 1 -d "$type" 2>&1) || status=1
  echo "$out" | grep -E "NCCL INFO strata|Out of bounds|Avg bus" || true
  wrong=$(echo "$out" | awk '/Out of bounds values/ {print $7}')
  [ "$wrong" = "0" ] || { echo "nccl-tests-dropin: $type: wrong values: ${wrong:-none reported}"; status=1; }
done
exit $status
