/*
 * The part of strata's API that needs mpi.h.
 */
#pragma once

#include <mpi.h>

#include "strata/strata.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a strata communicator over the ranks of `mpicomm` (any intra-communicator; several may
 * coexist). Collective over mpicomm. It detects the hierarchy (host names, CPU binding), or loads
 * the file named by STRATA_TOPO_FILE, and sets up one group per level.
 *
 * On error every rank returns the same result code and *comm is left unchanged; the reason is in
 * strataGetLastError(NULL). MPI must be initialised. strata duplicates mpicomm, so the caller may
 * free it after this call. */
STRATA_API strataResult_t strataCommInitMPI(strataComm_t* comm, MPI_Comm mpicomm);

#ifdef __cplusplus
}
#endif
