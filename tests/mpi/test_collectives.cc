// MPI integration test of strata's collectives: all-reduce, reduce-scatter and all-gather over
// every datatype, op, a sweep of counts, in place and out of place; broadcast and reduce from
// every root, and from the first and the last rank over every datatype, op and count
// (collective_runs.h runs and checks each case).
//
// Every rank's input is a deterministic function of (case, rank, index), so each rank computes the
// exact expected result by itself; the reference shares no code and no communication with the
// library. The inputs keep every result exact whatever order the library combines them in (sums
// of bounded multiples of a power of two, products of small factors or of powers of two), so any
// difference is a bug, not rounding; only avg on floating types is compared with a tolerance,
// because the library divides in float and rounds once. A subset is cross-checked against plain
// MPI collectives on the same inputs. Each case also checks that a guard region on both sides of
// every buffer is untouched and that the send buffer (or, in place, the rest of it) is unchanged;
// a rooted case also that the buffers only the root uses are left alone elsewhere (a reduce's
// recvbuff on the other ranks, a broadcast's sendbuff), or that NULL is accepted there.
//
// Cases are not separated by any synchronisation of the test's own, so a library that lets one
// collective's messages leak into the next fails here too. A watchdog turns a hang into a failure
// that names the case.
//
// With --device every call runs on device buffers (device_mirror.h): each host buffer, guards
// included, is copied to a cudaMalloc mirror before the call, strata gets the mirror's addresses
// and the test's CUDA stream, and after that stream is synchronised the mirror is copied back, so
// the same checks run on the host copy. All ranks share GPU 0. Without a visible GPU every rank
// exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE).
//
//   mpiexec -n 8 strata_mpi_collectives [--quick] [--max-count N] [--timeout S] [--two-comms]
//                                       [--uid]
//                                       [--device [--legacy-stream]]

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/watchdog.h"
#include "mpi/collective_reference.h"
#include "mpi/collective_runs.h"
#include "mpi/collective_types.h"
#include "mpi/device_mirror.h"
#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;
using strata::test::Watchdog;

// ----- Driver ---------------------------------------------------------------------------------

struct Options {
  bool quick = false;
  size_t maxCount = std::numeric_limits<size_t>::max();
  double timeout = 300;
  bool twoComms = false;
  bool uid = false;
  bool device = false;
  bool legacyStream = false;
  bool verbose = false;
  uint64_t seed = 0;
  std::vector<std::string> colls, types, ops;  // filters; empty: all
};

