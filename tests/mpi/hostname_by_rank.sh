#!/bin/sh
# Emulates hosts whose ranks interleave: sets STRATA_HOSTNAME to h<rank % N>, so with N=2 ranks
# 0,2,4,... share host h0 and ranks 1,3,5,... host h1, then runs the program.
#
#   mpiexec -n 6 sh hostname_by_rank.sh 2 ./strata_mpi_collectives --quick
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 NUM_HOSTS PROGRAM [ARGS...]" >&2
  exit 2
fi
hosts=$1
shift
# Open MPI, then MPICH/Hydra and PMIx names for the rank in MPI_COMM_WORLD.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ]; then
  echo "$0: no rank in the environment; run it under mpiexec" >&2
  exit 2
fi
STRATA_HOSTNAME="h$((rank % hosts))"
export STRATA_HOSTNAME
exec "$@"
