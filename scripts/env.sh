# Sourced by the scripts, and by users (README): where the build lives and what Open MPI needs to
# run here. It exports only what every run on this machine wants; the test and benchmark
# scripts add strata_loopback_mpi's settings themselves.
STRATA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$STRATA_ROOT/build}"
# Open MPI refuses to run as root without these; CI runs as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory between local ranks, TCP between hosts.
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader,tcp}"

# Keeps Open MPI's traffic and its launcher's on loopback: for runs confined to this machine
# (the test suite, the quick start, one-host benchmarks), never for a user's shell, where a
# later multi-host mpirun would be confined to loopback too. ctest's entries set the same
# (tests/mpi/CMakeLists.txt, tests/tools/CMakeLists.txt).
strata_loopback_mpi() {
  export OMPI_MCA_btl_tcp_if_include="${OMPI_MCA_btl_tcp_if_include:-lo}"
  export OMPI_MCA_oob_tcp_if_include="${OMPI_MCA_oob_tcp_if_include:-lo}"
}

strata_build() {
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -S "$STRATA_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}
