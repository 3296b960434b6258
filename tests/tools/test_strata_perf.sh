#!/bin/bash
# strata-perf as a user runs it: one case per ctest entry (tests/tools/perf.cmake).
#
#   test_strata_perf.sh CASE
#
# CASE is help, bad_arguments, bad_flag_mpi, bad_root_mpi, bad_output, vs_mpi, vs_mpi_rooted,
# nonblocking, nonblocking_rooted, nonblocking_no_progress, overlap, overlap_functional, plot,
# nccl_flags (nccl-tests' flags refused with the reason), nccltests_cmdline (nccl-tests command
# lines run), nccltests_parser (tests/tools/nccltests_parse.py on data/all_reduce_perf_8gpu.txt
# and on broken copies), nccltests_output (the same parser on strata-perf's output), device
# (CUDA builds: exit 77, skipped, without a GPU), or check_<collective>_<layout>_<op>: a
# small sweep with -c 1 for float, half, bfloat16 and int8, where layout is 2r (2 ranks, one
# host) or 4r2h (4 ranks on 2 emulated hosts, interleaved); broadcast and reduce use root 1.
#
# The environment names what to run (ctest sets it; the names avoid the STRATA_ prefix, which
# strata warns about when it does not know the variable):
#   PERF_BIN          the strata-perf executable
#   PERF_PLOT         tools/plot
#   HOSTNAME_BY_RANK  tests/mpi/hostname_by_rank.sh
#   MPIEXEC, PYTHON
# Every run passes small -w/-n (nccl-tests' defaults, -w 1 -n 20, would slow CI down).
# Every case checks what the tool printed, never a timing: --nonblocking's and --overlap's
# numbers are checked for shape and sign, not for speed.
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

# A wrong command line: exit code 2 (tool_cli.h's kExitUsage), cleanly.
expect_usage() {
  expect_rc 2
  expect_error
}

# parse FILE ARGS...: tests/tools/nccltests_parse.py (a parser of nccl-tests' output) on FILE;
# its JSON summary in $parsed, its exit code in $prc.
parse() {
  parsed=$("$python" "$(dirname "${BASH_SOURCE[0]}")/nccltests_parse.py" "$@" 2>"$work/parse.err")
  prc=$?
}

# check_table COLUMNS [ROWS]: $out has the sweep's rows (or ROWS), each with COLUMNS fields, and
# every #wrong is 0.
check_table() {
  local columns=$1 want=${2:-$sweep_rows} rows
  rows=$(grep -cvE '^#|^$' "$out")
  [ "$rows" -eq "$want" ] || fail "$rows rows, expected $want"
  awk -v n="$columns" '!/^#/ && NF && NF != n { exit 1 }' "$out" ||
    fail "a row does not have $columns columns"
  # #wrong: columns 9 and 13; with --vs or --nonblocking also 16 and 20.
  awk -v n="$columns" '!/^#/ && NF {
      if ($9 != "0" || $13 != "0") exit 1
      if (n > 13 && ($16 != "0" || $20 != "0")) exit 1 }' "$out" ||
    fail "a #wrong column is not 0"
  has "# Out of bounds values : 0 OK"
  grep -qE '^# Avg bus bandwidth    : [0-9.e+-]+ ?$' "$out" || fail "no '# Avg bus bandwidth' line"
}

# check_schema FILE VS REPEAT [MODE]: the JSON keys the benchmark suite's report generator reads
# (MODE: blocking, the default, or nonblocking).
check_schema() {
  local mode=${4:-blocking}
  "$python" - "$1" "$2" "$3" "$sweep_rows" "$mode" <<'PYEOF' || fail "JSON $1 does not follow the schema"
import json, sys
path, vs, repeat, nrows = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
mode = sys.argv[5]
d = json.load(open(path))
for k in ("tool", "version", "collective", "datatype", "op", "nranks", "nhosts", "hosts", "vs",
          "vs_label", "iters", "warmup", "repeat", "hierarchy", "rows", "avg_busbw",
          "wrong_total", "root", "mode", "inflight", "progress_thread", "thread_level"):
    assert k in d, "missing key " + k
assert d["mode"] == mode, d["mode"]
assert d["tool"] == "strata-perf"
assert d["nhosts"] == len(d["hosts"]) and d["repeat"] == repeat
assert (d["vs"] == "mpi") == vs and (d["vs_label"] is None) == (not vs)
assert d["wrong_total"] == 0 and len(d["rows"]) == nrows, (d["wrong_total"], len(d["rows"]))
for r in d["rows"]:
    assert isinstance(r["size"], int) and isinstance(r["count"], int)
    impls = ("strata", "vs") if vs else ("strata",)
    assert ("vs" in r) == vs and ("ratio_oop" in r) == vs and ("ratio_ip" in r) == vs
    nb = mode == "nonblocking"
    assert ("nonblocking" in r) == nb and ("delta_us_oop" in r) == nb
    if nb:
        impls += ("nonblocking",)
    for impl in impls:
        for p in ("oop", "ip"):
            m = r[impl][p]
            for k in ("time_us", "algbw", "busbw", "wrong", "samples_us"):
                assert k in m, "missing " + impl + "." + p + "." + k
            assert m["wrong"] == 0 and len(m["samples_us"]) == repeat
            assert m["time_us"] > 0, impl + "." + p + ".time_us is not positive"
PYEOF
}

