#include "core/timeline.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "common/datatype.h"
#include "common/log.h"
#include "core/names.h"
#include "topology/node_topology.h"

namespace strata::core {
namespace {

constexpr int kCallsTid = 1;   // calls and waits
constexpr int kStepsTid = 2;   // the steps of the programs, fusion copies, casts
constexpr int kFlightTid = 3;  // a pipelined allreduce in flight while other steps run
constexpr int kClockRounds = 5;
const std::string kFlatName = "\"flat\"";  // the flat group's level name, as JSON

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

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

const char* TimelineEvent::catName(Cat c) {
  switch (c) {
    case TimelineEvent::Cat::kCall:
      return "call";
    case TimelineEvent::Cat::kStep:
      return "step";
    case TimelineEvent::Cat::kWait:
      return "wait";
    case TimelineEvent::Cat::kFusion:
      return "fusion";
    case TimelineEvent::Cat::kCompress:
      return "compress";
    case TimelineEvent::Cat::kStaging:
      return "staging";
  }
  return "?";
}

int64_t Timeline::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

StatusOr<std::unique_ptr<Timeline>> Timeline::open(const SetupContext& c, const std::string& pattern, bool nvtx) {
  if (pattern.empty() && !nvtx) return std::unique_ptr<Timeline>();
  std::unique_ptr<Timeline> t(new Timeline());
  t->rank_ = c.rank;
  t->nvtx_ = nvtx;
  const topo::Hierarchy& h = (*c.hierarchy);
  for (int l = 0; l < h.numLevels(); ++l) {
    t->levelNames_.push_back(nlohmann::json(h.level(l).name).dump());
  }
  if (pattern.empty()) {
    STRATA_INFO(kSubsysInit,
                "commHash %s NVTX ranges in the \"strata\" domain (a tool collects "
                "NVTX; STRATA_NVTX=0 turns them off)",
                hashText(c.hash).c_str());
    return t;
  }
  double offsetUs = 0, errorUs = 0;
  STRATA_RETURN_IF_ERROR(measureOffset((*c.boot), &offsetUs, &errorUs));
  t->path_ = claimPath(rankFilePath(pattern, c.rank, c.settings->hostName));
  t->file_ = std::fopen(t->path_.c_str(), "w");
  if (t->file_ == nullptr) {
    return systemError("STRATA_TRACE " + t->path_ + ": cannot write: " + std::strerror(errno));
  }
  // All three buffers are touched now: a first touch of their pages (a page fault, dear in a
  // virtual machine) inside a call would cost that call; later they only swap.
  for (std::vector<TimelineEvent>* v : {&t->buffer_, &t->full_, &t->spare_}) {
    v->resize(kBufferEvents);
    v->clear();
  }
  nlohmann::json levels = nlohmann::json::array();
  for (int l = 0; l < h.numLevels(); ++l) {
    const topo::Level& lv = h.level(l);
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
  // The flat group's steps cross every level: their link is the slowest one described.
  nlohmann::json flat = {{"linkGBps", nullptr}, {"link", "unknown"}};
  for (const nlohmann::json& e : levels) {
    if (e["linkGBps"].is_null()) continue;
    if (flat["linkGBps"].is_null() ||
        e["linkGBps"].get<double>() < flat["linkGBps"].get<double>()) {
      flat = {{"linkGBps", e["linkGBps"]}, {"link", e["link"]}};
    }
  }
  const int r = c.rank;
  const std::string host = c.settings->hostName;
  std::string head = "[\n";
  head +=
      metadata("process_name", r, 0, {{"name", "rank " + std::to_string(r) + " (" + host + ")"}})
          .dump();
  head += ",\n" + metadata("thread_name", r, kCallsTid, {{"name", "calls"}}).dump();
  head += ",\n" + metadata("thread_name", r, kStepsTid, {{"name", "steps"}}).dump();
  head += ",\n" + metadata("thread_name", r, kFlightTid, {{"name", "in flight"}}).dump();
  head += ",\n" + metadata("strata", r, 0,
                           {{"rank", r},
                            {"size", c.size},
                            {"host", host},
                            {"commHash", hashText(c.hash)},
                            {"clockOffsetUs", offsetUs},
                            {"clockErrorUs", errorUs},
                            {"levels", std::move(levels)},
                            {"flat", std::move(flat)}})
                      .dump();
  if (std::fputs(head.c_str(), t->file_) < 0) {
    return systemError("STRATA_TRACE " + t->path_ + ": short write");
  }
  t->writer_ = std::thread([p = t.get()] { p->writerLoop(); });
  STRATA_INFO(kSubsysInit, "commHash %s timeline to %s (clock offset %.1f us +- %.1f us)",
              hashText(c.hash).c_str(), t->path_.c_str(), offsetUs, errorUs);
  return t;
}

Timeline::~Timeline() {
  flush();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (file_ != nullptr) {
    std::fputs("\n]\n", file_);
    std::fclose(file_);
  }
}

void Timeline::add(const TimelineEvent& e) {
  if (file_ == nullptr) return;  // NVTX ranges only
  std::unique_lock<std::mutex> lock(mutex_);
  buffer_.push_back(e);
  if (buffer_.size() >= kBufferEvents) handOver(lock);
}

void Timeline::handOver(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return full_.empty(); });
  full_.swap(buffer_);
  cv_.notify_all();
}

void Timeline::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!buffer_.empty()) handOver(lock);
  cv_.wait(lock, [&] { return full_.empty() && !writing_; });
  if (file_ != nullptr) std::fflush(file_);
}

