#!/bin/sh
# pip_install.sh VENV SOURCE BUILD PIP_BUILD: strata_torch installed as its users install it,
# into the environment VENV (pip's PyTorch 2: scripts/torch-venvs.sh), from the clone SOURCE,
# against the libstrata of the strata build folder BUILD (find_package(strata) through
# strata_DIR), with scikit-build-core's build folder PIP_BUILD kept so that a second run
# rebuilds only what changed. Then, from another folder and with no PYTHONPATH: import
# strata_torch (it must be the installed copy) and a 2-rank all_reduce under mpiexec.
# ctest's fixture torch-<release>.pip_install (tests/torch/CMakeLists.txt): the other entries
# of that PyTorch run the package installed here. Prints "pip_install: PASSED" on success.
set -eu
venv=$1 src=$2 build=$3 pipbuild=$4
py=$venv/bin/python
unset PYTHONPATH
"$py" -c "import torch" 2>/dev/null || { echo "pip_install: $py cannot import torch"; exit 77; }

# The installed package only: an earlier install is removed first, so nothing stale is tested.
"$py" -m pip uninstall -y -q strata-torch 2>/dev/null || true
"$py" -c "import strata_torch" 2>/dev/null &&
  { echo "pip_install: strata_torch still importable after pip uninstall"; exit 1; }
log=$pipbuild.log
mkdir -p "$(dirname "$pipbuild")"
start=$(date +%s)
if ! "$py" -m pip install --no-build-isolation --disable-pip-version-check \
     -C cmake.define.strata_DIR="$build" -C build-dir="$pipbuild" "$src" >"$log" 2>&1; then
  tail -40 "$log"
  echo "pip_install: pip install failed (log: $log)"
  exit 1
fi
echo "pip_install: pip install took $(($(date +%s) - start)) s"

elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
cd "$elsewhere"
"$py" - <<'PY'
import os, sys, sysconfig
import torch, strata_torch
where = os.path.realpath(strata_torch.__file__)
site = os.path.realpath(sysconfig.get_paths()["platlib"])
assert where.startswith(site + os.sep), f"strata_torch imported from {where}, not {site}"
print(f"pip_install: strata_torch from {os.path.dirname(where)}, torch {torch.__version__}")
PY
cat >allreduce.py <<'PY'
import torch, torch.distributed as dist, strata_torch
strata_torch.init()
rank, size = dist.get_rank(), dist.get_world_size()
assert dist.get_backend() == "strata", dist.get_backend()
# Small integers: every sum is exact in every dtype, bfloat16 included.
base = torch.arange(1000, dtype=torch.float64).remainder(64)
for dtype in (torch.float32, torch.bfloat16, torch.int64):
    t = base.mul(rank + 1).to(dtype)
    dist.all_reduce(t)
    want = base.mul(size * (size + 1) // 2).to(dtype)
    assert torch.equal(t, want), f"rank {rank}: all_reduce {dtype} wrong"
dist.destroy_process_group()
print(f"pip_install: rank {rank} of {size}: all_reduce exact")
PY
out=$(mpiexec --oversubscribe -n 2 "$py" allreduce.py 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep "pip_install:"
[ "$(echo "$out" | grep -c 'all_reduce exact')" = 2 ] || { echo "$out"; exit 1; }
echo "pip_install: PASSED"
