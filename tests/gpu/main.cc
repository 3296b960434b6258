// The Catch2 entry point of strata_gpu_unit_tests.
//
// Without a visible GPU the program prints why and exits 77, which ctest (SKIP_RETURN_CODE)
// reports as Skipped: a machine without a GPU must neither pass nor fail these tests. Listing
// the tests needs no GPU, so that catch_discover_tests works on any build machine. With a GPU,
// MPI is initialised (MPI_THREAD_MULTIPLE, as the library asks for it) because some tests build
// communicators over MPI_COMM_SELF.
#define CATCH_CONFIG_RUNNER
#include <cuda_runtime.h>
#include <mpi.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

namespace {

// Catch's listing options (--list-tests, --list-test-names-only, --list-reporters, ...), which
// catch_discover_tests runs at build time.
bool onlyListing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--list", 6) == 0) return true;
  }
  return false;
}

constexpr int kSkipped = 77;

}  // namespace

int main(int argc, char** argv) {
  if (onlyListing(argc, argv)) return Catch::Session().run(argc, argv);

  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("strata_gpu_unit_tests: SKIPPED: no CUDA GPU visible (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
    return kSkipped;
  }

  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "strata_gpu_unit_tests: MPI_Init_thread failed\n");
    return 1;
  }
  const int failed = Catch::Session().run(argc, argv);
  MPI_Finalize();
  return failed;
}
