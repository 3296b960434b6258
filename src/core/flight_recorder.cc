#include "core/flight_recorder.h"

#include <time.h>

namespace strata::core {

const char* flightStateName(FlightRecord::State s) {
  switch (s) {
    case FlightRecord::State::kIssued:
      return "issued";
    case FlightRecord::State::kRunning:
      return "running";
    case FlightRecord::State::kDone:
      return "done";
    case FlightRecord::State::kFailed:
      return "failed";
  }
  return "?";
}

namespace {

// The coarse monotonic clock, in microseconds: read from the vDSO without a system call even
// where the precise clock is not (virtual machines without a stable TSC, where a precise read
// costs a system call, measured at over 0.2 us per call). Its resolution, a few milliseconds,
// is enough to tell which call a rank is in and for how long; a timeline needs the precise one.
int64_t coarseUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace

FlightRecorder::FlightRecorder(size_t capacity)
    : capacity_(capacity),
      zeroUs_(coarseUs()),
      epochUs_(std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count()) {
  // Made once, up front: growing the ring inside the first calls would cost them copies.
  ring_.reserve(capacity_);
}

int64_t FlightRecorder::nowUs() const {
  const int64_t us = coarseUs() - zeroUs_;
  return us > 0 ? us : 1;  // 0 means "not yet"
}

FlightRecord* FlightRecorder::find(uint64_t id) {
  if (id == 0 || id >= next_ || next_ - id > ring_.size()) return nullptr;
  FlightRecord& r = ring_[(id - 1) % capacity_];
  return r.id == id ? &r : nullptr;
}

uint64_t FlightRecorder::issued(const Call& call) {
  if (!on()) return 0;
  const int64_t now = nowUs();
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t id = next_++;
  if (ring_.size() < capacity_) ring_.emplace_back();
  // Rewritten in place (no record built and moved per call): every field, the error kept
  // allocated for the next failure.
  FlightRecord& r = ring_[(id - 1) % capacity_];
  r.id = id;
  r.coll = call.coll;
  r.seq = call.seq;
  r.count = call.count;
  r.type = call.type;
  r.op = call.op;
  r.root = call.root;
  r.state = FlightRecord::State::kIssued;
  r.step = r.steps = r.stepLevel = 0;
  r.stepKind = Collective::kAllReduce;
  r.issuedUs = now;
  r.startedUs = r.endedUs = 0;
  r.error.clear();
  r.note = call.note;
  return id;
}

void FlightRecorder::started(uint64_t id) {
  if (!on()) return;
  const int64_t now = nowUs();
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = id;
  if (FlightRecord* r = find(id)) {
    r->state = FlightRecord::State::kRunning;
    r->startedUs = now;
  }
}

void FlightRecorder::step(int index, int total, Collective kind, int level) {
  if (!on()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightRecord* r = find(running_)) {
    r->step = index;
    r->steps = total;
    r->stepKind = kind;
    r->stepLevel = level;
  }
}

void FlightRecorder::finished(uint64_t id, const Status& st) {
  if (!on()) return;
  const int64_t now = nowUs();
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ == id) running_ = 0;
  if (FlightRecord* r = find(id)) {
    r->state = st.isOk() ? FlightRecord::State::kDone : FlightRecord::State::kFailed;
    r->endedUs = now;
    if (!st.isOk()) r->error = st.message();
  }
}

bool FlightRecorder::anyUnfinished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const FlightRecord& r : ring_) {
    if (r.state == FlightRecord::State::kIssued || r.state == FlightRecord::State::kRunning) {
      return true;
    }
  }
  return false;
}

std::vector<FlightRecord> FlightRecorder::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<FlightRecord> out;
  out.reserve(ring_.size());
  const uint64_t first = next_ - ring_.size();  // the oldest id still held
  for (uint64_t id = first; id < next_; ++id) out.push_back(ring_[(id - 1) % capacity_]);
  return out;
}

}  // namespace strata::core
