// A program written against NCCL's own header and library, as nccl-tests is: the unique id
// travels by MPI_Bcast (default) or through a file (--id-file, as a launcher-free job would
// pass it: no MPI call at all then, ranks from RANK/WORLD_SIZE or mpirun's environment), then
// every collective, a group of sends and receives and a split, on host buffers (which strata's
// drop-in accepts and NCCL refuses). It knows nothing of strata: run under
// LD_PRELOAD=libstrata_nccl.so it must pass; run without it, NCCL must refuse it.
//
//   mpiexec -n 4 env LD_PRELOAD=build/nccl_dropin/libstrata_nccl.so build/tests/nccl_dropin/nccl_program
//   tools/strata-run -n 4 -- env LD_PRELOAD=... nccl_program --id-file /tmp/id
#include <mpi.h>
#include <nccl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "id_file.h"

namespace {

int gRank = 0, gSize = 1, gChecks = 0, gFailures = 0;
bool gMpi = true;  // MPI was initialised (the id travels by MPI_Bcast)

[[noreturn]] void die() {
  if (gMpi) MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(bool ok, const std::string& what) {
  ++gChecks;
  if (!ok && gFailures++ < 20) std::printf("FAIL rank %d: %s\n", gRank, what.c_str());
}

#define NCCL_OR_DIE(call)                                                                  \
  do {                                                                                     \
    ncclResult_t rc_ = (call);                                                             \
    if (rc_ != ncclSuccess) {                                                              \
      std::printf("rank %d: %s failed: %s (%s)\n", gRank, #call, ncclGetErrorString(rc_),  \
                  ncclGetLastError(nullptr));                                              \
      die();                                                                               \
    }                                                                                      \
  } while (0)

// Host encodings of small integers (exact) for the 16-bit types.
uint16_t toHalf(float f) {
  if (f == 0) return 0;
  int e = 0;
  const float m = std::frexp(std::fabs(f), &e);  // f = m * 2^e, m in [0.5, 1)
  const uint16_t mant = static_cast<uint16_t>((m * 2 - 1) * 1024);
  return static_cast<uint16_t>((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
}
uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// Element i of rank r's input: small integers, exact in every type.
double value(int r, size_t i) { return static_cast<double>((r + 1) * static_cast<int>(i % 5)); }

template <typename T>
void fill(std::vector<T>& v, int r, ncclDataType_t t) {
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = value(r, i);
    if (t == ncclFloat16) {
      uint16_t h = toHalf(static_cast<float>(x));
      std::memcpy(&v[i], &h, 2);
    } else if (t == ncclBfloat16) {
      uint16_t h = toBf16(static_cast<float>(x));
      std::memcpy(&v[i], &h, 2);
    } else {
      v[i] = static_cast<T>(x);
    }
  }
}

template <typename T>
bool equals(const T& got, double want, ncclDataType_t t) {
  if (t == ncclFloat16 || t == ncclBfloat16) {
    const uint16_t w = t == ncclFloat16 ? toHalf(float(want)) : toBf16(float(want));
    return std::memcmp(&got, &w, 2) == 0;
  }
  return static_cast<double>(got) == want;
}

// Sum allreduce of `count` elements, in place and not, checked element by element.
template <typename T>
void allReduceSum(ncclComm_t comm, int rank, int size, ncclDataType_t t, size_t count,
                  const char* name) {
  double sumFactor = 0;
  for (int r = 0; r < size; ++r) sumFactor += r + 1;
  for (int inPlace = 0; inPlace < 2; ++inPlace) {
    std::vector<T> in(count), out(count);
    fill(in, rank, t);
    T* dst = inPlace ? in.data() : out.data();
    NCCL_OR_DIE(ncclAllReduce(in.data(), dst, count, t, ncclSum, comm, nullptr));
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += !equals(dst[i], sumFactor * (i % 5), t);
    check(bad == 0, std::string("allreduce sum ") + name + " count " + std::to_string(count) +
                        (inPlace ? " in place" : "") + ": " + std::to_string(bad) + " wrong");
  }
}

// NCCL 2.28's all-to-all, gather (to the last rank, once in place) and scatter (from rank 0).
void exchanges(ncclComm_t comm, int rank, int size, size_t n) {
  auto mark = [](int from, int to, size_t i) { return int32_t(from * 1000 + to * 10 + i % 7); };
  std::vector<int32_t> in(n * size), out(n * size, -1);
  for (int to = 0; to < size; ++to)
    for (size_t i = 0; i < n; ++i) in[to * n + i] = mark(rank, to, i);
  NCCL_OR_DIE(ncclAlltoAll(in.data(), out.data(), n, ncclInt32, comm, nullptr));
  size_t bad = 0;
  for (int from = 0; from < size; ++from)
    for (size_t i = 0; i < n; ++i) bad += out[from * n + i] != mark(from, rank, i);
  check(bad == 0, "alltoall: " + std::to_string(bad) + " wrong");
  const int root = size - 1;
  for (bool inPlace : {false, true}) {
    std::vector<double> mine(n), all(rank == root ? n * size : 0, -1.0);
    for (size_t i = 0; i < n; ++i) mine[i] = rank * 3.0 + double(i % 5);
    const double* send = mine.data();
    if (inPlace && rank == root) {
      std::copy(mine.begin(), mine.end(), all.begin() + root * n);
      send = all.data() + root * n;
    }
    NCCL_OR_DIE(ncclGather(send, all.data(), n, ncclFloat64, root, comm, nullptr));
    bad = 0;
    for (size_t k = 0; k < all.size(); ++k) bad += all[k] != double(k / n) * 3.0 + double(k % n % 5);
    check(bad == 0, std::string("gather") + (inPlace ? " in place: " : ": ") +
                        std::to_string(bad) + " wrong");
  }
  std::vector<int64_t> parts(rank == 0 ? n * size : 0), got(n, -1);
  for (size_t k = 0; k < parts.size(); ++k) parts[k] = int64_t(k / n) * 11 + int64_t(k % n % 3);
  NCCL_OR_DIE(ncclScatter(parts.data(), got.data(), n, ncclInt64, 0, comm, nullptr));
  bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != int64_t(rank) * 11 + int64_t(i % 3);
  check(bad == 0, "scatter: " + std::to_string(bad) + " wrong");
}

void collectives(ncclComm_t comm, int rank, int size) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{1021}, size_t{65539}}) {
    allReduceSum<float>(comm, rank, size, ncclFloat32, count, "float32");
    allReduceSum<double>(comm, rank, size, ncclFloat64, count, "float64");
    allReduceSum<int32_t>(comm, rank, size, ncclInt32, count, "int32");
    allReduceSum<int64_t>(comm, rank, size, ncclInt64, count, "int64");
    allReduceSum<uint16_t>(comm, rank, size, ncclFloat16, count, "float16");
    allReduceSum<uint16_t>(comm, rank, size, ncclBfloat16, count, "bfloat16");
  }
  const size_t n = 1021;
  // max, min, prod, avg on float32: rank r holds r + 1 + i % 3.
  std::vector<float> x(n), y(n);
  for (ncclRedOp_t op : {ncclMax, ncclMin, ncclProd, ncclAvg}) {
    for (size_t i = 0; i < n; ++i) x[i] = float(rank + 1 + i % 3);
    NCCL_OR_DIE(ncclAllReduce(x.data(), y.data(), n, ncclFloat32, op, comm, nullptr));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      double want = op == ncclMax ? size + i % 3 : op == ncclMin ? 1 + i % 3 : 0;
      if (op == ncclProd || op == ncclAvg) {
        double p = 1, s = 0;
        for (int r = 0; r < size; ++r) {
          p *= r + 1 + i % 3;
          s += r + 1 + i % 3;
        }
        want = op == ncclProd ? p : s / size;
      }
      bad += std::fabs(y[i] - want) > 1e-5 * std::fabs(want);
    }
    check(bad == 0, "allreduce op " + std::to_string(op) + ": " + std::to_string(bad) + " wrong");
  }
  // Reduce-scatter: block r of the sum lands on rank r.
  std::vector<int32_t> rsIn(n * size), rsOut(n);
  for (size_t i = 0; i < rsIn.size(); ++i) rsIn[i] = int32_t(rank + i);
  NCCL_OR_DIE(ncclReduceScatter(rsIn.data(), rsOut.data(), n, ncclInt32, ncclSum, comm, nullptr));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    bad += rsOut[i] != int32_t(size * (rank * n + i) + size * (size - 1) / 2);
  }
  check(bad == 0, "reducescatter: " + std::to_string(bad) + " wrong");
  // All-gather.
  std::vector<int64_t> agIn(n, rank * 7 + 1), agOut(n * size);
  NCCL_OR_DIE(ncclAllGather(agIn.data(), agOut.data(), n, ncclInt64, comm, nullptr));
  bad = 0;
  for (size_t i = 0; i < agOut.size(); ++i) bad += agOut[i] != int64_t(i / n) * 7 + 1;
  check(bad == 0, "allgather: " + std::to_string(bad) + " wrong");
  // Broadcast from the last rank, and the legacy in-place ncclBcast from rank 0.
  std::vector<double> b(n, rank == size - 1 ? 3.5 : -1.0), bo(n);
  NCCL_OR_DIE(ncclBroadcast(b.data(), bo.data(), n, ncclFloat64, size - 1, comm, nullptr));
  bad = 0;
  for (double v : bo) bad += v != 3.5;
  check(bad == 0, "broadcast: " + std::to_string(bad) + " wrong");
  std::vector<uint8_t> c(n, rank == 0 ? 9 : 0);
  NCCL_OR_DIE(ncclBcast(c.data(), n, ncclUint8, 0, comm, nullptr));
  bad = 0;
  for (uint8_t v : c) bad += v != 9;
  check(bad == 0, "bcast: " + std::to_string(bad) + " wrong");
  // Reduce to rank 0.
  std::vector<float> r(n, float(rank + 1)), ro(n, -1);
  NCCL_OR_DIE(ncclReduce(r.data(), ro.data(), n, ncclFloat32, ncclSum, 0, comm, nullptr));
  if (rank == 0) {
    bad = 0;
    for (float v : ro) bad += v != float(size * (size + 1) / 2);
    check(bad == 0, "reduce: " + std::to_string(bad) + " wrong");
  }
  // A ring of sends and receives in one group.
  if (size > 1) {
    std::vector<int32_t> s(n, rank), q(n, -1);
    NCCL_OR_DIE(ncclGroupStart());
    NCCL_OR_DIE(ncclSend(s.data(), n, ncclInt32, (rank + 1) % size, comm, nullptr));
    NCCL_OR_DIE(ncclRecv(q.data(), n, ncclInt32, (rank + size - 1) % size, comm, nullptr));
    NCCL_OR_DIE(ncclGroupEnd());
    bad = 0;
    for (int32_t v : q) bad += v != (rank + size - 1) % size;
    check(bad == 0, "send/recv ring: " + std::to_string(bad) + " wrong");
  }
  exchanges(comm, rank, size, n);
}

}  // namespace

