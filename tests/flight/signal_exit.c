/* A program that asks for a flight recorder dump by signal and ends at once: the dump must be
 * in STRATA_FLIGHT_RECORDER_FILE when the process has exited, however soon it exits after the
 * signal (the dumping thread may not have run yet).
 *
 *   signal_exit exit      raise the signal, then exit(0) with the communicator alive
 *   signal_exit destroy   raise the signal, then strataCommDestroy and return from main
 *   signal_exit sleep     raise the signal from a thread while main sleeps in sleep(2), then
 *                         exit when sleep returns (the signal may cut it short)
 *
 * Run with STRATA_FLIGHT_RECORDER_SIGNAL=USR1 and STRATA_FLIGHT_RECORDER_FILE set (the test
 * script checks the file). Exits 0 when every call succeeded, 1 otherwise. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <strata/strata.h>

static void* signalLater(void* arg) {
  (void)arg;
  usleep(100 * 1000);
  kill(getpid(), SIGUSR1);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: signal_exit exit|destroy|sleep\n");
    return 2;
  }
  strataComm_t comm = NULL;
  if (strataCommInitAll(&comm, 1, NULL) != strataSuccess) {
    fprintf(stderr, "signal_exit: init failed: %s\n", strataGetLastError(NULL));
    return 1;
  }
  float x = 1.0f;
  if (strataAllReduce(&x, &x, 1, strataFloat32, strataSum, comm, NULL) != strataSuccess) {
    fprintf(stderr, "signal_exit: allreduce failed: %s\n", strataGetLastError(comm));
    return 1;
  }
  if (strcmp(argv[1], "sleep") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, signalLater, NULL);
    sleep(2);
    exit(0);
  }
  raise(SIGUSR1);
  if (strcmp(argv[1], "exit") == 0) exit(0);
  return strataCommDestroy(comm) == strataSuccess ? 0 : 1;
}
