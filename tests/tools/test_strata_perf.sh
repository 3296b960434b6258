#!/bin/bash
# strata-perf as a user runs it: one case per ctest entry (tests/tools/perf.cmake).
#
#   test_strata_perf.sh CASE
#
# CASE is help, bad_arguments, bad_flag_mpi, bad_output, vs_mpi, plot, device (CUDA builds:
# exit 77, skipped, without a GPU), or check_<collective>_<layout>_<op>: a small sweep with -c 1
# for float, half, bfloat16 and int8, where layout is 2r (2 ranks, one host) or 4r2h (4 ranks on
# 2 emulated hosts, interleaved).
#
# The environment names what to run (ctest sets it; the names avoid the STRATA_ prefix, which
# strata warns about when it does not know the variable):
#   PERF_BIN          the strata-perf executable
#   PERF_PLOT         tools/plot
#   HOSTNAME_BY_RANK  tests/mpi/hostname_by_rank.sh
#   MPIEXEC, PYTHON
# Every case checks what the tool printed, never a timing.
set -u

case_name=${1:?usage: $0 CASE}
tool=${PERF_BIN:?}
python=${PYTHON:?}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_perf_test

# The sweep every check runs: 8, 64, 512, 4096 and 32768 bytes.
sweep=(-b 8 -e 64K -f 8 -n 2 -w 1 -c 1)
sweep_rows=5

# on_layout LAYOUT ARGS...: strata-perf ARGS on the ranks LAYOUT names.
on_layout() {
  local layout=$1
  shift
  case "$layout" in
    2r) mpirun -n 2 "$tool" "$@" ;;
    4r2h) mpirun -n 4 sh "${HOSTNAME_BY_RANK:?}" 2 "$tool" "$@" ;;
    *) fail "unknown layout $layout" ;;
  esac
}

# A clean failure: exit code 1, no uncaught exception, no signal, no abort.
expect_error() {
  [ "$rc" -ne 0 ] || fail "exit code 0"
  ! grep -qE 'terminate called|Aborted|core dumped|Segmentation|MPI_ABORT' "$err" ||
    fail "crashed instead of failing cleanly"
}

# check_table COLUMNS: $out has the sweep's rows, each with COLUMNS fields, and every #wrong is 0.
check_table() {
  local columns=$1 rows
  rows=$(grep -cvE '^#|^$' "$out")
  [ "$rows" -eq "$sweep_rows" ] || fail "$rows rows, expected $sweep_rows"
  awk -v n="$columns" '!/^#/ && NF && NF != n { exit 1 }' "$out" ||
    fail "a row does not have $columns columns"
  # #wrong: columns 9 and 13; with --vs also 16 and 20.
  awk -v n="$columns" '!/^#/ && NF {
      if ($9 != "0" || $13 != "0") exit 1
      if (n > 13 && ($16 != "0" || $20 != "0")) exit 1 }' "$out" ||
    fail "a #wrong column is not 0"
  has "# Out of bounds values : 0 OK"
  grep -qE '^# Avg bus bandwidth    : [0-9.e+-]+ ?$' "$out" || fail "no '# Avg bus bandwidth' line"
}

# check_schema FILE VS REPEAT: the JSON keys the benchmark suite's report generator reads.
check_schema() {
  "$python" - "$1" "$2" "$3" "$sweep_rows" <<'PYEOF' || fail "JSON $1 does not follow the schema"
import json, sys
path, vs, repeat, nrows = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(path))
for k in ("tool", "version", "collective", "datatype", "op", "nranks", "nhosts", "hosts", "vs",
          "vs_label", "iters", "warmup", "repeat", "hierarchy", "rows", "avg_busbw",
          "wrong_total"):
    assert k in d, "missing key " + k
assert d["tool"] == "strata-perf"
assert d["nhosts"] == len(d["hosts"]) and d["repeat"] == repeat
assert (d["vs"] == "mpi") == vs and (d["vs_label"] is None) == (not vs)
assert d["wrong_total"] == 0 and len(d["rows"]) == nrows, (d["wrong_total"], len(d["rows"]))
for r in d["rows"]:
    assert isinstance(r["size"], int) and isinstance(r["count"], int)
    impls = ("strata", "vs") if vs else ("strata",)
    assert ("vs" in r) == vs and ("ratio_oop" in r) == vs and ("ratio_ip" in r) == vs
    for impl in impls:
        for p in ("oop", "ip"):
            m = r[impl][p]
            for k in ("time_us", "algbw", "busbw", "wrong", "samples_us"):
                assert k in m, "missing " + impl + "." + p + "." + k
            assert m["wrong"] == 0 and len(m["samples_us"]) == repeat
PYEOF
}

