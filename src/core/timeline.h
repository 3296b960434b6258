// The timeline (STRATA_TRACE): what one communicator did on one rank, as Chrome trace events
// that Perfetto and chrome://tracing open, as Horovod's HOROVOD_TIMELINE does. Each call (from
// start to end, with the time it waited in the queue since it was issued), each step of its
// program (level, fabric, kind, group, bytes), the pipelined allreduce's waits, fusion packs'
// copies, compression casts, and for device calls the stream gate's wait and the staged
// fabric's waits for its copies. In CUDA builds the same spans are NVTX ranges of the "strata"
// domain while a tool collects NVTX (core/nvtx.h); a timeline then exists even without
// STRATA_TRACE, writing no file. `strata-trace merge` aligns the ranks' files with the clock
// offsets measured at init; `strata-trace summary` turns the steps into GB/s per level.
//
// Cost: off (no STRATA_TRACE, no NVTX tool), each hook is one null test of Comm::timeline(). On, a
// hook reads the monotonic clock and appends a fixed-size event under an uncontended mutex. A
// writer thread of the timeline turns full buffers into JSON and writes them, so no call waits on
// the file (a call that fills a buffer while the writer still holds two waits for it: memory stays
// bounded at 3 x kBufferEvents events). A failing call and the destructor write everything out.
//
// File: one per communicator and rank, at the pattern's path (%h host, %r rank, %p pid, %%);
// a second communicator of the process whose path would be the same gets ".<n>" before the
// extension. JSON array form ("[", events, "]"): a file cut short by a crash still opens.
// Timestamps are microseconds of this rank's monotonic clock; the "strata" metadata event holds
// clockOffsetUs (this clock minus rank 0's) to align the ranks.
//
// Threads: recorded by whichever thread runs the calls (one at a time per communicator) and
// by the issuing thread (fusion waits); the mutex orders them and the flush.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/nvtx.h"
#include "core/setup_context.h"
#include "fabrics/fabric.h"

namespace strata::core {


struct TimelineEvent {
  // In this order the NVTX categories (core/nvtx.cc), 1-based.
  enum class Cat : uint8_t { kCall, kStep, kWait, kFusion, kCompress, kStaging };
  static constexpr int kCats = static_cast<int>(Cat::kStaging) + 1;
  static const char* catName(Cat c);  // "call", "step", ...: the file's "cat", NVTX's category
  Cat cat = Cat::kCall;
  const char* name = "";    // a static string: "queue", "fusion pack", ...
  const char* fabric = "";  // steps and waits: the fabric's name (static in every fabric)
  uint64_t seq = 0;         // the call's number; 0: none
  int64_t beginNs = 0, endNs = 0;
  uint64_t bytes = 0, wireBytes = 0;
  uint64_t count = 0;
  Collective coll = Collective::kAllReduce;  // calls: the collective; steps: the step's kind
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;
  int level = 0;  // steps: plan::kFlatLevel (-1) for the flat group
  int step = 0, steps = 0, groupSize = 0, member = 0;
  int64_t queuedNs = 0;   // calls: from issue to start
  // Calls on device memory: their route (core/route.h: "stream", "joined"), and for a joined
  // call which part this event is ("enqueue": what the issuing thread enqueued on the stream;
  // "host stage": what a host thread ran). "" for host memory.
  const char* route = "";
  const char* part = "";
  bool inFlight = false;  // steps: a pipelined allreduce, from its start to the end of its wait
};

class Timeline final : public fabric::SpanSink {
 public:
  static constexpr size_t kBufferEvents = 8192;

