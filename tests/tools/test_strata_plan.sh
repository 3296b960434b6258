#!/bin/bash
# strata-plan as a user runs it: one case per ctest entry (tests/tools/plan.cmake).
#
#   test_strata_plan.sh CASE
#
# The environment names what to run (ctest sets it):
#   STRATA_PLAN_BIN     the strata-plan executable
#   STRATA_SOURCE_DIR   the source tree (configs/topologies, configs/plans, tests/data)
#   MPIEXEC             mpiexec (the live cases)
#   PYTHON              python3 (checks the JSON output)
# Every case checks what the tool printed, not only its exit code.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_PLAN_BIN:?}
src=${STRATA_SOURCE_DIR:?}
python=${PYTHON:-python3}
topos=$src/configs/topologies
plans=$src/configs/plans
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_plan_test

# in_range VALUE LO HI: whether LO <= VALUE <= HI (decimals allowed).
in_range() {
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'
}

# The flat ring's total in the "compared with:" block of `show`, in ms (the only size shown).
flat_ring_ms() { awk '$1 == "flat-ring" && $3 == "ms" { print $2; exit }' "$out"; }

case "$case_name" in
  help)
    run --help
    expect_rc 0
    for word in show simulate validate Examples \
        "--cluster 24x8 --intra nvlink:150 --inter ib:4x25"; do
      has "$word"
    done
    run show --help
    expect_rc 0
    for word in --topo --input --nodes --ranks-per-node --cluster --live --size --sizes \
        --plan-file --reduce-gbps --format flat-ring two-level passthrough Examples \
        --collective scatter-allgather reducescatter-gather; do
      has "$word"
    done
    run simulate --help
    expect_rc 0
    for word in --cluster --intra --inter --intra-latency-us --inter-latency-us --nics \
        --reduce-gbps --sizes --format speedup "ceil(GPUS / NICs)" \
        "simulate --cluster 24x8 --intra nvlink:150 --inter ib:4x25"; do
      has "$word"
    done
    run validate --help
    expect_rc 0
    for word in --plan-file --topo --input --live --format "OK: N rules" "FILE:LINE" Examples; do
      has "$word"
    done
    # Every help ends with the exit statuses.
    for sub in "" show simulate validate; do
      run $sub --help
      [ "$(tail -n 1 "$out")" = "Exit status: 0 success, 1 failure, 2 usage error (a wrong command line, or option values that do not go together)." ] ||
        fail "strata-plan $sub --help does not end with the exit statuses"
    done
    ;;

  show_small_vs_large)
    # 8 bytes and 256 MiB on socket x node x rack: different plans, or the output says why not.
    run show --topo "$topos/2x2x2.yaml" --size 8 --size 256M --format json
    expect_rc 0
    check_json '
s = d["sizes"]
assert [x["bytes"] for x in s] == [8, 256 << 20], [x["bytes"] for x in s]
assert d["hierarchy"] == "socket(2) x node(2) x rack(2)" and d["ranks"] == 8
for x in s:
    assert x["total_us"] > 0 and len(x["stages"]) >= 1
    # The stages add up to the serial time; overlapping pipeline pieces make the call shorter.
    assert abs(sum(st["us"] for st in x["stages"]) - x["serial_us"]) < 1e-6 * x["serial_us"]
    assert x["total_us"] <= x["serial_us"] * (1 + 1e-9)
    assert x["pieces"] >= 1 and (x["pieces"] > 1 or x["total_us"] == x["serial_us"])
    for key in ("flat_ring", "two_level", "blueconnect", "passthrough"):
        assert x["compared"][key]["total_us"] >= x["total_us"] * (1 - 1e-9), key
small, large = s
if small["plan"]["description"] == large["plan"]["description"]:
    # The same plan must come with the reason: equal costs (ties) and unknown links.
    assert large["ties"] or small["ties"], "same plan and no tie reported"
    assert any("no bandwidth is known" in n for n in d["notes"]), d["notes"]
