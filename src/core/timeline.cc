#include "core/timeline.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "common/datatype.h"
#include "common/log.h"
#include "core/comm.h"
#include "core/describe.h"
#include "topology/node_topology.h"

namespace strata::core {
namespace {

constexpr int kCallsTid = 1;   // calls, waits in the queue, fusion packs
constexpr int kStepsTid = 2;   // the steps of the programs, casts and copies
constexpr int kFlightTid = 3;  // a pipelined allreduce in flight while other steps run
constexpr int kClockRounds = 5;

// The paths this process writes, so that two communicators never share a file.
std::string claimPath(const std::string& wanted) {
  static std::mutex m;
  static std::set<std::string> taken;
  std::lock_guard<std::mutex> lock(m);
  std::string path = wanted;
  const size_t slash = wanted.find_last_of('/');
  const size_t dot = wanted.find_last_of('.');
  const bool hasExt = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  for (int n = 2; !taken.insert(path).second; ++n) {
    path = hasExt ? wanted.substr(0, dot) + "." + std::to_string(n) + wanted.substr(dot)
                  : wanted + "." + std::to_string(n);
  }
  return path;
}

// This rank's monotonic clock minus rank 0's, in microseconds, and how far the rounds' estimates
// spread (half the range). Each round: a barrier, then every member reads its clock and the
// readings are gathered; members leave a barrier within its release skew of one another, so
// each round's difference is the offset plus that skew. The median of the rounds is kept.
// Collective over the bootstrap.
Status measureOffset(boot::Bootstrap& b, double* offsetUs, double* errorUs) {
  std::vector<double> estimates;
  std::vector<int64_t> all(static_cast<size_t>(b.size()));
  for (int round = 0; round < kClockRounds; ++round) {
    STRATA_RETURN_IF_ERROR(b.barrier());
    const int64_t mine = Timeline::nowNs();
    STRATA_RETURN_IF_ERROR(b.allGather(&mine, all.data(), sizeof(mine)));
    estimates.push_back(static_cast<double>(mine - all[0]) / 1e3);
  }
  std::sort(estimates.begin(), estimates.end());
  *offsetUs = estimates[estimates.size() / 2];
  *errorUs = (estimates.back() - estimates.front()) / 2;
  return Status::ok();
}

const char* catName(TimelineEvent::Cat c) {
  switch (c) {
    case TimelineEvent::Cat::kCall:
      return "call";
    case TimelineEvent::Cat::kStep:
      return "step";
    case TimelineEvent::Cat::kWait:
      return "wait";
    case TimelineEvent::Cat::kFusion:
      return "fusion";
    case TimelineEvent::Cat::kCopy:
      return "copy";
    case TimelineEvent::Cat::kCompress:
      return "compress";
    case TimelineEvent::Cat::kStaging:
      return "staging";
  }
  return "?";
}

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

int64_t Timeline::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

StatusOr<std::unique_ptr<Timeline>> Timeline::open(Comm& c, const std::string& pattern) {
  if (pattern.empty()) return std::unique_ptr<Timeline>();
  double offsetUs = 0, errorUs = 0;
  STRATA_RETURN_IF_ERROR(measureOffset(c.bootstrap(), &offsetUs, &errorUs));
  std::unique_ptr<Timeline> t(new Timeline());
  t->rank_ = c.rank();
  t->path_ = claimPath(rankFilePath(pattern, c));
  t->file_ = std::fopen(t->path_.c_str(), "w");
  if (t->file_ == nullptr) {
    return systemError("STRATA_TRACE " + t->path_ + ": cannot write: " + std::strerror(errno));
  }
  t->buffer_.reserve(kBufferEvents);
  nlohmann::json levels = nlohmann::json::array();
  const topo::Hierarchy& h = c.hierarchy();
  for (int l = 0; l < h.numLevels(); ++l) {
    const topo::Level& lv = h.level(l);
    t->levelNames_.push_back(lv.name);
    nlohmann::json e = {{"name", lv.name}, {"fabric", lv.fabric}, {"size", h.width(l)}};
    if (lv.link.kind != topo::LinkKind::kUnknown && lv.link.bandwidthGBps > 0) {
      // Shared by linkSharing groups at once: what one group's members get.
      e["linkGBps"] = lv.link.bandwidthGBps / std::max(1, lv.linkSharing);
      char text[96];
      std::snprintf(text, sizeof(text), "%s %g GB/s%s", topo::linkKindName(lv.link.kind),
                    lv.link.bandwidthGBps, lv.linkSharing > 1 ? " shared" : "");
      e["link"] = text;
    } else {
      e["linkGBps"] = nullptr;
      e["link"] = "unknown";
    }
    levels.push_back(std::move(e));
  }
  const int r = c.rank();
  const std::string host = c.settings().hostName;
  std::string head = "[\n";
  head +=
      metadata("process_name", r, 0, {{"name", "rank " + std::to_string(r) + " (" + host + ")"}})
          .dump();
  head += ",\n" + metadata("thread_name", r, kCallsTid, {{"name", "calls"}}).dump();
  head += ",\n" + metadata("thread_name", r, kStepsTid, {{"name", "steps"}}).dump();
  head += ",\n" + metadata("thread_name", r, kFlightTid, {{"name", "in flight"}}).dump();
  head += ",\n" + metadata("strata", r, 0,
                           {{"rank", r},
                            {"size", c.size()},
                            {"host", host},
                            {"commHash", hashText(c.hash())},
                            {"clockOffsetUs", offsetUs},
                            {"clockErrorUs", errorUs},
                            {"levels", std::move(levels)}})
                      .dump();
  if (std::fputs(head.c_str(), t->file_) < 0) {
    return systemError("STRATA_TRACE " + t->path_ + ": short write");
  }
  STRATA_INFO(kSubsysInit, "commHash %s timeline to %s (clock offset %.1f us +- %.1f us)",
              hashText(c.hash()).c_str(), t->path_.c_str(), offsetUs, errorUs);
  return t;
}

Timeline::~Timeline() {
  flush();
  if (file_ != nullptr) {
    std::fputs("\n]\n", file_);
    std::fclose(file_);
  }
}

void Timeline::add(const TimelineEvent& e) {
  std::lock_guard<std::mutex> lock(mutex_);
  buffer_.push_back(e);
  if (buffer_.size() < kBufferEvents) return;
  for (const TimelineEvent& x : buffer_) writeLocked(x);
  buffer_.clear();
}

void Timeline::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const TimelineEvent& x : buffer_) writeLocked(x);
  buffer_.clear();
  if (file_ != nullptr) std::fflush(file_);
}

