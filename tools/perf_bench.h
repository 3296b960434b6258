// strata-perf's measurement: one size at a time, strata and (with --vs mpi) MPI's equivalent
// on the same communicator and the same buffers, out of place and in place, timed as
// nccl-tests times (a barrier, then -n calls back to back, the mean per call, reduced over
// ranks as -a says), then checked (-c).
//
// With --device (a PerfDevice), strata's calls take device buffers of the same sizes and are
// each followed by a stream synchronisation inside the timed loop; MPI's keep the host buffers
// (this MPI is not CUDA-aware). Inputs are filled on the host and copied to the device; results
// are copied back and checked by the same code.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "perf_args.h"
#include "perf_data.h"
#include "perf_device.h"
#include "strata/strata.h"

namespace strata::tools {

enum Placement { kOutOfPlace = 0, kInPlace = 1 };
enum Impl { kStrata = 0, kVs = 1 };

struct Measurement {
  double timeUs = 0;     // median over repeats of the mean time per call (reduced over ranks)
  double algbw = 0;      // GB/s (1e9 B/s): size / time
  double busbw = 0;      // algbw times the collective's factor
  long long wrong = -1;  // wrong elements, summed over ranks; -1 when not checked
  std::vector<double> samplesUs;  // the mean time per call of every repeat
};

struct PerfRow {
  size_t bytes = 0;       // the size column (nccl-tests': the whole array)
  size_t count = 0;       // the count column (the call's count: per rank for RS and AG)
  Measurement strata[2];  // by Placement
  Measurement vs[2];
};

// busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter and all-gather.
double busFactor(Collective c, int nranks);

class Bench {
 public:
  // Allocates the buffers for the largest size once (collective: every rank fails alike). With
  // `device` (--device; it must outlive the Bench) strata's buffers are on its GPU.
  static StatusOr<std::unique_ptr<Bench>> create(const PerfOptions& o, strataComm_t comm,
                                                 MPI_Comm mpi, PerfDevice* device = nullptr);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // Times and checks one size. Collective; a failed call fails every rank (its message is
  // printed on stderr by the rank that saw it).
  Status runSize(size_t sizeBytes, PerfRow* row);

 private:
  Bench(const PerfOptions& o, strataComm_t comm, MPI_Comm mpi, int rank, int nranks,
        PerfDevice* device);
  // --device: the device buffers, filled from the host ones.
  Status makeDeviceBuffers();

  // One call of `impl`; false (with error_ set) when it failed.
  bool call(Impl impl, Placement p, const Geometry& g);
  bool callStrata(Placement p, const Geometry& g);
  bool callMpi(Placement p, const Geometry& g);
  // Fills the input of one check and returns the wrong elements of its result.
  long long check(Impl impl, Placement p, const Geometry& g);
  void prepareCheck(Placement p, const Geometry& g);
  // --device: the host inputs of a check to the device, and its result back.
  bool copyCheckInputs(const Geometry& g);
  bool copyCheckResult(const Geometry& g);
  Status agreeOk(bool ok);

  const PerfOptions& o_;
  strataComm_t comm_;
  MPI_Comm mpi_;
  int rank_, nranks_;
  size_t typeSize_;
  MPI_Datatype mpiType_ = MPI_DATATYPE_NULL;
  MPI_Op mpiOp_ = MPI_OP_NULL;
  Pattern pattern_;
  unsigned char* send_ = nullptr;  // host buffers: MPI's, and the check's inputs and results
  unsigned char* recv_ = nullptr;
  PerfDevice* device_ = nullptr;
  unsigned char* strataSend_ = nullptr;  // strata's buffers: send_/recv_, or on device_'s GPU
  unsigned char* strataRecv_ = nullptr;
  size_t sendBytes_ = 0, recvBytes_ = 0;
  std::string error_;
};

}  // namespace strata::tools