'
    run show --topo "$topos/2x2x2.yaml" --size 8 --size 256M
    expect_rc 0
    has "=== 8 bytes (8 B) ==="
    has "=== 268435456 bytes (256 MiB) ==="
    has "stage"
    has "bytes moved"
    has "compared with:"
    plans_seen=$(grep -c '^plan ' "$out")
    [ "$plans_seen" -eq 2 ] || fail "$plans_seen plan lines, expected 2"
    if [ "$(grep '^plan ' "$out" | sort -u | wc -l)" -eq 1 ]; then
      has "cost exactly as much"
      has "no bandwidth is known"
    fi
    ;;

  show_seed_flat_ring)
    # The seed: 2.4 GB over 6 GB/s InfiniBand is ~400 ms; with the default 10 GB/s local reduction
    # the ring's reduce-scatter adds ~117 ms.
    run show --topo "$topos/seed_40gpu.yaml" --size 1200000000
    expect_rc 0
    has "hierarchy node(8) x network(5) over 40 ranks"
    has "=== 1200000000 bytes (1.12 GiB) ==="
    ms=$(flat_ring_ms)
    in_range "$ms" 400 510 || fail "flat ring total '$ms' ms not in 400..510"
    run show --topo "$topos/seed_40gpu.yaml" --size 1200000000 --reduce-gbps 500
    expect_rc 0
    ms=$(flat_ring_ms)
    in_range "$ms" 380 420 || fail "flat ring total '$ms' ms not in 380..420 (seed: ~392 ms)"
    run show --topo "$topos/seed_40gpu.yaml" --size 1200000000 --reduce-gbps 500 --format json
    expect_rc 0
    check_json '
x = d["sizes"][0]
assert d["cost_params"]["reduce_GBps"] == 500
flat = x["compared"]["flat_ring"]
assert flat["name"] == "flat-ring"
assert 380e3 <= flat["total_us"] <= 420e3, flat["total_us"]
'
    ;;

  show_seed_nic_per_gpu)
    # One NIC per GPU lets the 8 network groups of a node run at full rate: the hierarchical plan
    # beats the ring. With one shared NIC it does not in series; in overlapping pipeline pieces
    # the node stages hide behind the network stage, which moves fewer bytes through the NIC
    # than the ring (8 groups x 2 (4/5) S/8 = 1.6 S, against 2 (39/40) S).
    run show --topo "$topos/seed_40gpu_nic_per_gpu.yaml" --size 1200000000 --format json
    expect_rc 0
    check_json '
x = d["sizes"][0]
assert x["plan"]["name"] == "blueconnect", x["plan"]
assert x["total_us"] < x["compared"]["flat_ring"]["total_us"]
'
    run show --topo "$topos/seed_40gpu.yaml" --size 1200000000 --format json
    expect_rc 0
    check_json '
x = d["sizes"][0]
two, ring = x["compared"]["two_level"], x["compared"]["flat_ring"]
assert two["serial_us"] > ring["total_us"], (two, ring)
assert two["pieces"] > 1 and two["total_us"] < ring["total_us"], (two, ring)
'
    ;;

  show_collective_broadcast)
    # The 2x2 of the documentation: shared memory in a node (10 GB/s, 0.3 us), a 1 GB/s, 20 us
    # network. 8 bytes go by tree (one network hop of the whole message beats flat's two and the
    # sharded form's four latencies); 16 MiB are scattered and all-gathered.
    cat >"$work/2x2.yaml" <<'EOF'
levels:
  - {name: node, size: 2, fabric: mpi, link: shm, bandwidth_GBps: 10, latency_us: 0.3}
  - {name: network, size: 2, fabric: mpi, link: ethernet, bandwidth_GBps: 1, latency_us: 20}
EOF
    run show --topo "$work/2x2.yaml" --collective broadcast --sizes 8,16M
    expect_rc 0
    has "collective: broadcast; its forms:"
    has "=== 8 bytes (8 B) ==="
    has "=== 16777216 bytes (16 MiB) ==="
    has "compared with:"
    forms=$(grep '^form ' "$out" | cut -d: -f1 | tr '\n' ' ')
    [ "$forms" = "form tree form scatter-allgather " ] ||
      fail "forms '$forms', expected tree for 8 B and scatter-allgather for 16 MiB"
    has "form scatter-allgather: scatter@node, scatter@network, allgather@network, allgather@node"
    lacks "plan "
    # A slow network over 8 hosts: the tree pays log2(8) full-message hops, the sharded form
    # about two; the numbers add up and every other form costs more.
    run show --cluster 8x4 --intra shm:10 --intra-latency-us 0.3 --inter eth:4x1 \
      --inter-latency-us 20 --collective broadcast --sizes 8,64M --format json
    expect_rc 0
    check_json '
