/* Built with nothing but cc and pkg-config against an installed prefix or the build tree
 * (tests/install/check_install.sh), as the README shows: an allreduce over MPI_COMM_WORLD through
 * strataCommInitMPI, checked against the exact sum. Exits 0 and prints PASSED on success. */
#include <stdio.h>
#include <strata/strata_mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  strataComm_t comm;
  if (strataCommInitMPI(&comm, MPI_COMM_WORLD) != strataSuccess) {
    fprintf(stderr, "strataCommInitMPI: %s\n", strataGetLastError(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  enum { kCount = 1000 };
  float buf[kCount];
  for (int i = 0; i < kCount; ++i) buf[i] = (float)(rank + 1);
  strataResult_t r = strataAllReduce(buf, buf, kCount, strataFloat32, strataSum, comm, NULL);
  const float want = (float)size * (float)(size + 1) / 2;
  int wrong = r != strataSuccess;
  for (int i = 0; i < kCount; ++i) wrong += buf[i] != want;
  strataCommDestroy(comm);
  if (rank == 0) printf("pkg-config app: %d ranks, %s\n", size, wrong ? "FAILED" : "PASSED");
  MPI_Finalize();
  return wrong ? 1 : 0;
}
