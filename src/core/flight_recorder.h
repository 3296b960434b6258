// The flight recorder (STRATA_FLIGHT_RECORDER_SIZE): the last calls of one communicator, always
// on and bounded, so that after a hang or a failure every rank can say which call it was in and
// how far it got, as PyTorch's NCCL flight recorder does. Each call is recorded when issued
// (numbered, core/check.h), when it starts running, at each step of its program (which step of
// how many, its kind and level) and when it ends (done, or failed with its error).
//
// Dumped (flight_dump.h) when a call fails while running (a timeout, a dead or disagreeing
// peer: the error state begins), on strataCommAbort when a call had not finished (an abort of
// an idle, healthy communicator is a normal teardown: PyTorch aborts every group at exit, and
// NCCL's abort is silent too), and on demand (strataCommDump).
//
// Threads: written by the issuing thread (issued) and by whichever thread runs the calls
// (started, step, finished); read by any thread that dumps. One mutex, held for a few stores;
// steps are recorded once per program step, never per element or per poll.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"

namespace strata::core {

struct FlightRecord {
  enum class State { kIssued, kRunning, kDone, kFailed };
  uint64_t id = 0;  // the recorder's own number, 1, 2, ...
  Collective coll = Collective::kAllReduce;
  uint64_t seq = 0;  // Call::seq
  size_t count = 0;
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;  // root (broadcast, reduce) or peer (send, recv)
  State state = State::kIssued;
  // While running or when it ended: the step it was at, "step 2 of 3 (allreduce at level 1)".
  int step = 0, steps = 0;
  Collective stepKind = Collective::kAllReduce;
  int stepLevel = 0;  // plan::kFlatLevel (-1): the flat group
  // Microseconds since the recorder was made, from a coarse clock (a few ms resolution:
  // flight_recorder.cc says why); 0: not yet.
  int64_t issuedUs = 0, startedUs = 0, endedUs = 0;
  std::string error;  // kFailed
  std::string note;   // Call::note: a library's own call
};

const char* flightStateName(FlightRecord::State s);

class FlightRecorder {
 public:
  // `capacity` calls (0: off: every method returns at once).
  explicit FlightRecorder(size_t capacity);
  bool on() const { return capacity_ > 0; }

  // A call was issued (numbered); returns its record id (0 when off) for the others.
  uint64_t issued(const Call& call);
  void started(uint64_t id);
  // The running call (the last started) is at step `index` (1-based) of `total`.
  void step(int index, int total, Collective kind, int level);
  void finished(uint64_t id, const Status& st);

  // Whether a call still held was issued or started and has not ended.
  bool anyUnfinished() const;
  // The records still held, oldest first.
  std::vector<FlightRecord> snapshot() const;
  // The wall clock (Unix microseconds) at the recorder's zero, so dumps of several ranks line up.
  int64_t epochUs() const { return epochUs_; }

 private:
  FlightRecord* find(uint64_t id);  // with mutex_ held; null once overwritten
  int64_t nowUs() const;

  const size_t capacity_;
  const int64_t zeroUs_;  // the coarse monotonic clock at construction
  const int64_t epochUs_;
  mutable std::mutex mutex_;
  std::vector<FlightRecord> ring_;  // record id i at ring_[(i - 1) % capacity_]
  uint64_t next_ = 1;
  uint64_t running_ = 0;  // the call step() records for
};

}  // namespace strata::core