uint64_t Timeline::nvtxStart(const TimelineEvent& e) const {
  if (!nvtx_) return 0;
  std::string name;  // only with a tool attached: its own cost dwarfs this string's
  appendName(e, name);
  return nvtx::start(name.c_str(), static_cast<uint32_t>(e.cat) + 1);
}

fabric::SpanSink::Open Timeline::openSpan(const char* name) {
  Open o;
  o.name = name;
  if (nvtx_) o.range = nvtx::start(name, static_cast<uint32_t>(TimelineEvent::Cat::kStaging) + 1);
  o.beginNs = nowNs();
  return o;
}

void Timeline::closeSpan(const Open& span, uint64_t bytes) {
  TimelineEvent e;
  e.endNs = nowNs();
  if (span.range != 0) nvtx::end(span.range);
  e.cat = TimelineEvent::Cat::kStaging;
  e.name = span.name;
  e.seq = running();
  e.beginNs = span.beginNs;
  e.bytes = bytes;
  add(e);
}

void Timeline::writerLoop() {
  // The lowest priority of the normal class: the ranks' threads (which often spin, and on a
  // busy node share cores with it) run first; it writes when they wait or sleep. If it falls two
  // buffers behind, a call waits in handOver, which gives it the core.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  std::vector<TimelineEvent> mine;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mine.swap(spare_);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !full_.empty(); });
    if (full_.empty()) return;  // stopping, and nothing left
    mine.swap(full_);
    writing_ = true;
    cv_.notify_all();  // full_ is free again
    lock.unlock();
    write(mine);
    mine.clear();
    lock.lock();
    writing_ = false;
    cv_.notify_all();
  }
}

void Timeline::write(const std::vector<TimelineEvent>& events) {
  if (file_ == nullptr || failed_) return;
  text_.clear();
  for (const TimelineEvent& e : events) writeOne(e, text_);
  if (std::fwrite(text_.data(), 1, text_.size(), file_) != text_.size()) {
    failed_ = true;
    STRATA_WARN(kSubsysColl, "STRATA_TRACE %s: cannot write: %s; the timeline stops here",
                path_.c_str(), std::strerror(errno));
  }
}

