// A tool's communicator over MPI_COMM_WORLD, made through the public C API (strata-topo and
// strata-plan --live), with the library's own error text when it fails. Collective.
#pragma once

#include <string>

#include "common/status.h"
#include "strata/strata_mpi.h"

namespace strata::tools {

inline StatusOr<strataComm_t> worldComm() {
  strataComm_t comm = nullptr;
  const strataResult_t r = strataCommInitMPI(&comm, MPI_COMM_WORLD);
  if (r != strataSuccess) {
    return Status(static_cast<Code>(r), std::string("strataCommInitMPI failed: ") +
                                            strataGetErrorString(r) + ": " +
                                            strataGetLastError(nullptr));
  }
  return comm;
}

}  // namespace strata::tools
