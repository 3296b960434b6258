// bench/wire/ring_probe.c: a 2-rank ring allreduce of float32 in plain MPI, as strata's mpi
// engine runs it (fabrics/mpi/mpi_ring.cc), timed step by step: step 0 exchanges half of the
// buffer with the peer into a scratch block and reduces it, step 1 exchanges the other half in
// place. No strata code: it tells what Open MPI's TCP path gives this exchange on a lab.
//
//   mpicc -O2 -o /tmp/ring_probe bench/wire/ring_probe.c
//   tools/netlab run --hosts 2 --ranks-per-host 1 -- /tmp/ring_probe 16777216 10
//
// Arguments: the allreduce's bytes and the repetitions. RING_WAIT=y polls with MPI_Testall and
// sched_yield after 256 polls (as common/mpi_wait.cc does) instead of MPI_Waitall; RING_WAIT=N
// sleeps N microseconds between polls instead.
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void waitBoth(MPI_Request* r) {
  const char* mode = getenv("RING_WAIT");
  if (mode == NULL) {
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    return;
  }
  unsigned polls = 0;
  for (;;) {
    int done = 0;
    MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    if (++polls <= 256) continue;
    if (mode[0] == 'y') {
      sched_yield();
    } else {
      struct timespec ts = {0, atol(mode) * 1000};
      nanosleep(&ts, NULL);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 ring_probe BYTES REPETITIONS\n");
    MPI_Finalize();
    return 2;
  }
  const long n = atol(argv[1]) / 4, half = n / 2;
  const int reps = atoi(argv[2]);
  float* buf = malloc(n * sizeof(float));
  float* scratch = malloc(half * sizeof(float));
  for (long i = 0; i < n; i++) buf[i] = 1;
  const int peer = 1 - rank;
  float* mine = buf + (rank == 0 ? 0 : half);   // the block this rank reduces
  float* other = buf + (rank == 0 ? half : 0);  // the block its peer reduces
  for (int it = 0; it < reps; it++) {
    MPI_Request r[2];
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Irecv(scratch, (int)half, MPI_FLOAT, peer, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(other, (int)half, MPI_FLOAT, peer, 1, MPI_COMM_WORLD, &r[1]);
    waitBoth(r);
    const double t1 = MPI_Wtime();
    for (long i = 0; i < half; i++) mine[i] += scratch[i];
    const double t2 = MPI_Wtime();
    MPI_Irecv(other, (int)half, MPI_FLOAT, peer, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(mine, (int)half, MPI_FLOAT, peer, 2, MPI_COMM_WORLD, &r[1]);
    waitBoth(r);
    const double t3 = MPI_Wtime();
    if (rank == 0) {
      printf("total %.1f ms: step0 %.1f reduce %.1f step1 %.1f\n", (t3 - t0) * 1e3,
             (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3);
    }
  }
  free(buf);
  free(scratch);
  MPI_Finalize();
  return 0;
}
