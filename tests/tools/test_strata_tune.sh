#!/bin/bash
# strata-tune as a user runs it: one case per ctest entry (tests/tools/tune.cmake).
#
#   test_strata_tune.sh CASE
#
# The environment names what to run (ctest sets it):
#   STRATA_TUNE_BIN  the strata-tune executable
#   STRATA_DEMO      examples/strata-allreduce-demo
#   MPIEXEC          mpiexec
# Every case checks what the tool printed, not only its exit code.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_TUNE_BIN:?}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_tune_test

# on_two_hosts PROGRAM ARGS...: 4 ranks, ranks 0-1 on emulated host a and 2-3 on host b.
on_two_hosts() {
  mpirun -n 2 env STRATA_HOSTNAME=a "$@" : -n 2 env STRATA_HOSTNAME=b "$@"
}

case "$case_name" in
  help)
    run --help
    expect_rc 0
    # nccl-tests' letters and long names (-b/-e/-f/-n/-w), as strata-perf has them.
    for word in "-b,--minbytes" "-e,--maxbytes" "-f,--stepfactor" "-w,--warmup_iters" \
        "-n,--iters" --top --time-per-plan --output \
        STRATA_PLAN_FILE Examples mpirun "measured:" passthrough 25%; do
      has "$word"
    done
    [ "$(tail -n 1 "$out")" = "Exit status: 0 success, 1 failure, 2 usage error (a wrong command line, or option values that do not go together)." ] ||
      fail "--help does not end with the exit statuses"
    ;;

  bad_arguments)
    # Usage errors exit 2, whether the parser or the tool finds them (tools/lib/tool_cli.h).
    run -b 1X
    expect_usage
    has_err "-b/--minbytes '1X'"
    run --minbytes 64K -e 1K
    expect_usage
    has_err "--maxbytes 1K is below --minbytes 64K"
    run -f 1
    expect_usage
    has_err "--stepfactor 1: must be above 1"
    run --maxbytes 2G
    expect_usage
    has_err "at most 1G"
    run -b 4 -e 1G -f 1.01
    expect_usage
    has_err "raise --stepfactor"
    run --bogus
    expect_usage
    has_err "--bogus"
    # The old names are gone, and -o (nccl-tests' op) is not the output file.
    for old in --min --max --factor --warmup; do
      run $old 1
      expect_usage
      has_err "$old"
    done
    run -o x.yaml
    expect_usage
    has_err "-o"
    ;;

  one_rank)
    # One rank is a wrong launch: a usage error.
    mpirun -n 1 "$tool" --output "$work/plan.yaml"
    expect_usage
    has_err "needs at least 2 ranks"
    [ ! -e "$work/plan.yaml" ] || fail "a file was written"
    ;;

  bad_output)
    # Found before the sweep: no progress line, nothing written.
    mpirun -n 2 "$tool" --output "$work/no/such/dir/plan.yaml"
    [ "$rc" -ne 0 ] || fail "exit code 0"
    has_err "--output $work/no/such/dir/plan.yaml: cannot write"
    lacks "[1/" "$err" stderr
    ;;

  sweep_and_use)
    plan=$work/plan.yaml
    on_two_hosts "$tool" -b 1K -e 256K -n 3 -w 1 --output "$plan"
    expect_rc 0
    has "hierarchy node(2) x network(2)"
    has "measured links"
    has "0 node"
    has "1 network"
    has "predicted us"
    has "measured us"
    has "ratio"
    has "wrote $plan"
    has "STRATA_PLAN_FILE=$plan"
    # Progress: one line per size, from rank 0 only.
    has_err "[1/5] 1 KiB: timing"
    has_err "[5/5] 256 KiB: timing"
    [ "$(grep -c '^\[1/5\]' "$err")" -eq 1 ] || fail "progress printed more than once"
    [ "$(grep -c '^strata-tune: 4 ranks' "$out")" -eq 1 ] || fail "report printed more than once"
    # Every size has a row for passthrough, which is always timed.
    for size in "1 KiB" "4 KiB" "16 KiB" "64 KiB" "256 KiB"; do
      grep -qE "^  $size +passthrough" "$out" || fail "no passthrough row at $size"
    done
    [ -s "$plan" ] || fail "no plan file"
    has "rules:" "$plan" "the plan file"
    has "measured:" "$plan" "the plan file"
    grep -qE '^  node: \{bandwidth_GBps: [0-9.e+-]+, latency_us: [0-9.e+-]+\}$' "$plan" ||
      fail "no measured node link in the plan file"
    grep -qE '^  network: \{bandwidth_GBps: [0-9.e+-]+, latency_us: [0-9.e+-]+\}$' "$plan" ||
      fail "no measured network link in the plan file"
    grep -qE '^ *max_bytes: inf|max_bytes: inf,' "$plan" || fail "the last rule is not open-ended"
    # The reduce-scatter's and all-gather's forms, timed at every size and pinned in the file.
    for coll in reducescatter allgather; do
      has "$coll forms (median us"
      for size in "4 KiB" "16 KiB" "64 KiB" "256 KiB"; do
        grep -qE "^  $size +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +(flat|hierarchical) +(flat|hierarchical) +(flat|hierarchical) +(flat|hierarchical) +[0-9.]+$" "$out" ||
          fail "no $coll form row at $size"
      done
      has "the fitted model picks the measured faster form at"
    done
    has "reduce_scatter:" "$plan" "the plan file"
    has "all_gather:" "$plan" "the plan file"
    grep -qE '^  - \{min_bytes: 0, max_bytes: [^,]+, form: (flat|hierarchical)\}$' "$plan" ||
      fail "no form rule from 0 bytes in the plan file"

    # A 4-rank job on the same layout runs with the file: 400000 bytes fall in its last rule.
    STRATA_PLAN_FILE=$plan STRATA_DEBUG=INFO STRATA_DEBUG_SUBSYS=PLAN \
      on_two_hosts "${STRATA_DEMO:?}" 100000
    expect_rc 0
    has "PASSED"
    cat "$out" "$err" >"$work/log"
    # groups.cc logs each plan with its note, which for a plan-file rule is "plan file PATH:LINE".
    line=$(grep 'allreduce of 400000 bytes' "$work/log" | grep -oF "plan file $plan:" | head -1)
    [ -n "$line" ] || fail "the log does not say the plan came from $plan"
    logged=$(grep 'allreduce of 400000 bytes' "$work/log" | head -1 |
      sed -n "s|.*plan file $plan:\([0-9]*\).*|\1|p")
    # The last rule of `rules:` (the form rules follow it under their own keys).
    last_rule=$(awk '/^[a-z_]+:/ { in_rules = ($1 == "rules:") } in_rules && /^  - / { n = NR }
      END { print n }' "$plan")
    [ "$logged" = "$last_rule" ] ||
      fail "the job used the rule at line $logged, expected the last rule (line $last_rule)"
    [ "$(grep -c 'allreduce of 400000 bytes' "$work/log")" -eq 4 ] ||
      fail "not every rank logged its plan"

    # --check re-times the file's forms against the other form.
    on_two_hosts "$tool" -b 4K -e 64K -n 3 -w 1 --check "$plan"
    expect_rc 0
    for coll in reducescatter allgather; do
      has "$coll: the file's form vs the other"
      grep -qE "^worst: the file's $coll form takes [0-9.]+ x the other$" "$out" ||
        fail "no worst line for the $coll forms"
    done
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
