// strata's datatypes and ops as MPI sees them.
//
// Native types map to MPI's predefined types and ops, which Open MPI reduces with its own
// vectorised kernels. fp16 and bf16 have no MPI type: they travel as MPI_UINT16_T and are
// reduced by user ops (MPI_Op_create) that call strata's kernels, widening to float. int8 and
// uint8 also use strata's kernels: Open MPI 4.1's AVX sum saturates them instead of wrapping.
#pragma once

#include <mpi.h>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::fabric {

MPI_Datatype mpiDatatype(strataDataType_t type);

// The MPI op for (type, op); op is one of strataSum/Prod/Max/Min. The user ops are created on
// first use while a reference is held (see acquireMpiOps).
MPI_Op mpiOp(strataDataType_t type, strataRedOp_t op);

// MPI's own predefined op for strataSum/Prod/Max/Min (MPI_OP_NULL for any other), whatever the
// type: what mpiOp gives the types MPI reduces itself, and what strata-perf --vs mpi times
// (MPI's own reduction, never strata's kernels).
MPI_Op mpiPredefinedOp(strataRedOp_t op);

// Reference-counts the user ops: created by the first acquire, freed by the last release, so
// no MPI object outlives the last communicator (MPI_Finalize stays clean).
Status acquireMpiOps();
void releaseMpiOps();

}  // namespace strata::fabric
