#!/bin/bash
# strata-topo as a user runs it: one case per ctest entry (tests/tools/CMakeLists.txt).
#
#   test_strata_topo.sh CASE
#
# The environment names what to run (ctest sets it):
#   STRATA_TOPO_BIN          the strata-topo executable
#   STRATA_TOPO_FILE_LEVELS  topo_file_levels.cc: a topology file's levels as strataCommInitMPI
#                            loads them
#   STRATA_DEMO              examples/strata-allreduce-demo
#   STRATA_TEST_DATA         tests/data
#   STRATA_HOSTNAME_BY_RANK  tests/mpi/hostname_by_rank.sh
#   MPIEXEC                  mpiexec
#   PYTHON                   python3 (checks the JSON and YAML output)
# Every case checks what the tool printed, not only its exit code.
set -u

case_name=${1:?usage: $0 CASE}
tool=${STRATA_TOPO_BIN:?}
data=${STRATA_TEST_DATA:?}
python=${PYTHON:-python3}
dgx2=$data/topologies/hwloc/nvidiaDGX2.xml
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_topo_test

# The text between "=== TITLE" and the next section.
section() { awk -v t="=== $1" 'index($0, t) == 1 {on = 1; next} /^=== / {on = 0} on' "$out"; }

case "$case_name" in
  help)
    run --help
    expect_rc 0
    for word in --input --format --nodes --ranks-per-node --save STRATA_TOPO_FILE Examples \
        nvidiaDGX2.xml mpirun "r % size[0]" "--map-by slot" "text, yaml or json"; do
      has "$word"
    done
    [ "$(tail -n 1 "$out")" = "Exit status: 0 success, 1 failure, 2 usage error (a wrong command line, or option values that do not go together)." ] ||
      fail "--help does not end with the exit statuses"
    ;;

  dgx2_text)
    run --input "$dgx2"
    expect_rc 0
    has "16 GPUs"
    [ "$(section node | grep -cE '^    GPU[0-9]+  Tesla V100')" -eq 16 ] || fail "not 16 GPU lines"
    has "NVSwitch: 16 GPUs all-to-all, 6 links x 25 GB/s = 150 GB/s per GPU"
    has "NVSwitches: 12"
    has "inter-socket: smp"
    # Every off-diagonal cell of the 16x16 matrix is NV6.
    [ "$(section 'GPU/NIC connection matrix' | grep -E '^GPU[0-9]+ ' | grep -o 'NV6' | wc -l)" \
      -eq 240 ] || fail "matrix has not 240 NV6 cells"
    section 'levels strata would use: 1 node x 16 ranks (one per GPU)' >"$work/levels"
    has "hierarchy nvlink(16) over 16 ranks" "$work/levels"
    grep -qE '^  level 0 nvlink: 1 group of 16 ranks; link nvswitch, 150 GB/s' "$work/levels" ||
      fail "no nvlink level at 150 GB/s"
    ;;

  dgx2_json)
    run --input "$dgx2" --format json --nodes 2
    expect_rc 0
    check_json '
for key in ("packages", "numa_nodes", "cores"):
    assert type(d[key]) is int, key
assert d["packages"] == 2 and d["numa_nodes"] == 2
assert len(d["gpus"]) == 16
for g in d["gpus"]:
    for key in ("name", "vendor", "pci", "package", "numa"):
        assert key in g, key
    assert g["vendor"] == "nvidia" and g["name"].startswith("Tesla V100")
    assert type(g["package"]) is int and type(g["numa"]) is int
assert isinstance(d["nics"], list)
assert len(d["links"]) == 120, len(d["links"])
for l in d["links"]:
    assert l["kind"] == "nvswitch" and l["bandwidth_GBps"] == 150, l
