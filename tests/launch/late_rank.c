/* Two ranks (RANK, WORLD_SIZE and STRATA_COMM_ID from the environment) where rank 1 comes to
 * the allreduce LATE_RANK_SLEEP seconds late: with a shorter STRATA_TIMEOUT, rank 0's call
 * times out. Each rank prints the error as a C program would (the code's string and
 * strataGetLastError) and exits 1 when its allreduce failed, 0 when it succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <strata/strata.h>

int main(void) {
  const char* r = getenv("RANK");
  const char* n = getenv("WORLD_SIZE");
  const char* late = getenv("LATE_RANK_SLEEP");
  if (r == NULL || n == NULL) {
    fprintf(stderr, "late_rank: set RANK and WORLD_SIZE\n");
    return 2;
  }
  const int rank = atoi(r);
  strataUniqueId id;
  strataComm_t comm;
  if (strataGetUniqueId(&id) != strataSuccess ||
      strataCommInitRank(&comm, atoi(n), id, rank) != strataSuccess) {
    fprintf(stderr, "APP: init: %s\n", strataGetLastError(NULL));
    return 1;
  }
  float x[16] = {0};
  if (rank == 1) sleep(late != NULL ? (unsigned)atoi(late) : 4);
  const strataResult_t res = strataAllReduce(x, x, 16, strataFloat32, strataSum, comm, NULL);
  if (res != strataSuccess) {
    fprintf(stderr, "APP: allreduce: %s: %s\n", strataGetErrorString(res),
            strataGetLastError(comm));
  }
  strataCommAbort(comm);
  return res != strataSuccess;
}