bool selected(const std::vector<std::string>& filter, const char* name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// Runs cases and records one local verdict per case, in the same order on every rank. With a
// Device (--device) every case runs on device buffers.
class Runner {
 public:
  Runner(const Options& opt, Watchdog& watchdog, int worldRank, Device* device)
      : opt_(opt), watchdog_(watchdog), worldRank_(worldRank), device_(device) {}

  const Options& options() const { return opt_; }
  int worldRank() const { return worldRank_; }

  bool wanted(const Case& c) const {
    return c.count <= opt_.maxCount && selected(opt_.colls, collName(c.coll)) &&
           selected(opt_.types, typeName(c.type)) &&
           (!hasOp(c.coll) || selected(opt_.ops, opName(c.op)));
  }

  // A negative c.root counts from the end of cm.
  void run(const Comm& cm, Case c, Reference ref) {
    if (!wanted(c)) return;
    c.root = resolveRoot(c.root, cm.size);
    const std::string what =
        describe(c) + " on " + cm.name + (ref == Reference::kMpi ? " vs MPI" : "");
    watchdog_.setStep(what);
    if (opt_.verbose && worldRank_ == 0) std::printf("%s\n", what.c_str());
    Verdict v(worldRank_, what);
    const uint64_t seed = hashString(what) ^ mix(opt_.seed);
    runBlocking(cm, c, ref, seed, device_, v);
    record(v.ok());
  }

  // For checks that are not a collective case.
  void check(bool ok, const std::string& what) {
    if (!ok) Verdict(worldRank_, what).fail("check failed");
    record(ok);
  }

  const std::vector<unsigned char>& results() const { return results_; }

 private:
  void record(bool ok) { results_.push_back(ok ? 1 : 0); }

  const Options& opt_;
  Watchdog& watchdog_;
  int worldRank_;
  Device* device_;
  std::vector<unsigned char> results_;
};

std::vector<size_t> sweepCounts(int nranks, bool quick) {
  const size_t p = static_cast<size_t>(nranks);
  std::vector<size_t> counts =
      quick ? std::vector<size_t>{0, 1, 3, 13, p - 1, p, p + 1, 1021}
            : std::vector<size_t>{0, 1, 2, 3, 7, 13, p - 1, p, p + 1, 1021, 65537};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// The full sweep: every collective, type, op, count, in place and out of place.
void runMatrix(Runner& runner, const Comm& world) {
  const bool quick = runner.options().quick;
  const std::vector<size_t> counts = sweepCounts(world.size, quick);
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather}) {
    for (strataDataType_t type : kAllTypes) {
      // In quick mode 65537 elements (pieces at every chunk size) for one type of each width.
      std::vector<size_t> typeCounts = counts;
      if (quick && (type == strataInt8 || type == strataBfloat16 || type == strataFloat32 ||
                    type == strataUint64)) {
        typeCounts.push_back(65537);
      }
      for (strataRedOp_t op : kAllOps) {
        if (coll == Coll::kAllGather && op != strataSum) continue;  // no op: run once
        for (size_t count : typeCounts) {
          for (bool inPlace : {false, true})
            runner.run(world, {coll, type, op, count, inPlace}, Reference::kLocal);
        }
      }
    }
  }
  // About 4 MiB per rank: many pieces at any chunk size, and the bandwidth path.
  const size_t big = (size_t{1} << 20) + 3, bigPerRank = (size_t{1} << 20) / world.size + 3;
  for (bool inPlace : {false, true}) {
    runner.run(world, {Coll::kAllReduce, strataFloat32, strataSum, big, inPlace},
               Reference::kLocal);
    runner.run(world, {Coll::kReduceScatter, strataBfloat16, strataSum, bigPerRank, inPlace},
               Reference::kLocal);
    runner.run(world, {Coll::kAllGather, strataFloat64, strataSum, bigPerRank, inPlace},
               Reference::kLocal);
    if (!quick) {
      runner.run(world, {Coll::kAllReduce, strataInt8, strataMax, big, inPlace}, Reference::kLocal);
    }
  }
}

