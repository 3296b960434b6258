#!/bin/bash
# What every strata tool shares on its command line (tools/lib/tool_cli.h): one case per ctest
# entry (tests/tools/cli.cmake).
#
#   test_tool_cli.sh CASE
#
#   exit_codes      each tool exits 0 on --help (ending with the exit-status line) and 2 on an
#                   unknown flag (strata-perf: the exit codes only)
#   short_letters   a short letter means one thing in every tool: nccl-tests' letters name
#                   nccl-tests' option, and no two tools give a letter different long names
#   same_sizes      -b/-e/-f sweep the same sizes in strata-tune, strata-perf and strata-kernels
#   empty_paths     every option that names a file refuses an empty path (exit 2, naming the
#                   option): an unset shell variable must not read as the option not given
#
# The environment names the tools (ctest sets it): STRATA_{INFO,TOPO,PLAN,TUNE,PERF,KERNELS,
# TRAIN}_BIN, MPIEXEC, PYTHON.
set -u

case_name=${1:?usage: $0 CASE}
python=${PYTHON:-python3}
tool=
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_tool_cli_test

exit_line="Exit status: 0 success, 1 failure, 2 usage error (a wrong command line, or option values that do not go together)."

# name:path for every tool; strata-plan's subcommands have a help of their own.
tools=(
  "strata-info:${STRATA_INFO_BIN:?}"
  "strata-topo:${STRATA_TOPO_BIN:?}"
  "strata-plan:${STRATA_PLAN_BIN:?}"
  "strata-tune:${STRATA_TUNE_BIN:?}"
  "strata-kernels:${STRATA_KERNELS_BIN:?}"
  "strata-train:${STRATA_TRAIN_BIN:?}"
  "strata-perf:${STRATA_PERF_BIN:?}"
)