void Timeline::writeLocked(const TimelineEvent& e) {
  if (file_ == nullptr || failed_) return;
  using Cat = TimelineEvent::Cat;
  nlohmann::json args;
  if (e.seq != 0) args["seq"] = e.seq;
  int tid = kCallsTid;
  std::string name = e.name;
  switch (e.cat) {
    case Cat::kCall:
      name = std::string(collectiveName(e.coll)) + " #" + std::to_string(e.seq);
      args["collective"] = collectiveName(e.coll);
      args["count"] = e.count;
      args["type"] = dataTypeName(e.type);
      if (reduces(e.coll)) args["op"] = redOpName(e.op);
      args["root"] = e.root;
      args["bytes"] = e.bytes;
      args["queuedUs"] = static_cast<double>(e.queuedNs) / 1e3;
      break;
    case Cat::kStep: {
      const bool flat = e.level < 0 || e.level >= static_cast<int>(levelNames_.size());
      const std::string level = flat ? std::string("flat") : levelNames_[e.level];
      tid = e.inFlight ? kFlightTid : kStepsTid;
      name = std::string(collectiveName(e.coll)) + " " + level + "/" + e.fabric;
      args["level"] = flat ? -1 : e.level;
      args["levelName"] = level;
      args["fabric"] = e.fabric;
      args["kind"] = collectiveName(e.coll);
      args["step"] = e.step;
      args["steps"] = e.steps;
      args["groupSize"] = e.groupSize;
      args["member"] = e.member;
      args["bytes"] = e.bytes;
      args["wireBytes"] = e.wireBytes;
      break;
    }
    case Cat::kWait:
      if (e.fabric[0] != '\0') args["fabric"] = e.fabric;
      break;
    default:
      tid = kStepsTid;
      args["bytes"] = e.bytes;
      break;
  }
  const nlohmann::json j = {{"ph", "X"},
                            {"cat", catName(e.cat)},
                            {"name", name},
                            {"pid", rank_},
                            {"tid", tid},
                            {"ts", static_cast<double>(e.beginNs) / 1e3},
                            {"dur", static_cast<double>(e.endNs - e.beginNs) / 1e3},
                            {"args", std::move(args)}};
  const std::string line = ",\n" + j.dump();
  if (std::fputs(line.c_str(), file_) < 0) {
    failed_ = true;
    STRATA_WARN(kSubsysColl, "STRATA_TRACE %s: cannot write: %s; the timeline stops here",
                path_.c_str(), std::strerror(errno));
  }
}

}  // namespace strata::core
