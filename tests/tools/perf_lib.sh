# What tests/tools/test_strata_perf*.sh share: the case name, the tool, a work directory and
# the checks of strata-perf's output. Sourced, never run; the sourcing script's header says
# which environment it needs (PERF_BIN, PYTHON, MPIEXEC, ...).
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