assert d["collective"] == "broadcast" and d["ranks"] == 32
small, large = d["sizes"]
assert small["form"]["key"] in ("tree", "flat"), small["form"]
assert large["form"] == {"key": "sharded", "name": "scatter-allgather", "description":
    "scatter@node, scatter@network, allgather@network, allgather@node"}, large["form"]
for x in d["sizes"]:
    assert abs(sum(st["us"] for st in x["stages"]) - x["total_us"]) < 1e-6 * x["total_us"]
    others = {"flat", "tree", "sharded"} - {x["form"]["key"]}
    assert set(x["compared"]) == others, x["compared"]
    for k in others:
        assert x["compared"][k]["total_us"] >= x["total_us"] * (1 - 1e-9), k
assert large["compared"]["tree"]["total_us"] > 2 * large["total_us"]
'
    # The default collective is the allreduce, exactly as before.
    run show --topo "$topos/2x2.yaml" --sizes 8,1M
    expect_rc 0
    cp "$out" "$work/default"
    has "plan "
    lacks "collective:"
    run show --topo "$topos/2x2.yaml" --sizes 8,1M --collective allreduce
    expect_rc 0
    cmp -s "$out" "$work/default" || fail "--collective allreduce differs from the default"
    ;;

  show_collective_reduce)
    # Reduce: the same choice by size, with reduce-scatters up and gathers down; a 1-level
    # hierarchy's tree costs what flat does, and the tie goes to flat.
    run show --cluster 8x4 --intra shm:10 --intra-latency-us 0.3 --inter eth:4x1 \
      --inter-latency-us 20 --collective reduce --sizes 8,64M
    expect_rc 0
    has "collective: reduce; its forms:"
    forms=$(grep '^form ' "$out" | cut -d: -f1 | tr '\n' ' ')
    [[ "$forms" =~ ^form\ (tree|flat)\ form\ reducescatter-gather\ $ ]] ||
      fail "forms '$forms', expected tree or flat, then reducescatter-gather"
    has "reducescatter@node, reducescatter@network, gather@network, gather@node"
    run show --topo "$topos/flat4.yaml" --collective reduce --size 1K --format json
    expect_rc 0
    check_json '
x = d["sizes"][0]
assert d["collective"] == "reduce"
assert x["form"]["key"] == "flat" and x["ties"] == ["tree"], (x["form"], x["ties"])
assert [s["label"] for s in x["stages"]] == ["reduce@all"]
assert x["compared"]["sharded"]["name"] == "reducescatter-gather"
'
    ;;

  show_plan_file)
    run show --topo "$topos/2x2x2.yaml" --plan-file "$plans/blueconnect_2x2x2.yaml" \
      --sizes 1K,64K,4M
    expect_rc 0
    has "plans: plan file $plans/blueconnect_2x2x2.yaml"
    has "plan passthrough  [plan file $plans/blueconnect_2x2x2.yaml:5, rule [0, 32KiB)]"
    has "plan flat-ring: allreduce@socket+node+rack (ring)"
    has "plan reduce_scatter@socket, reduce_scatter@node, allreduce@rack (ring), all_gather@node, \
all_gather@socket"
    has "rule [1MiB, inf)]"
    run show --topo "$topos/2x2x2.yaml" --plan-file "$plans/blueconnect_2x2x2.yaml" \
      --size 4M --format json
    expect_rc 0
    check_json '
x = d["sizes"][0]
assert x["rule"] == {"min_bytes": 1 << 20, "max_bytes": None, "line": 10}, x["rule"]
assert [s["label"] for s in x["stages"]] == ["reduce_scatter@socket", "reduce_scatter@node",
    "allreduce@rack", "all_gather@node", "all_gather@socket"]