assert d["hierarchy"] == "nvlink(16) x network(2)", d["hierarchy"]
names = [l["name"] for l in d["levels"]]
assert names == ["nvlink", "network"], names
nv = d["levels"][0]
assert nv["size"] == 16 and nv["groups"] == 2
assert nv["link"]["kind"] == "nvswitch" and nv["link"]["bandwidth_GBps"] == 150
assert d["levels"][1]["size"] == 2
assert d["matrix"]["cells"][0][1] == "NV6"
assert d["assumed"] == {"nodes": 2, "ranks_per_node": 16}
'
    ;;

  dgx2_yaml)
    run --input "$dgx2" --format yaml
    expect_rc 0
    "$python" - "$out" <<'EOF' || fail "yaml check failed"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["packages"] == 2 and len(d["gpus"]) == 16
assert [l["name"] for l in d["levels"]] == ["nvlink"]
assert d["levels"][0]["link"]["bandwidth_GBps"] == 150
EOF
    has "packages: 2"
    has "gpus:"
    has "levels:"
    has "name: nvlink"
    [ "$(grep -c 'vendor: nvidia' "$out")" -eq 16 ] || fail "not 16 GPUs in the yaml"
    ;;

  nccl_ndv4)
    run --input "$data/topologies/nccl/ndv4-topo.xml"
    expect_rc 0
    has "(source: nccl xml"
    has "4 packages"
    has "8 GPUs, 8 NICs"
    [ "$(section node | grep -cE '^    NIC[0-9]+ .*infiniband')" -eq 8 ] || fail "not 8 IB NICs"
    # Two GPUs and two NICs per package: GPU0 and GPU1 share package 0.
    section node | awk '/^package 0/{on=1;next} /^package/{on=0} on' | grep -q 'GPU1 ' ||
      fail "GPU1 not under package 0"
    section 'GPU/NIC connection matrix' | grep -qE '^NIC7 ' || fail "no NIC7 row in the matrix"
    has "hierarchy socket(2) x node(4) over 8 ranks"
    ;;

  nvsmi_8xv100)
    run --input "$data/topologies/nvidia-smi/dlperf_8xV100-SXM2_1xmlx5.txt"
    expect_rc 0
    has "(source: nvidia-smi"
    has "8 GPUs, 1 NIC"
    has "GPU0-GPU3: NV2 (nvlink), 2 links x 25 GB/s = 50 GB/s"
    has "(as printed in the file)"
    # The file's own PCIe relations, which a recomputed matrix (no bus ids) would not know.
    section 'GPU/NIC connection matrix' | grep -qE '^mlx5_0 +NODE +NODE +PIX +PIX +SYS' ||
      fail "the file's own matrix is not shown"
    has "hierarchy nvlink(8) over 8 ranks"
    ;;

  live_text)
    run
    expect_rc 0
    has "(source: live"
    gpus=$(section node | grep -cE '^ +GPU[0-9]+ ')
    section 'levels strata would use' >"$work/levels"
    grep -q '^hierarchy ' "$work/levels" || fail "no levels"
    grep -q '^  level 0 ' "$work/levels" || fail "no level 0"
    if [ "$gpus" -eq 0 ]; then
      # A host without GPUs: levels of sockets, nodes or the network only.
      ! grep -q 'nvlink' "$work/levels" || fail "an nvlink level on a host without GPUs"
      grep -qE '^  level 0 (socket|node|network):' "$work/levels" || fail "not a host level"
    fi
    ;;

  live_json)
    run --format json --nodes 2
    expect_rc 0
    check_json '
for key in ("packages", "numa_nodes", "cores"):
    assert type(d[key]) is int and d[key] >= 0, key
assert d["packages"] >= 1 and d["cores"] >= 1
for key in ("gpus", "nics", "links", "levels"):
    assert isinstance(d[key], list), key
for n in d["nics"]:
    for key in ("name", "type", "pci", "package", "numa", "rate_gbps"):
        assert key in n, key
