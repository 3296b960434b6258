#!/usr/bin/env bash
# scripts/gpu-check.sh: the GPU proof, run on a GPU machine that has CUDA (nvcc), CMake, ninja,
# a Python with PyTorch and NCCL (a pip wheel is fine), but no Open MPI and no package registry.
# What it needs beyond that travels with the working tree (see docs/gpu.md, "The GPU proof"):
#   .debs/         Debian 12 packages from scripts/gpu-debs.sh (Open MPI, hwloc, yaml-cpp, ...),
#                  unpacked under a prefix of their own, never over /
#   .nccl-tests/   NVIDIA's nccl-tests source (scripts/gpu-prepare.sh puts it there)
# Phases, in the order of what only a GPU shows; each is bounded in time (a cap, which every
# test inside it undercuts with its own timeout, so that a hang prints its stack into the log
# before the cap cuts the phase), logs into $OUT as it goes, and a failure never stops the
# phases after it:
#   build      strata with CUDA, NCCL from NCCL_HOME (found in the Python's site-packages when
#              unset), sm_90 only, the torch backend against this Python's PyTorch (its
#              extension builds in the background while unit runs); nccl-tests builds beside it
#   unit       strata-info; ctest's single-process GPU entries: kernels, stream gate, nccl and
#              staged fabrics, strata-kernels --device (each at most 60 s)
#   torch      torch.cuda.np2: CUDA tensors on two ranks sharing the GPU (watchdog 90 s, ctest
#              timeout 120 s; its sections stream into the log as they start)
#   ptnccl     PyTorch's ProcessGroupNCCL under the drop-in (the id through its TCPStore), two
#              ranks on the GPU started by tools/strata-run: collectives and a DDP step
#   mpi        mpi.device.* and the tools' MPI device entries: ranks sharing the one GPU (slow:
#              without MPS the processes take turns on it; each entry at most 100 s)
#   nccltests  nccl-tests' *_perf -g 1 -c 1 with the real NCCL and under strata's drop-in
#   bench      bench/gpu: kernels against a device copy, staged device allreduce against host
#   torchcpu   (not in the default list) the torch backend's CPU entries under this machine's
#              PyTorch, for a PyTorch that CI does not have
# Output ($OUT, default gpu-check-out/; at most 8 files so the device tool brings all back):
#   summary.txt env.txt build.log unit.log torch.log mpi.log nccltests.log bench.tgz
#
#   bash scripts/gpu-check.sh [--phases LIST] [--budget SECONDS] [--build DIR]
#
#   --phases   comma-separated subset of: build,unit,torch,ptnccl,mpi,nccltests,bench,torchcpu
#              (default all but torchcpu); the later phases need a build, made now or earlier
#              in --build
#   --budget   seconds for the whole run (default 480); a phase that would start with under
#              20 s left is reported as not run; over 480 stretches each phase's cap alike
#   --build    strata's build folder (default build-gpu/ in the repository)
# Exit status: 0 when every phase that ran passed, 1 otherwise, 2 on a usage error.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
phases="build,unit,torch,ptnccl,mpi,nccltests,bench"
budget=480
build="$root/build-gpu"
while (($#)); do
  case "$1" in
    --phases) phases="${2:?--phases needs a value}"; shift ;;
    --budget) budget="${2:?--budget needs a value}"; shift ;;
    --build) build="${2:?--build needs a value}"; shift ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "gpu-check: --budget takes whole seconds" >&2; exit 2; }
for p in ${phases//,/ }; do
  case "$p" in build|unit|nccltests|torch|mpi|bench|ptnccl) ;;
    *) echo "gpu-check: unknown phase '$p' (see --help)" >&2; exit 2 ;; esac
done
want_env=",$phases,"
want() { [[ "$want_env" == *",$1,"* ]]; }

t0=$(date +%s)
deadline=$((t0 + budget))
out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
note() { echo "gpu-check: [$(($(date +%s) - t0))s] $*" | tee -a "$summary"; }
overall=0

