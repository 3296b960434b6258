#include "mpi_world.h"

#include <c10/util/Exception.h>

namespace strata::torch_backend {
namespace {

bool gOurs = false;  // this module initialised MPI

}  // namespace

void ensureMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  TORCH_CHECK(!finalized, "strata: MPI was already finalised");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    TORCH_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS,
                "strata: MPI_Init_thread failed (is this process started by mpirun or srun?)");
    gOurs = true;
  }
  int level = 0;
  MPI_Query_thread(&level);
  TORCH_CHECK(level == MPI_THREAD_MULTIPLE,
              "strata: MPI provides thread level ", level,
              " but the strata backend needs MPI_THREAD_MULTIPLE (", MPI_THREAD_MULTIPLE,
              "): import strata_torch before another module initialises MPI, or initialise "
              "it with MPI_THREAD_MULTIPLE (mpi4py: mpi4py.rc.thread_level = 'multiple')");
}

void finalizeMpiIfOurs() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (gOurs && !finalized) MPI_Finalize();
  gOurs = false;
}

int worldRank() {
  ensureMpi();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  ensureMpi();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

std::string broadcastString(const std::string& data, int root) {
  ensureMpi();
  int len = static_cast<int>(data.size());
  MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD);
  std::string out = data;
  out.resize(len);
  MPI_Bcast(out.data(), len, MPI_CHAR, root, MPI_COMM_WORLD);
  return out;
}

}  // namespace strata::torch_backend
