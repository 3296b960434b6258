#!/usr/bin/env bash
# A dump requested by STRATA_FLIGHT_RECORDER_SIGNAL is complete when the process has exited,
# in each way signal_exit.c ends right after the signal, 20 runs each (the loss was a race).
# Usage: test_signal_exit.sh SIGNAL_EXIT_BINARY
set -euo pipefail
bin="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export STRATA_FLIGHT_RECORDER_SIGNAL=USR1
failed=0
for how in exit destroy sleep; do
  runs=20
  [ "$how" = sleep ] && runs=5  # 2 s each at most
  for i in $(seq "$runs"); do
    file="$dir/$how.$i.jsonl"
    STRATA_FLIGHT_RECORDER_FILE="$file" "$bin" "$how"
    if ! grep -q '"reason":"signal' "$file" 2>/dev/null; then
      echo "FAIL: $how, run $i: no signal dump in $file after the process exited"
      failed=1
    fi
  done
done
[ "$failed" = 0 ] && echo "every requested dump was written before exit"
exit "$failed"
