/* strata's quick-start job: one allreduce across every rank, checked against the exact answer.
 *
 *   mpiexec -n 4 ./strata-allreduce-demo [count]
 *
 * It prints the hierarchy strata built (from host names, CPU binding or STRATA_TOPO_FILE), runs
 * a float32 sum allreduce of `count` elements (default 1M), checks every element on every rank,
 * and exits non-zero if anything is wrong. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata_mpi.h"

#define CHECK(call)                                                           \
  do {                                                                        \
    strataResult_t r_ = (call);                                               \
    if (r_ != strataSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, strataGetErrorString(r_), \
              strataGetLastError(comm));                                      \
      MPI_Abort(MPI_COMM_WORLD, 1);                                           \
    }                                                                         \
  } while (0)

int main(int argc, char** argv) {
  /* Before MPI_Init: --help and a wrong command line need no MPI job. */
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf(
        "usage: strata-allreduce-demo [COUNT]\n"
        "A float32 sum allreduce of COUNT elements (default 1048576) over every rank of the\n"
        "MPI job, checked element by element; prints the hierarchy strata built and the\n"
        "time of the call. Exits 0 when every element is right.\n"
        "Example:\n"
        "  mpirun -n 4 strata-allreduce-demo 1048576\n");
    return 0;
  }
  if (argc > 2 ||
      (argc == 2 && (argv[1][0] == '\0' || strspn(argv[1], "0123456789") != strlen(argv[1])))) {
    fprintf(stderr, "usage: strata-allreduce-demo [COUNT] (--help: more)\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  size_t count = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
  strataComm_t comm = NULL;
  CHECK(strataCommInitMPI(&comm, MPI_COMM_WORLD));
  int rank = 0, nranks = 0;
  CHECK(strataCommUserRank(comm, &rank));
  CHECK(strataCommCount(comm, &nranks));

  if (rank == 0) {
    char text[4096];
    CHECK(strataCommDescribe(comm, text, sizeof(text)));
    printf("strata allreduce demo: %d ranks, %zu float32 elements\n%s", nranks, count, text);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Every rank but 0 prints its own place in the hierarchy, in rank order. */
  for (int r = 1; r < nranks; ++r) {
    if (r == rank) {
      char text[4096];
      CHECK(strataCommDescribe(comm, text, sizeof(text)));
      const char* line = text;
      for (const char* p = text; *p; ++p) {
        if (p[0] == '\n' && p[1] == ' ' && p[2] == ' ' && p[3] == 'r') line = p + 1;
      }
      printf("%s", line);
      fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* Small integers keep every partial sum exact, so the check is exact. */
  float* send = malloc(count * sizeof(float));
  float* recv = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) send[i] = (float)((rank + 1) * (int)(i % 7 + 1));
  double t0 = MPI_Wtime();
  CHECK(strataAllReduce(send, recv, count, strataFloat32, strataSum, comm, NULL));
  double t1 = MPI_Wtime();

  long wrong = 0;
  const int ranksum = nranks * (nranks + 1) / 2;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != (float)(ranksum * (int)(i % 7 + 1))) ++wrong;
  }
  long totalWrong = 0;
  MPI_Reduce(&wrong, &totalWrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("allreduce of %zu float32 (%.1f MiB) took %.3f ms; check: %s (%ld wrong elements)\n",
           count, count * 4.0 / (1 << 20), (t1 - t0) * 1e3, totalWrong == 0 ? "PASSED" : "FAILED",
           totalWrong);
  }
  free(send);
  free(recv);
  CHECK(strataCommDestroy(comm));
  MPI_Finalize();
  return totalWrong == 0 || rank != 0 ? 0 : 1;
}
