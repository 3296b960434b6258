#!/usr/bin/env bash
# Builds strata's libFuzzer targets (tests/fuzz) with clang and runs each for a fixed time.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGETs default to all of them (topo_file plan_file nccl_xml
# nvsmi hwloc_xml values topo_json). Fails on any crash, leak, timeout (one input over 10 s),
# out-of-memory (2 GiB) or failed property; the input that did it is left in
# build-fuzz/artifacts/<target>/ and its path printed: copy it to tests/data/regressions/ with a
# case in tests/unit/test_regressions.cc once the reader is fixed.
#
# Each target starts from its seed corpus in tests/fuzz/corpus/<target>/ (kept small, in git);
# what it finds goes to build-fuzz/corpus/<target>/, so a later run goes on from there.
# Prints executions and coverage (libFuzzer's cov: edges and ft: features) per target.
# FUZZ_BUILD_DIR overrides the build directory (default build-fuzz).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

seconds=${1:-60}
shift || true
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(topo_file plan_file nccl_xml nvsmi hwloc_xml values topo_json)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}

# clang and its libFuzzer runtime, from Debian, when missing (as scripts/install-deps.sh does).
STRATA_EXTRA_PACKAGES="clang libclang-rt-dev" "$root/scripts/install-deps.sh"
for tool in clang clang++; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool not found (apt-get install clang)" >&2; exit 2; }
done

start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON \
    -DSTRATA_WITH_CUDA=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")
built=$(date +%s)
echo "fuzz.sh: built in $((built - start)) s"

# Leaks are failures; hwloc's and libxml2's own allocations at load are not strata's.
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=()
summary=()
for t in "${targets[@]}"; do
  seeds=$root/tests/fuzz/corpus/$t
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t/
  log=$build/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=("-dict=$root/tests/fuzz/$t.dict")
  echo "fuzz.sh: $t for $seconds s"
  rc=0
  # -max_len: longer inputs only slow the search down; hwloc's seeds are real exports (to 41 KB).
  maxlen=16384
  [ "$t" = hwloc_xml ] && maxlen=65536
  "$build/tests/fuzz/fuzz_$t" "$corpus" "$seeds" "${dict[@]}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len="$maxlen" -print_final_stats=1 \
    -artifact_prefix="$artifacts" >"$log" 2>&1 || rc=$?
  runs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$last")
  summary+=("$(printf '%-10s %10s %7s %7s  %s' "$t" "${runs:-?}" "${cov:-?}" "${ft:-?}" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")")")
  if [ "$rc" -ne 0 ]; then
    failed+=("$t")
    echo "fuzz.sh: $t FAILED (exit $rc); log $log" >&2
    grep -E 'ERROR: |SUMMARY: |fuzz property failed|Test unit written to' "$log" | head -20 >&2 || true
  fi
done

echo
echo "fuzz.sh: $seconds s per target; total $(($(date +%s) - start)) s (build $((built - start)) s)"
printf '%-10s %10s %7s %7s  %s\n' target executions cov ft result
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
