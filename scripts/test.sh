#!/usr/bin/env bash
# Runs strata's whole test suite: the Catch2 unit tests and the MPI tests under mpiexec.
# Installs what is missing and builds first. Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
strata_loopback_mpi
"$STRATA_ROOT/scripts/install-deps.sh"
strata_build
cd "$BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "$@"
