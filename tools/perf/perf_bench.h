// strata-perf's measurement: one size at a time, strata and (with --vs mpi) MPI's equivalent
// on the same communicator and the same buffers, out of place and in place, timed as
// nccl-tests times (a barrier, then -n calls back to back, the mean per call, reduced over
// ranks as -a says; -m calls per iteration and -z's barriers as nccl-tests places them), then
// checked (-c).
//
// With --device (a PerfDevice), strata's calls take device buffers of the same sizes and are
// each followed by a stream synchronisation inside the timed loop; MPI's keep the host buffers
// (this MPI is not CUDA-aware). Inputs are filled on the host and copied to the device; results
// are copied back and checked by the same code.
//
// With --nonblocking the second set of columns is strata's own nonblocking call: a timed
// iteration issues --inflight calls, each on its own buffers, then waits for them all; the
// blocking columns issue the same calls on the same buffers back to back. Both are per call
// (iteration time / inflight) and alternate every repeat.
//
// With --overlap (perf_overlap.cc) each size times the blocking call alone, a computation
// alone (perf_compute.h) and the nonblocking call with the computation before its wait.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "perf_args.h"
#include "perf_compute.h"
#include "perf_data.h"
#include "perf_device.h"
#include "strata/strata.h"

namespace strata::tools {

enum Placement { kOutOfPlace = 0, kInPlace = 1 };
// The calls a row times: strata's blocking ones, and next to them MPI's (--vs mpi) or strata's
// nonblocking ones (--nonblocking).
enum Impl { kStrata = 0, kVs = 1, kNonblocking = 2 };

struct Measurement {
  double timeUs = 0;     // median over repeats of the mean time per call (reduced over ranks)
  double algbw = 0;      // GB/s (1e9 B/s): size / time
  double busbw = 0;      // algbw times the collective's factor
  long long wrong = -1;  // wrong elements, summed over ranks; -1 when not checked
  std::vector<double> samplesUs;  // the mean time per call of every repeat
};

// --overlap, one size (out of place). Times are per call, reduced over ranks as -a says, the
// median over repeats.
struct OverlapResult {
  double collUs = 0;  // (a) the blocking call alone
  double compUs = 0;  // (b) the computation alone
  double bothUs = 0;  // (c) the nonblocking call, the computation, then strataWait
  // Fraction of the collective hidden behind the computation: (a + b - c) / a, clamped to
  // [0, 1], and as measured (below 0: overlapping cost more than running one after the other;
  // above 1: noise, or the computation ran faster alongside).
  double hidden = 0;
  double hiddenRaw = 0;
  long long passesMin = 0, passesMax = 0;  // the computation's passes, over ranks
  long long wrong = -1;                    // the check of (c), summed over ranks
  bool computeOk = true;  // every rank's computation in (c) gave the same checksum as alone
  std::vector<double> collSamplesUs, compSamplesUs, bothSamplesUs;
};

struct PerfRow {
  size_t bytes = 0;       // the size column (nccl-tests': the whole array)
  size_t count = 0;       // the count column (the call's count: per rank for RS and AG)
  Measurement strata[2];  // by Placement: strata's blocking call (--overlap: out of place, (a))
  Measurement vs[2];      // --vs mpi
  Measurement nonblocking[2];  // --nonblocking
  OverlapResult overlap;       // --overlap

  Measurement& at(Impl impl, Placement p) {
    return impl == kStrata ? strata[p] : impl == kVs ? vs[p] : nonblocking[p];
  }
  const Measurement& at(Impl impl, Placement p) const {
    return impl == kStrata ? strata[p] : impl == kVs ? vs[p] : nonblocking[p];
  }
};

// busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter and all-gather, 1 for
// broadcast and reduce (nccl-tests' GetBw).
double busFactor(Collective c, int nranks);

// "strataAllReduce", or with `nonblocking` "strataIAllReduce", ...: the call strata-perf times.
const char* strataCallName(Collective c, bool nonblocking);

// The median of v (0 when empty): what a row reports of its repeats.
double median(std::vector<double> v);

class Bench {
 public:
  // Allocates the buffers for the largest size once (collective: every rank fails alike), one
  // set per call in flight (--inflight). With `device` (--device; it must outlive the Bench)
  // strata's buffers are on its GPU. Checks -r against the job's size.
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

  // The table's measurement (blocking, --vs mpi, --nonblocking).
  Status runTable(const Geometry& g, PerfRow* row);
  // --overlap (perf_overlap.cc).
  Status runOverlap(const Geometry& g, PerfRow* row);
  // --overlap's (c): the nonblocking call (out of place, set 0), `passes` of the computation
  // (its checksum in *checksum), then strataWait.
  bool overlapped(const Geometry& g, long long passes, double* checksum);
  // Times `iters` iterations after a barrier; returns this rank's seconds per call.
  double timeIterations(Impl impl, Placement p, const Geometry& g, bool* ok);
  // -z's barrier: every rank's `ok`, agreed (false when any rank failed).
  bool barrier(bool ok);
  // Reduces per-rank times over ranks as -a says, in place.
  void reduceTimes(std::vector<double>* times);

  // One iteration of `impl`: one call per buffer set (MPI: set 0 only), the nonblocking ones
  // all issued before any is waited for. False (with error_ set) when a call failed.
  bool iterate(Impl impl, Placement p, const Geometry& g);
  // strata's call on buffer set `set`: blocking when request is null, else nonblocking.
  bool callStrata(Placement p, const Geometry& g, int set, strataRequest_t* request);
  bool waitStrata(strataRequest_t* request, const Geometry& g);
  bool callMpi(Placement p, const Geometry& g);
  // Fills the inputs of one check (every set the iteration uses), runs one iteration and
  // returns the wrong elements of its results; -2 when a call failed.
  long long check(Impl impl, Placement p, const Geometry& g);
  void prepareCheck(Placement p, const Geometry& g, int set);
  long long wrongIn(Impl impl, Placement p, const Geometry& g, int set) const;
  // --device: the host inputs of a check to the device, and its result back.
  bool copyCheckInputs(const Geometry& g);
  bool copyCheckResult(const Geometry& g);
  Status agreeOk(bool ok);
  int setsOf(Impl impl) const { return impl == kVs ? 1 : sets_; }

  const PerfOptions& o_;
  strataComm_t comm_;
  MPI_Comm mpi_;
  int rank_, nranks_;
  size_t typeSize_;
  MPI_Datatype mpiType_ = MPI_DATATYPE_NULL;
  MPI_Op mpiOp_ = MPI_OP_NULL;
  Pattern pattern_;
  std::vector<Impl> impls_;  // strata's blocking calls, then --vs's or --nonblocking's
  int sets_ = 1;             // buffer sets: --inflight with --nonblocking, else 1
  // Host buffers, one send and one receive per set: MPI's (set 0), strata's without --device,
  // and the check's inputs and results.
  std::vector<unsigned char*> send_, recv_;
  std::vector<strataRequest_t> requests_;  // one per set
  PerfDevice* device_ = nullptr;
  unsigned char* deviceSend_ = nullptr;  // --device: strata's buffers on device_'s GPU (one set)
  unsigned char* deviceRecv_ = nullptr;
  size_t sendBytes_ = 0, recvBytes_ = 0;
  std::unique_ptr<Compute> compute_;  // --overlap
  std::string error_;
};

}  // namespace strata::tools
