#!/bin/bash
# strata-plan against a baseline (--baseline: NCCL's own choice by its cost model, flat-ring,
# mpi-ring, none): one case per ctest entry (tests/tools/plan.cmake). Split from
# test_strata_plan.sh; the same environment (STRATA_PLAN_BIN, STRATA_SOURCE_DIR, PYTHON) and
# helpers (lib.sh). Every case checks what the tool printed, not only its exit code.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_PLAN_BIN:?}
src=${STRATA_SOURCE_DIR:?}
python=${PYTHON:-python3}
topos=$src/configs/topologies
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_plan_baseline_test

case "$case_name" in
  simulate_nccl)
    # NCCL's own choice is the baseline where the ranks are GPUs (the file's gpu key).
    run simulate --topo "$topos/nccl_tests_119_3x8_a100_4hdr.yaml" --sizes 8,1M,128M
    expect_rc 0
    has "baseline nccl: NCCL's choice by its own cost model (NCCL 2.30.7"
    has "ampere GPUs, intel CPUs, 3 nodes of 8 GPUs, NVLink inside; ring 4 channels x 24 GB/s"
    header=$(grep -E '^ *size ' "$out")
    for col in nccl "nccl algo" flat-ring passthrough two-level strata chosen plan speedup; do
      [[ "$header" == *"$col"* ]] || fail "no '$col' column in '$header'"
    done
    grep -qE '^ *8 B +25\.2 us +tree/LL ' "$out" || fail "8 B: NCCL's tree/LL at 25.2 us expected"
    grep -qE '^ *128 MiB +2\.97 ms +ring/Simple ' "$out" || fail "128 MiB: ring/Simple at 2.97 ms"
    has "speedup = nccl / chosen"
    run simulate --topo "$topos/nccl_tests_119_3x8_a100_4hdr.yaml" --sizes 1K:1G:x4 --format json
    expect_rc 0
    check_json '
assert d["baseline"]["kind"] == "nccl"
for r in d["rows"]:
    b, chosen, strata = r["baseline"]["us"], r["chosen_us"], r["strata_plan"]["us"]
    # What runs is never predicted slower than NCCL: strata falls back to it.
    assert chosen <= b * (1 + 1e-12) and chosen <= strata * (1 + 1e-12), r
    assert r["fallback"] == (b < strata), r
    assert abs(r["speedup_vs_baseline"] - b / chosen) < 1e-9 * b / chosen
    assert r["baseline"]["what"].split("/")[0] in ("ring", "tree"), r
'
    # --cluster is GPUs by definition; --gpu and --cpu change NCCL's constants.
    run simulate --cluster 4x8 --gpu hopper --cpu amd --sizes 1M
    expect_rc 0
    has "hopper GPUs, amd CPUs"
    lacks "the GPU generation is not given"
    run simulate --cluster 4x8 --sizes 1M
    expect_rc 0
    has "the GPU generation is not given"
    ;;

  show_fallback)
    # One node of 8 GPUs at 256 MiB: NCCL's ring beats strata's best plan, so strata falls back.
    run show --cluster 1x8 --size 256M
    expect_rc 0
    has "plan flat: NCCL's ring/Simple over every rank, 3.188 ms"
    has "strata falls back to NCCL's flat algorithm"
    awk '$1 == "nccl" && $4 == "1.00x" { found = 1 } END { exit !found }' "$out" ||
      fail "no nccl row at 1.00x of the chosen"
    run show --cluster 1x8 --size 256M --format json
    expect_rc 0
    check_json '