# check_positive COLUMN...: every row of $out has a number above 0 in each COLUMN.
check_positive() {
  local c
  for c in "$@"; do
    awk -v c="$c" '!/^#/ && NF && !($c + 0 > 0) { exit 1 }' "$out" ||
      fail "column $c is not a positive number in every row"
  done
}

# check_overlap ROWS JSON: --overlap's table (12 columns: size count type redop root t_coll busbw
# t_comp t_both hidden raw #wrong), its footer and its JSON fields. Shape and bounds only.
check_overlap() {
  local rows=$1 json=$2
  check_rows_of 12 "$rows"
  check_positive 6 8 9
  awk '!/^#/ && NF && !($10 >= 0 && $10 <= 1) { exit 1 }' "$out" ||
    fail "a hidden fraction is not in [0,1]"
  awk '!/^#/ && NF && ($11 !~ /^-?[0-9]+\.[0-9]+$/ || $12 != "0") { exit 1 }' "$out" ||
    fail "a raw fraction is not a number, or #wrong is not 0"
  has "# Out of bounds values : 0 OK"
  has "# Computation check    : OK"
  grep -qE '^# Avg fraction hidden  : [0-9.]+ ' "$out" || fail "no '# Avg fraction hidden' line"
  has "# Progress thread:"
  "$python" - "$json" "$rows" <<'PYEOF' || fail "JSON $json: overlap fields missing or out of bounds"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "overlap" and d["ok"] is True and d["compute_failures"] == 0
assert len(d["rows"]) == int(sys.argv[2])
assert 0 <= d["avg_fraction_hidden"] <= 1
for r in d["rows"]:
    o = r["overlap"]
    for k in ("t_coll_us", "t_comp_us", "t_both_us", "fraction_hidden", "fraction_hidden_raw",
              "compute_passes_min", "compute_passes_max", "compute_ok", "wrong",
              "t_coll_samples_us", "t_comp_samples_us", "t_both_samples_us"):
        assert k in o, "missing overlap." + k
    assert o["t_coll_us"] > 0 and o["t_comp_us"] > 0 and o["t_both_us"] > 0
    assert 0 <= o["fraction_hidden"] <= 1 and math.isfinite(o["fraction_hidden_raw"])
    # The fraction is the formula of the reported times, clamped.
    raw = (o["t_coll_us"] + o["t_comp_us"] - o["t_both_us"]) / o["t_coll_us"]
    assert abs(raw - o["fraction_hidden_raw"]) < 1e-6 * max(1, abs(raw)), (raw, o)
    assert o["fraction_hidden"] == min(1, max(0, raw)) or abs(
        o["fraction_hidden"] - min(1, max(0, raw))) < 1e-9
    assert o["compute_ok"] is True and o["wrong"] == 0
    assert 1 <= o["compute_passes_min"] <= o["compute_passes_max"]
    assert r["strata"]["oop"]["time_us"] == o["t_coll_us"]
PYEOF
}

# check_rows_of COLUMNS ROWS: $out has ROWS rows of COLUMNS fields.
check_rows_of() {
  local columns=$1 want=$2 rows
  rows=$(grep -cvE '^#|^$' "$out")
  [ "$rows" -eq "$want" ] || fail "$rows rows, expected $want"
  awk -v n="$columns" '!/^#/ && NF && NF != n { exit 1 }' "$out" ||
    fail "a row does not have $columns columns"
}

