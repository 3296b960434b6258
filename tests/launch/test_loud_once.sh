#!/usr/bin/env bash
# Launch mistakes and failures are loud, at once and once (tests/CMakeLists.txt).
# Usage: test_loud_once.sh CASE
#   world_size  two ranks started by hand that disagree on WORLD_SIZE (2 and 3), in both
#               orders, under the default STRATA_TIMEOUT: both fail within 5 s, each naming
#               the disagreement in exactly one strata WARN line (and the program's own line)
#   timeout     a rank 4 s late with STRATA_TIMEOUT=2: rank 0's timeout is logged in exactly
#               one WARN line, the flight recorder's summary points to it instead of repeating
#               it, and the code's string says a peer timed out
# Environment: LATE_RANK (tests/launch/late_rank.c).
set -uo pipefail
case_name=$1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# count FILE TEXT [WARN]: lines of FILE holding TEXT (only strata's WARN lines with a third arg).
count() {
  if [ $# -gt 2 ]; then grep -F -- "$2" "$1" | grep -c "STRATA WARN"; else grep -cF -- "$2" "$1"; fi
}
unset STRATA_TIMEOUT STRATA_SOCKET_IFNAME
export STRATA_SOCKET_IFNAME==lo

case "$case_name" in
  world_size)
    for first in 2 3; do
      second=$((5 - first))
      export STRATA_COMM_ID="127.0.0.1:$(free_port)"
      start=$(date +%s%N)
      # Rank 0 hosts the rendezvous root (STRATA_COMM_ID): it starts first.
      RANK=0 WORLD_SIZE=$first timeout 60 "${LATE_RANK:?}" >"$work/0.out" 2>"$work/0.err" &
      pid=$!
      sleep 0.5
      RANK=1 WORLD_SIZE=$second timeout 60 "$LATE_RANK" >"$work/1.out" 2>"$work/1.err"
      rc1=$?
      wait "$pid"
      rc0=$?
      took_ms=$((($(date +%s%N) - start) / 1000000))
      echo "sizes $first then $second: exit $rc0 and $rc1 after $took_ms ms"
      [ "$rc0" = 1 ] && [ "$rc1" = 1 ] || fail "sizes $first/$second: exits $rc0 $rc1, expected 1 1"
      [ "$took_ms" -lt 5500 ] || fail "sizes $first/$second: took $took_ms ms (500 of them the stagger)"
      for r in 0 1; do
        warns=$(count "$work/$r.err" "disagree on the job size" warn)
        apps=$(grep "^APP: init:" "$work/$r.err" | grep -cF "disagree on the job size")
        [ "$warns" = 1 ] && [ "$apps" = 1 ] ||
          { fail "rank $r: $warns WARN lines and $apps program lines name it, expected 1 and 1"; cat "$work/$r.err"; }
      done
    done
    ;;
  timeout)
    export STRATA_COMM_ID="127.0.0.1:$(free_port)" STRATA_TIMEOUT=2 LATE_RANK_SLEEP=4
    RANK=0 WORLD_SIZE=2 timeout 60 "${LATE_RANK:?}" >"$work/0.out" 2>"$work/0.err" &
    pid=$!
    RANK=1 WORLD_SIZE=2 timeout 60 "$LATE_RANK" >"$work/1.out" 2>"$work/1.err"
    wait "$pid"
    rc0=$?
    cat "$work/0.err"
    [ "$rc0" = 1 ] || fail "rank 0 exited $rc0, expected 1 (its allreduce should time out)"
    warns=$(count "$work/0.err" "timed out after 2 s" warn)
    [ "$warns" = 1 ] || fail "rank 0: $warns WARN lines name the timeout, expected 1"
    [ "$(count "$work/0.err" "flight recorder (at the failure above)" warn)" = 1 ] ||
      fail "rank 0: the flight recorder's summary does not point to the failure above"
    grep "^APP: allreduce:" "$work/0.err" | grep -qF "timed out" ||
      fail "rank 0: the program's line does not say it timed out"
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
[ "$failures" = 0 ] && echo "PASS: $case_name"
[ "$failures" = 0 ]
