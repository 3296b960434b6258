#!/bin/bash
# strata-plan show --collective reducescatter|allgather: the form the communicator runs per size
# (flat or hierarchical, chosen by the cost model, decompose/blocks_cost.h, or pinned by a plan
# file's reduce_scatter/all_gather rules), its stages and the other form's time. One case per
# ctest entry (tests/tools/plan.cmake); the environment and helpers of test_strata_plan.sh.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_PLAN_BIN:?}
src=${STRATA_SOURCE_DIR:?}
python=${PYTHON:-python3}
topos=$src/configs/topologies
pins=$src/tests/data/plans
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_plan_forms_test

case "$case_name" in
  show_block_forms)
    # 8 ranks over three levels of the same default link: the hierarchical form pays 3 alphas
    # (one per level of 2) against the flat ring's 7, so it wins small; at 64 MiB the bandwidth
    # terms telescope to the flat ring's and the two cost all but the same.
    run show --topo "$topos/2x2x2.yaml" --collective reducescatter --sizes 8,64M
    expect_rc 0
    has "collective: reducescatter; its forms:"
    has "form hierarchical: reducescatter@socket, reducescatter@node, reducescatter@rack"
    has "flat  70.01 us  2.33x chosen  reducescatter@all"
    run show --topo "$topos/2x2x2.yaml" --collective allgather --sizes 8,64M --format json
    expect_rc 0
    check_json '
assert d["collective"] == "allgather" and d["ranks"] == 8
small, large = d["sizes"]
assert small["form"] == {"key": "hierarchical", "name": "hierarchical", "description":
    "allgather@rack, allgather@node, allgather@socket"}, small["form"]
assert small["pinned"] is False and small["model_choice"] == "hierarchical"
assert [s["label"] for s in small["stages"]] == ["allgather@rack", "allgather@node",
    "allgather@socket"]
assert small["compared"]["flat"]["description"] == "allgather@all"
assert small["total_us"] < small["compared"]["flat"]["total_us"]
# Every size: the choice is the cheaper form.
for s in d["sizes"]:
    other = list(s["compared"].values())[0]["total_us"]
    assert s["total_us"] <= other, s
'
    ;;

  show_one_level)
    # One level: there is no hierarchical form to run, and show says so instead of a time.
    run show --topo "$topos/flat4.yaml" --collective reducescatter --sizes 1M
    expect_rc 0
    has "form flat: reducescatter@all"
    grep -qE '^  hierarchical +- +not possible on this layout' "$out" ||
      fail "the hierarchical form is not marked impossible"
    run show --topo "$topos/flat4.yaml" --collective allgather --sizes 1M --format json
    expect_rc 0
    check_json '
s = d["sizes"][0]
assert s["form"]["key"] == "flat"
assert s["compared"]["hierarchical"]["total_us"] is None
assert s["compared"]["hierarchical"]["description"] == "not possible on this layout"
'
    ;;

  show_pinned_forms)
    # A plan file's pins run as written; the cost model's own choice is marked where it differs.
    run show --topo "$topos/2x2x2.yaml" --collective allgather --sizes 8,1M \
      --plan-file "$pins/pinned_blocks_2x2x2.yaml"
    expect_rc 0
    has "plans: plan file $pins/pinned_blocks_2x2x2.yaml"
    has "form hierarchical (pinned by plan file $pins/pinned_blocks_2x2x2.yaml): allgather@rack"
    has "form flat (pinned by plan file $pins/pinned_blocks_2x2x2.yaml): allgather@all"
    has "allgather@rack, allgather@node, allgather@socket  (the cost model's choice)"
    run show --topo "$topos/2x2x2.yaml" --collective reducescatter --sizes 8,1M --format json \
      --plan-file "$pins/pinned_blocks_2x2x2.yaml"
    expect_rc 0
    check_json '
small, large = d["sizes"]
assert small["pinned"] and small["form"]["key"] == "flat", small
assert small["model_choice"] == "hierarchical"
assert large["pinned"] and large["form"]["key"] == "hierarchical", large
'
    # No pins for this collective: the planner's choice, and the header says so.
    printf 'rules:\n  - {min_bytes: 0, plan: passthrough}\n' >"$work/plain.yaml"
    run show --topo "$topos/2x2x2.yaml" --collective reducescatter --sizes 8 \
      --plan-file "$work/plain.yaml"
    expect_rc 0
    has "plans: the planner's choice (cost model)"
    lacks "pinned"
    # Broadcast and reduce have no plan-file rules: refused, not ignored.
    run show --topo "$topos/2x2x2.yaml" --collective reduce --plan-file "$work/plain.yaml"
    expect_usage
    has_err "does not go with --collective reduce"
    run show --topo "$topos/2x2x2.yaml" --collective alltoall
    expect_usage
    has_err "alltoall not in {allreduce,broadcast,reduce,reducescatter,allgather}"
    ;;

  live_pinned_forms)
    # Under --live the communicator's STRATA_PLAN_FILE pins are what show reports.
    mpirun -n 2 env STRATA_HOSTNAME=a STRATA_PLAN_FILE="$pins/pinned_blocks_2x2.yaml" \
      "$tool" show --live --collective reducescatter --sizes 1K,1M : \
      -n 2 env STRATA_HOSTNAME=b STRATA_PLAN_FILE="$pins/pinned_blocks_2x2.yaml" \
      "$tool" show --live --collective reducescatter --sizes 1K,1M
    expect_rc 0
    has "plans: plan file $pins/pinned_blocks_2x2.yaml"
    has "form hierarchical (pinned by plan file $pins/pinned_blocks_2x2.yaml): reducescatter@node, reducescatter@network"
    has "form flat (pinned by plan file $pins/pinned_blocks_2x2.yaml): reducescatter@all"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