  // Opens the file for `c` (after its hierarchy exists) and measures the clock offsets over its
  // bootstrap. Collective over the members when `pattern` is set: every member has the same
  // STRATA_TRACE setting being set (checked at init). With `nvtx`, the spans are also NVTX
  // ranges; with `nvtx` and no pattern the timeline is local and writes nothing. Null when
  // neither is wanted.
  static StatusOr<std::unique_ptr<Timeline>> open(const SetupContext& c, const std::string& pattern,
                                                  bool nvtx);
  ~Timeline();  // writes what is left, closes the array, stops the writer
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  static int64_t nowNs();
  void add(const TimelineEvent& e);  // a finished span, to the file (nothing without one)
  bool nvtx() const { return nvtx_; }
  // The NVTX range of a span that begins now, named as its event will be in the file; 0 when
  // NVTX is off. The event must be described (cat, name, seq; a step's kind, level, fabric).
  uint64_t nvtxStart(const TimelineEvent& e) const;
  // fabric::SpanSink: a fabric's span (the staged fabric's copy waits), on the steps track.
  Open openSpan(const char* name) override;
  void closeSpan(const Open& span, uint64_t bytes) override;
  // The call running now (calls run one at a time): what steps and waits belong to.
  void setRunning(uint64_t seq) { running_.store(seq, std::memory_order_relaxed); }
  uint64_t running() const { return running_.load(std::memory_order_relaxed); }
  // Writes what is buffered and returns when it is in the file (a failure to write is logged
  // once; later events are dropped).
  void flush();
  const std::string& path() const { return path_; }

 private:
  Timeline() = default;
  void writerLoop();
  // Hands buffer_ to the writer (waiting while it still holds one); with mutex_ held.
  void handOver(std::unique_lock<std::mutex>& lock);
  void write(const std::vector<TimelineEvent>& events);  // the writer thread only
  void writeOne(const TimelineEvent& e, std::string& out) const;
  void appendName(const TimelineEvent& e, std::string& out) const;  // its name in file and NVTX
  const std::string& levelJson(int level) const;  // a level's name as JSON; "flat" for -1

  std::string path_;
  std::FILE* file_ = nullptr;  // null: NVTX ranges only
  bool nvtx_ = false;
  int rank_ = 0;
  std::vector<std::string> levelNames_;  // as JSON strings, quoted and escaped
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<TimelineEvent> buffer_;  // being filled
  std::vector<TimelineEvent> full_;    // handed to the writer; empty when it has taken it
  std::vector<TimelineEvent> spare_;   // the writer's own, until it starts
  bool writing_ = false;               // the writer is writing a buffer out
  bool stop_ = false;
  bool failed_ = false;  // the writer's: a write failed
  std::thread writer_;
  std::string text_;  // the writer's JSON of one buffer, reused (a buffer is about 2 MB of it)
  std::atomic<uint64_t> running_{0};
};

// Records one span [begin, now) when the timeline is on; the branch is all it costs when off.
// Fill `event`'s counters (bytes) before the span ends; the destructor stamps endNs and adds it.
// Its NVTX range (when on) starts here, so what names it is given here: the category, name and
// sequence number, or for a step `describe(event)`, called only when the timeline is on.
class TimelineSpan {
 public:
  TimelineSpan(Timeline* t, TimelineEvent::Cat cat, const char* name, uint64_t seq) : t_(t) {
    if (t_ == nullptr) return;
    event.cat = cat;
    event.name = name;
    event.seq = seq;
    begin();
  }
  template <typename Describe>
  TimelineSpan(Timeline* t, Describe&& describe) : t_(t) {
    if (t_ == nullptr) return;
    describe(event);
    begin();
  }
  ~TimelineSpan() {
    if (t_ == nullptr) return;
    event.endNs = Timeline::nowNs();
    if (range_ != 0) nvtx::end(range_);
    t_->add(event);
  }
  TimelineSpan(const TimelineSpan&) = delete;
  TimelineSpan& operator=(const TimelineSpan&) = delete;
  bool on() const { return t_ != nullptr; }

  TimelineEvent event;

 private:
  void begin() {
    if (t_->nvtx()) range_ = t_->nvtxStart(event);
    event.beginNs = Timeline::nowNs();
  }

  Timeline* t_;
  uint64_t range_ = 0;
};

}  // namespace strata::core
