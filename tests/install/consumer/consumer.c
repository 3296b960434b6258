/* Links against the installed libstrata.so and checks that the version matches the header. */
#include <stdio.h>
#include <strata/strata_mpi.h>

int main(void) {
  int version = 0;
  if (strataGetVersion(&version) != strataSuccess || version != STRATA_VERSION_CODE) {
    fprintf(stderr, "version mismatch: library %d, header %d\n", version, STRATA_VERSION_CODE);
    return 1;
  }
  printf("strata %d found through find_package\n", version);
  return 0;
}