assert d["levels"][-1]["name"] == "network" and d["levels"][-1]["size"] == 2
assert d["source"] == "live"
'
    ;;

  save_roundtrip)
    topo_file=$work/dgx2x2.yaml
    run --input "$dgx2" --nodes 2 --ranks-per-node 2 --format json --save "$topo_file"
    expect_rc 0
    has_err "wrote $topo_file"
    cp "$out" "$work/tool.json"
    [ -s "$topo_file" ] || fail "no file written"
    has "name: nvlink, size: 2, fabric: shm, link: nvswitch, bandwidth_GBps: 150" "$topo_file" file
    # The engine between nodes is the one the communicator would run (STRATA_NET: ucx).
    has "name: network, size: 2, fabric: ucx, link: ethernet" "$topo_file" file
    has "link_sharing: 2" "$topo_file" file
    has "r % size[0]" "$topo_file" file
    # The file loads back to the same levels (as strataCommInitMPI loads it).
    "${STRATA_TOPO_FILE_LEVELS:?}" "$topo_file" 4 >"$work/loaded.json" 2>"$err" ||
      fail "the saved file does not load"
    "$python" - "$work/tool.json" "$work/loaded.json" <<'EOF' ||
      fail "the file reads back differently"
import json, sys
tool, loaded = (json.load(open(p)) for p in sys.argv[1:3])
assert tool["hierarchy"] == loaded["hierarchy"] == "nvlink(2) x network(2)", loaded["hierarchy"]
assert len(tool["levels"]) == len(loaded["levels"])
for a, b in zip(tool["levels"], loaded["levels"]):
    for key in ("name", "size", "groups", "max_size", "fabric", "link_sharing"):
        assert a[key] == b[key], (key, a[key], b[key])
    for key in ("kind", "bandwidth_GBps", "latency_us"):
        assert a["link"][key] == b["link"][key], (key, a["link"][key], b["link"][key])
