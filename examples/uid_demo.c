/* strata without MPI, as NCCL programs start: rank 0 makes a unique id, the id reaches every rank
 * through a file (any channel works: a key-value store, a socket, MPI_Bcast), and every rank
 * calls strataCommInitRank. Ranks and job size come from the environment a launcher sets
 * (RANK and WORLD_SIZE: torchrun, tools/strata-run; Slurm's SLURM_PROCID and SLURM_NTASKS).
 *
 *   tools/strata-run -n 4 -- build/examples/strata-uid-demo /tmp/strata.id 1048576
 *   tools/strata-run -n 4 --comm-id -- build/examples/strata-uid-demo - 1048576
 *
 * With "-" instead of a file every rank forms the id from STRATA_COMM_ID=<host>:<port> (the
 * --comm-id option sets it). Each rank checks the allreduce's result and prints its verdict;
 * rank 0 also prints the time of one call. Exits 0 when the result was right on this rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <strata/strata.h>

static int envInt(const char* name, const char* alt) {
  const char* v = getenv(name);
  if (v == NULL) v = getenv(alt);
  if (v == NULL) {
    fprintf(stderr, "strata-uid-demo: set %s (or %s): start it with a launcher\n", name, alt);
    exit(2);
  }
  return atoi(v);
}

static int check(strataResult_t r, const char* what) {
  if (r == strataSuccess) return 1;
  fprintf(stderr, "strata-uid-demo: %s: %s (%s)\n", what, strataGetErrorString(r),
          strataGetLastError(NULL));
  exit(1);
}

/* Rank 0 writes the id to `path` (a temporary file renamed, so no rank reads half of it); the
 * others wait up to a minute for it. */
static void shareThroughFile(const char* path, int rank, strataUniqueId* id) {
  if (rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    check(strataGetUniqueId(id), "strataGetUniqueId");
    FILE* f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path)) {
      fprintf(stderr, "strata-uid-demo: cannot write %s\n", path);
      exit(1);
    }
    return;
  }
  for (int tries = 0; tries < 6000; ++tries) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      const size_t got = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (got == 1) return;
    }
    usleep(10000);
  }
  fprintf(stderr, "strata-uid-demo: rank %d found no id in %s\n", rank, path);
  exit(1);
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    printf(
        "usage: strata-uid-demo ID_FILE|- COUNT\n"
        "An allreduce of COUNT floats on a communicator made from a unique id: rank 0 writes\n"
        "the id to ID_FILE and the others read it, or with - every rank forms it from\n"
        "STRATA_COMM_ID. Ranks from RANK and WORLD_SIZE (SLURM_PROCID, SLURM_NTASKS).\n"
        "example:\n"
        "  tools/strata-run -n 4 -- strata-uid-demo job.id 1048576\n");
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: strata-uid-demo ID_FILE|- COUNT (--help: more)\n");
    return 2;
  }
  const int rank = envInt("RANK", "SLURM_PROCID"), size = envInt("WORLD_SIZE", "SLURM_NTASKS");
  const size_t count = strtoull(argv[2], NULL, 10);
  strataUniqueId id;
  if (strcmp(argv[1], "-") == 0) {
    check(strataGetUniqueId(&id), "strataGetUniqueId (STRATA_COMM_ID)");
  } else {
    shareThroughFile(argv[1], rank, &id);
  }
  strataComm_t comm;
  check(strataCommInitRank(&comm, size, id, rank), "strataCommInitRank");
  if (rank == 0 && strcmp(argv[1], "-") != 0) unlink(argv[1]); /* every rank has joined */

  float* buf = malloc((count ? count : 1) * sizeof(float));
  for (size_t i = 0; i < count; ++i) buf[i] = (float)(rank + 1) * (float)(i % 4);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  check(strataAllReduce(buf, buf, count, strataFloat32, strataSum, comm, NULL), "strataAllReduce");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const float total = (float)size * (float)(size + 1) / 2;
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += buf[i] != total * (float)(i % 4);
  free(buf);
  char where[512];
  strataCommDescribe(comm, where, sizeof where);
  check(strataCommDestroy(comm), "strataCommDestroy");
  if (rank == 0) {
    const double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("%s\nallreduce of %zu floats over %d ranks: %.3f ms\n", where, count, size, s * 1e3);
  }
  printf("rank %d: %s\n", rank, wrong == 0 ? "PASSED" : "FAILED");
  return wrong == 0 ? 0 : 1;
}