int envInt(const char* name, const char* alt) {
  const char* v = std::getenv(name);
  if (v == nullptr) v = std::getenv(alt);
  if (v == nullptr) {
    std::printf("nccl_program --id-file: neither %s nor %s is set\n", name, alt);
    std::exit(2);
  }
  return std::atoi(v);
}

// Rank 0 writes the id; the others wait for it (id_file.h).
void passThroughFile(const std::string& path, ncclUniqueId* id) {
  const std::string failed = passIdThroughFile(path, gRank, id);
  if (failed.empty()) return;
  std::printf("%s\n", failed.c_str());
  die();
}

int main(int argc, char** argv) {
  const std::string idFile = argc == 3 && std::string(argv[1]) == "--id-file" ? argv[2] : "";
  if (argc != 1 && idFile.empty()) {
    std::printf("usage: nccl_program [--id-file PATH]\n");
    return 2;
  }
  ncclUniqueId id;
  if (idFile.empty()) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
    MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  } else {
    gMpi = false;
    gRank = envInt("RANK", "OMPI_COMM_WORLD_RANK");
    gSize = envInt("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE");
  }
  int version = 0;
  NCCL_OR_DIE(ncclGetVersion(&version));
  check(version >= 22800, "ncclGetVersion " + std::to_string(version) + " below 2.28");
  if (gMpi) {
    if (gRank == 0) NCCL_OR_DIE(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  } else {
    passThroughFile(idFile, &id);
  }
  ncclComm_t comm = nullptr;
  NCCL_OR_DIE(ncclCommInitRank(&comm, gSize, id, gRank));
  int count = -1, rank = -1;
  NCCL_OR_DIE(ncclCommCount(comm, &count));
  NCCL_OR_DIE(ncclCommUserRank(comm, &rank));
  check(count == gSize && rank == gRank, "ncclCommCount/UserRank");
  collectives(comm, gRank, gSize);

  // A split by parity (ranks ordered by descending key), and its collectives.
  ncclComm_t half = nullptr;
  NCCL_OR_DIE(ncclCommSplit(comm, gRank % 2, -gRank, &half, nullptr));
  int hrank = -1, hsize = -1;
  NCCL_OR_DIE(ncclCommUserRank(half, &hrank));
  NCCL_OR_DIE(ncclCommCount(half, &hsize));
  const int wantSize = (gSize + 1 - gRank % 2) / 2;
  check(hsize == wantSize && hrank == wantSize - 1 - gRank / 2, "ncclCommSplit ranks");
  collectives(half, hrank, hsize);
  NCCL_OR_DIE(ncclCommDestroy(half));

  ncclResult_t async = ncclInternalError;
  NCCL_OR_DIE(ncclCommGetAsyncError(comm, &async));
  check(async == ncclSuccess, "ncclCommGetAsyncError");
  NCCL_OR_DIE(ncclCommFinalize(comm));
  NCCL_OR_DIE(ncclCommDestroy(comm));

  int failures = gFailures, checks = gChecks;
  if (!gMpi) {  // each rank's own verdict: the launcher fails the job when one rank fails
    std::printf("nccl_program rank %d: %d passed, %d failed\n", gRank, checks - failures,
                failures);
    if (gRank == 0) unlink(idFile.c_str());
    return failures == 0 && checks > 0 ? 0 : 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (gRank == 0) std::printf("nccl_program: %d passed, %d failed\n", checks - failures, failures);
  MPI_Finalize();
  return failures == 0 && checks > 0 ? 0 : 1;
}
