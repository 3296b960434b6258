#!/usr/bin/env bash
# What a user sees when strataCommInitMPI fails on a bad or missing STRATA_TOPO_FILE
# (strata-allreduce-demo, 2 ranks): strata reports the error once per rank, one WARN line from
# the reader that found it (the C boundary records it for strataGetLastError without logging it
# again); the program's own line comes on top. A missing file says "file not found", with
# strataSystemError, not "invalid argument".
# Arguments: MPIEXEC DEMO TOPOLOGY_DIR
set -uo pipefail
mpiexec=$1 demo=$2 topologies=$3
status=0
fail() { echo "FAIL: $*"; status=1; }

# check FILE WANT_RESULT WANT_MESSAGE
check() {
  local file=$1 want_result=$2 want_message=$3 out warns prints
  out=$(STRATA_TOPO_FILE=$file timeout 60 "$mpiexec" --oversubscribe -n 2 "$demo" 1000 2>&1)
  [ $? -ne 124 ] || fail "$file: init hung"
  warns=$(grep -c "STRATA WARN .*$(basename "$file")" <<<"$out")
  prints=$(grep -c "strataCommInitMPI(.*) failed: .*$(basename "$file")" <<<"$out")
  [ "$warns" = 2 ] || fail "$file: $warns STRATA WARN lines naming it for 2 ranks, expected 2"
  [ "$prints" = 2 ] || fail "$file: the program printed the error $prints times, expected 2"
  grep -q "failed: $want_result" <<<"$out" || fail "$file: result is not '$want_result'"
  grep -q "$want_message" <<<"$out" || fail "$file: no '$want_message'"
  ! grep -q "failed: invalid argument" <<<"$out" || [ "$want_result" = "invalid argument" ] ||
    fail "$file: reported as an invalid argument"
  [ "$status" = 0 ] || echo "$out"
}
check "$topologies/bad_size_mismatch.yaml" "invalid argument" "level sizes multiply to"
check "$topologies/does_not_exist.yaml" "unhandled system error" \
  "does_not_exist.yaml: file not found"
[ "$status" = 0 ] && echo "each init error reported once per rank, a missing file as not found"
exit $status
