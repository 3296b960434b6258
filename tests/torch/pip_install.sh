#!/bin/sh
# pip_install.sh [--along] VENV SOURCE BUILD PIP_BUILD
# strata_torch installed as its users install it (pip install --no-build-isolation), into the
# environment VENV (pip's PyTorch 2: scripts/torch-venvs.sh), from the clone SOURCE, with
# scikit-build-core's build folder PIP_BUILD kept so that a second run rebuilds only what
# changed. Then, from another folder and with no PYTHONPATH of the caller's: import
# strata_torch (it must be the copy just installed, loading the libstrata expected) and an
# exact 2-rank all_reduce under mpiexec.
#   default   against the libstrata of the strata build folder BUILD (find_package(strata)
#             through strata_DIR), installed into VENV: ctest's fixture
#             torch-<release>.pip_install, whose package the other entries of that PyTorch run
#   --along   no strata_DIR: pip builds libstrata along from SOURCE and puts it inside the
#             package (what a fresh clone gets); the wheel is installed into a folder of its
#             own (pip install --target), so VENV is left as it was (BUILD is unused)
# Prints "pip_install: PASSED" on success.
set -eu
along=0
[ "$1" = --along ] && { along=1; shift; }
venv=$1 src=$2 build=$3 pipbuild=$4
py=$venv/bin/python
unset PYTHONPATH
"$py" -c "import torch" 2>/dev/null || { echo "pip_install: $py cannot import torch"; exit 77; }

elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
log=$pipbuild.log
mkdir -p "$(dirname "$pipbuild")"
start=$(date +%s)
if [ $along = 1 ]; then
  # No strata_DIR, and no CMAKE_PREFIX_PATH that could lead CMake to an installed strata.
  if ! env -u CMAKE_PREFIX_PATH "$py" -m pip wheel -v --no-build-isolation --no-deps \
       --disable-pip-version-check -w "$elsewhere/wheel" -C build-dir="$pipbuild" "$src" \
       >"$log" 2>&1 ||
     ! "$py" -m pip install --no-deps --disable-pip-version-check --target "$elsewhere/site" \
       "$elsewhere"/wheel/*.whl >>"$log" 2>&1; then
    tail -40 "$log"
    echo "pip_install: pip wheel/install failed (log: $log)"
    exit 1
  fi
  grep -q "building it along" "$log" ||
    { echo "pip_install: CMake did not build libstrata along (log: $log)"; exit 1; }
  site=$elsewhere/site
  export PYTHONPATH="$site" STRATA_PIP_EXPECT_LIB="$site/strata_torch/libstrata.so.0"
else
  # The installed package only: an earlier install is removed first, so nothing stale is tested.
  "$py" -m pip uninstall -y -q strata-torch 2>/dev/null || true
  "$py" -c "import strata_torch" 2>/dev/null &&
    { echo "pip_install: strata_torch still importable after pip uninstall"; exit 1; }
  if ! "$py" -m pip install --no-build-isolation --disable-pip-version-check \
       -C cmake.define.strata_DIR="$build" -C build-dir="$pipbuild" "$src" >"$log" 2>&1; then
    tail -40 "$log"
    echo "pip_install: pip install failed (log: $log)"
    exit 1
  fi
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  export PYTHONPATH="" STRATA_PIP_EXPECT_LIB="$build/libstrata.so.0"
fi
echo "pip_install: pip took $(($(date +%s) - start)) s"
export STRATA_PIP_SITE="$site"

cd "$elsewhere"
"$py" - <<'PY'
import os
import torch, strata_torch
where = os.path.realpath(strata_torch.__file__)
site = os.path.realpath(os.environ["STRATA_PIP_SITE"])
assert where.startswith(site + os.sep), f"strata_torch imported from {where}, not {site}"
want = os.path.realpath(os.environ["STRATA_PIP_EXPECT_LIB"])
loaded = {os.path.realpath(line.split()[-1]) for line in open("/proc/self/maps")
          if "libstrata.so" in line}
assert loaded == {want}, f"libstrata loaded from {sorted(loaded)}, expected {want}"
print(f"pip_install: strata_torch from {os.path.dirname(where)}, libstrata {want}, "
      f"torch {torch.__version__}")
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
out=$(mpiexec --oversubscribe -n 2 -x PYTHONPATH "$py" allreduce.py 2>&1) ||
  { echo "$out"; exit 1; }
echo "$out" | grep "pip_install:"
[ "$(echo "$out" | grep -c 'all_reduce exact')" = 2 ] || { echo "$out"; exit 1; }
echo "pip_install: PASSED"