case "$case_name" in
  help)
    run --help
    expect_rc 0
    for word in --minbytes --maxbytes --stepfactor --iters --warmup_iters --check --datatype \
        --op --collective --repeat --vs --vs-label --json --csv --png busbw "2(n-1)/n" \
        "# Out of bounds values" mpirun --root broadcast reduce MPI_Bcast --nonblocking \
        --inflight "nccl-tests has no equivalent" --overlap --compute-us "nb-bl" \
        "t_coll + t_comp - t_both" "progress thread" MPI_THREAD_MULTIPLE; do
      has "$word"
    done
    ;;

  bad_arguments)
    # Parsed before MPI_Init, so no mpiexec is needed; every rank would fail the same way.
    run -d float17
    expect_usage
    has_err "-d/--datatype: unknown datatype 'float17'; expected one of int8, uint8"
    run -o mean
    expect_usage
    has_err "-o/--op: unknown op 'mean'"
    run --collective alltoall
    expect_usage
    has_err "--collective: unknown collective 'alltoall'; expected one of allreduce, \
reducescatter, allgather, broadcast, reduce"
    run --collective broadcast -r -1
    expect_usage
    has_err "-r/--root -1: ranks count from 0"
    # The modes: --inflight and --compute-us belong to theirs, and the modes to host buffers.
    run --nonblocking --inflight 0
    expect_usage
    has_err "--inflight 0: give 1 to 256 nonblocking calls in flight"
    run --nonblocking --inflight 257
    expect_usage
    has_err "--inflight 257: give 1 to 256"
    run --inflight 4
    expect_usage
    has_err "--inflight 4 needs --nonblocking"
    run --compute-us 100
    expect_usage
    has_err "--compute-us needs --overlap"
    run --overlap --compute-us -5
    expect_usage
    has_err "--compute-us -5"
    run --nonblocking --overlap
    expect_usage
    has_err "--nonblocking and --overlap are separate modes"
    run --nonblocking --vs mpi
    expect_usage
    has_err "--nonblocking does not go with --vs mpi"
    run --overlap --collective reducescatter --vs mpi
    expect_usage
    has_err "--overlap does not go with --vs mpi"
    run --nonblocking --inflight x
    expect_usage
    has_err "--inflight"
    run -b 1X
    expect_usage
    has_err "-b/--minbytes '1X'"
    run -b 64K -e 1K
    expect_usage
    has_err "-e/--maxbytes 1K is below -b/--minbytes 64K"
    run -d half --vs mpi
    expect_usage
    has_err "--vs mpi: MPI has no half type"
    run --vs nccl
    expect_usage
    has_err "--vs: unknown comparison 'nccl'"
    run --vs-label han
    expect_usage
    has_err "--vs-label needs --vs mpi"
    run -n 0
    expect_usage
    has_err "--iters"
    run --bogus
    expect_usage
    has_err "--bogus"
    ;;

  bad_flag_mpi)
    # Every rank parses the same argv: all exit, none hangs, and the message appears once.
    mpirun -n 2 "$tool" -d float17
    expect_usage
    [ "$(grep -c "unknown datatype 'float17'" "$err")" -eq 1 ] ||
      fail "the message is not printed exactly once"
    ;;

  bad_root_mpi)
    # The root is checked against the job's size once the job runs: every rank refuses.
    mpirun -n 2 "$tool" "${sweep[@]}" --collective broadcast -r 2
    expect_error
    [ "$(grep -c -- "-r/--root 2: the job has 2 ranks (0 to 1)" "$err")" -eq 1 ] ||
      fail "the -r message is not printed exactly once"
    lacks "out-of-place"
    # --inflight multiplies the buffers: a sweep that cannot fit is refused before allocating.
    mpirun -n 2 "$tool" --nonblocking --inflight 256 -b 1G -e 1G
    expect_error
    has_err "--inflight 256 with -e 1G needs 524288 MiB of buffers per rank"
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
    # Broadcast and reduce from root 1, so a root-0 assumption shows.
    root=-1
    root_args=()
    case "$coll" in broadcast | reduce) root=1 root_args=(-r 1) ;; esac
    for type in float half bfloat16 int8; do
      json=$work/$type.json
      on_layout "$layout" "${sweep[@]}" --collective "$coll" -d "$type" -o "$op" \
        "${root_args[@]}" \
        --json "$json"
      expect_rc 0
      check_table 13
      has "strata-perf $coll"
      redop=$op
      case "$coll" in allgather | broadcast) redop=none ;; esac
      grep -qE "^ +[0-9]+ +[0-9]+ +$type +$redop +$root " "$out" ||
        fail "no $type $redop row with root $root"
      check_schema "$json" 0 1
    done
    ;;

  vs_mpi)
    json=$work/ar.json
    csv=$work/ar.csv
    on_layout 4r2h "${sweep[@]}" --collective allreduce -d float -o sum --vs mpi --vs-label han \
      --repeat 2 \
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
    for args in "--collective reducescatter -d int32 -o avg" \
        "--collective allgather -d double" "--collective reducescatter -d uint8 -o max"; do
      # shellcheck disable=SC2086
      on_layout 2r "${sweep[@]}" $args --vs mpi --json "$json"
      expect_rc 0
      check_table 21
      check_schema "$json" 1 1
    done
    ;;

  vs_mpi_rooted)
    # MPI_Bcast and MPI_Reduce next to strata's, checked; busbw = algbw for both (columns 7, 8).
    json=$work/rooted.json
    for args in "--collective broadcast -d int32 -r 1" \
        "--collective reduce -d float -o avg -r 1" "--collective reduce -d uint8 -o max" \
        "--collective broadcast -d double"; do
      # shellcheck disable=SC2086
      on_layout 2r "${sweep[@]}" $args --vs mpi --json "$json"
      expect_rc 0
      check_table 21
      check_schema "$json" 1 1
      awk '!/^#/ && NF && $7 != $8 { exit 1 }' "$out" || fail "busbw is not algbw ($args)"
    done
    has "MPI_Bcast (out of place: the root first copies sendbuff to recvbuff)"
    on_layout 4r2h "${sweep[@]}" --collective reduce -d int32 -o sum -r 3 --vs mpi --json "$json"
    expect_rc 0
    check_table 21
    has "# Datatype int32, op sum, root 3"
    "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['root']==3 \
and d['collective']=='reduce'" "$json" || fail "root or collective wrong in the JSON"
    ;;

  nonblocking)
    # Blocking and nonblocking columns in one table (#wrong in columns 9, 13, 16, 20), per-call
    # times positive, the difference column signed, and the progress thread on.
    json=$work/nb.json
    csv=$work/nb.csv
    on_layout 2r "${sweep[@]}" --nonblocking --inflight 3 --repeat 2 --json "$json" --csv "$csv"
    expect_rc 0
    check_table 21
    check_positive 6 10 14 18
    awk '!/^#/ && NF && ($17 !~ /^[-+][0-9.]+$/ || $21 !~ /^[-+][0-9.]+$/) { exit 1 }' "$out" ||
      fail "an nb-bl column is not a signed number"
    has "nonblocking out-of-place"
    grep -qE '^# +size .* nb-bl .* nb-bl $' "$out" || fail "no nb-bl columns in the header"
    has "every timed iteration issues --inflight 3 strataIAllReduce, each on its own buffers"
    has "# Progress thread: on (MPI provided MPI_THREAD_MULTIPLE, STRATA_PROGRESS=1 (default))"
    grep -qE '^# Nonblocking cost     : [-+][0-9.]+ us per call' "$out" ||
      fail "no '# Nonblocking cost' line"
    check_schema "$json" 0 2 nonblocking
    "$python" - "$json" <<'PYEOF' || fail "JSON $json: nonblocking fields wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["inflight"] == 3 and d["progress_thread"] is True
