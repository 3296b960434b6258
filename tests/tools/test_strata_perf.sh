#!/bin/bash
# strata-perf as a user runs it: one case per ctest entry (tests/tools/perf.cmake).
#
#   test_strata_perf.sh CASE   (nccl-tests' command lines and output: test_strata_perf_nccltests.sh)
#
# CASE is help, bad_arguments, bad_flag_mpi, bad_root_mpi, bad_output, vs_mpi, vs_mpi_rooted,
# nonblocking, nonblocking_rooted, nonblocking_no_progress, overlap, overlap_functional, plot,
# device
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
# Every run passes small -w/-n (nccl-tests' defaults, -w 5 -n 20, would slow CI down).
# Every case checks what the tool printed, never a timing: --nonblocking's and --overlap's
# numbers are checked for shape and sign, not for speed.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/perf_lib.sh"

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
