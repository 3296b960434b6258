#!/usr/bin/env bash
# Run on a GPU machine that has CUDA, NCCL, CMake and ninja but no Open MPI (the device tool's):
# unpacks the Debian packages scripts/gpu-debs.sh put in .debs/ under a prefix of their own
# (never over /), builds strata against them, runs the GPU tests and, with --bench, bench/gpu.
# Logs and results go to $OUT when it is set (the device tool brings that folder back).
#
#   bash scripts/gpu-check.sh [--bench] [--build DIR] [--torch PYTHON]
#
# --torch PYTHON: also build the torch.distributed backend against the PyTorch of PYTHON (a
# pip venv's interpreter: Torch_DIR, pybind11 and the tests' interpreter come from it), so
# that `ctest -L gpu` runs tests/torch/test_cuda.py too (docs/torch.md).
#
# NCCL outside /usr/local/cuda: set NCCL_HOME (e.g. the nvidia-nccl pip wheel's nvidia/nccl).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench=0
build="$root/build-gpu"
torch_args=()
while (($#)); do
  case "$1" in
    --bench) bench=1 ;;
    --build) build="$2"; shift ;;
    --torch)
      py="$2"; shift
      torch_dir="$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "share", "cmake", "Torch"))')"
      torch_args=(-DSTRATA_WITH_TORCH=ON -DPython3_EXECUTABLE="$py" -DTorch_DIR="$torch_dir"
        -DSTRATA_TORCH_PYTHON="$py")
      if pb="$("$py" -m pybind11 --cmakedir 2>/dev/null)"; then torch_args+=(-Dpybind11_DIR="$pb"); fi
      ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out"
deps="${STRATA_DEPS:-/opt/strata-deps}"  # where the packages are unpacked
if [ ! -x "$deps/usr/bin/orterun" ]; then
  ls "$root"/.debs/*.deb >/dev/null 2>&1 || { echo "gpu-check: no .debs (run scripts/gpu-debs.sh)" >&2; exit 1; }
  mkdir -p "$deps"
  for f in "$root"/.debs/*.deb; do dpkg -x "$f" "$deps"; done
fi
lib="$deps/usr/lib/x86_64-linux-gnu"
# Open MPI relocates under OPAL_PREFIX; pkg-config's .pc files say /usr, so a sysroot maps them.
export OPAL_PREFIX="$deps/usr" PATH="$deps/usr/bin:$PATH"
export LD_LIBRARY_PATH="$lib:$lib/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$deps" PKG_CONFIG_LIBDIR="$lib/pkgconfig:$deps/usr/share/pkgconfig"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_rmaps_base_oversubscribe=1
export MPIEXEC="$deps/usr/bin/mpiexec.openmpi"
{
  nvidia-smi -L || true
  "$MPIEXEC" --version | head -1
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$deps/usr;$lib/cmake" -DMPIEXEC_EXECUTABLE="$MPIEXEC" \
    -DMPI_C_COMPILER="$deps/usr/bin/mpicc.openmpi" -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" \
    "${torch_args[@]}"
  cmake --build "$build" -j "$(nproc)"
} 2>&1 | tee "$out/build.log"
set +e
ctest --test-dir "$build" -L gpu --output-on-failure 2>&1 | tee "$out/ctest-gpu.log"
rc=${PIPESTATUS[0]}
ctest --test-dir "$build" -L unit -j "$(nproc)" 2>&1 | tail -5 | tee "$out/ctest-unit.log"
if ((bench)); then
  bash "$root/bench/gpu" --build "$build" 2>&1 | tee "$out/bench.log"
  cp -r "$root"/bench/results/*-gpu "$out/" 2>/dev/null
fi
exit "$rc"