// Broadcast and reduce. Every root for a few types and counts; the first and the last rank as
// root for every type, op and count, in and out of place and with the root-only buffers real or
// NULL on the other ranks (alternating, so that each combination of type, op and count meets
// both ways across the two roots); and about 4 MiB from the last rank.
void runRootedMatrix(Runner& runner, const Comm& world) {
  const bool quick = runner.options().quick;
  const int p = world.size;
  for (int root = 0; root < p; ++root) {
    const bool odd = root % 2 == 1;
    const Others elsewhere = odd ? Others::kNull : Others::kBuffer;
    runner.run(world, {Coll::kBroadcast, strataInt8, strataSum, 13, odd, root}, Reference::kLocal);
    runner.run(world, {Coll::kBroadcast, strataFloat32, strataSum, 1021, false, root, elsewhere},
               Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataInt32, strataSum, 13, odd, root}, Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataFloat32, strataAvg, 1021, false, root, elsewhere},
               Reference::kLocal);
    if (quick) continue;
    runner.run(world,
               {Coll::kBroadcast, strataFloat16, strataSum, 1021, true, root, Others::kBcast},
               Reference::kLocal);
    runner.run(world, {Coll::kBroadcast, strataUint64, strataSum, 65537, !odd, root},
               Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataBfloat16, strataSum, 1021, false, root},
               Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataUint8, strataMax, 65537, !odd, root},
               Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataFloat64, strataProd, 1, odd, root, elsewhere},
               Reference::kLocal);
  }

  const std::vector<size_t> counts =
      quick ? std::vector<size_t>{0, 13, 1021} : std::vector<size_t>{0, 1, 13, 1021, 65537};
  const std::vector<int> roots = p == 1 ? std::vector<int>{0} : std::vector<int>{0, p - 1};
  for (int root : roots) {
    int k = root == 0 ? 0 : 1;
    for (strataDataType_t type : kAllTypes) {
      for (strataRedOp_t op : kAllOps) {
        for (Coll coll : {Coll::kBroadcast, Coll::kReduce}) {
          if (coll == Coll::kBroadcast && op != strataSum) continue;  // no op: once per type
          for (size_t count : counts) {
            const bool inPlace = k % 2 == 1;
            // Out of place: a real buffer or NULL on the other ranks; in place: the plain call
            // or (broadcast) strataBcast.
            Others others = (k / 2) % 2 == 0 ? Others::kBuffer : Others::kNull;
            if (inPlace) {
              others = coll == Coll::kBroadcast && others == Others::kNull ? Others::kBcast
                                                                           : Others::kBuffer;
            }
            ++k;
            runner.run(world, {coll, type, op, count, inPlace, root, others}, Reference::kLocal);
          }
        }
      }
    }
  }
  const size_t big = (size_t{1} << 20) + 3;
  for (bool inPlace : {false, true}) {
    runner.run(world, {Coll::kBroadcast, strataFloat32, strataSum, big, inPlace, -1},
               Reference::kLocal);
    runner.run(world, {Coll::kReduce, strataFloat32, strataSum, big, inPlace, -1},
               Reference::kLocal);
  }
}

// The same inputs through plain MPI collectives: the library must agree with them exactly.
void runMpiCrossCheck(Runner& runner, const Comm& world) {
  const size_t p = static_cast<size_t>(world.size);
  const size_t counts[] = {1, p + 1, 1021, 65537};
  int k = 0;
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather}) {
    for (strataDataType_t type : {strataInt32, strataUint64, strataFloat32, strataFloat64}) {
      for (strataRedOp_t op : {strataSum, strataProd, strataMax, strataMin}) {
        if (coll == Coll::kAllGather && op != strataSum) continue;
        for (size_t count : counts) {
          runner.run(world, {coll, type, op, count, (k++ % 2) == 1}, Reference::kMpi);
        }
      }
    }
  }
  // Rooted: the root walks over the ranks.
  for (strataDataType_t type : {strataInt32, strataUint64, strataFloat32, strataFloat64}) {
    for (size_t count : counts) {
      runner.run(world, {Coll::kBroadcast, type, strataSum, count, (k % 2) == 1, k % world.size},
                 Reference::kMpi);
      ++k;
    }
    for (strataRedOp_t op : {strataSum, strataProd, strataMax, strataMin}) {
      for (size_t count : {size_t{1}, size_t{1021}, size_t{65537}}) {
        runner.run(world, {Coll::kReduce, type, op, count, (k % 2) == 1, k % world.size},
                   Reference::kMpi);
        ++k;
      }
    }
  }
}