EOF
    # And a 4-rank job runs on it.
    STRATA_TOPO_FILE=$topo_file mpirun -n 4 "${STRATA_DEMO:?}" 1000
    expect_rc 0
    has "hierarchy nvlink(2) x network(2) over 4 ranks (topology file $topo_file)"
    has "link nvswitch 150 GB/s"
    has "network: 1 group of 2, fabric ucx"
    has "PASSED"
    ;;

  save_irregular)
    # Three GPUs, two on one package and one on the other: socket groups of 1 and 2.
    run --input "$data/topologies/hwloc/24em64t-2n6c2t-pci.xml" --save "$work/irregular.yaml"
    expect_failure
    has "socket(1..2) x node(2)"
    has_err "cannot save socket(1..2) x node(2)"
    has_err "regular"
    [ ! -e "$work/irregular.yaml" ] || fail "a file was written"
    ;;

  save_unwritable)
    run --input "$dgx2" --save "$work/no/such/dir/x.yaml"
    expect_failure
    has_err "$work/no/such/dir/x.yaml: cannot write"
    ;;

  missing_file)
    run --input "$work/does_not_exist.xml"
    expect_failure
    has_err "does_not_exist.xml"
    has_err "file not found"
    [ ! -s "$out" ] || fail "printed a description"
    ;;

  corrupt_xml)
    head -c 3000 "$dgx2" >"$work/corrupt.xml"
    run --input "$work/corrupt.xml"
    expect_failure
    has_err "corrupt.xml"
    has_err "error:"
    ;;

  not_a_topology)
    printf 'hello\nthis is not a topology\n' >"$work/notes.txt"
    run --input "$work/notes.txt"
    expect_failure
    has_err "notes.txt"
    has_err "nvidia-smi"
    : >"$work/empty.xml"
    run --input "$work/empty.xml"
    expect_failure
    has_err "empty.xml: the file is empty"
    run --input "$work"
    expect_failure
    has_err "directory"
    ;;

  bad_inputs)
    # Each of these once made strata-topo wait for ever, read without bound or crash inside
    # hwloc (tests/data/regressions/README.md). timeout turns a hang back into a failure here.
    bounded() { timeout 20 "$tool" "$@" >"$out" 2>"$err"; rc=$?; [ "$rc" -ne 124 ] || fail "hung: $*"; }
    mkfifo "$work/fifo"
    for input in /dev/zero /dev/urandom "$work/fifo"; do
      bounded --input "$input"
      expect_failure
      has_err "$input: cannot read: it is a"
      has_err "not a regular file"
    done
    printf 'GPU0\0GPU1\n' >"$work/binary.txt"
    bounded --input "$work/binary.txt"
    expect_failure
    has_err "binary.txt: a binary file, not text"
    regressions=$data/regressions
    for f in hwloc_entity_segv.xml hwloc_pu_no_complete_cpuset_segv.xml nccl_empty_system.xml \
        nvsmi_unknown_code.txt nvsmi_asymmetric.txt nvsmi_cpu_range_35-0.txt; do
      bounded --input "$regressions/$f"
      expect_failure
      has_err "$regressions/$f"
    done
    bounded --input "$regressions/hwloc_entity_segv.xml"
    has_err "a DOCTYPE with an internal subset"
    bounded --input "$regressions/hwloc_pu_no_complete_cpuset_segv.xml"
    has_err '<object type="PU"> has a cpuset but no complete_cpuset'
    ;;

  mpi_bad_files)
    # STRATA_TOPO_FILE and STRATA_PLAN_FILE at init: a file that once hung the YAML loader, a
    # FIFO (open() would wait for a writer), a device. Every rank fails init with the reason.
    mkfifo "$work/fifo"
    regressions=$data/regressions
    for setting in "STRATA_TOPO_FILE=$regressions/topo_comma_hang.yaml" \
        "STRATA_TOPO_FILE=$work/fifo" "STRATA_TOPO_FILE=/dev/zero" \
        "STRATA_PLAN_FILE=$regressions/plan_comma_hang.yaml" "STRATA_PLAN_FILE=$work/fifo" \
        "STRATA_PLAN_FILE=$regressions/plan_chunk_bytes_1.yaml"; do
      env "$setting" timeout 60 "${MPIEXEC:?}" --oversubscribe -n 2 "${STRATA_DEMO:?}" 1000 \
        >"$out" 2>"$err"
      rc=$?
      [ "$rc" -ne 124 ] || fail "init hung with $setting"
      expect_failure
      has_err "${setting#*=}"
    done
    ;;

  bad_arguments)
    # Usage errors exit 2 (tools/lib/tool_cli.h), whether the parser or the tool finds them.
    run --bogus
    expect_usage
    has_err "--bogus"
    run --format xml
    expect_usage
    has_err "xml"
    run --nodes 0
    expect_usage
    has_err "--nodes"
    run --input "$dgx2" --nodes 1048576 --ranks-per-node 2
    expect_usage
    has_err "--nodes x --ranks-per-node is 2097152 ranks"
    # No short letters that nccl-tests gives other meanings (-f step factor, -i step bytes);
    # their old spellings here point at the new ones.
    run --input "$dgx2" -f json
    expect_usage
    has_err "-f is no longer an option: use --format text|yaml|json"
    run -i "$dgx2"
    expect_usage
    has_err "-i is no longer an option: use --input FILE"
    run --input "$dgx2" -s"$work/x.yaml"
    expect_usage
    has_err "-s is no longer an option: use --save FILE"
    [ ! -e "$work/x.yaml" ] || fail "-s wrote a file"
    ;;

  net_fabric)
    # The levels between nodes run on the engine a communicator would use: STRATA_NET, ucx by
    # default (it showed mpi whatever the engine was); a value the library refuses fails here.
    run --input "$dgx2" --nodes 2
    expect_rc 0
    has "level 1 network: 1 group of 2 nvlink groups;"
    grep -qE '^  level 1 network: .*; fabric ucx$' "$out" || fail "network level not on ucx"
    grep -qE '^  level 0 nvlink: .*; fabric shm$' "$out" || fail "nvlink level not on shm"
    STRATA_NET=mpi run --input "$dgx2" --nodes 2 --format json
    expect_rc 0
    check_json 'assert [l["fabric"] for l in d["levels"]] == ["shm", "mpi"], d["levels"]'
    STRATA_NET=bogus run --input "$dgx2" --nodes 2
    expect_failure
    has_err "STRATA_NET=bogus: expected mpi or ucx"
    ;;

  mpi_two_hosts_text)
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" : -n 2 env STRATA_HOSTNAME=b "$tool"
    expect_rc 0
    has "=== cluster: 4 ranks on 2 nodes ==="
    has "node a: 2 ranks (0-1)"
    has "node b: 2 ranks (2-3)"
    has "=== node a, b (identical) ==="
    has "hierarchy node(2) x network(2) over 4 ranks"
    # Only rank 0 prints.
    [ "$(grep -c '^=== cluster' "$out")" -eq 1 ] || fail "printed more than once"
    ;;

  mpi_two_hosts_json)
    mpirun -n 2 env STRATA_HOSTNAME=a "$tool" --format json : \
      -n 2 env STRATA_HOSTNAME=b "$tool" --format json
    expect_rc 0
    check_json '