# phase NAME CAP LOG COMMAND...: runs COMMAND under a time limit (CAP seconds, or what is left of
# the budget) with its output appended to LOG, and records rc and time in the summary.
phase() {
  local name=$1 cap=$2 log=$3 left start rc
  shift 3
  # A budget over the default stretches every cap alike (a rehearsal on a small machine).
  ((budget > 480)) && cap=$((cap * budget / 480))
  left=$((deadline - $(date +%s) - 10))
  ((left < cap)) && cap=$left
  if ((cap < 20)); then
    note "$name: NOT RUN (budget spent)"; overall=1; return 1
  fi
  start=$(date +%s)
  echo "===== $name ($cap s at most): $*" >>"$log"
  # The phases are functions of this script: a child bash runs them (export -f below).
  timeout --kill-after=10 "$cap" bash -c '"$@"' phase "$@" >>"$log" 2>&1
  rc=$?
  local how="passed"
  # Without a GPU, a GPU phase's pass means: everything that needs no GPU held, and the GPU
  # entries reported skipped.
  ((gpu == 0)) && [[ "$name" =~ ^(unit|torch|mpi|bench|nccltests|ptnccl)$ ]] && how="checked without a GPU"
  ((rc == 124 || rc == 137)) && how="TIMED OUT after $cap s"
  ((rc != 0 && rc != 124 && rc != 137)) && how="FAILED (exit $rc)"
  note "$name: $how in $(($(date +%s) - start)) s"
  ((rc == 0)) || overall=1
  return $rc
}