assert d["thread_level"] == "MPI_THREAD_MULTIPLE" and "avg_delta_us" in d
for r in d["rows"]:
    for p in ("oop", "ip"):
        delta = r["nonblocking"][p]["time_us"] - r["strata"][p]["time_us"]
        assert abs(r["delta_us_" + p] - delta) < 1e-9 * max(1, abs(delta))
PYEOF
    # CSV: strata and nonblocking, out of place and in place, for every size.
    [ "$(wc -l <"$csv")" -eq $((1 + sweep_rows * 4)) ] || fail "CSV has $(wc -l <"$csv") lines"
    has "busbw,wrong,ratio,samples_us,root,inflight,delta_us" "$csv" CSV
    grep -qE '^allreduce,float,sum,2,1,32768,8192,nonblocking,nonblocking,ip,.*,-1,3,[-0-9.e+]+$' \
      "$csv" || fail "no nonblocking CSV line with inflight 3 and delta_us"
    # Every collective's in-place layout through the nonblocking calls, on emulated hosts.
    for args in "--collective reducescatter -d half -o avg" "--collective allgather -d int8"; do
      # shellcheck disable=SC2086
      on_layout 4r2h "${sweep[@]}" $args --nonblocking --inflight 2 --json "$json"
      expect_rc 0
      check_table 21
      check_schema "$json" 0 1 nonblocking
    done
    ;;

  nonblocking_rooted)
    json=$work/nb.json
    for args in "--collective broadcast -d float -r 1" \
        "--collective reduce -d int32 -o max -r 3" "--collective reduce -d bfloat16 -o sum"; do
      # shellcheck disable=SC2086
      on_layout 4r2h "${sweep[@]}" $args --nonblocking --inflight 4 --json "$json"
      expect_rc 0
      check_table 21
      check_positive 6 10 14 18
      check_schema "$json" 0 1 nonblocking
    done
    has "issues --inflight 4 strataIReduce"
    ;;

  nonblocking_no_progress)
    # Without the progress thread the calls run inside strataWait: the same table, and the
    # header says so.
    STRATA_PROGRESS=0 on_layout 2r "${sweep[@]}" --nonblocking --inflight 2
    expect_rc 0
    check_table 21
    check_positive 6 10 14 18
    has "# Progress thread: OFF (MPI provided MPI_THREAD_MULTIPLE, STRATA_PROGRESS=0"
    ;;

  overlap)
    # Fields present and within bounds (the fraction clamped to [0,1]); no timing verdict.
    json=$work/ov.json
    csv=$work/ov.csv
    on_layout 2r -b 64K -e 1M -f 4 -n 3 -w 1 -c 1 --overlap --json "$json" --csv "$csv"
    expect_rc 0
    check_overlap 3 "$json"
    grep -qE '^# +size .* t_coll +busbw +t_comp +t_both +hidden +raw +#wrong $' "$out" ||
      fail "no overlap columns in the header"
    has "calibrated on each rank to its own t_coll"
    [ "$(wc -l <"$csv")" -eq 4 ] || fail "CSV has $(wc -l <"$csv") lines"
    has "t_coll_us,busbw,t_comp_us,t_both_us,fraction_hidden,fraction_hidden_raw" "$csv" CSV
    # Any collective, a computation of a set size, emulated hosts.
    for args in "--collective reducescatter -o avg --compute-us 200" \
        "--collective broadcast -r 1" "--collective reduce -d int32 -r 2 --repeat 2"; do
      # shellcheck disable=SC2086
      on_layout 4r2h -b 64K -e 256K -f 4 -n 2 -w 1 -c 1 --overlap $args --json "$json"
      expect_rc 0
      check_overlap 2 "$json"
    done
    has "# Datatype int32, op sum, root 2"
    ;;

  overlap_functional)
    # Overlap, functionally: the collective and the computation both complete, next to each
    # other, with the progress thread and without it (then everything runs in strataWait),
    # the collective's result is exact (-c 3), the computation's checksum is the one it has
    # alone, and the fraction is computed from the reported times. Nothing about speed.
    json=$work/f.json
    for progress in 1 0; do
      STRATA_PROGRESS=$progress on_layout 2r -b 1M -e 1M -n 2 -w 1 -c 3 --overlap \
        --json "$json"
      expect_rc 0
      check_overlap 1 "$json"
      "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert d['progress_thread'] == (sys.argv[2] == '1'), d['progress_thread']" "$json" "$progress" ||
        fail "progress_thread is not $progress in the JSON"
    done
    has "# Progress thread: OFF"
    ;;

  plot)
    if ! command -v gnuplot >/dev/null; then
      echo "SKIP ($case_name): gnuplot is not installed (Debian: gnuplot-nox)"
      exit 77
    fi
    # gnuplot behind a wrapper that keeps the script it is fed, so the test reads what the plot
    # holds: both placements of every implementation, error bars over the repeats, log axis.
    mkdir -p "$work/bin"
    printf '#!/bin/sh\ntee -a "%s" | "%s" "$@"\n' "$work/gnuplot.log" "$(command -v gnuplot)" \
      >"$work/bin/gnuplot"
    chmod +x "$work/bin/gnuplot"
    # mpiexec by its path puts its own bin directory (/usr/bin) first on the ranks' PATH, which
    # would hide the wrapper: run it by name, found on a PATH that has the wrapper first.
    plot_path=$work/bin:$(dirname "${MPIEXEC:?}"):$PATH
    plot_mpiexec=$(basename "$MPIEXEC")
    PATH=$plot_path MPIEXEC=$plot_mpiexec on_layout 2r "${sweep[@]}" --vs mpi --repeat 3 --json "$work/a.json" \
      --png "$work/a.png" --png-title "t" --png-log-busbw
    expect_rc 0
    check_table 21
    [ -s "$work/a.png" ] || fail "--png wrote no file"
    [ "$(head -c 4 "$work/a.png" | od -An -tx1 | tr -d ' ')" = "89504e47" ] ||
      fail "--png did not write a PNG"
    log=$work/gnuplot.log
    has "set logscale y" "$log" "the gnuplot script"
    lacks "set yrange [0:*]" "$log" "the gnuplot script"
    for series in "strata out-of-place" "strata in-place" "mpi out-of-place" "mpi in-place"; do
      grep -q "^plot .*yerrorlines .*title \"$series\"" "$log" ||
        fail "no '$series' series with error bars in the gnuplot script"
    done
    # Error bars from the repeats: the JSON's samples give each point's low and high busbw.
    "$python" - "$work/a.json" "$log" <<'PYEOF' || fail "the error bars are not the repeats' range"
