#!/bin/bash
# strata-perf under nccl-tests' habits: one case per ctest entry (tests/tools/perf.cmake).
#
#   test_strata_perf_nccltests.sh CASE
#
# CASE is nccl_flags (nccl-tests' flags: accepted at the values strata-perf takes, else refused
# with the reason and exit 2), nccltests_cmdline (nccl-tests command lines run, and the header
# says what they set), nccltests_parser (tests/tools/nccltests_parse.py on
# data/all_reduce_perf_8gpu.txt and on broken copies of it) or nccltests_output (the same
# parser on strata-perf's output). The environment is test_strata_perf.sh's.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/perf_lib.sh"

case "$case_name" in
  nccl_flags)
    # nccl-tests' flags: each named in --help, and those asking for what strata-perf does not do
    # refused as usage errors (exit 2) with the reason, before MPI_Init.
    run --help
    expect_rc 0
    for word in --nthreads --ngpus --agg_iters --run_cycles --parallel_init --blocking \
        --stream_null --timeout --cudagraph --report_cputime --report_timestamps --output_file \
        --average --local_register --cta_policy --device_implementation --device_cta_count \
        --memory --unalign --per_iter_timing --per_iter_skip --png-log-busbw; do
      has "$word"
    done
    tail -n 1 "$out" | grep -q "^Exit status: 0 success, 1 failure, 2 usage error .*77 skipped" ||
      fail "--help does not end with the exit status line"
    # An old strata-perf command line: -t was the collective, -R the repeat count.
    run -t allreduce
    expect_usage
    has_err "-t/--nthreads 'allreduce': -t is nccl-tests' thread count; the collective is \
--collective allreduce"
    run -R 3
    expect_usage
    has_err "-R/--local_register 3: strata registers no buffers (strata-perf's repeat count is \
--repeat)"
    # ARGS|what the message must say
    while IFS='|' read -r args message; do
      # shellcheck disable=SC2086
      run $args
      expect_usage
      has_err "$message"
    done <<'CASES'
-t 2|-t/--nthreads 2: strata-perf runs one thread, one rank, per process; start 2 times as many
-g 8|-g/--ngpus 8: strata-perf runs one rank per process
--ngpus 2|-g/--ngpus 2:
-G 10|-G/--cudagraph 10: strata's collectives run on host threads and cannot be captured
-N 0|-N/--run_cycles 0: strata-perf runs the sweep once; --repeat N
-y 1|-y/--stream_null 1:
-S 1|-S/--report_timestamps 1:
-D 1|-D/--device_implementation 1:
-M 1|-M/--memory 1:
-u 4|-u/--unalign 4:
-I 1|-I/--per_iter_timing 1: --repeat N keeps each repeat's time
-K 2|-K/--per_iter_skip 2:
-x 1|-x/--cta_policy 1:
-z 4|--blocking
-p 2|--parallel_init
-m 0|--agg_iters
-C 2|--report_cputime
-V 200|--device_cta_count
-T -1|--timeout
-F 1|-F
--png-log-busbw|--png-log-busbw needs --png FILE
--overlap -m 2|--overlap times its own loop
CASES
    ;;

  nccltests_cmdline)
    # An nccl-tests command line, every flag at a value strata-perf takes, short names then
    # long ones: it runs, checks clean, and the header says what the flags set.
    json=$work/j.json
    mpirun -n 2 "$tool" -t 1 -g 1 -b 8 -e 4K -f 8 -i 1M -n 2 -w 1 -m 3 -N 1 -p 1 -c 1 -o sum \
      -d float -r 0 -z 1 -y 0 -T 60 -G 0 -C 1 -S 0 -J "$json" -a 3 -R 0 -x 0 -D 0 -V 16 -M 0 \
      -u 0 -I 0 -K 0
    expect_rc 0
    check_table 13 4
    has "# nThread 1 nGpus 1 minBytes 8 maxBytes 4096 step: 8(factor) warmup iters: 1 iters: 2 \
agg iters: 3 validation: 1 graph: 0"
    has "# Blocking Enabled: wait and barrier after each inner iteration (-m)"
    has "# Timeout: a call fails after waiting 60 s for its peers (-T)"
    has "time: max over ranks"
    grep -qE '^# +size +count +type +redop +root +cputime +algbw +busbw +#wrong +cputime ' \
      "$out" || fail "-C 1 did not label the time columns cputime"
    "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert d['agg_iters'] == 3 and d['blocking'] == 1 and d['average'] == 3 and len(d['rows']) == 4" \
      "$json" || fail "-J did not write the JSON with -m, -z and -a"
    mpirun -n 2 "$tool" --nthreads 1 --ngpus 1 --minbytes 64 --maxbytes 1K --stepfactor 4 \
      --iters 2 --warmup_iters 1 --agg_iters 2 --check 1 --op max --datatype int32 --root 1 \
      --blocking 3 --average 0 --timeout 30 --cudagraph 0 --report_cputime 0 \
      --local_register 0 --parallel_init 0 --collective reduce
    expect_rc 0
    check_table 13 3
    has "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes \
barrier"
    has "# Datatype int32, op max, root 1"
    # nccl-tests' defaults: -n 20, -w 5, -m 1, -c 1, -i 1M.
    mpirun -n 2 "$tool" -b 64 -e 64
    expect_rc 0
    has "minBytes 64 maxBytes 64 step: 1048576(bytes) warmup iters: 5 iters: 20 agg iters: 1 \
validation: 1 graph: 0"
    ;;

  nccltests_parser)
    # The parser (written from nccl-tests' printf formats) on an all_reduce_perf output of
    # nccl-tests' layout, then on copies broken one way each: it must refuse every one.
    sample=$(dirname "${BASH_SOURCE[0]}")/data/all_reduce_perf_8gpu.txt
    parse "$sample" --ranks 8 --rows 25
    [ "$prc" -eq 0 ] || fail "the parser refused the sample: $(cat "$work/parse.err")"
    "$python" -c "import json,sys; d=json.loads(sys.argv[1]); h=d['header']; \
assert (h['nthread'], h['ngpus'], h['minbytes'], h['maxbytes'], h['step'], h['warmup_iters'], \
h['iters']) == (1, 1, 8, 134217728, 2, 5, 20) and d['avg_busbw'] == 98.8052 and \
d['hosts'] == ['dgx-a100-01']" "$parsed" || fail "the parser misread the sample: $parsed"
    while IFS='|' read -r name script; do
      sed -E "$script" "$sample" >"$work/broken.txt"
      ! cmp -s "$sample" "$work/broken.txt" || fail "broken layout '$name' changed nothing"
      parse "$work/broken.txt" --ranks 8 --rows 25
      [ "$prc" -eq 1 ] || fail "the parser accepted a broken layout: $name"
    done <<'CASES'
