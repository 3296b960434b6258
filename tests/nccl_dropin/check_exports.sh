#!/usr/bin/env bash
# The drop-in exports every function each real NCCL found exports (nccl* and the pnccl*
# profiling names), and nothing of its own but the marker strataNcclDropIn. What it exports
# beyond a real library (one older than the generated list) is printed, not a failure: a call
# of it returns ncclInvalidUsage there.
#   check_exports.sh <libstrata_nccl.so> [--python PY] <real libnccl.so.2>...
# Real libraries that do not exist are passed over; --python adds the nvidia-nccl wheel's
# libnccl.so.2 of that interpreter's environment, when it has one. Exits 77 (skipped) only
# when no real library is found, 1 when a set differs or a symbol leaks, 0 otherwise.
set -euo pipefail
lib=$1
shift
reals=()
while [ $# -gt 0 ]; do
  case $1 in
    --python)
      py=$2
      shift 2
      if [ -n "$py" ] && [ -x "$py" ]; then
        wheel=$("$py" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
        [ -n "$wheel" ] && reals+=("$wheel")
      fi
      ;;
    *) reals+=("$1"); shift ;;
  esac
done

functions() {  # the defined functions of a library's dynamic symbol table, one a line
  readelf --dyn-syms --wide "$1" | awk '$4 == "FUNC" && $7 != "UND" { sub(/@.*/, "", $8); print $8 }' |
    sort -u
}

mine=$(functions "$lib")
status=0
leaked=$(grep -vE '^p?nccl' <<<"$mine" | grep -vx strataNcclDropIn || true)
if [ -n "$leaked" ]; then
  echo "FAIL: exported outside NCCL's API:"; echo "$leaked" | head; status=1
fi
mine=$(grep -E '^p?nccl' <<<"$mine")

declare -A seen=()
compared=0
for real in "${reals[@]}"; do
  [ -e "$real" ] || { echo "not found (passed over): $real"; continue; }
  key=$(readlink -f "$real")
  [ -z "${seen[$key]:-}" ] || continue
  seen[$key]=1
  theirs=$(functions "$real")
  version=$(grep -aoE 'NCCL version [0-9]+\.[0-9]+\.[0-9]+[+a-z0-9.]*' "$real" | head -n1 | tr -d '\0')
  missing=$(comm -13 <(echo "$mine") <(echo "$theirs"))
  extra=$(comm -23 <(echo "$mine") <(echo "$theirs"))
  echo "$real ($version): $(wc -l <<<"$theirs") functions; the drop-in exports" \
    "$(wc -l <<<"$mine"), $(grep -c . <<<"$missing" || true) of them missing," \
    "$(grep -c . <<<"$extra" || true) not in NCCL"
  if [ -n "$missing" ]; then
    echo "FAIL: the drop-in lacks (regenerate nccl_dropin/nccl_exports.inc, gen_exports.py):"
    echo "$missing" | sed 's/^/  /'
    status=1
  fi
  if [ -n "$extra" ]; then
    echo "beyond this NCCL (forwarded calls of these return ncclInvalidUsage here):"
    echo "$extra" | sed 's/^/  /'
  fi
  compared=$((compared + 1))
done
if [ "$compared" -eq 0 ]; then
  echo "SKIPPED: no real libnccl.so.2 found to compare with (${reals[*]:-none given})"
  exit 77
fi
exit $status
