#!/usr/bin/env bash
# pt2-syntax-check.sh: compile-check (g++ -fsyntax-only) the torch backend's sources,
# python/csrc/*.cc, against PyTorch 2's C++ headers on a machine that has only Debian 12's
# PyTorch 1.13 and no pip.
#
# Where the headers come from: Debian's own libtorch-dev packages of newer releases (trixie:
# PyTorch 2.6; sid: the newest Debian has, 2.14 when this was written), with the pybind11-dev
# of the same release. They are fetched with apt-get from the ordinary Debian mirror under a
# private apt configuration (the system's sources.list and package state are not touched;
# nothing is installed) and unpacked with dpkg -x. They are installed headers, so everything
# a source tree would have to generate (ATen's operator headers, c10/macros/cmake_macros.h,
# torch/version.h, torch/headeronly/...) is already there.
# Why not a PyTorch source snapshot: GitHub's pytorch/pytorch is ~4 GB, over the 500 MiB a
# snapshot may have here, and a source tree needs torchgen and hand-filled cmake headers.
#
# Usage:
#   scripts/pt2-syntax-check.sh [TARGET...]
# TARGET: a Debian suite (trixie, sid, forky, ...), "system" (the installed headers under
# /usr/include: Debian 12's 1.13, as a baseline), or a directory holding PyTorch's include/
# tree (a pip wheel's <site-packages>/torch/include). Default: trixie sid.
# Environment:
#   PT2_ROOT   where the packages are unpacked (default: /tmp/strata-pt2); <root>/<suite>/usr/include
#   PT2_FILES  the sources to check (default: python/csrc/*.cc but cuda_ops.cc, which needs
#              PyTorch's CUDA headers and the CUDA toolkit)
#   PT2_PYTHON_INCLUDE  Python's headers (default: python3-config --includes, else /usr/include/python3.11)
#   CXX        the compiler (default g++)
#   PT2_CUDA   the CUDA toolkit (default /usr/local/cuda): when it has cuda_runtime_api.h and
#              the target has c10/cuda/ (Debian's libtorch-dev ships those headers although its
#              library is CPU-only), cuda_ops.cc, args.cc and backend.cc are checked once more
#              with STRATA_TORCH_CUDA=1, as a CUDA build of PyTorch builds them. The one header a
#              CPU-only PyTorch lacks, c10/cuda/impl/cuda_cmake_macros.h (generated from a
#              .in by PyTorch's CMake), is written into <root>/shim-cuda: shared libraries and
#              the toolkit's version. PT2_CUDA=none skips this.
# The C++ standard is PyTorch's rule as python/csrc/CMakeLists.txt has it: C++20 from 2.14,
# C++17 before. PyTorch's, pybind11's and Python's headers are -isystem (as CMake's imported
# targets make them), so any warning left is strata's; warnings are errors (-Werror) and
# -Woverloaded-virtual is on (GCC 13's -Wall has it; GCC 12's does not).
# One compile at a time. Logs: <root>/logs/<target>/<file>.log. Exit status: 0 when every
# file of every target compiled without a diagnostic.
set -u -o pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
root=${PT2_ROOT:-/tmp/strata-pt2}
cxx=${CXX:-g++}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(trixie sid)

pyinc=${PT2_PYTHON_INCLUDE:-}
if [ -z "$pyinc" ]; then
  pyinc=$(python3-config --includes 2>/dev/null | awk '{print $1}' | sed 's/^-I//')
  [ -f "$pyinc/Python.h" ] || pyinc=/usr/include/python3.11
fi
mpiflags=$(mpicc --showme:compile 2>/dev/null || echo "-I/usr/lib/x86_64-linux-gnu/openmpi/include")

if [ -n "${PT2_FILES:-}" ]; then
  read -r -a files <<<"$PT2_FILES"
