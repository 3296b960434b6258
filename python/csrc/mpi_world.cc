#include "mpi_world.h"

#include <c10/util/Exception.h>

namespace strata::torch_backend {
namespace {

bool gOurs = false;  // this module initialised MPI

// The tag of MPI_Comm_create_group: torch.distributed creates groups one at a time, in the
// same order on every rank, so one tag never mixes two creations.
constexpr int kCreateGroupTag = 0x57a7;

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

MPI_Comm membersComm(int rank, int size, const std::vector<int64_t>& globalRanks) {
  ensureMpi();
  const int wrank = worldRank(), wsize = worldSize();
  if (globalRanks.empty()) {
    TORCH_CHECK(size == wsize && rank == wrank, "strata: init_process_group was given rank ",
                rank, " and world_size ", size, ", but the MPI launcher started this process as ",
                "rank ", wrank, " of ", wsize,
                " (strata_torch.init() takes both from the launcher)");
    return MPI_COMM_WORLD;
  }
  TORCH_CHECK(static_cast<int>(globalRanks.size()) == size && rank >= 0 && rank < size &&
                  globalRanks[rank] == wrank,
              "strata: the group's rank ", rank, " of ", size,
              " does not match this process's world rank ", wrank);
  std::vector<int> ranks(globalRanks.begin(), globalRanks.end());
  for (int r : ranks) {
    TORCH_CHECK(r >= 0 && r < wsize, "strata: group member ", r, " is not a rank of the world (",
                wsize, " ranks)");
  }
  MPI_Group world = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, size, ranks.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, kCreateGroupTag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  TORCH_CHECK(rc == MPI_SUCCESS && comm != MPI_COMM_NULL,
              "strata: MPI_Comm_create_group over the group's members failed");
  return comm;
}

}  // namespace strata::torch_backend