// One event as a JSON object, after ",\n" (the metadata came first). Every string in it is
// either a name from strata's own code (no character that needs escaping) or a level's name,
// escaped once at open. Formatted with to_chars into `out`, without temporaries: the writer
// shares the cores with the ranks, and every microsecond it spends is one a rank may wait.
void Timeline::writeOne(const TimelineEvent& e, std::string& out) const {
  using Cat = TimelineEvent::Cat;
  char num[32];
  auto text = [&](const char* s) { out += s; };
  auto integer = [&](auto v) {
    const std::to_chars_result r = std::to_chars(num, num + sizeof(num), v);
    out.append(num, r.ptr);
  };
  auto micros = [&](int64_t ns) {  // microseconds with 3 decimals, from integer nanoseconds
    if (ns < 0) {
      out += '-';
      ns = -ns;
    }
    integer(ns / 1000);
    const int frac = static_cast<int>(ns % 1000);
    const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                            static_cast<char>('0' + frac / 10 % 10),
                            static_cast<char>('0' + frac % 10)};
    out.append(digits, 4);
  };
  auto key = [&](const char* k) {
    out += ",\"";
    out += k;
    out += "\":";
  };
  auto quoted = [&](const char* k, const char* v) {
    key(k);
    out += '"';
    out += v;
    out += '"';
  };
  const bool flat = e.level < 0 || e.level >= static_cast<int>(levelNames_.size());
  const std::string& level = levelJson(e.level);
  // Calls and waits on the calls track; a pipelined allreduce in flight on its own; the rest
  // (steps, fusion copies, casts) on the steps track.
  const int tid = e.cat == Cat::kCall || e.cat == Cat::kWait ? kCallsTid
                  : e.inFlight                               ? kFlightTid
                                                             : kStepsTid;
  text(",\n{\"ph\":\"X\",\"cat\":\"");
  text(TimelineEvent::catName(e.cat));
  text("\",\"pid\":");
  integer(rank_);
  text(",\"tid\":");
  integer(tid);
  text(",\"ts\":");
  micros(e.beginNs);
  text(",\"dur\":");
  micros(e.endNs - e.beginNs);
  text(",\"name\":\"");
  appendName(e, out);
  text("\",\"args\":{\"seq\":");
  integer(e.seq);
  switch (e.cat) {
    case Cat::kCall:
      quoted("collective", collectiveName(e.coll));
      key("count");
      integer(e.count);
      quoted("type", dataTypeName(e.type));
      if (reduces(e.coll)) quoted("op", redOpName(e.op));
      key("root");
      integer(e.root);
      key("bytes");
      integer(e.bytes);
      key("queuedUs");
      micros(e.queuedNs);
      if (e.route[0] != '\0') quoted("route", e.route);
      if (e.part[0] != '\0') quoted("part", e.part);
      break;
    case Cat::kStep:
      key("level");
      integer(flat ? -1 : e.level);
      key("levelName");
      out += level;
      quoted("fabric", e.fabric);
      quoted("kind", collectiveName(e.coll));
      key("step");
      integer(e.step);
      key("steps");
      integer(e.steps);
      key("groupSize");
      integer(e.groupSize);
      key("member");
      integer(e.member);
      key("bytes");
      integer(e.bytes);
      key("wireBytes");
      integer(e.wireBytes);
      break;
    case Cat::kWait:
      if (e.fabric[0] != '\0') quoted("fabric", e.fabric);
      break;
    default:
      key("bytes");
      integer(e.bytes);
      break;
  }
  text("}}");
}

const std::string& Timeline::levelJson(int level) const {
  const bool flat = level < 0 || level >= static_cast<int>(levelNames_.size());
  return flat ? kFlatName : levelNames_[static_cast<size_t>(level)];
}

// "allreduce #12" for a call, "reducescatter node/shm" for a step, else the event's own name.
void Timeline::appendName(const TimelineEvent& e, std::string& out) const {
  switch (e.cat) {
    case TimelineEvent::Cat::kCall: {
      out += collectiveName(e.coll);
      out += " #";
      char num[24];
      const std::to_chars_result r = std::to_chars(num, num + sizeof(num), e.seq);
      out.append(num, r.ptr);
      break;
    }
    case TimelineEvent::Cat::kStep: {
      const std::string& level = levelJson(e.level);
      out += collectiveName(e.coll);
      out += ' ';
      out.append(level, 1, level.size() - 2);  // unquoted
      out += '/';
      out += e.fabric;
      break;
    }
    default:
      out += e.name;
      break;
  }
}

}  // namespace strata::core
