#!/usr/bin/env bash
# Installs what strata needs on Debian 12, skipping what is already there. Run as root (or with
# sudo available). CUDA/NCCL are optional and not installed here.
#
#   bash scripts/install-deps.sh            building, the test suite (scripts/test.sh) and the
#                                           examples: what the README's two commands need
#   bash scripts/install-deps.sh --bench    also what the benchmarks (bench/) need
#   bash scripts/install-deps.sh --print [--bench]   prints the list, installs nothing
#
# Every Python module a tracked test, example or benchmark imports comes from a package named
# here: tests/scripts/check_python_deps.py (ctest scripts.python_deps) maps each module to its
# Debian package and fails when one is missing from these lists.
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build pkg-config libopenmpi-dev openmpi-bin
          libhwloc-dev hwloc libyaml-cpp-dev catch2 libcli11-dev libpugixml-dev
          libucx-dev  # the ucx fabric: inter-host data of communicators made from a unique id
          nlohmann-json3-dev iproute2 gnuplot-nox
          python3-dev pybind11-dev python3-torch libtorch-dev
          python3-sklearn  # examples/torch/ddp_data.py's digits (the torch.example.* tests)
          python3-yaml     # tests/tools/test_strata_topo.sh reads strata-topo's YAML back
          python3-venv)    # scripts/torch-venvs.sh: pip's PyTorch 2 for CI (scripts/test-torch2.sh)
# The benchmarks: ResNet models (bench/torch/run, bench/workloads/make_workloads.py) and
# bench/torch/plot.py's plots.
BENCH_PACKAGES=(python3-torchvision python3-matplotlib)

bench=0 print=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --print) print=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done
((bench)) && PACKAGES+=("${BENCH_PACKAGES[@]}")
# Callers that need more (scripts/fuzz.sh: clang) name it here.
read -r -a extra <<< "${STRATA_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")
if ((print)); then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "strata: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
