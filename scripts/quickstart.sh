#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the main job: a float32 sum allreduce
# across 4 local ranks that emulate 2 nodes of 2 ranks (STRATA_HOSTNAME gives each pair its own
# host name), printing the hierarchy strata built and the correctness check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
strata_loopback_mpi
"$STRATA_ROOT/scripts/install-deps.sh"
strata_build
DEMO="$BUILD_DIR/examples/strata-allreduce-demo"
exec mpiexec --oversubscribe --bind-to none \
  -n 2 env STRATA_HOSTNAME=node-a "$DEMO" "$@" : \
  -n 2 env STRATA_HOSTNAME=node-b "$DEMO" "$@"