assert x["stages"][2]["algorithm"] == "ring"
'
    ;;

  show_input)
    # A node description made into a cluster: two DGX-2s, one rank per GPU.
    run show --input "$src/tests/data/topologies/hwloc/nvidiaDGX2.xml" --nodes 2 --size 64M
    expect_rc 0
    has "hierarchy nvlink(16) x network(2) over 32 ranks"
    has "16 ranks each (one per GPU)"
    has "reduce_scatter@nvlink"
    run show --input "$src/tests/data/topologies/hwloc/nvidiaDGX2.xml" --nodes 2 \
      --ranks-per-node 4 --size 64M --format json
    expect_rc 0
    check_json 'assert d["ranks"] == 8, d["ranks"]'
    ;;

  show_sizes)
    run show --topo "$topos/2x2.yaml" --sizes 1K:1M:x4,3000 --format json
    expect_rc 0
    check_json '
assert [x["bytes"] for x in d["sizes"]] == [1024, 3000, 4096, 16384, 65536, 262144, 1048576]
'
    run show --topo "$topos/2x2.yaml" --sizes 1M:4M:+1M --format json
    expect_rc 0
    check_json 'assert [x["bytes"] >> 20 for x in d["sizes"]] == [1, 2, 3, 4]'
    ;;

  simulate_192)
    # BlueConnect's cluster: 24 nodes x 8 GPUs, NVLink inside, 4 x 25 GB/s InfiniBand NICs.
    run simulate --cluster 24x8 --intra nvlink:150 --inter ib:4x25
    expect_rc 0
    has "hierarchy node(8) x network(24) over 192 ranks"
    has "link nvlink, 150 GB/s, 1 us"
    has "link infiniband, 25 GB/s, 2 us; link sharing 2"
    header=$(grep -E '^ *size ' "$out")
    for col in flat-ring passthrough two-level chosen plan speedup saved; do
      [[ "$header" == *"$col"* ]] || fail "no '$col' column in '$header'"
    done
    rows=$(grep -cE '^ *[0-9]+ (KiB|MiB|GiB) ' "$out")
    [ "$rows" -eq 11 ] || fail "$rows rows, expected 11 (1K:1G:x4)"
    grep -qE '^ *1 GiB .* [0-9.]+x +[0-9.-]+%$' "$out" ||
      fail "no speedup and saved on the 1 GiB row"
    run simulate --cluster 24x8 --intra nvlink:150 --inter ib:4x25 --format json
    expect_rc 0
    "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" || fail "not JSON"
    check_json '
assert d["ranks"] == 192
assert d["reference_plans"]["two_level"]["description"] == \
    "reduce_scatter@node, allreduce@network, all_gather@node"
rows = d["rows"]
assert len(rows) == 11
for r in rows:
    flat, chosen = r["flat_ring_us"], r["chosen"]["us"]
    assert chosen <= min(flat, r["passthrough_us"], r["two_level_us"]) * (1 + 1e-12)
    assert abs(r["speedup_vs_flat_ring"] - flat / chosen) < 1e-9 * flat / chosen
    assert abs(r["time_saved_fraction"] - (1 - chosen / flat)) < 1e-9
    assert r["speedup_vs_flat_ring"] >= 1 - 1e-12
'
    ;;

  simulate_links)
    # One 25 GB/s NIC per node is shared by all 8 GPUs; 8 NICs give each GPU its own.
    run simulate --cluster 4x8 --inter ib:25 --sizes 256M --format json
    expect_rc 0
    check_json '
net = d["levels"][1]
assert net["name"] == "network" and net["link_sharing"] == 8, net
'
    shared=$(awk '/"two_level_us"/ { gsub(/[,]/, "", $2); print $2 }' "$out")
    run simulate --cluster 4x8 --inter ib:25 --nics 8 --sizes 256M --format json
    expect_rc 0
    check_json 'assert d["levels"][1]["link_sharing"] == 1'
    own=$(awk '/"two_level_us"/ { gsub(/[,]/, "", $2); print $2 }' "$out")
    awk -v a="$own" -v b="$shared" 'BEGIN { exit !(a < b) }' ||
      fail "8 NICs ($own us) not faster than 1 ($shared us)"
    # LANESxGBps on the intra link adds the lanes up.
    run simulate --cluster 2x4 --intra nvlink:6x25 --intra-latency-us 0.5 --inter-latency-us 3 \
      --sizes 1M
    expect_rc 0
    has "link nvlink, 150 GB/s, 0.5 us"
    has "25 GB/s, 3 us"
    # One node: no network level; the seed's cluster from a topology file works too.
    run simulate --cluster 1x8 --sizes 1M
    expect_rc 0
    has "hierarchy node(8) over 8 ranks"
    run simulate --topo "$topos/seed_40gpu.yaml" --sizes 1200000000
    expect_rc 0
    has "hierarchy node(8) x network(5) over 40 ranks"
    ;;

  validate_pinned_forms)
    # A file's pinned reduce-scatter and all-gather forms are listed after its rules.
    run validate --plan-file "$src/tests/data/plans/pinned_blocks_2x2x2.yaml" \
      --topo "$topos/2x2x2.yaml"
    expect_rc 0
    has "reduce_scatter [0, 64KiB) line 8: flat"
    has "all_gather [64KiB, inf) line 12: flat"
    run validate --plan-file "$src/tests/data/plans/pinned_blocks_2x2x2.yaml" \
      --topo "$topos/2x2x2.yaml" --format json
    expect_rc 0
    check_json '