// --device: a host buffer and a device buffer in one call (either way round) must fail at once,
// on every rank, with strataInvalidArgument and a message that names both kinds of memory.
void runMixedBuffers(Runner& runner, const Comm& world, Device& device, Watchdog& watchdog) {
  const size_t n = 1021;
  for (bool hostSend : {true, false}) {
    const std::string what =
        std::string("allreduce fp32 sum count=1021 with a ") +
        (hostSend ? "host sendbuff and a device recvbuff" : "device sendbuff and a host recvbuff") +
        " on " + world.name;
    watchdog.setStep(what);
    Verdict v(runner.worldRank(), what);
    MirroredBuffer send(n * sizeof(float), 0), recv(n * sizeof(float), 0);
    DeviceMirror io(&device, v, {hostSend ? &recv : &send});
    if (!io.ok()) {
      runner.check(false, what);
      continue;
    }
    const void* sendPtr = hostSend ? send.data() : io.map(send.data());
    void* recvPtr = hostSend ? io.map(recv.data()) : recv.data();
    const strataResult_t rc =
        strataAllReduce(sendPtr, recvPtr, n, strataFloat32, strataSum, world.comm, io.stream());
    const std::string message = strataGetLastError(world.comm);
    std::string lower = message;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    const bool ok = rc == strataInvalidArgument && lower.find("host") != std::string::npos &&
                    lower.find("device") != std::string::npos;
    const std::string expected =
        ": expected strataInvalidArgument and a message naming host and device, got ";
    runner.check(ok && io.download(), what + expected + std::to_string(rc) + " (" +
                                          strataGetErrorString(rc) + "): \"" + message + "\"");
  }
}

// Creates a strata communicator over `mpi`; records a failure and returns false if it fails.
bool makeComm(Runner& runner, MPI_Comm mpi, const std::string& name, Comm* out) {
  Comm cm;
  cm.name = name;
  MPI_Comm_rank(mpi, &cm.rank);
  MPI_Comm_size(mpi, &cm.size);
  // --uid: NCCL's way in (rank 0's id carried by MPI_Bcast; the communicator itself uses no
  // MPI), mpi_harness.h's initComm.
  uidInit() = runner.options().uid;
  const strataResult_t rc = initComm(&cm.comm, mpi);
  int count = -1, rank = -1;
  const bool ok = rc == strataSuccess && strataCommCount(cm.comm, &count) == strataSuccess &&
                  strataCommUserRank(cm.comm, &rank) == strataSuccess && count == cm.size &&
                  rank == cm.rank;
  if (rc != strataSuccess) {
    Verdict(runner.worldRank(), "strataCommInitMPI for " + name)
        .fail(std::string(strataGetErrorString(rc)) + ": " + strataGetLastError(nullptr));
  }
  runner.check(ok, "strataCommInitMPI for " + name + ", count " + std::to_string(count) +
                       " and rank " + std::to_string(rank) + " (MPI: " + std::to_string(cm.size) +
                       ", " + std::to_string(cm.rank) + ")");
  *out = cm;
  return rc == strataSuccess;
}

