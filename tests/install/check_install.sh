#!/usr/bin/env bash
# Installs the build into a temporary prefix, then configures, builds and runs a consumer that
# uses find_package(strata). Arguments: the build directory and the source directory.
set -euo pipefail
build="$1" src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/strata/strata.h"
test -f "$work/prefix/include/strata/strata_mpi.h"
ls "$work"/prefix/lib*/libstrata.so* >/dev/null
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$(dirname "$(ls "$work"/prefix/lib*/libstrata.so | head -1)")" "$work/consumer/consumer"

# The torch backend, when the build has it: importable from the prefix with PYTHONPATH alone
# (its extension finds libstrata.so by its RUNPATH), and working under mpiexec.
pkg="$work/prefix/lib/python3/dist-packages"
if [ -d "$build/python/strata_torch" ]; then
  test -f "$pkg/strata_torch/__init__.py"
  test -f "$pkg/strata_torch/hooks.py"
  ls "$pkg"/strata_torch/_C*.so >/dev/null
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  out=$(cd "$work" && env -u LD_LIBRARY_PATH PYTHONPATH="$pkg" mpiexec --oversubscribe -n 2 \
    /usr/bin/python3 -c '
import strata_torch, torch, torch.distributed as dist
strata_torch.init()
t = torch.full((5,), float(dist.get_rank() + 1))
dist.all_reduce(t)
assert strata_torch._C.__file__.startswith("'"$pkg"'"), strata_torch._C.__file__
print("installed strata_torch: allreduce", t.tolist())')
  echo "$out"
  grep -q "allreduce \[3.0, 3.0, 3.0, 3.0, 3.0\]" <<<"$out"
fi

# strata's NCCL drop-in, when the build has the GPU parts: installed beside libstrata.so, with
# NCCL's soname, exporting NCCL's API, and loadable from the prefix alone (RUNPATH $ORIGIN).
if [ -f "$build/nccl_dropin/libstrata_nccl.so" ]; then
  dropin=$(ls "$work"/prefix/lib*/libstrata_nccl.so)
  readelf -d "$dropin" | grep -q "SONAME.*\[libnccl.so.2\]"
  nm -D --defined-only "$dropin" | grep -qw ncclAllReduce
  env -u LD_LIBRARY_PATH /usr/bin/python3 -c "import ctypes; ctypes.CDLL('$dropin').ncclGetVersion" \
    || { echo "FAIL: the installed drop-in does not load from the prefix"; exit 1; }
  echo "installed libstrata_nccl.so: soname libnccl.so.2, loads from the prefix"
fi
