#!/bin/bash
# What strata-topo prints about a node (issue 16, "Topology output"): the GPU/NIC matrix as
# nvidia-smi topo -m defines it, with its affinity columns and NIC legend, what it says about
# NVLink, and where the levels came from. One case per ctest entry (tests/tools/CMakeLists.txt).
# Kept apart from test_strata_topo.sh, which covers the tool's options and modes.
#
#   test_strata_topo_output.sh CASE
#
# Environment (ctest sets it): STRATA_TOPO_BIN, STRATA_TEST_DATA, PYTHON.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_TOPO_BIN:?}
data=${STRATA_TEST_DATA:?}
python=${PYTHON:-python3}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_topo_output_test

# The text between "=== TITLE" and the next section.
section() { awk -v t="=== $1" 'index($0, t) == 1 {on = 1; next} /^=== / {on = 0} on' "$out"; }
# header: the matrix's header line (the one line starting with GPU0 whose next word is not X).
header() { section 'GPU/NIC connection matrix' | awk '$1 == "GPU0" && $2 != "X"'; }
# row NAME: the matrix row of device NAME, its words separated by one space.
row() {
  section 'GPU/NIC connection matrix' |
    awk -v n="$1" '$1 == n && !($1 == "GPU0" && $2 != "X") {$1 = $1; print}'
}
expect_row() {
  local got
  got=$(row "$1")
  [ "$got" = "$1 $2" ] || fail "row $1 is '$got', expected '$1 $2'"
}
# No legend entry may be blank ("NIC0: " with nothing after it).
no_blank_nic_legend() {
  ! grep -qE '^  NIC[0-9]+: *$' "$out" || fail "a blank NIC legend entry"
}
# The levels never name an internal function.
no_internal_names() { lacks "buildClusterHierarchy"; lacks "detected:"; }

case "$case_name" in
  p4d)
    p4d=$data/topologies/nccl/p4d-24xl-topo.xml
    run --input "$p4d"
    expect_rc 0
    # GPU0 and GPU4 hang under different CPUs: SYS (it was PHB), with nvidia-smi's columns.
    header | grep -qE 'NIC3 +CPU Affinity +NUMA Affinity$' ||
      fail "no affinity columns in the header"
    expect_row GPU0 "X PIX PHB PHB SYS SYS SYS SYS PIX PHB SYS SYS 0-23,48-71 0"
    expect_row GPU4 "SYS SYS SYS SYS X PIX PHB PHB SYS SYS PIX PHB 24-47,72-95 1"
    expect_row NIC3 "SYS SYS SYS SYS PHB PHB PIX PIX SYS SYS PHB X"
    has "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes"
    # The file names no EFA device: the legend says so, with the PCI function.
    has "  NIC0: unknown (efa, pci 0000:10:1b.0)"
    no_blank_nic_legend
    # Class codes only: nothing is known about NVLink (the machine has NVSwitches).
    has "no NVLink information in nccl xml $p4d"
    has "No NVLink information in the input"
    lacks "no NVLink:"
    # Levels: the cross-socket level is an SMP link from the defaults, not "pcie ... hardware".
    no_internal_names
    has "hierarchy socket(4) x node(2) over 8 ranks (from nccl xml $p4d; one node)"
    grep -qE '^  level 1 node: 1 group of 2 socket groups; link smp, .* source default;' "$out" ||
      fail "the cross-socket level is not an smp link"
    grep -qE '^  level 0 socket: 2 groups of 4 ranks; link pcie,' "$out" ||
      fail "the socket level is not pcie"
    ;;

  nvsmi_a10)
    # nvidia-smi shows every NVLink: its GPUs without NV# cells positively have none.
    run --input "$data/topologies/nvidia-smi/xuesongtap_4xA10_2nics.txt"
    expect_rc 0
    has "no NVLink: GPUs talk over PCIe and SMP"
    lacks "NVLink information"
    expect_row GPU0 "X SYS SYS SYS SYS SYS 0-127 0"
    expect_row NIC1 "SYS SYS SYS SYS PIX X"
    has "  NIC0: mlx5_0"
    no_blank_nic_legend
    no_internal_names
    ;;

  nvsmi_no_numa_column)
    # An old nvidia-smi without the NUMA Affinity column: printed as the file has it.
    run --input "$data/topologies/nvidia-smi/dlperf_8xV100-SXM2_1xmlx5.txt"
    expect_rc 0
    header | grep -qE 'mlx5_0 +CPU Affinity$' ||
      fail "the header is not the file's"
    expect_row GPU0 "X NV1 NV1 NV2 NV2 SYS SYS SYS NODE 0-11,24-35"
    ;;

  dgx2_affinity)
    # hwloc: each GPU's CPUs and NUMA node from its locality (this trimmed DGX-2 keeps 4 PUs:
    # 0-1 on NUMA node 0, 24-25 on node 1).
    run --input "$data/topologies/hwloc/nvidiaDGX2.xml" --format json
    expect_rc 0
    check_json '
m = d["matrix"]
assert d["nvlink_known"] is True
gpus = [i for i, n in enumerate(m["names"]) if n.startswith("GPU")]
assert len(gpus) == 16
for i in gpus:
    assert m["cpu_affinity"][i] in ("0-1", "24-25"), m["cpu_affinity"][i]
    assert m["numa_affinity"][i] in ("0", "1"), m["numa_affinity"][i]
assert m["cpu_affinity"][0] == "0-1" and m["numa_affinity"][0] == "0"
assert m["cpu_affinity"][15] == "24-25" and m["numa_affinity"][15] == "1"
for g in d["gpus"]:
    assert g["cpu_affinity"] and g["numa_affinity"], g
assert "from hwloc xml" in d["levels_source"], d["levels_source"]
'
    ;;

  levels_origin)
    # Several imagined nodes: the levels say so, in words.
    run --input "$data/topologies/hwloc/nvidiaDGX2.xml" --nodes 3
    expect_rc 0
    no_internal_names
    has "(from hwloc xml $data/topologies/hwloc/nvidiaDGX2.xml; 3 identical nodes assumed (--nodes))"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
exit 0
