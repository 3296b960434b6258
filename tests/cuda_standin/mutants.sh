#!/usr/bin/env bash
# tests/cuda_standin/mutants.sh: proof that the GPU tests, run against the CPU stand-in for CUDA,
# catch a missing synchronisation. Each mutant takes one wait out of the device path (a stream
# synchronisation, an event wait, a preload), rebuilds the stand-in build, and runs the entries
# that should notice, with injected delays, up to --tries times: the mutant is "caught" when an
# entry fails. The source is restored after each mutant (also on Ctrl-C), and the build rebuilt
# from it at the end. Not part of CI (each mutant relinks the tests: about a minute on 2 cores);
# its last results are in bench/results/2026-11-28-gpu-standin/.
#
#   bash tests/cuda_standin/mutants.sh [--build DIR] [--tries N] [--delay US] [NAME...]
#
#   --build DIR   a stand-in build (default build-standin/, made by scripts/gpu-standin.sh)
#   --tries N     runs of the entries per mutant (default 3)
#   --delay US    CUDA_STANDIN_DELAY_US (default 500)
#   NAME...       only these mutants (default all; --list prints them)
# Exit status: 0 when every mutant run was caught, 1 when one survived, 2 on a usage error.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build-standin"
tries=3
delay=500
only=()
list=0
while (($#)); do
  case "$1" in
    --build) build="${2:?}"; shift ;;
    --tries) tries="${2:?}"; shift ;;
    --delay) delay="${2:?}"; shift ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "mutants: unknown option $1" >&2; exit 2 ;;
    *) only+=("$1") ;;
  esac
  shift
done

# name | file | the line's text to delete (exact, once) | ctest regex of the entries to run
mutants=(
  "staged-slot-reuse|src/fabrics/staged/staged_fabric.cc|    if (k >= kSlots) STRATA_CUDA_CHECK(cudaStreamWaitEvent(down_, drained_[s], 0));|staged fabric"
  "staged-copy-down|src/fabrics/staged/staged_fabric.cc|        const cudaError_t rc = cudaEventSynchronize(filled_[s]);|staged fabric"
  "staged-copy-up|src/fabrics/staged/staged_fabric.cc|      const cudaError_t rc = cudaStreamSynchronize(st);|staged fabric"
  "staged-start|src/fabrics/staged/staged_fabric.cc|      STRATA_CUDA_CHECK(cudaStreamWaitEvent(down_, start_, 0));|mpi.device"
  "device-run-sync|src/core/device_side.cc|    const cudaError_t rc = cudaStreamSynchronize(d.stream);|mpi.device"
  "gate-wait-ready|src/gpu/stream_gate.cc|  STRATA_CUDA_CHECK(cudaEventSynchronize(t.ready));|progress thread|mpi.device"
  "nccl-finish|src/fabrics/nccl/nccl_fabric.cc|    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));|nccl fabric"
  "no-preload|src/core/device_side.cc|    STRATA_RETURN_IF_ERROR(gpu::preloadKernels());|mpi.device.np2$"
)
if ((list)); then
  for m in "${mutants[@]}"; do IFS='|' read -r name file _ <<<"$m"; echo "$name ($file)"; done
  exit 0
fi
[ -f "$build/build.ninja" ] || { echo "mutants: no stand-in build in $build (run scripts/gpu-standin.sh)" >&2; exit 2; }

backup=""
restore() {
  if [ -n "$backup" ] && [ -f "$backup" ]; then cp "$backup" "$root/$current" && rm -f "$backup"; fi
  backup=""
}
trap 'restore; exit 130' INT TERM
trap restore EXIT

# A declaration the mutation leaves unused must not stop the build: kept, assigned cudaSuccess.
mutate() {  # FILE LINE: deletes the line (it must occur exactly once)
  python3 - "$root/$1" "$2" <<'PYEOF'
import sys
path, line = sys.argv[1], sys.argv[2]
text = open(path).read()
lines = text.split("\n")
hits = [i for i, l in enumerate(lines) if l == line]
if len(hits) != 1:
    sys.exit("mutants: the line occurs %d times in %s (the code moved: update mutants.sh)" % (len(hits), path))
i = hits[0]
if "const cudaError_t rc =" in line:
    lines[i] = line.split("const cudaError_t rc =")[0] + "const cudaError_t rc = cudaSuccess;  // MUTANT"
else:
    lines[i] = "  // MUTANT: removed"
open(path, "w").write("\n".join(lines))
PYEOF
}

results=() status=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name file line regex <<<"$m"
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  current=$file
  backup=$(mktemp)
  cp "$root/$file" "$backup"
  if ! mutate "$file" "$line"; then status=1; results+=("$name: NOT APPLIED"); restore; continue; fi
  echo "=== mutant $name: $file without '${line#"${line%%[![:space:]]*}"}'"
  if ! cmake --build "$build" -j "$(nproc)" --target strata strata_gpu_unit_tests \
      strata_mpi_collectives >/tmp/mutants.build.log 2>&1; then
    tail -20 /tmp/mutants.build.log; results+=("$name: DID NOT BUILD"); status=1; restore; continue
  fi
  caught=0
  for ((t = 1; t <= tries && !caught; t++)); do
    if ! CUDA_STANDIN_DELAY_US=$delay ctest --test-dir "$build" -R "$regex" -LE torch \
        --timeout 120 -j "$(nproc)" >/tmp/mutants.run.log 2>&1; then
      caught=$t
      grep -E '^\s+[0-9]+ - ' /tmp/mutants.run.log | sed 's/^/    failed: /'
    fi
  done
  if ((caught)); then results+=("$name: caught (run $caught)"); else results+=("$name: SURVIVED $tries runs"); status=1; fi
  restore
done
echo "=== rebuilding from the restored source"
cmake --build "$build" -j "$(nproc)" --target strata strata_gpu_unit_tests strata_mpi_collectives \
  >/tmp/mutants.build.log 2>&1 || { tail -20 /tmp/mutants.build.log; status=1; }
printf '%s\n' "${results[@]}"
exit $status
