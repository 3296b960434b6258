// strata-perf's options: what the command line says, checked and resolved before MPI_Init so a
// bad flag fails the same way on every rank (they all parse the same argv).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "strata/strata.h"

namespace strata::tools {

// What a run measures: nccl-tests' table (blocking calls, optionally next to MPI's), blocking
// next to nonblocking calls (--nonblocking), or a collective overlapped with computation
// (--overlap).
enum class PerfMode { kBlocking, kNonblocking, kOverlap };

constexpr int kMaxInflight = 256;

// nccl-tests' flags that strata-perf takes so its command lines run unchanged (perf_cli.cc
// registers them; resolveOptions checks them). Defaults are nccl-tests' (src/common.cu).
struct NcclTestsFlags {
  // -t: threads per process; strata-perf has one (1 only). Text, so that an old strata-perf
  // command line's `-t allreduce` gets a message naming --collective.
  std::string nthreads = "1";
  int ngpus = 1;             // -g: GPUs per thread; one rank per GPU or process (1 only)
  int aggIters = 1;          // -m: calls per timed iteration (time is per call)
  int runCycles = 1;         // -N: 1 only (--repeat repeats each size)
  int parallelInit = 0;      // -p: 0 or 1 (one thread: nothing to parallelise)
  int blocking = 0;          // -z: 0..3, nccl-tests' barrier placement
  int streamNull = 0;        // -y: 0 only
  int timeoutS = 0;          // -T: seconds a call waits for its peers (0: STRATA_TIMEOUT)
  int cudaGraph = 0;         // -G: 0 only
  int reportCputime = 0;     // -C: 0 or 1 (the time column is labelled cputime)
  int reportTimestamps = 0;  // -S: 0 only
  int localRegister = 0;     // -R: 0 only
  int ctaPolicy = -1;        // -x: unset or 0 only
  int deviceImpl = 0;        // -D: 0 only
  int deviceCtaCount = 16;   // -V: 1..127, used by -D > 0 only, so ignored
  int memoryReport = 0;      // -M: 0 only
  int unalign = 0;           // -u: 0 only
  int perIterTiming = 0;     // -I: 0 only
  int perIterSkip = 0;       // -K: 0 only
};

struct PerfOptions {
  // As typed; nccl-tests' flags and defaults where nccl-tests has them.
  std::string minText = "32M";  // -b
  std::string maxText = "32M";  // -e
  std::string stepText = "1M";  // -i, used when the step factor is 1
  long long stepFactor = 1;     // -f
  int iters = 20;               // -n
  // -w: nccl-tests' default; strata-perf warms up at every size.
  int warmup = 5;
  int check = 1;                // -c: check iterations (0 = none)
  int average = 1;              // -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  int repeat = 1;               // --repeat (strata's own; nccl-tests' -R is local_register)
  int root = 0;                 // -r: broadcast and reduce (nccl-tests ignores it elsewhere)
  NcclTestsFlags nccl;
  std::string collective = "allreduce";  // --collective (nccl-tests: the binary's name)
  std::string datatype = "float";
  std::string op = "sum";
  std::string vs;       // "" or "mpi"
  std::string vsLabel;  // defaults to vs
  std::string json, csv, png, title;
  bool pngLogBusbw = false;  // --png-log-busbw: a log-scale busbw axis
  bool device = false;       // --device (CUDA builds): strata on device buffers (perf_device.h)
  bool uid = false;          // --uid: the communicator from a unique id (TCP control plane, ucx)
  bool nonblocking = false;  // --nonblocking: strata's I-calls next to its blocking calls
  int inflight = 1;          // --inflight: nonblocking calls issued before waiting
  bool inflightGiven = false;
  bool overlap = false;  // --overlap: the I-call overlapped with a computation
  double computeUs = 0;  // --compute-us: the computation's time (0: calibrated to t_coll)
  bool computeGiven = false;

  // Resolved by resolveOptions.
  PerfMode mode = PerfMode::kBlocking;
  Collective coll = Collective::kAllReduce;
  strataDataType_t type = strataFloat32;
  strataRedOp_t redop = strataSum;
  size_t minBytes = 0, maxBytes = 0, stepBytes = 0;
  std::vector<size_t> sizes;  // the sweep, in bytes as typed (before rounding to elements)
};

// The names nccl-tests prints: "float", "half", "sum", ... (the collective's is
// strata::collectiveName). An allgather or broadcast has no op and prints "none", as nccl-tests
// does.
const char* perfTypeName(strataDataType_t t);
const char* perfOpName(const PerfOptions& o);

// A size with an optional K, M or G suffix (binary, any case, optional "iB"/"B"), as -b/-e take.
StatusOr<size_t> parsePerfSize(const std::string& flag, const std::string& text);

// Checks every option and fills the resolved fields. The messages name the flag and the value.
// The root (-r) is checked against the job's size later, in Bench::create.
Status resolveOptions(PerfOptions* o);

// The root column: -r for broadcast and reduce, -1 for the others (as nccl-tests prints).
int perfRoot(const PerfOptions& o);

// What one size means for a collective, in nccl-tests' terms (its GetCollByteCount): `count` is
// the element count a call takes (per rank for reduce-scatter and all-gather), `bytes` the
// size column (the whole array: max of send and receive bytes). Broadcast and reduce move the
// whole array: count = size / type size.
struct Geometry {
  size_t count = 0;      // the count argument of the call
  size_t sendCount = 0;  // elements each rank sends
  size_t recvCount = 0;  // elements each rank receives
  size_t bytes = 0;      // the size column
};
Geometry geometryFor(Collective c, size_t sizeBytes, size_t typeSize, int nranks);

}  // namespace strata::tools