s = d["sizes"][0]
assert s["fallback"] is True and s["chosen_us"] == s["baseline"]["us"] < s["total_us"], s
'
    # A plan file's rule runs as written; show only says it is slower.
    printf 'rules:\n  - {min_bytes: 0, plan: passthrough}\n' > "$work/pass.yaml"
    run show --topo "$topos/nccl_tests_119_3x8_a100_4hdr.yaml" --size 1G \
      --plan-file "$work/pass.yaml"
    expect_rc 0
    has "plan passthrough"
    lacks "falls back"
    grep -qE "^note: this plan is predicted [0-9.]+x the nccl baseline's time \(ring/Simple, " \
      "$out" || fail "no note that the file's plan is slower than NCCL's"
    ;;

  baseline_kinds)
    # Without GPUs the default baseline is the flat ring (simulate) or none (show).
    run simulate --topo "$topos/seed_40gpu.yaml" --sizes 1M
    expect_rc 0
    lacks "baseline nccl"
    has "speedup = flat-ring / chosen"
    run show --topo "$topos/seed_40gpu.yaml" --size 1M
    expect_rc 0
    ! grep -q '^baseline' "$out" || fail "a baseline line without a baseline"
    run simulate --topo "$topos/seed_40gpu.yaml" --baseline mpi-ring --sizes 1M,1G
    expect_rc 0
    has "baseline mpi-ring: one ring allreduce over every rank through MPI"
    grep -E '^ *size ' "$out" | grep -q "mpi-ring" || fail "no mpi-ring column"
    run simulate --cluster 24x8 --baseline none --sizes 1M
    expect_rc 0
    ! grep -q '^baseline' "$out" || fail "a baseline line without a baseline"
    has "speedup = flat-ring / chosen"
    run simulate --topo "$topos/seed_40gpu.yaml" --baseline nccl --gpu volta --sizes 1G
    expect_rc 0
    has "volta GPUs"
    ;;

  published)
    # A topology file's `# published:` figure is set beside NCCL's model in the notes, with the
    # reason where the two are more than 15% apart. nccl-tests#169's 2 nodes: the model picks
    # the tree (about 164 GB/s) where about 100 was measured; the ring alone agrees.
    run simulate --topo "$topos/nccl_tests_169_2x8_a100_8roce.yaml" --sizes 1G:8G
    expect_rc 0
    has "note: published (line 9): NCCL measured 100 GB/s bus bandwidth at 1 GiB-8 GiB (nccl-tests issue #169, 2 servers)"
    has "NCCL's cost model predicts 164-165 GB/s there (its choice, tree/Simple), +65%"
    has "the model's ring alone gives 95.2-95.9 GB/s (-5%, within 15%)"
    has "On 2 nodes NCCL's search raises the tree's intra-node channels to 24 GB/s"
    has "docs/decomposition.md, \"Published clusters\""
    # show names it too, and JSON carries it among the baseline's notes.
    run show --topo "$topos/nccl_tests_169_2x8_a100_8roce.yaml" --size 1G --format json
    expect_rc 0
    check_json 'assert any("NCCL measured 100 GB/s" in n for n in d["baseline"]["notes"]), d'
    # Within 15% (nccl-tests#119's peak), and a model off because of the network (#22's EFA).
    run simulate --topo "$topos/nccl_tests_119_3x8_a100_4hdr.yaml" --sizes 128M
    expect_rc 0
    has "NCCL measured 96 GB/s bus bandwidth at 128 MiB (nccl-tests issue #119, the peak); NCCL's cost model predicts 86.6 GB/s there (its choice, ring/Simple), -10%: within 15%"
    run simulate --topo "$topos/nccl_tests_22_2x8_v100_efa.yaml" --size 1000000000
    expect_rc 0
    has "NCCL measured 7 GB/s bus bandwidth at 954 MiB with ring"
    has "predicts 12 GB/s there (ring/Simple), +71%: the model gives every NIC its line rate"
    has "NCCL measured 14 GB/s bus bandwidth at 954 MiB with tree"
    # A measurement above the model, in a file of one's own (any file may carry figures).
    sed 's/busbw 100 GB\/s/busbw 400 GB\/s/' "$topos/nccl_tests_169_2x8_a100_8roce.yaml" \
      >"$work/fast.yaml"
    run simulate --topo "$work/fast.yaml" --sizes 1G
    expect_rc 0
    has "NCCL measured 400 GB/s bus bandwidth at 1 GiB-8 GiB"
    has "the model is below the measurement"
    # Another baseline says the figures are there and how to compare them.
    run simulate --topo "$topos/nccl_tests_169_2x8_a100_8roce.yaml" --sizes 1G --baseline flat-ring
    expect_rc 0
    has "note: the topology file records measured NCCL figures (line 9); --baseline nccl compares"
    lacks "NCCL measured"
    # A malformed figure is refused at its line, not dropped.
    { cat "$topos/2x2.yaml"; echo "# published: allreduce busbw fast at 1G"; } >"$work/bad.yaml"
    run simulate --topo "$work/bad.yaml"
    expect_failure
    has_err "topology file $work/bad.yaml:$(wc -l <"$work/bad.yaml"): expected '# published: allreduce busbw GBPS GB/s at SIZES"
    { cat "$topos/2x2.yaml"; echo "# published: allreduce busbw 5 GB/s at 8G:1G"; } >"$work/bad.yaml"
    run show --topo "$work/bad.yaml" --size 1M
    expect_failure
    has_err "bad.yaml:$(wc -l <"$work/bad.yaml"):"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