else
  files=()
  for f in "$repo"/python/csrc/*.cc; do
    [ "$(basename "$f")" = cuda_ops.cc ] || files+=("$f")
  done
fi

# Unpacks libtorch-dev and pybind11-dev of Debian suite $1 into $root/$1.
fetch_suite() {
  local suite=$1 apt=$root/apt-$1
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
  echo "deb http://deb.debian.org/debian $suite main" >"$apt/sources.list"
  : >"$apt/status"
  local opts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
    -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status="$apt/status"
    -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -q update >/dev/null || return 1
  (cd "$apt/debs" && rm -f ./*.deb && apt-get "${opts[@]}" -q download libtorch-dev pybind11-dev) >/dev/null || return 1
  rm -rf "${root:?}/$suite"
  for d in "$apt"/debs/*.deb; do dpkg -x "$d" "$root/$suite" || return 1; done
  echo "$suite: $(cd "$apt/debs" && printf "%s " ./*.deb)"
}

# The include directory of target $1 (printed), fetching a suite's packages when needed.
include_dir() {
  local t=$1
  if [ "$t" = system ]; then
    echo /usr/include
  elif [ -d "$t" ]; then
    (cd "$t" && pwd)
  else
    if [ ! -f "$root/$t/usr/include/ATen/ATen.h" ]; then
      fetch_suite "$t" >&2 || { echo "cannot fetch Debian $t's libtorch-dev" >&2; return 1; }
    fi
    echo "$root/$t/usr/include"
  fi
}

cuda=${PT2_CUDA:-/usr/local/cuda}
cv=
if [ "$cuda" != none ] && [ -f "$cuda/include/cuda_runtime_api.h" ]; then
  cv=$(awk '/define CUDART_VERSION/{print $3}' "$cuda/include/cuda_runtime_api.h")
  mkdir -p "$root/shim-cuda/c10/cuda/impl"
  {
    echo "#pragma once"
    echo "// Written by strata's scripts/pt2-syntax-check.sh for a CPU-only PyTorch's headers."
    echo "#define C10_CUDA_BUILD_SHARED_LIBS"
    echo "#define TORCH_CUDA_VERSION_MAJOR $((cv / 1000))"
    echo "#define TORCH_CUDA_VERSION_MINOR $((cv % 1000 / 10))"
    echo "#define TORCH_CUDA_VERSION_PATCH 0"
    echo "#define TORCH_CUDA_VERSION_BUILD 0"
  } >"$root/shim-cuda/c10/cuda/impl/cuda_cmake_macros.h"
else
  cuda=none
fi

# Compiles source $1, diagnostics to log $2, reported as $3; further arguments are further
# compiler flags.
check() {
  local f=$1 log=$2 label=$3
  shift 3
  # shellcheck disable=SC2086
  if "$cxx" -std=$std -fsyntax-only -Wall -Wextra -Wno-unused-parameter -Woverloaded-virtual \
      -Werror -D_GLIBCXX_USE_CXX11_ABI=1 -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 \
      -I"$repo/include" -I"$repo/python/csrc" "$@" "${sysinc[@]}" $mpiflags "$f" >"$log" 2>&1; then
    echo "  ok    $label"
  else
    status=1
    echo "  FAIL  $label ($log)"
    grep -E "(error|warning):" "$log" | head -20 | sed 's/^/        /'
  fi
}

status=0
for t in "${targets[@]}"; do
  inc=$(include_dir "$t") || { status=1; continue; }
  ver=$inc/torch/headeronly/version.h
  [ -f "$ver" ] || ver=$inc/torch/csrc/api/include/torch/version.h
  major=$(awk '/define TORCH_VERSION_MAJOR/{print $3}' "$ver")
  minor=$(awk '/define TORCH_VERSION_MINOR/{print $3}' "$ver")
  patch=$(awk '/define TORCH_VERSION_PATCH/{print $3}' "$ver")
  std=c++17
  if [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 14 ]; }; then std=c++20; fi
  # /usr/include (the "system" target, and Debian 12's pybind11-dev for a target without a
  # pybind11 of its own) is searched anyway: naming it -isystem would break libstdc++'s
  # #include_next.
  sysinc=(-isystem "$inc/torch/csrc/api/include" -isystem "$pyinc")
  [ "$inc" = /usr/include ] || sysinc=(-isystem "$inc" "${sysinc[@]}")
  pyb=$(awk '/define PYBIND11_VERSION_(MAJOR|MINOR|PATCH) /{v[$2] = $3}
    END {if (v["PYBIND11_VERSION_MAJOR"] != "") printf "%s.%s.%s", v["PYBIND11_VERSION_MAJOR"],
      v["PYBIND11_VERSION_MINOR"], v["PYBIND11_VERSION_PATCH"]}' \
    "$inc/pybind11/detail/common.h" 2>/dev/null || true)
  [ -n "$pyb" ] || pyb="/usr/include's"
  logs=$root/logs/$(echo "$t" | tr '/' '_')
  mkdir -p "$logs"
  echo "== $t: PyTorch $major.$minor.$patch ($inc), -std=$std, pybind11 $pyb"
  for f in "${files[@]}"; do
    check "$f" "$logs/$(basename "$f" .cc).log" "$(basename "$f")"
  done
  if [ "$cuda" != none ] && [ -f "$inc/c10/cuda/CUDAStream.h" ] && [ -z "${PT2_FILES:-}" ]; then
    echo "  with STRATA_TORCH_CUDA=1 (CUDA runtime $cv, $cuda):"
    for b in cuda_ops args backend; do
      check "$repo/python/csrc/$b.cc" "$logs/cuda-$b.log" "$b.cc (CUDA)" -DSTRATA_TORCH_CUDA=1 \
        -isystem "$root/shim-cuda" -isystem "$cuda/include"
    done
  fi
done
exit $status