rs, ag = d["reduce_scatter"], d["all_gather"]
assert [r["form"] for r in rs] == ["flat", "hierarchical"], rs
assert [r["form"] for r in ag] == ["hierarchical", "flat"], ag
assert rs[0]["max_bytes"] == 65536 and rs[1]["max_bytes"] is None, rs
'
    run validate --plan-file "$plans/two_level.yaml" --topo "$topos/2x2.yaml" --format json
    expect_rc 0
    check_json 'assert d["reduce_scatter"] == [] and d["all_gather"] == []'
    ;;

  validate_configs)
    for pair in two_level.yaml:2x2.yaml blueconnect_2x2x2.yaml:2x2x2.yaml \
        small_passthrough.yaml:2x2.yaml small_passthrough.yaml:2x2x2.yaml \
        small_passthrough.yaml:flat4.yaml two_level.yaml:4x2.yaml; do
      plan=${pair%%:*}
      topo=${pair#*:}
      run validate --plan-file "$plans/$plan" --topo "$topos/$topo"
      expect_rc 0
      grep -qE '^OK: [0-9]+ rules? ' "$out" || fail "$plan on $topo: no 'OK: N rules'"
    done
    run validate --plan-file "$plans/blueconnect_2x2x2.yaml" --topo "$topos/2x2x2.yaml"
    expect_rc 0
    has "OK: 3 rules"
    has "[0, 32KiB) line 5: passthrough"
    has "[32KiB, 1MiB) line 7: flat-ring"
    has "[1MiB, inf) line 10: reduce_scatter@socket, reduce_scatter@node, allreduce@rack (ring)"
    has "rack: fabric mpi chunk_bytes 4MiB"
    run validate --plan-file "$plans/blueconnect_2x2x2.yaml" --topo "$topos/2x2x2.yaml" \
      --format json
    expect_rc 0
    check_json '
assert d["ok"] is True, d
assert d["ranks"] == 8 and d["plan_source"].endswith("blueconnect_2x2x2.yaml"), d
r = d["rules"]
assert [(x["min_bytes"], x["max_bytes"], x["line"]) for x in r] == \
    [(0, 32768, 5), (32768, 1048576, 7), (1048576, None, 10)], r
assert r[0]["plan"]["name"] == "passthrough" and r[1]["plan"]["name"] == "flat-ring", r
assert r[2]["plan"]["description"].startswith("reduce_scatter@socket, "), r[2]
rack = [s for s in r[2]["stages"] if s["level"] == "rack"]
assert rack and rack[0]["fabric"] == "mpi" and rack[0]["chunk_bytes"] == 4 << 20, r[2]
'
    ;;

  validate_broken)
    # A level the hierarchy lacks, on line 5.
    cat >"$work/broken.yaml" <<'EOF'
rules:
  - {min_bytes: 0, max_bytes: 64KiB, plan: passthrough}
  - min_bytes: 64KiB
    stages:
      - reduce_scatter@socket
      - allreduce@network
      - all_gather@socket
EOF
    run validate --plan-file "$work/broken.yaml" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "strata-plan: error: plan file $work/broken.yaml:5: unknown level 'socket'"
    ! grep -q "^OK" "$out" || fail "printed OK for a broken file"
    # Offline there is no job: the message names the layout it checked and where it came from.
    has_err "the layout checked against (topology file $topos/2x2.yaml) is node(2) x network(2), 4 ranks"
    lacks "this job" "$err" stderr
    run validate --plan-file "$work/broken.yaml" --cluster 2x2 --format json
    expect_failure
    check_json 'assert "the layout checked against (simulated cluster 2x2" in d["error"], d
