#!/bin/sh
# Sets VAR=VALUE in the environment of one rank only, then runs the program: settings that
# differ between ranks (every rank must then fail init, naming the variable).
#
#   mpiexec -n 4 sh env_on_rank.sh 3 STRATA_CHUNK_BYTES=4096 ./strata_mpi_mismatch ...
set -eu
if [ $# -lt 3 ]; then
  echo "usage: $0 RANK VAR=VALUE PROGRAM [ARGS...]" >&2
  exit 2
fi
target=$1
assignment=$2
shift 2
# Open MPI, then MPICH/Hydra and PMIx names for the rank in MPI_COMM_WORLD.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ]; then
  echo "$0: no rank in the environment; run it under mpiexec" >&2
  exit 2
fi
if [ "$rank" = "$target" ]; then
  export "$assignment"
fi
exec "$@"