import json, sys
d = json.load(open(sys.argv[1]))
data = [l.split() for l in open(sys.argv[2]) if l[:1].isdigit()]
m = d["rows"][-1]["strata"]["ip"]
want = sorted(m["busbw"] * m["time_us"] / t for t in m["samples_us"])
rows = [r for r in data if int(r[0]) == d["rows"][-1]["size"] and float(r[1]) == m["busbw"]]
assert rows, "no data line for the last size's strata in-place point"
lo, hi = float(rows[0][2]), float(rows[0][3])
assert abs(lo - want[0]) < 1e-9 * want[0] and abs(hi - want[-1]) < 1e-9 * want[-1], (lo, hi, want)
assert all(float(r[2]) <= float(r[1]) <= float(r[3]) for r in data), "a point outside its bar"
PYEOF
    # Without the option, a linear axis from 0; without repeats, plain lines.
    : >"$log"
    PATH=$plot_path MPIEXEC=$plot_mpiexec on_layout 2r "${sweep[@]}" --png "$work/c.png"
    expect_rc 0
    has "set yrange [0:*]" "$log" "the gnuplot script"
    lacks "set logscale y" "$log" "the gnuplot script"
    lacks "yerrorlines" "$log" "the gnuplot script"
    grep -q '^plot .*linespoints .*title "strata out-of-place".*title "strata in-place"' "$log" ||
      fail "no out-of-place and in-place series without --repeat"
    cp "$work/a.json" "$work/b.json"
    "${PERF_PLOT:?}" -o "$work/both.png" --title "two runs" --placement oop "$work/a.json" \
      "$work/b.json" >"$out" 2>"$err" || fail "tools/plot failed"
    [ -s "$work/both.png" ] || fail "tools/plot wrote no file"
    has_err "(4 lines)"
    "${PERF_PLOT:?}" -o "$work/bad.png" "$err" >"$out" 2>"$err.2"
    rc=$?
    [ "$rc" -ne 0 ] || fail "tools/plot accepted a file that is not JSON"
    ;;

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
    # nccl-tests' defaults: -n 20, -w 1 (2.16.8 on), -m 1, -c 1, -i 1M.
    mpirun -n 2 "$tool" -b 64 -e 64
    expect_rc 0
    has "minBytes 64 maxBytes 64 step: 1048576(bytes) warmup iters: 1 iters: 20 agg iters: 1 \
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

  device)
    # strata on device buffers, 2 ranks sharing the GPU: 4, 8, 16, 32 and 64 KiB, checked.
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -w 1
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
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -w 1 --collective reducescatter \
      -d bfloat16 -o avg
    expect_rc 0
    check_table 13
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -w 1 --collective allgather -d half
    expect_rc 0
    check_table 13
    mpirun -n 2 "$tool" --device -b 4K -e 64K -f 2 -c 1 -n 2 -w 1 --collective allreduce \
      -d int32 -o max --vs mpi
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
