#!/usr/bin/env bash
# Run on a Debian 12 machine with apt: downloads into .debs/ (ignored by git) the Debian
# packages strata needs to build and run its GPU tests on a machine that has CUDA, NCCL, CMake
# and ninja but no Open MPI and no package registry (the device tool's GPU machine). Carry
# .debs to it and run scripts/gpu-check.sh there. About 25 MB: the build and run closure of
# Open MPI, UCX, hwloc, yaml-cpp, pugixml, nlohmann-json, Catch2, CLI11 and pkg-config, without the
# compilers and Fortran that libopenmpi-dev pulls in (the GPU machine has its own).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/.debs"
cd "$root/.debs"
top=(openmpi-bin libopenmpi-dev libhwloc-dev libyaml-cpp-dev libpugixml-dev nlohmann-json3-dev
     catch2 libcli11-dev pkgconf libucx-dev)
# Everything the GPU machine's own system provides (libc, compilers, core utilities, Python, ...)
# or that strata never loads (Fortran, LLVM, X11 tools).
skip='^(libc6|libc6-dev|libc-dev-bin|linux-libc-dev|libgcc-s1|libstdc\+\+6|gcc.*|g\+\+.*|cpp.*|'\
'lib.*san.*|libgfortran.*|gfortran.*|.*flang.*|.*llvm.*|.*clang.*|libmlir.*|libz3-4|binutils.*|'\
'libbinutils|libctf.*|libgprofng0|perl.*|libperl.*|python3.*|libpython3.*|debconf|dpkg|tar|'\
'coreutils|base-files|bash|dash|.*utils|zlib1g.*|openssh-client|libcrypt.*|libssl3|libselinux1|'\
'libpcre2.*|libzstd1|liblzma5|libbz2-1.0|libtinfo6|libsystemd0|libudev1|libgcrypt20|'\
'libgpg-error0|liblz4-1|libcap2|libacl1|libattr1|libgomp1|libatomic1|libquadmath0|libitm1|'\
'libcc1-0|libisl23|libmpc3|libmpfr6|libgmp10|libstdc\+\+-.*-dev|libgcc-.*-dev|autoconf|automake|'\
'autotools-dev|m4|libtool|install-info|sensible-utils|init-system-helpers|lsb-base|ucf|tzdata)$'
mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances "${top[@]}" | grep '^[a-z0-9]' | sort -u |
  grep -Ev "$skip")
apt-get download "${pkgs[@]}" >/dev/null
echo "strata: ${#pkgs[@]} packages, $(du -sh . | cut -f1) in $root/.debs"