case "$case_name" in
  help)
    run --help
    expect_rc 0
    for word in --minbytes --maxbytes --stepfactor --iters --warmup_iters --check --datatype \
        --op --collective --repeat --vs --vs-label --json --csv --png busbw "2(n-1)/n" \
        "# Out of bounds values" mpirun; do
      has "$word"
    done
    ;;

  bad_arguments)
    # Parsed before MPI_Init, so no mpiexec is needed; every rank would fail the same way.
    run -d float17
    expect_error
    has_err "-d/--datatype: unknown datatype 'float17'; expected one of int8, uint8"
    run -o mean
    expect_error
    has_err "-o/--op: unknown op 'mean'"
    run -t broadcast
    expect_error
    has_err "-t/--collective: unknown collective 'broadcast'"
    run -b 1X
    expect_error
    has_err "-b/--minbytes '1X'"
    run -b 64K -e 1K
    expect_error
    has_err "-e/--maxbytes 1K is below -b/--minbytes 64K"
    run -d half --vs mpi
    expect_error
    has_err "--vs mpi: MPI has no half type"
    run --vs nccl
    expect_error
    has_err "--vs: unknown comparison 'nccl'"
    run --vs-label han
    expect_error
    has_err "--vs-label needs --vs mpi"
    run -n 0
    expect_error
    has_err "--iters"
    run --bogus
    expect_error
    has_err "--bogus"
    ;;

  bad_flag_mpi)
    # Every rank parses the same argv: all exit, none hangs, and the message appears once.
    mpirun -n 2 "$tool" -d float17
    expect_error
    [ "$(grep -c "unknown datatype 'float17'" "$err")" -eq 1 ] ||
      fail "the message is not printed exactly once"
    ;;

  bad_output)
    # Found before the sweep: no table.
    mpirun -n 2 "$tool" "${sweep[@]}" --json "$work/no/such/dir/perf.json"
    expect_error
    has_err "--json $work/no/such/dir/perf.json: cannot write"
    lacks "out-of-place"
    ;;

  check_*)
    # check_<collective>_<layout>_<op>
    IFS=_ read -r _ coll layout op <<<"$case_name"
    for type in float half bfloat16 int8; do
      json=$work/$type.json
      on_layout "$layout" "${sweep[@]}" -t "$coll" -d "$type" -o "$op" --json "$json"
      expect_rc 0
      check_table 13
      has "strata-perf $coll"
      redop=$op
      [ "$coll" = allgather ] && redop=none
      grep -qE "^ +[0-9]+ +[0-9]+ +$type +$redop +-1 " "$out" || fail "no $type $redop row"
      check_schema "$json" 0 1
    done
    ;;

  vs_mpi)
    json=$work/ar.json
    csv=$work/ar.csv
    on_layout 4r2h "${sweep[@]}" -t allreduce -d float -o sum --vs mpi --vs-label han -R 2 \
      --json "$json" --csv "$csv"
    expect_rc 0
    check_table 21
    has "han out-of-place"
    grep -qE '^# +size .* ratio .* ratio $' "$out" || fail "no ratio columns in the header"
    has "# Time ratio"
    check_schema "$json" 1 2
    "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['vs_label']=='han' \
and d['nranks']==4 and d['nhosts']==2" "$json" || fail "vs_label, nranks or nhosts wrong"
    # CSV: a header, then strata and han, out of place and in place, for every size.
    [ "$(wc -l <"$csv")" -eq $((1 + sweep_rows * 4)) ] || fail "CSV has $(wc -l <"$csv") lines"
    has "collective,datatype,op,nranks,nhosts,size,count,impl,label,placement,time_us" "$csv" CSV
    has "allreduce,float,sum,4,2,32768,8192,mpi,han,ip," "$csv" CSV
    # MPI's in-place layouts differ from NCCL's for reduce-scatter: both checked.
    for args in "-t reducescatter -d int32 -o avg" "-t allgather -d double" \
        "-t reducescatter -d uint8 -o max"; do
      # shellcheck disable=SC2086
      on_layout 2r "${sweep[@]}" $args --vs mpi --json "$json"
      expect_rc 0
      check_table 21
      check_schema "$json" 1 1
    done
    ;;

  plot)
    if ! command -v gnuplot >/dev/null; then
      echo "SKIP ($case_name): gnuplot is not installed (Debian: gnuplot-nox)"
      exit 77
    fi
    on_layout 2r "${sweep[@]}" --vs mpi --json "$work/a.json" --png "$work/a.png" --title "t"
    expect_rc 0
    check_table 21
    [ -s "$work/a.png" ] || fail "--png wrote no file"
    [ "$(head -c 4 "$work/a.png" | od -An -tx1 | tr -d ' ')" = "89504e47" ] ||
      fail "--png did not write a PNG"
    cp "$work/a.json" "$work/b.json"
    "${PERF_PLOT:?}" -o "$work/both.png" --title "two runs" "$work/a.json" "$work/b.json" \
      >"$out" 2>"$err" || fail "tools/plot failed"
    [ -s "$work/both.png" ] || fail "tools/plot wrote no file"
    has_err "(4 lines)"
    "${PERF_PLOT:?}" -o "$work/bad.png" "$err" >"$out" 2>"$err.2"
    rc=$?
    [ "$rc" -ne 0 ] || fail "tools/plot accepted a file that is not JSON"
    ;;

  device)
    # strata on device buffers, 2 ranks sharing the GPU: 4, 8, 16, 32 and 64 KiB, checked.
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1
    if [ "$rc" -eq 77 ]; then
      has_err "strata-perf: --device: no CUDA GPU visible ("
      echo "SKIP ($case_name): $(grep -m1 'no CUDA GPU visible' "$err")"
      exit 77
    fi
    expect_rc 0
    check_table 13
    has "# Device buffers: strata's send/recv cudaMalloc'd on GPU"
    lacks "# MPI side:"
    # Every collective and placement, a 2-byte type, and MPI on host buffers next to it.
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -t reducescatter -d bfloat16 -o avg
    expect_rc 0
    check_table 13
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -t allgather -d half
    expect_rc 0
    check_table 13
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -t allreduce -d int32 -o max --vs mpi
    expect_rc 0
    check_table 21
    has "# MPI side: host buffers"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