// Three more communicators alive together with `world`: halves of MPI_COMM_WORLD (contiguous
// ranks), its even and odd ranks (strided), and a second one over all ranks. Collectives
// alternate between them, each with its own inputs, so crossed messages or shared state show.
void runTwoComms(Runner& runner, const Comm& world, Watchdog& watchdog) {
  const int rank = world.rank, size = world.size;
  const int halfColor = rank < (size + 1) / 2 ? 0 : 1, parityColor = rank % 2;
  MPI_Comm halfMpi, parityMpi;
  watchdog.setStep("two comms: creating the communicators");
  MPI_Comm_split(MPI_COMM_WORLD, halfColor, rank, &halfMpi);
  MPI_Comm_split(MPI_COMM_WORLD, parityColor, rank, &parityMpi);
  Comm half, parity, world2;
  bool ok = makeComm(runner, halfMpi, "half " + std::to_string(halfColor), &half);
  ok = makeComm(runner, parityMpi, "parity " + std::to_string(parityColor), &parity) && ok;
  ok = makeComm(runner, MPI_COMM_WORLD, "world#2", &world2) && ok;
  // strata duplicates the MPI communicator, so freeing ours must not matter.
  MPI_Comm_free(&halfMpi);
  MPI_Comm_free(&parityMpi);
  half.mpi = parity.mpi = MPI_COMM_NULL;
  int allOk = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk) {  // abort is local: safe even if a peer's init failed
    for (Comm* cm : {&half, &parity, &world2}) {
      if (cm->comm) strataCommAbort(cm->comm);
    }
    return;
  }

  const Case cases[] = {
      {Coll::kAllReduce, strataInt32, strataSum, 0, false},
      {Coll::kReduceScatter, strataFloat32, strataMax, 0, false},
      {Coll::kAllGather, strataFloat16, strataSum, 0, false},
      {Coll::kAllReduce, strataBfloat16, strataAvg, 0, false},
      {Coll::kReduceScatter, strataInt64, strataProd, 0, false},
      {Coll::kAllReduce, strataUint8, strataMin, 0, false},
      {Coll::kAllGather, strataInt8, strataSum, 0, false},
      {Coll::kReduceScatter, strataFloat64, strataAvg, 0, false},
      {Coll::kBroadcast, strataInt64, strataSum, 0, false, -1},
      {Coll::kReduce, strataFloat32, strataMax, 0, false, -1, Others::kNull},
      {Coll::kReduce, strataInt32, strataAvg, 0, false, 0},
  };
  int k = 0;
  for (Case c : cases) {
    for (size_t count : {size_t{1}, size_t{13}, size_t{1021}}) {
      c.count = count;
      c.inPlace = (k++ % 2) == 1;
      const Comm* const comms[] = {&half, &parity, &world2, &world};
      for (const Comm* cm : comms) runner.run(*cm, c, Reference::kLocal);
    }
  }

  // Destroyed in another order than created; `world` must not notice.
  for (Comm* cm : {&parity, &world2, &half}) {
    watchdog.setStep("strataCommDestroy(" + cm->name + ")");
    const strataResult_t rc = strataCommDestroy(cm->comm);
    runner.check(rc == strataSuccess, "strataCommDestroy(" + cm->name + ") returned " +
                                          std::to_string(rc) + ": " + strataGetLastError(nullptr));
  }
  runner.run(world, {Coll::kAllReduce, strataFloat32, strataSum, 1021, false}, Reference::kLocal);
}

}  // namespace

