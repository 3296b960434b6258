#!/usr/bin/env bash
# The drop-in exports every function the issue requires, and the gap between its exports and
# the functions the installed nccl.h declares is printed, so that it stays visible and
# deliberate. Exits 1 when a required function is missing or a symbol outside nccl* leaks.
#   check_exports.sh <libstrata_nccl.so> <nccl.h>
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
required="ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclCommInitRankConfig ncclCommInitAll
ncclCommSplit ncclCommFinalize ncclCommDestroy ncclCommAbort ncclCommGetAsyncError ncclCommCount
ncclCommCuDevice ncclCommUserRank ncclGetErrorString ncclGetLastError ncclAllReduce
ncclReduceScatter ncclAllGather ncclBroadcast ncclBcast ncclReduce ncclSend ncclRecv ncclAlltoAll
ncclGather ncclScatter
ncclGroupStart ncclGroupEnd ncclRedOpCreatePreMulSum ncclRedOpDestroy ncclMemAlloc ncclMemFree
ncclCommRegister ncclCommDeregister"
status=0
for f in $required; do
  grep -qx "$f" <<<"$exported" || { echo "FAIL: required $f is not exported"; status=1; }
done
leaked=$(grep -vE '^(nccl|strataNcclDropIn$)' <<<"$exported" || true)
if [ -n "$leaked" ]; then
  echo "FAIL: exported outside NCCL's API:"; echo "$leaked" | head; status=1
fi
# Every function nccl.h declares (the p-prefixed profiling aliases aside).
declared=$(grep -oE '^(ncclResult_t|const char\*) +nccl[A-Za-z0-9_]+\(' "$header" |
  sed -E 's/.* (nccl[A-Za-z0-9_]+)\($/\1/' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
echo "declared in $(basename "$header"): $(wc -l <<<"$declared"), exported: $(grep -c '^nccl' <<<"$exported")"
echo "not served (forward them with the real NCCL, or not available):"
echo "${missing:-  (none)}" | sed 's/^/  /'
exit $status