assert "this job" not in d["error"], d'
    # Rules that leave a gap, on line 3.
    cat >"$work/gap.yaml" <<'EOF'
rules:
  - {min_bytes: 0, max_bytes: 64KiB, plan: passthrough}
  - {min_bytes: 128KiB, plan: flat}
EOF
    run validate --plan-file "$work/gap.yaml" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "$work/gap.yaml:3:"
    # As JSON: a verdict on stdout, the message on stderr, exit 1.
    run validate --plan-file "$work/gap.yaml" --topo "$topos/2x2.yaml" --format json
    expect_failure
    has_err "$work/gap.yaml:3:"
    check_json 'assert d["ok"] is False and "gap.yaml:3:" in d["error"], d' 
    # A plan for other levels.
    run validate --plan-file "$plans/two_level.yaml" --topo "$topos/2x2x2.yaml"
    expect_failure
    grep -qE "two_level.yaml:[0-9]+: unknown level 'network'" "$err" || fail "no file:line"
    # A plan file that cannot be read.
    run validate --plan-file "$work/missing.yaml" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "$work/missing.yaml"
    # --plan-file with show fails the same way.
    run show --topo "$topos/2x2.yaml" --plan-file "$work/broken.yaml" --size 1M
    expect_failure
    has_err "broken.yaml:5:"
    ;;

  bad_inputs)
    # Files that once hung strata-plan (the YAML loader looping on a line that starts with ',',
    # a FIFO's open waiting for a writer) or were accepted with one-byte chunks
    # (tests/data/regressions/README.md). timeout turns a hang back into a failure here.
    bounded() { timeout 20 "$tool" "$@" >"$out" 2>"$err"; rc=$?; [ "$rc" -ne 124 ] || fail "hung: $*"; }
    regressions=$src/tests/data/regressions
    mkfifo "$work/fifo"
    bounded show --topo "$regressions/topo_comma_hang.yaml" --size 1M
    expect_failure
    has_err "topo_comma_hang.yaml:1: yaml syntax error: unexpected ','"
    bounded show --topo "$work/fifo" --size 1M
    expect_failure
    has_err "$work/fifo: cannot read: it is a fifo"
    bounded validate --plan-file "$regressions/plan_comma_hang.yaml" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "plan_comma_hang.yaml:3: yaml syntax error"
    bounded validate --plan-file "$regressions/plan_chunk_bytes_1.yaml" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "plan_chunk_bytes_1.yaml:2: stage allreduce@network chunk_bytes 1 is outside 4096..1073741824"
    bounded validate --plan-file "$work/fifo" --topo "$topos/2x2.yaml"
    expect_failure
    has_err "it is a fifo"
    bounded validate --plan-file /dev/zero --topo "$topos/2x2.yaml"
    expect_failure
    has_err "it is a character device"
    ;;

  bad_arguments)
    # A wrong command line, found by the parser or after it, exits 2; a file that cannot be
    # used exits 1 (tools/lib/tool_cli.h).
    usage_fails() {
      run "$@"
      expect_usage
      has_err "$expect"
    }
    run_fails() {
      run "$@"
      expect_failure
      has_err "$expect"
    }
    expect="say which hierarchy" usage_fails show --size 1M
    expect="give only one of" usage_fails show --topo "$topos/2x2.yaml" --cluster 2x2
    expect="not a size" usage_fails show --topo "$topos/2x2.yaml" --size 12Q
    expect="ends below its start" usage_fails show --topo "$topos/2x2.yaml" --sizes 1G:1K
    expect="step" usage_fails show --topo "$topos/2x2.yaml" --sizes 1K:1M:x1
    expect="NODESxGPUS" usage_fails simulate --cluster 24y8
    expect="unknown link kind 'foo'" usage_fails simulate --cluster 2x2 --intra foo:3
    expect="positive number of GB/s" usage_fails simulate --cluster 2x2 --inter ib:0
    expect="disagrees" usage_fails simulate --cluster 2x8 --inter ib:4x25 --nics 2
    expect="at most" usage_fails simulate --cluster 2048x1024
    expect="--live" usage_fails simulate --live
    expect="--nodes and --ranks-per-node go with --input" usage_fails \
      show --topo "$topos/2x2.yaml" --nodes 3
    expect="$work/none.yaml: file not found" run_fails show --topo "$work/none.yaml"
    expect="$work/none.xml" run_fails show --input "$work/none.xml"
    expect="format" usage_fails simulate --cluster 2x2 --format xml
    expect="--gpu and --cpu describe the GPUs for --baseline nccl" usage_fails \
      simulate --cluster 2x2 --baseline flat-ring --gpu ampere
    expect="--baseline" usage_fails simulate --cluster 2x2 --baseline gloo
    expect="--gpu" usage_fails simulate --cluster 2x2 --gpu a99
    expect="NCCL's model needs the bandwidth of level 'node'" run_fails \
      show --topo "$topos/2x2.yaml" --baseline nccl --size 1M
    expect="subcommand" usage_fails
    expect="plan-file" usage_fails validate --topo "$topos/2x2.yaml"
    expect="--collective: gather not in" usage_fails \
      show --topo "$topos/2x2.yaml" --collective gather
    # The short letters nccl-tests gives other meanings are gone (-f step factor, -t threads,
    # -i step bytes, -n iterations, -r root, -c check, -p parallel init).
    # Their old spellings point at the new ones.
    expect="-f is no longer an option: use --format" usage_fails show --topo "$topos/2x2.yaml" -f json
    expect="-t is no longer an option: use --topo FILE" usage_fails show -t "$topos/2x2.yaml"
    expect="-c is no longer an option: use --cluster NxG" usage_fails simulate -c 2x2
    expect="-p is no longer an option: use --plan-file FILE" usage_fails \
      validate -p "$plans/two_level.yaml" --topo "$topos/2x2.yaml"
    expect="does not go with --collective broadcast" usage_fails \
      show --topo "$topos/2x2.yaml" --collective broadcast --plan-file "$plans/two_level.yaml"
    ;;

  live_two_hosts)
    # Two emulated hosts of two ranks each (MPMD): the communicator's levels are node and network.
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" show --live --size 64M : \
      -n 2 env STRATA_HOSTNAME=b "$tool" show --live --size 64M
    expect_rc 0
    has "hierarchy node(2) x network(2) over 4 ranks (this job: 4 ranks of MPI_COMM_WORLD"
    has "level 0 node:"
    has "level 1 network:"
    [ "$(grep -c '^=== 67108864 bytes' "$out")" -eq 1 ] || fail "not printed once (rank 0 only)"
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" show --live --size 64M --format json : \
      -n 2 env STRATA_HOSTNAME=b "$tool" show --live --size 64M --format json
    expect_rc 0
    check_json '