assert d["ranks"] == 4
assert [n["host"] for n in d["nodes"]] == ["a", "b"]
assert [n["ranks"] for n in d["nodes"]] == [[0, 1], [2, 3]]
for n in d["nodes"]:
    for key in ("packages", "numa_nodes", "cores", "gpus", "nics", "links"):
        assert key in n, key
assert d["hierarchy"] == "node(2) x network(2)", d["hierarchy"]
assert [l["name"] for l in d["levels"]] == ["node", "network"]
assert [l["size"] for l in d["levels"]] == [2, 2]
assert "node(2) x network(2)" in d["describe"]
assert [p["host"] for p in d["placement"]] == ["a", "a", "b", "b"]
# The rebuilt levels (JSON, --save) name the fabrics the communicator itself runs.
assert [l["fabric"] for l in d["levels"]] == ["shm", "ucx"], d["levels"]
assert "fabric ucx" in d["describe"], d["describe"]
'
    ;;

  mpi_interleaved_save)
    # Ranks 0,2 on host h0 and 1,3 on h1: a file (which places ranks in order) does not match.
    mpirun -n 4 sh "${STRATA_HOSTNAME_BY_RANK:?}" 2 "$tool" --save "$work/interleaved.yaml"
    expect_rc 0
    has "node h0: 2 ranks (0, 2)"
    has "node h1: 2 ranks (1, 3)"
    has_err "rank 1 (host h1) is not where a topology file puts it"
    has "name: node, size: 2" "$work/interleaved.yaml" file
    ;;

  mpi_irregular_save)
    # Hosts of 1 and 2 ranks: node groups differ in size, which no topology file describes.
    mpirun -n 1 env STRATA_HOSTNAME=a "$tool" --save "$work/irregular.yaml" : \
      -n 2 env STRATA_HOSTNAME=b "$tool" --save "$work/irregular.yaml"
    expect_failure
    has "hierarchy node(1..2) x network(2) over 3 ranks"
    has_err "cannot save node(1..2) x network(2)"
    [ ! -e "$work/irregular.yaml" ] || fail "a file was written"
    ;;

  mpi_input_rank0)
    # A file describes one node: under mpirun only rank 0 prints it.
    mpirun -n 2 "$tool" --input "$dgx2"
    expect_rc 0
    [ "$(grep -c '^=== node ===' "$out")" -eq 1 ] || fail "not printed exactly once"
    has "hierarchy nvlink(16) over 16 ranks"
    ;;

  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
