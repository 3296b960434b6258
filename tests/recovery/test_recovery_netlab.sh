#!/usr/bin/env bash
# A recovery scenario in netlab (tests/recovery/CMakeLists.txt): two emulated hosts with network
# stacks of their own, joined by shaped TCP links, run recover_program under
# tools/strata-run --survive-loss --netlab.
#
#   test_recovery_netlab.sh SOURCE_DIR A,B WORK PROGRAM SCENARIO [PROGRAM ARGS...]
#
# SOURCE_DIR is the tree (tools/netlab, tools/strata-run); A ranks in host 1, B in host 2. The lab is named nrc<pid> (never a user's lab) and removed on
# exit, pass or fail. Where network namespaces cannot be made (not root, no CAP_NET_ADMIN) it
# exits 77, which ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
# Environment: PYTHON (default python3).
set -euo pipefail
src=${1:?usage: test_recovery_netlab.sh SOURCE_DIR A,B WORK PROGRAM SCENARIO [ARGS...]}
counts=${2:?} work=${3:?} program=${4:?}
shift 4
netlab="$src/tools/netlab"
lab="nrc$$"

skip() {
  echo "SKIPPED: $*"
  exit 77
}
source "$src/tests/netlab/netlab_probe.sh"
netlab_probe_or_skip

rm -rf "$work"
mkdir -p "$work"
cleanup() {
  "$netlab" down --name "$lab" >/dev/null 2>&1 || echo "WARNING: netlab down --name $lab failed" >&2
}
trap cleanup EXIT
if ! "$netlab" up --name "$lab" --hosts 2 --rate 1gbit >"$work/up.log" 2>&1; then
  cat "$work/up.log" >&2
  echo "netlab up failed" >&2
  exit 1
fi
IFS=, read -r a b <<<"$counts"
status=0
"${PYTHON:-python3}" "$src/tools/strata-run" --survive-loss --timeout 60 \
  --netlab "$lab" --hosts "h1:$a,h2:$b" -- "$program" "$@" --work "$work" --timeout 55 || status=$?
exit "$status"