case "$case_name" in
  exit_codes)
    for entry in "${tools[@]}"; do
      name=${entry%%:*}
      tool=${entry#*:}
      subs=("")
      [ "$name" = strata-plan ] && subs=("" show simulate validate)
      for sub in "${subs[@]}"; do
        what="$name${sub:+ $sub}"
        run $sub --help
        [ "$rc" -eq 0 ] || fail "$what --help: exit code $rc, expected 0"
        [ -s "$out" ] || fail "$what --help printed nothing"
        if [ "$name" != strata-perf ]; then
          last=$(tail -n 1 "$out")
          case "$last" in
            "$exit_line" | "${exit_line%.}, 77 skipped"*) ;;
            *) fail "$what --help ends with '$last', not the exit statuses" ;;
          esac
        fi
        run $sub --no-such-flag
        [ "$rc" -eq 2 ] || fail "$what --no-such-flag: exit code $rc, expected 2"
        expect_usage
      done
    done
    # A subcommand strata-plan does not have is a usage error too.
    tool=$STRATA_PLAN_BIN
    run explain
    expect_usage
    ;;

  short_letters)
    # Every "-X,--long" a help shows (CLI11 prints them so), as "tool X long" lines.
    for entry in "${tools[@]}"; do
      name=${entry%%:*}
      tool=${entry#*:}
      [ "$name" = strata-perf ] && continue  # its flags are checked in its own tests
      subs=("")
      [ "$name" = strata-plan ] && subs=(show simulate validate)
      for sub in "${subs[@]}"; do
        run $sub --help
        expect_rc 0
        grep -oE '^ +-[A-Za-z],--[A-Za-z0-9_-]+' "$out" | sed "s/^ *-\(.\),--/$name${sub:+-$sub} \1 /"
      done
    done >"$work/letters"
    [ -s "$work/letters" ] || fail "no short letters found in any help"
    "$python" - "$work/letters" <<'PYEOF' || fail "a letter means different things"
import sys
# nccl-tests' letters (src/common.cu) and the long name each has there.
NCCL_TESTS = {"b": "minbytes", "e": "maxbytes", "i": "stepbytes", "f": "stepfactor",
              "n": "iters", "w": "warmup_iters", "o": "op", "d": "datatype", "r": "root",
              "c": "check", "t": "nthreads", "g": "ngpus", "a": "average", "m": "agg_iters",
              "z": "blocking", "p": "parallel_init", "T": "timeout", "G": "cudagraph",
              "C": "report_cputime", "R": "local_register", "N": "run_cycles"}
seen, bad = {}, []
for line in open(sys.argv[1]):
    tool, letter, long = line.split()
    want = NCCL_TESTS.get(letter)
    if want is not None and long != want:
        bad.append(f"{tool}: -{letter} is --{long}; in nccl-tests -{letter} is --{want}")
    other = seen.setdefault(letter, (tool, long))
    if other[1] != long:
        bad.append(f"-{letter}: --{long} in {tool}, --{other[1]} in {other[0]}")
for b in bad:
    print(b, file=sys.stderr)
print(f"{len(seen)} letters checked:", " ".join(sorted(seen)))
sys.exit(1 if bad else 0)
PYEOF
    # The letters the sweep tools share are there at all.
    for pair in "strata-tune b minbytes" "strata-tune e maxbytes" "strata-tune f stepfactor" \
        "strata-tune n iters" "strata-tune w warmup_iters" "strata-kernels b minbytes" \
        "strata-train w warmup_iters"; do
      grep -qxF "$pair" "$work/letters" || fail "'$pair' not in the helps"
    done
    ;;

  empty_paths)
    # tool|arguments, the empty path last.
    cases=(
      "${STRATA_TOPO_BIN:?}|--input"
      "${STRATA_TOPO_BIN:?}|--save"
      "${STRATA_PLAN_BIN:?}|show --topo"
      "${STRATA_PLAN_BIN:?}|show --input"
      "${STRATA_PLAN_BIN:?}|show --cluster 2x2 --plan-file"
      "${STRATA_PLAN_BIN:?}|validate --cluster 2x2 --plan-file"
      "${STRATA_TUNE_BIN:?}|--output"
      "${STRATA_KERNELS_BIN:?}|--json"
      "${STRATA_TRAIN_BIN:?}|--json"
      "${STRATA_PERF_BIN:?}|--json"
      "${STRATA_PERF_BIN:?}|--csv"
      "${STRATA_PERF_BIN:?}|--png"
    )
    for c in "${cases[@]}"; do
      tool=${c%%|*}
      read -r -a args <<<"${c#*|}"
      run "${args[@]}" ""
      what="$(basename "$tool") ${c#*|} ''"
      [ "$rc" -eq 2 ] || fail "$what: exit code $rc, expected 2"
      has_err "${args[-1]}: an empty path (an unset shell variable?)"
    done
    ;;

  same_sizes)
    # -b 1K -e 16K -f 4 is 1 KiB, 4 KiB and 16 KiB in each tool that sweeps sizes.
    want="1024 4096 16384"
    tool=$STRATA_PERF_BIN
    mpirun -n 1 "$tool" -b 1K -e 16K -f 4 -n 1 -w 0
    expect_rc 0
    perf=$(awk '$1 ~ /^[0-9]+$/ && NF > 6 { print $1 }' "$out" | sort -un | xargs)
    [ "$perf" = "$want" ] || fail "strata-perf -b 1K -e 16K -f 4 swept '$perf', expected '$want'"
    tool=$STRATA_KERNELS_BIN
    run -b 1K -e 16K -f 4 -n 1
    expect_rc 0
    kernels=$(grep -oE '^ +[0-9]+ KiB' "$out" | awk '{ print $1 * 1024 }' | sort -un | xargs)
    [ "$kernels" = "$want" ] || fail "strata-kernels swept '$kernels', expected '$want'"
    tool=$STRATA_TUNE_BIN
    mpirun -n 2 "$tool" -b 1K -e 16K -f 4 -n 1 -w 0 --top 1 --time-per-plan 0.01 \
      --output "$work/plan.yaml"
    expect_rc 0
    tune=$(grep -oE '^\[[0-9]+/[0-9]+\] [0-9]+ KiB' "$err" | awk '{ print $2 * 1024 }' | xargs)
    [ "$tune" = "$want" ] || fail "strata-tune swept '$tune', expected '$want'"
    ;;

  *)
    fail "unknown case"
    ;;
esac
exit 0
