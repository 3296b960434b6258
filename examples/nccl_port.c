/* An NCCL data-parallel step ported to strata by renaming (docs/api.md, "Porting from NCCL"):
 * broadcast the weights from rank 0, exchange halos around a ring in a group, average the
 * gradients, reduce the loss to rank 0, and all-gather over the even and odd ranks split
 * apart. Only communicator creation differs: strataCommInitMPI instead of ncclGetUniqueId,
 * MPI_Bcast and ncclCommInitRank.
 *
 * Here the buffers are host memory and the stream NULL, so it runs anywhere; with cudaMalloc'd
 * buffers and a cudaStream_t the calls are the same. It checks every result and exits non-zero
 * on any error.
 *
 *   mpiexec -n 4 ./strata-nccl-port */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "strata/strata_mpi.h"

#define CHECK(call)                                                                         \
  do {                                                                                      \
    strataResult_t r_ = (call);                                                             \
    if (r_ != strataSuccess) {                                                              \
      fprintf(stderr, "%s: %s: %s\n", #call, strataGetErrorString(r_), strataGetLastError(NULL)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                         \
    }                                                                                       \
  } while (0)

enum { N = 1 << 16, K = 256 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  float* weights = malloc(N * sizeof(float));
  float* grads = malloc(N * sizeof(float));
  float* halo = malloc(K * sizeof(float));
  float* all = malloc((size_t)nranks * K * sizeof(float));
  float loss = (float)rank, total = 0;
  for (int i = 0; i < N; ++i) weights[i] = rank == 0 ? (float)i : -1.0f;
  for (int i = 0; i < N; ++i) grads[i] = (float)(rank + 1);
  strataStream_t s = NULL; /* a cudaStream_t with device buffers */

  /* --- the NCCL program, renamed (ncclX -> strataX, ncclFloat -> strataFloat) --- */
  strataComm_t comm, half;
  CHECK(strataCommInitMPI(&comm, MPI_COMM_WORLD)); /* replaces the unique-id dance */
  CHECK(strataBroadcast(weights, weights, N, strataFloat, 0, comm, s));
  CHECK(strataGroupStart());
  CHECK(strataSend(weights, K, strataFloat, (rank + 1) % nranks, comm, s));
  CHECK(strataRecv(halo, K, strataFloat, (rank + nranks - 1) % nranks, comm, s));
  CHECK(strataGroupEnd());
  CHECK(strataAllReduce(grads, grads, N, strataFloat, strataAvg, comm, s));
  CHECK(strataReduce(&loss, &total, 1, strataFloat, strataSum, 0, comm, s));
  CHECK(strataCommSplit(comm, rank % 2, rank, &half, NULL));
  int hrank, hsize;
  CHECK(strataCommUserRank(half, &hrank));
  CHECK(strataCommCount(half, &hsize));
  CHECK(strataAllGather(halo, all, K, strataFloat, half, s));
  CHECK(strataCommDestroy(half));
  CHECK(strataCommDestroy(comm));
  /* --- end of the ported part --- */

  for (int i = 0; i < N; ++i) bad += weights[i] != (float)i;
  for (int i = 0; i < K; ++i) bad += halo[i] != (float)i; /* every rank now has rank 0's weights */
  const float avg = (float)(nranks + 1) / 2;
  for (int i = 0; i < N; ++i) bad += grads[i] != avg;
  if (rank == 0) bad += total != (float)(nranks * (nranks - 1) / 2);
  for (int j = 0; j < hsize * K; ++j) bad += all[j] != (float)(j % K);
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("nccl port: broadcast, grouped ring, allreduce avg, reduce, split + allgather on %d "
           "ranks: %s\n", nranks, anyBad ? "FAILED" : "PASSED");
  }
  free(weights);
  free(grads);
  free(halo);
  free(all);
  MPI_Finalize();
  return anyBad ? 1 : 0;
}
