// strata-perf's options: what the command line says, checked and resolved before MPI_Init so a
// bad flag fails the same way on every rank (they all parse the same argv).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::tools {

enum class Collective { kAllReduce, kReduceScatter, kAllGather };

struct PerfOptions {
  // As typed; nccl-tests' flags and defaults where nccl-tests has them.
  std::string minText = "32M";  // -b
  std::string maxText = "32M";  // -e
  std::string stepText = "1M";  // -i, used when the step factor is 1
  long long stepFactor = 1;     // -f
  int iters = 20;               // -n
  int warmup = 1;               // -w
  int check = 1;                // -c: check iterations (0 = none)
  int average = 1;              // -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  int repeat = 1;               // -R
  std::string collective = "allreduce";
  std::string datatype = "float";
  std::string op = "sum";
  std::string vs;       // "" or "mpi"
  std::string vsLabel;  // defaults to vs
  std::string json, csv, png, title;
  bool device = false;  // --device (CUDA builds): strata on device buffers (perf_device.h)

  // Resolved by resolveOptions.
  Collective coll = Collective::kAllReduce;
  strataDataType_t type = strataFloat32;
  strataRedOp_t redop = strataSum;
  size_t minBytes = 0, maxBytes = 0, stepBytes = 0;
  std::vector<size_t> sizes;  // the sweep, in bytes as typed (before rounding to elements)
};

// The names nccl-tests prints: "allreduce", "float", "half", "sum", ... An allgather has no op
// and prints "none", as nccl-tests does.
const char* collectiveName(Collective c);
const char* perfTypeName(strataDataType_t t);
const char* perfOpName(const PerfOptions& o);

// A size with an optional K, M or G suffix (binary, any case, optional "iB"/"B"), as -b/-e take.
StatusOr<size_t> parsePerfSize(const std::string& flag, const std::string& text);

// Checks every option and fills the resolved fields. The messages name the flag and the value.
Status resolveOptions(PerfOptions* o);

// What one size means for a collective, in nccl-tests' terms (its GetCollByteCount): `count` is
// the element count a call takes (per rank for reduce-scatter and all-gather), `bytes` the
// size column (the whole array: max of send and receive bytes).
struct Geometry {
  size_t count = 0;      // the count argument of the call
  size_t sendCount = 0;  // elements each rank sends
  size_t recvCount = 0;  // elements each rank receives
  size_t bytes = 0;      // the size column
};
Geometry geometryFor(Collective c, size_t sizeBytes, size_t typeSize, int nranks);

// Before MPI_Init only the launcher's environment tells ranks apart; rank 0 (or a process started
// without mpirun) prints help and argument errors, so they appear once.
bool firstProcess();

}  // namespace strata::tools
