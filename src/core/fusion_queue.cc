#include "core/fusion_queue.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/datatype.h"
#include "common/log.h"
#include "core/comm.h"
#include "core/prepare.h"
#include "core/timeline.h"

namespace strata::core {

void FusionQueueDeleter::operator()(FusionQueue* q) const { delete q; }

FusionQueue& IssueState::fusionQueue() {
  if (!fusionQueue_) fusionQueue_.reset(new FusionQueue());
  return *fusionQueue_;
}

void IssueState::cutFusion() {
  if (fusionQueue_) fusionQueue_->cut();
}

uint64_t FusionQueue::add(Prepared alone, uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry e;
  e.alone = std::move(alone);
  e.ticket = ticket;
  e.run = run_;
  e.issued = Clock::now();
  entries_.push_back(std::move(e));
  added_.notify_all();
  return first_ + entries_.size() - 1;
}

void FusionQueue::cut() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++run_;
  added_.notify_all();
}

size_t FusionQueue::proposal(uint64_t id, size_t thetaBytes, bool* open) const {
  const Entry& head = entries_[id - first_];
  const Call& k = head.alone.call;
  const size_t ts = dataTypeSize(k.type);
  size_t n = 0, bytes = 0;
  for (size_t i = id - first_; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const Call& m = e.alone.call;
    if (e.done || e.run != head.run || m.type != k.type || m.op != k.op ||
        bytes + m.count * ts > thetaBytes) {
      *open = false;  // the next call cannot join: neither can any later one
      return n;
    }
    bytes += m.count * ts;
    ++n;
  }
  *open = run_ == head.run;  // only calls not yet issued may still join
  return n;
}

Status FusionQueue::run(RunContext& rc, const PackContext& pc, uint64_t id) {
  const size_t theta = pc.fusionBytes;
  size_t mine = 0;
  uint64_t seq = 0;  // the head call's, for the timeline
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (id < first_ || at(id).done) return Status::ok();  // ran in an earlier pack
    seq = at(id).alone.call.seq;
    // On the timeline: how long the head waited for calls to join it (nothing when none did).
    std::optional<TimelineSpan> waited;
    const Clock::time_point until =
        at(id).issued + std::chrono::microseconds(pc.fusionWaitUs);
    for (;;) {
      bool open = false;
      mine = proposal(id, theta, &open);
      if (!open || pc.engine->urgentUpTo() >= at(id).ticket || Clock::now() >= until) break;
      if (!waited) waited.emplace(rc.timeline, TimelineEvent::Cat::kWait, "fusion wait", seq);
      // New calls wake this wait; a waiter's urgency is polled.
      added_.wait_until(lock, std::min(until, Clock::now() + std::chrono::microseconds(50)));
    }
  }
  // The agreement: the smallest proposal is a pack every rank can form.
  STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, rc.x.fabricOf(rc.flat));
  int64_t agreed = static_cast<int64_t>(mine);
  {
    TimelineSpan agreement(rc.timeline, TimelineEvent::Cat::kWait, "fusion agreement", seq);
    agreement.event.fabric = flat->name();
    STRATA_RETURN_IF_ERROR(flat->allReduce(&agreed, &agreed, 1, strataInt64, strataMin)
                               .withContext("agreeing on a fusion pack"));
  }
  if (agreed < 1 || static_cast<size_t>(agreed) > mine) {
    return internalError("fusion pack agreement gave " + std::to_string(agreed) +
                         " calls where this rank proposed " + std::to_string(mine));
  }
  Prepared whole;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (agreed == 1) {
      whole = at(id).alone;
    } else {
      whole.call = at(id).alone.call;
      whole.call.count = 0;
      for (uint64_t i = id; i < id + static_cast<uint64_t>(agreed); ++i) {
        whole.fused.push_back(at(i).alone.call);
        whole.call.count += at(i).alone.call.count;
      }
    }
  }
  if (agreed > 1) {
    // Plans made beforehand (PlanBook::prepareFusionPlans): the runner sets nothing up.
    StatusOr<ProgramRef> prog = fusionPackProgram(*pc.plans, pc.lower, whole.call);
    if (!prog.isOk()) {
      markDone(id, static_cast<uint64_t>(agreed));
      return prog.status();
    }
    whole.program = std::move(prog.value());
    STRATA_TRACE(kSubsysColl, "nonblocking fusion pack of %lld allreduces (this rank had %zu)",
                 static_cast<long long>(agreed), mine);
  }
  const Status st = core::run(rc, whole);
  markDone(id, static_cast<uint64_t>(agreed));
  return st;
}

void FusionQueue::markDone(uint64_t id, uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint64_t i = id; i < id + n; ++i) at(i).done = true;
  while (!entries_.empty() && entries_.front().done) {
    entries_.pop_front();
    ++first_;
  }
}

}  // namespace strata::core