assert [l["name"] for l in d["levels"]] == ["node", "network"]
assert d["ranks"] == 4 and d["sizes"][0]["bytes"] == 64 << 20
'
    ;;

  live_plan_file)
    # The communicator's own STRATA_PLAN_FILE is what show reports under --live, and validate
    # checks a file against the job's levels.
    mpirun -n 2 env STRATA_HOSTNAME=a STRATA_PLAN_FILE="$plans/two_level.yaml" \
      "$tool" show --live --sizes 1K,1M : \
      -n 2 env STRATA_HOSTNAME=b STRATA_PLAN_FILE="$plans/two_level.yaml" \
      "$tool" show --live --sizes 1K,1M
    expect_rc 0
    has "plans: plan file $plans/two_level.yaml"
    has "plan reduce_scatter@node, allreduce@network, all_gather@node  [plan file"
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" validate --live --plan-file "$plans/two_level.yaml" \
      : -n 2 env STRATA_HOSTNAME=b "$tool" validate --live --plan-file "$plans/two_level.yaml"
    expect_rc 0
    has "OK: 2 rules"
    has "against node(2) x network(2), 4 ranks"
    # Under --live the layout is the job's, and the message says so.
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" validate --live --plan-file "$plans/blueconnect_2x2x2.yaml" \
      : -n 2 env STRATA_HOSTNAME=b "$tool" validate --live --plan-file "$plans/blueconnect_2x2x2.yaml"
    expect_failure
    has_err "this job's layout is node(2) x network(2), 4 ranks"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