a column missing from a row|/^ +4096 /s/ +float//
the busbw column swapped with algbw|/^ +1048576 /s/([0-9.]+) +([0-9.]+) +0 /\2  \1  0 /
a rank line missing|/Rank  3 /d
a row missing|/^ +65536 /d
#wrong not 0|/^ +512 /s/ 0$/ 2/
avg busbw not the rows' mean|s/Avg bus bandwidth    : [0-9.]+/Avg bus bandwidth    : 120.5/
the units line missing|/\(elements\)/d
the header's sizes changed|s/maxBytes 134217728/maxBytes 268435456/
CASES
    ;;

  nccltests_output)
    # The same parser reads strata-perf's output: header values, every row, #wrong 0, the avg
    # busbw, one Rank line per rank with the (emulated) host names.
    on_layout 2r -b 8 -e 64K -f 4 -w 1 -n 2
    expect_rc 0
    cp "$out" "$work/2r.txt"
    parse "$work/2r.txt" --ranks 2 --rows 7
    [ "$prc" -eq 0 ] || fail "the parser refused strata-perf's output: $(cat "$work/parse.err")"
    "$python" -c "import json,sys; d=json.loads(sys.argv[1]); h=d['header']; \
assert (h['minbytes'], h['maxbytes'], h['step'], h['step_kind'], h['warmup_iters'], h['iters'], \
h['agg_iters'], h['validation']) == (8, 65536, 4, 'factor', 1, 2, 1, 1), h" "$parsed" ||
      fail "the parser read other header values: $parsed"
    grep -qE '^#  Rank  1 Group  0 Pid +[0-9]+ on +[^ ]+ device  1 \[0000:00:00\] cpu$' "$out" ||
      fail "no nccl-tests Rank line for rank 1"
    on_layout 4r2h -b 1K -e 16K -i 5K -w 1 -n 2 -C 1
    expect_rc 0
    cp "$out" "$work/4r.txt"
    parse "$work/4r.txt" --ranks 4 --rows 4
    [ "$prc" -eq 0 ] || fail "the parser refused 4 ranks' output: $(cat "$work/parse.err")"
    "$python" -c "import json,sys; d=json.loads(sys.argv[1]); \
assert d['time_column'] == 'cputime' and len(d['hosts']) == 2 and d['header']['step_kind'] == \
'bytes', d" "$parsed" || fail "4 ranks on 2 hosts: $parsed"
    # And strata-perf's output broken: the parser must see it.
    sed -E '/^#  Rank  2 /d' "$work/4r.txt" >"$work/broken.txt"
    parse "$work/broken.txt" --ranks 4
    [ "$prc" -eq 1 ] || fail "the parser accepted strata-perf's output without a Rank line"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