# ---- the machine, and where CUDA, NCCL and Python are --------------------------------------
PY="${PYTHON:-$(command -v python3)}"
NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
CUDA_HOME="${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$NVCC")")")}"
if [ -z "${NCCL_HOME:-}" ]; then
  # The nvidia-nccl wheel keeps nccl.h and libnccl.so.2 under site-packages/nvidia/.../
  for sp in $("$PY" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    [ -d "$sp/nvidia" ] || continue
    h=$(find "$sp/nvidia" -maxdepth 4 -name nccl.h -path '*include*' 2>/dev/null | head -1)
    if [ -n "$h" ] && [ -e "$(dirname "$(dirname "$h")")/lib/libnccl.so.2" ]; then
      NCCL_HOME=$(dirname "$(dirname "$h")"); break
    fi
  done
  [ -z "${NCCL_HOME:-}" ] && [ -e "$CUDA_HOME/include/nccl.h" ] && NCCL_HOME=$CUDA_HOME
fi
export NCCL_HOME="${NCCL_HOME:-}" CUDA_HOME
{
  echo "date: $(date -u +%FT%TZ)"
  echo "strata commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "host: $(uname -srm), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB"
  grep -h PRETTY_NAME /etc/os-release 2>/dev/null
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -5
  echo "nvcc: $NVCC: $("$NVCC" --version 2>&1 | tail -1)"
  echo "g++: $(g++ --version 2>&1 | head -1)"
  echo "cmake: $(cmake --version 2>&1 | head -1); ninja $(ninja --version 2>&1)"
  echo "python: $PY: $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())' 2>&1 | tail -1)"
  echo "NCCL_HOME: ${NCCL_HOME:-not found}"
  grep -h '#define NCCL_\(MAJOR\|MINOR\|PATCH\)' "$NCCL_HOME/include/nccl.h" 2>/dev/null | tr '\n' ' '
  echo; echo "/dev/shm: $(df -h /dev/shm 2>&1 | tail -1)"
  echo "nccl-tests: $(cat "$root/.nccl-tests/COMMIT" 2>/dev/null || echo 'not carried')"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"
# Without a GPU (a rehearsal, scripts/gpu-rehearse.sh) every phase still runs as far as it can:
# the GPU entries must then report skipped (never passed), nccl-tests is built but not run.
gpu=1
nvidia-smi -L >/dev/null 2>&1 || gpu=0
# The multigpu entries need a GPU per process: left out (not counted as skipped) on one GPU.
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
multi=multigpu
((gpus >= 2)) && multi=no-such-label
export gpu multi
note "environment read$( ((gpu)) || echo '; NO GPU: the GPU phases check only what runs without one')"

# ---- Open MPI and the other Debian packages, unpacked under $deps --------------------------
deps="${STRATA_DEPS:-/opt/strata-deps}"
if [ ! -x "$deps/usr/bin/orterun" ]; then
  if ls "$root"/.debs/*.deb >/dev/null 2>&1; then
    mkdir -p "$deps"
    for f in "$root"/.debs/*.deb; do dpkg -x "$f" "$deps"; done
  else
    note "no .debs/ and no $deps: run scripts/gpu-prepare.sh where apt works, and carry .debs"
  fi
fi
lib="$deps/usr/lib/x86_64-linux-gnu"
# Open MPI relocates under OPAL_PREFIX; pkg-config's .pc files say /usr, so a sysroot maps them.
export OPAL_PREFIX="$deps/usr" PATH="$deps/usr/bin:$PATH"
export LD_LIBRARY_PATH="$lib:$lib/openmpi/lib${NCCL_HOME:+:$NCCL_HOME/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$deps" PKG_CONFIG_LIBDIR="$lib/pkgconfig:$deps/usr/share/pkgconfig"
# UCX (the ucx fabric of unique-id communicators, e.g. the drop-in's) loads its transport
# modules from a directory compiled in as /usr/...: point it at the unpacked one.
export UCX_MODULE_DIR="$lib/ucx"
# PMIx (Debian's Open MPI uses the system one) has no relocation variable; its plugins' folder
# is an MCA parameter.
export PMIX_MCA_mca_base_component_path="$lib/pmix2/lib/pmix"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_rmaps_base_oversubscribe=1
# One node: the isolated launcher, which needs no ssh or rsh (a bare machine has neither, and
# Open MPI's default launcher refuses to start without one; found by gpu-rehearse.sh).
export OMPI_MCA_plm=isolated
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export MPIEXEC="$deps/usr/bin/mpiexec.openmpi"
# strata loads NCCL at run time: the wheel's, not whatever the loader finds first.
[ -n "$NCCL_HOME" ] && export STRATA_NCCL_REAL_LIB="$NCCL_HOME/lib/libnccl.so.2"
"$MPIEXEC" --version 2>&1 | head -1 | tee -a "$out/env.txt"

# ---- nccl-tests: built in the background while strata builds --------------------------------
nt="/tmp/gpu-check-nccl-tests"
if want nccltests; then
  if [ -f "$root/.nccl-tests/src/Makefile" ] && [ -n "$NCCL_HOME" ]; then
    rm -rf "$nt" "$nt.nccl"; cp -r "$root/.nccl-tests" "$nt"
    rm -f "$nt.rc"
    # nccl-tests links with -lnccl; a wheel ships only libnccl.so.2: a folder of links to it.
    mkdir -p "$nt.nccl/lib"
    ln -s "$NCCL_HOME/include" "$nt.nccl/include"
    ln -s "$NCCL_HOME/lib/libnccl.so.2" "$nt.nccl/lib/libnccl.so"
    (nice make -C "$nt" -j "$(nproc)" MPI=0 CUDA_HOME="$CUDA_HOME" NCCL_HOME="$nt.nccl" \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build >"$nt.build.log" 2>&1
     echo $? >"$nt.rc") &
  else
    note "nccltests: no .nccl-tests/ source or no NCCL_HOME: nccl-tests will not run"
  fi
fi

# ---- build ---------------------------------------------------------------------------------
# Debian's .pc files leave the multiarch include folder (hwloc's autogen/config.h) to the
# compiler's default search path, which does not look under $deps: named here. (The first GPU
# machine had Ubuntu's hwloc headers there, which hid it; gpu-rehearse.sh's bare root did not.)
configure() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTRATA_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCUDAToolkit_ROOT="$CUDA_HOME" -DCMAKE_PREFIX_PATH="$deps/usr;$lib/cmake" \
    -DMPIEXEC_EXECUTABLE="$MPIEXEC" -DMPI_C_COMPILER="$deps/usr/bin/mpicc.openmpi" \
    -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" \
    -DCMAKE_C_FLAGS="-isystem $deps/usr/include/x86_64-linux-gnu" \
    -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include/x86_64-linux-gnu" "$@"
}
# What the GPU phases run: the GPU unit tests, the MPI collectives program, the tools bench/gpu
# uses and the drop-in. No host unit tests, fuzzers or sanitizers (CI runs those). The torch
# backend is configured in the same tree when this Python's PyTorch is found (its extension
# builds in the background while the tests run); if PyTorch's CMake package breaks the
# configure step, the tree is configured again without it, and the torch phase says why.
build_strata() {
  local tdir pbdir
  tdir="$("$PY" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null)/Torch"
  pbdir="$("$PY" -m pybind11 --cmakedir 2>/dev/null)"
  # (A distribution's PyTorch, e.g. Debian's, keeps its CMake package where CMake looks anyway.)
  local hints=()
  [ -d "$tdir" ] && hints+=(-DTorch_DIR="$tdir")
  [ -n "$pbdir" ] && hints+=(-Dpybind11_DIR="$pbdir")
  if { want torch || want torchcpu; } && "$PY" -c 'import torch' 2>/dev/null; then
    configure -DSTRATA_WITH_TORCH=ON -DPython3_EXECUTABLE="$PY" -DSTRATA_TORCH_PYTHON="$PY" \
      "${hints[@]}" ||
      { echo "gpu-check: configuring with PyTorch failed: configuring without it" |
          tee "$build.torch-off"; rm -rf "$build"; }
  else
    echo "gpu-check: $PY cannot import torch (or the torch phase is not wanted)" >"$build.torch-off"
  fi
  [ -f "$build/CMakeCache.txt" ] || configure -DSTRATA_WITH_TORCH=OFF || return 1
  # -k 0: one target that fails to build does not keep the others from the later phases.
  cmake --build "$build" -j "$(nproc)" --target strata strata_gpu_unit_tests \
    strata_mpi_collectives strata_mpi_capture strata-kernels strata-perf strata-info strata_nccl_dropin -- -k 0
}
export root build deps lib NVCC CUDA_HOME PY out nt want_env
export -f configure build_strata want
built=0
rm -f "$build.torch-off" "$build.torch.rc"
if want build; then
  phase build 300 "$out/build.log" build_strata
fi
# The later phases run on what was built, even when some target failed.
[ -x "$build/tests/gpu/strata_gpu_unit_tests" ] && [ -x "$build/tools/strata-perf" ] && built=1
# The torch extension compiles while the unit phase runs.
if { want torch || want torchcpu; } && ((built)) && [ ! -f "$build.torch-off" ]; then
  (nice cmake --build "$build" -j "$(nproc)" --target strata_torch_ext >"$build.torch.log" 2>&1
   echo $? >"$build.torch.rc") &
fi

# ---- tests ---------------------------------------------------------------------------------
gpu_unit() {
  "$build/tools/strata-info" || return 1
  # One process each: the kernels, the stream gate, the nccl and staged fabrics, the tools
  # (each entry's TIMEOUT is 60 s, under the phase's cap).
  run_ctest -L gpu -LE "mpi|torch|$multi" -j 4
}
gpu_mpi() {
  # Several ranks share the GPU in each entry; without MPS they take turns on it (docs/gpu.md),
  # so these are the slowest entries, and run after everything faster (each entry's TIMEOUT
  # is 100 s and its watchdog 80 s, under the phase's cap).
  run_ctest -L gpu -L mpi -LE "torch|$multi" -j 3
}
# run_ctest ARGS...: ctest on the build; a test skipped on a GPU machine is a failure of the
# proof, never a pass.
run_ctest() {
  local log rc
  log=$(mktemp)
  ctest --test-dir "$build" --output-on-failure "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  if ((gpu)) && grep -q -- '\*\*\*Skipped\|(Skipped)\|Not Run' "$log"; then
    echo "gpu-check: skipped tests count as failures on a GPU machine"; rc=1
  fi
  if ((gpu == 0)) && [[ " $* " == *" -L gpu "* ]] && grep -q ' Passed ' "$log"; then
    echo "gpu-check: a GPU entry passed on a machine without a GPU"; rc=1
  fi
  rm -f "$log"
  return "$rc"
}
export -f gpu_unit gpu_mpi run_ctest

# ---- bench ---------------------------------------------------------------------------------
label="$(date +%F)-gpu"
bench_gpu() {
  bash "$root/bench/gpu" --build "$build" --label "$label"
  local rc=$?
  # 77: bench/gpu found no GPU, as it must where there is none.
  ((gpu == 0 && rc == 77)) && { echo "no GPU: bench/gpu refused, as it must"; rc=0; }
  tar -czf "$out/bench.tgz" -C "$root/bench/results" "$label" 2>/dev/null
  return $rc
}
export label
export -f bench_gpu

# ---- nccl-tests, with the real NCCL and under the drop-in ----------------------------------
nccl_tests() {
  [ -f "$nt.build.log" ] || { echo "nccl-tests was not built"; return 1; }
  while [ ! -f "$nt.rc" ]; do sleep 1; done
  [ "$(cat "$nt.rc")" = 0 ] || { tail -40 "$nt.build.log"; return 1; }
  echo "nccl-tests built: $(grep -c Compiling "$nt.build.log") files compiled"
  ((gpu)) || { echo "no GPU: nccl-tests built, not run"; return 0; }
  local dropin="$build/nccl_dropin/libstrata_nccl.so" rc=0 runs=()
  [ -f "$dropin" ] || { echo "no $dropin"; return 1; }
  for t in float half bfloat16; do runs+=("all_reduce_perf -d $t"); done
  for p in all_gather_perf reduce_scatter_perf broadcast_perf sendrecv_perf; do runs+=("$p -d float"); done
  for r in "${runs[@]}"; do
    for how in nccl strata; do
      local pre=() text wrong
      [ "$how" = strata ] && pre=(-x LD_PRELOAD="$dropin")
      echo "----- $how: $r -b 8 -e 128M -f 2 -g 1 -c 1"
      # shellcheck disable=SC2086
      text=$(timeout 60 "$MPIEXEC" -n 1 "${pre[@]}" -x NCCL_DEBUG=INFO -x STRATA_NCCL_REAL_LIB \
        "$nt/build/"$r -b 8 -e 128M -f 2 -g 1 -c 1 2>&1) || { echo "exit $?"; rc=1; }
      echo "$text" | grep -v '^#\s*$' | grep -E '^ |^#|NCCL INFO (strata|NCCL version)|rror' | head -60
      wrong=$(echo "$text" | awk '/Out of bounds values/ {print $7}')
      [ "$wrong" = "0" ] || { echo "!!!!! $how $r: wrong values: ${wrong:-none reported}"; rc=1; }
    done
  done
  return $rc
}
export -f nccl_tests

# ---- torch: strata_torch against this machine's PyTorch, on CUDA tensors (and CPU ones) -----
# Waits for the extension that builds in the background (its time counts in the phase).
torch_built() {
  [ -f "$build.torch-off" ] && { cat "$build.torch-off"; return 1; }
  while [ ! -f "$build.torch.rc" ]; do sleep 1; done
  cat "$build.torch.log"
  [ "$(cat "$build.torch.rc")" = 0 ]
}
torch_cuda() {
  torch_built || return 1
  # -V: the test's section lines reach the log as they are printed, so a cut run shows where
  # each rank was.
  run_ctest -V -L torch -L gpu
}
torch_cpu() {
  torch_built || return 1
  run_ctest -L torch -LE gpu -j 2
}
export -f torch_built torch_cuda torch_cpu

# ---- PyTorch's ProcessGroupNCCL under the drop-in ------------------------------------------
# Two ranks on the one GPU, started by tools/strata-run (no MPI): ProcessGroupNCCL passes the id
# through its TCPStore; NCCL_DEBUG=INFO must show strata serving the calls.
pt_nccl() {
  local dropin="$build/nccl_dropin/libstrata_nccl.so" text rc
  [ -f "$dropin" ] || { echo "no $dropin"; return 1; }
  ((gpu)) || { echo "no GPU: ProcessGroupNCCL not run"; return 0; }
  text=$("$PY" "$root/tools/strata-run" -n 2 --timeout 70 -- env LD_PRELOAD="$dropin" \
    NCCL_DEBUG=INFO STRATA_TIMEOUT=60 "$PY" "$root/tests/torch/pg_nccl_dropin.py" 2>&1)
  rc=$?
  echo "$text" | grep -vE 'NCCL INFO (Channel|Connected|Ring|Trees|comm 0x)' | tail -80
  grep -q "NCCL INFO strata .* serves NCCL's API" <<<"$text" || { echo "strata did not serve"; rc=1; }
  [ "$(grep -c 'pg_nccl_dropin rank .: PASSED' <<<"$text")" = 2 ] || rc=1
  return $rc
}
export -f pt_nccl

# ---- the phases, what only a GPU shows first ------------------------------------------------
# (The first GPU run went build, tests, bench, ...: two ranks sharing the GPU in mpi.device.np2
# and in the benchmark's device allreduce took the whole budget, and the kernels' unit tests
# never ran; the second had torch's CUDA entry cut with no traceback. Single-process checks
# come first, then the CUDA tensors of PyTorch, then the slow multi-rank ones.)
if ((built)); then
  want unit && phase unit 90 "$out/unit.log" gpu_unit
  want torch && phase torch 180 "$out/torch.log" torch_cuda
  want ptnccl && phase ptnccl 90 "$out/torch.log" pt_nccl
  want mpi && phase mpi 200 "$out/mpi.log" gpu_mpi
  want nccltests && phase nccltests 120 "$out/nccltests.log" nccl_tests
  if want bench; then
    phase bench 120 "$out/bench.log.txt" bench_gpu
    # bench's own log travels inside the tarball (8 files at most come back).
    mkdir -p "$root/bench/results/$label"
    mv "$out/bench.log.txt" "$root/bench/results/$label/bench-gpu.log"
    tar -czf "$out/bench.tgz" -C "$root/bench/results" "$label"
  fi
  want torchcpu && phase torchcpu 200 "$out/torch.log" torch_cpu
fi

note "total $(($(date +%s) - t0)) s; $( ((overall == 0)) && echo 'every phase that ran passed' || echo 'SOME PHASES FAILED OR DID NOT RUN')"
exit $overall