int main(int argc, char** argv) {
  // On device buffers strata runs calls on a progress thread only when MPI allows threads
  // (else they block): --device asks for MPI_THREAD_MULTIPLE so that path is the one tested.
  bool wantThreads = false;
  for (int i = 1; i < argc; ++i) wantThreads = wantThreads || std::strcmp(argv[i], "--device") == 0;
  if (wantThreads) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options opt;
  CLI::App app{"strata collectives against a local reference and MPI (run under mpiexec)"};
  app.add_flag("--quick", opt.quick, "fewer counts (65537 for one type per width only)");
  app.add_option("--max-count", opt.maxCount, "skip cases with a larger count");
  app.add_option("--timeout", opt.timeout, "seconds before the watchdog fails a hung run")
      ->capture_default_str();
  app.add_flag("--uid", opt.uid,
               "make every communicator with strataGetUniqueId + MPI_Bcast + strataCommInitRank "
               "instead of strataCommInitMPI");
  app.add_flag("--two-comms", opt.twoComms,
               "also run collectives on several live communicators (split MPI_COMM_WORLD); not "
               "with a STRATA_TOPO_FILE, which fits one communicator size");
  app.add_flag("--device", opt.device,
               "run every call on device buffers and a CUDA stream, all ranks on GPU 0; exits 77 "
               "(skipped) when no GPU is visible");
  app.add_flag("--legacy-stream", opt.legacyStream,
               "with --device: pass the legacy default stream (NULL) instead of a stream of the "
               "test's own");
  app.add_flag("-v,--verbose", opt.verbose, "rank 0 prints every case as it starts");
  app.add_option("--seed", opt.seed, "varies every input")->capture_default_str();
  app.add_option("--coll", opt.colls, "only these collectives")
      ->delimiter(',')
      ->check(CLI::IsMember({"allreduce", "reducescatter", "allgather", "broadcast", "reduce"}));
  app.add_option("--dtype", opt.types, "only these types")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"int8", "uint8", "int32", "uint32", "int64", "uint64", "fp16", "fp32", "fp64", "bf16"}));
  app.add_option("--op", opt.ops, "only these ops")
      ->delimiter(',')
      ->check(CLI::IsMember({"sum", "prod", "max", "min", "avg"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : e.get_exit_code();
    MPI_Finalize();
    return rc;
  }

  const double start = MPI_Wtime();
  Watchdog watchdog;
  watchdog.start(opt.timeout, "rank " + std::to_string(rank) + " stuck in ", "startup");
  // --device: every rank must have the GPU, or all skip (77) or fail together.
  Device device;
  if (opt.device) {
    watchdog.setStep("--device: selecting GPU 0");
    std::string why;
    const int status = static_cast<int>(device.open(&why, opt.legacyStream));
    int worst = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (status == static_cast<int>(Device::Status::kError)) {
      std::fprintf(stderr, "rank %d: --device: %s\n", rank, why.c_str());
    }
    if (worst != static_cast<int>(Device::Status::kReady)) {
      const bool skip = worst == static_cast<int>(Device::Status::kNoGpu);
      if (skip && rank == 0) {
        std::printf("SKIPPED: --device: %s\n",
                    status == worst ? why.c_str() : "no CUDA GPU visible on another rank");
        std::fflush(stdout);
      }
      watchdog.setStep("MPI_Finalize");
      MPI_Finalize();
      return skip ? 77 : 1;
    }
  }
  Runner runner(opt, watchdog, rank, opt.device ? &device : nullptr);
  if (rank == 0) {
    int version = 0;
    strataGetVersion(&version);
    const char* topo = std::getenv("STRATA_TOPO_FILE");
    const char* chunk = std::getenv("STRATA_CHUNK_BYTES");
    std::printf("strata %d, %d ranks, STRATA_TOPO_FILE=%s STRATA_CHUNK_BYTES=%s%s%s\n", version,
                size, topo ? topo : "", chunk ? chunk : "", opt.quick ? ", quick" : "",
                opt.device ? ", device buffers" : "");
    std::fflush(stdout);
  }

  watchdog.setStep("strataCommInitMPI(MPI_COMM_WORLD)");
  Comm world;
  if (!makeComm(runner, MPI_COMM_WORLD, "world", &world)) {
    // Every rank gets the same result from a failed init, so all of them end here.
    MPI_Finalize();
    return 1;
  }
  world.mpi = MPI_COMM_WORLD;

  runMatrix(runner, world);
  runRootedMatrix(runner, world);
  runMpiCrossCheck(runner, world);
  if (opt.device) runMixedBuffers(runner, world, device, watchdog);
  if (opt.twoComms) runTwoComms(runner, world, watchdog);

  watchdog.setStep("strataCommDestroy(world)");
  const strataResult_t rc = strataCommDestroy(world.comm);
  runner.check(rc == strataSuccess, "strataCommDestroy(world) returned " + std::to_string(rc));

  // A case passes when it passed on every rank. Every rank ran the same cases in the same order.
  watchdog.setStep("collecting the results");
  std::vector<unsigned char> results = runner.results();
  int n = static_cast<int>(results.size()), minN = 0, maxN = 0;
  MPI_Allreduce(&n, &minN, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&n, &maxN, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int passed = 0, failed = 0;
  if (minN != maxN) {
    if (rank == 0) std::printf("ranks ran different numbers of cases (%d..%d)\n", minN, maxN);
    failed = 1;
  } else {
    MPI_Allreduce(MPI_IN_PLACE, results.data(), n, MPI_UNSIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD);
    for (unsigned char r : results) (r ? passed : failed)++;
  }
  if (rank == 0) {
    std::printf("%d passed, %d failed (%d ranks, %.1f s)\n", passed, failed, size,
                MPI_Wtime() - start);
    std::fflush(stdout);
  }
  watchdog.setStep("MPI_Finalize");
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
