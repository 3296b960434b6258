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
//
// What a size's measurement fills is perf_row.h; where the check writes and reads, perf_check.h.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "perf_args.h"
#include "perf_check.h"
#include "perf_compute.h"
#include "perf_data.h"
#include "perf_device.h"
#include "perf_row.h"
#include "strata/strata.h"

namespace strata::tools {

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
  // check_ on buffer set `set` (its host buffers).
  void prepareCheck(Placement p, const Geometry& g, int set) {
    check_.prepare(p, g, send_[set], recv_[set]);
  }
  long long wrongIn(Impl impl, Placement p, const Geometry& g, int set) const {
    return check_.wrongIn(impl, p, g, recv_[set]);
  }
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
  PerfCheck check_;          // over pattern_
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
