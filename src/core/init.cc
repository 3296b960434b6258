// Comm::create: settings, hierarchy, the groups of its levels, the plans; and the destructor.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "common/log.h"
#include "common/mpi_wait.h"
#include "common/spin.h"
#include "core/comm.h"
#include "core/describe.h"
#include "core/flight_dump.h"
#include "core/flight_signal.h"
#include "core/nvtx.h"
#include "core/plan_load.h"
#include "core/topo_exchange.h"
#include "decompose/planner.h"
#include "fabrics/registry.h"
#include "topology/detect.h"
#include "topology/topo_file.h"

namespace strata::core {
namespace {

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

// The settings that change what ranks exchange (settings.h: agreedSettings) are the same on
// every rank, or init fails on every rank with the same message. One hash comparison when they
// agree. Collective.
Status checkAgreedSettings(boot::Bootstrap& boot, const Settings& settings) {
  const std::string mine = agreedValues(settings);
  STRATA_ASSIGN_OR_RETURN(bool same, boot::sameEverywhere(boot, fnv1a(mine)));
  if (same) return Status::ok();
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> all, boot::allGatherStrings(boot, mine));
  std::string message = settingsDisagreement(all);
  if (message.empty()) message = "the agreed settings differ between ranks (hash mismatch)";
  return invalidUsage(std::move(message));
}

// One line for a topology file's levels, for the message that compares two ranks' files:
// "socket(2, mpi) x node(2, shm)".
std::string levelsLine(const topo::TopoFile& tf) {
  std::string out;
  for (size_t l = 0; l < tf.levels.size(); ++l) {
    if (l > 0) out += " x ";
    out += tf.levels[l].name + "(" + std::to_string(l < tf.sizes.size() ? tf.sizes[l] : 0) + ", " +
           tf.levels[l].fabric + ")";
  }
  return out;
}

// A value no other process is likely to draw: NCCL's unique id is random bytes made by one rank;
// this is rank 0's draw. Clock, pid and a process-wide counter make two draws of one process,
// or of two processes started together, differ even with a poor random_device.
uint64_t freshNonce() {
  static std::atomic<uint64_t> count{0};
  std::random_device device;
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return fnv1a(std::to_string(now) + ":" + std::to_string(getpid()) + ":" +
               std::to_string(count.fetch_add(1)) + ":" + std::to_string(device()) + ":" +
               std::to_string(device()));
}

}  // namespace

StatusOr<std::unique_ptr<Comm>> Comm::create(std::unique_ptr<boot::Bootstrap> boot,
                                             bool threadMultiple, const CreateOptions& opts) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Comm> c(new Comm());
  c->boot_ = std::move(boot);
  c->rank_ = c->boot_->rank();
  c->size_ = c->boot_->size();
  // The engine exists from the start, so that the destructor can always drain it.
  c->engine_ = std::make_shared<Engine>(false);
  STRATA_RETURN_IF_ERROR(c->init(threadMultiple, opts));
  logInitComplete(
      *c,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return c;
}

Status Comm::assignUid() {
  // Every member proposes one more than the largest id it has handed out; all take the
  // largest proposal, so no member already holds a communicator with this id.
  static std::atomic<uint64_t> last{0};
  const uint64_t mine[2] = {last.load() + 1, freshNonce()};
  std::vector<uint64_t> all(2 * static_cast<size_t>(size_));
  STRATA_RETURN_IF_ERROR(boot_->allGather(mine, all.data(), sizeof(mine)));
  uid_ = 0;
  for (int r = 0; r < size_; ++r) uid_ = std::max(uid_, all[2 * r]);
  hash_ = all[1];  // rank 0's nonce, as every member received it
  uint64_t seen = last.load();
  while (seen < uid_ && !last.compare_exchange_weak(seen, uid_)) {
  }
  return Status::ok();
}

Status Comm::quiesce(IssuingThread) { return engine_->drain(); }

IssuingThread Comm::issuing() const {
  // Setup inside a running call would change what other queued calls' programs point to, and
  // talk to peers that are inside the same call: never.
  assert(engine_ == nullptr || !engine_->insideCall());
  return IssuingThread();
}

Status Comm::init(bool threadMultiple, const CreateOptions& opts) {
  logSetRank(rank_);
  STRATA_RETURN_IF_ERROR(assignUid());
  logInitStart(*this, opts.origin);
  StatusOr<Settings> settings = Settings::fromEnv();
  STRATA_RETURN_IF_ERROR(boot::agree(*boot_, settings.status()));
  settings_ = settings.take();
  if (opts.timeoutSeconds) {
    settings_.timeoutSeconds = *opts.timeoutSeconds;
    settings_.timeoutSource = kConfigTimeout;
  }
  STRATA_RETURN_IF_ERROR(checkAgreedSettings(*boot_, settings_));
  flight_ = std::make_unique<FlightRecorder>(settings_.flightCalls);
  STRATA_RETURN_IF_ERROR(watchDumpSignal(*this, settings_.dumpSignal));
  fabricOptions_.shmSlotBytes = settings_.shmSlotBytes;
  fabricOptions_.stagingBytes = settings_.stagingBytes;
  // STRATA_NET (ucx whatever it says on a control plane that is not MPI) also carries the flat
  // group: it spans hosts like the inter-host levels.
  fabricOptions_.net = fabric::netFabric(*boot_, settings_.net);
  costParams_.fabrics = fabric::allTraits();
  costParams_.flatFabric = fabricOptions_.net;
  if (!settings_.pipelineAuto) costParams_.pipelineBytes = settings_.pipelineBytes;
  costParams_.compress = settings_.compress;  // the planner costs compressed stages as they run
  engine_ = std::make_shared<Engine>(settings_.progressThread && threadMultiple);
  watchMembers();
  bindOwners();
  STRATA_RETURN_IF_ERROR(buildHierarchy());
  STRATA_RETURN_IF_ERROR(noteOversubscription());
  const IssuingThread me = issuing();
  STRATA_RETURN_IF_ERROR(groups_.buildLevels(me));
  STRATA_RETURN_IF_ERROR(groups_.gatherHosts(me));
  STRATA_RETURN_IF_ERROR(loadPlans());
  plans_.dump(settings_.planDumpFile);
  STRATA_RETURN_IF_ERROR(checkSameSetting("STRATA_TRACE", settings_.tracePattern, true));
  return openTimeline();
}

SetupContext Comm::setupContext() {
  SetupContext sc;
  sc.boot = boot_.get();
  sc.hierarchy = &hierarchy_;
  sc.settings = &settings_;
  sc.fabrics = &fabricOptions_;
  sc.cost = &costParams_;
  sc.quiesce = [this] { return quiesce(issuing()); };
  sc.rank = rank_;
  sc.size = size_;
  sc.hash = hash_;
  return sc;
}

void Comm::bindOwners() {
  groups_.bind(setupContext());
  plans_.bind(setupContext());
}

Status Comm::noteOversubscription() {
  const std::string mine = topo::machineId();
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> all, boot::allGatherStrings(*boot_, mine));
  const int here = static_cast<int>(std::count(all.begin(), all.end(), mine));
  if (spin::noteRanksOnMachine(here)) {
    STRATA_INFO(kSubsysInit,
                "commHash %#llx %d ranks on one machine with %ld online CPUs: waits yield "
                "their core at once instead of spinning (oversubscribed)",
                static_cast<unsigned long long>(hash_), here, sysconf(_SC_NPROCESSORS_ONLN));
  }
  return Status::ok();
}

Status Comm::openTimeline() {
  StatusOr<std::unique_ptr<Timeline>> t =
      Timeline::open(setupContext(), settings_.tracePattern, settings_.nvtx && nvtx::attached());
  // One rank's unwritable path fails every rank's init: the others would trace alone.
  STRATA_RETURN_IF_ERROR(boot::agree(*boot_, t.status()));
  timeline_ = t.take();
  return Status::ok();
}

Comm::~Comm() {
  unwatchDumpSignal(*this);  // first: a dump on a signal reads everything below
  // Queued calls run first (they use every group below). Their errors were reported by the
  // calls that failed, or by strataCommGetAsyncError. In the error state (or after it, once
  // drained), with a member lost, or once a shrink replaced it, the peers may be anywhere:
  // free only what is local, as an abort does. The watch stays until the calls stopped, so
  // that a member lost meanwhile still ends their waits.
  if (engine_) {
    (void)quiesce(issuing());
    if (!aborted_.load() && (superseded_.load() || !engine_->error().isOk() || cancel_.isSet())) {
      abandon();
    }
    engine_->stop();
  }
  watch_.reset();
  engine_.reset();
  plans_.clear();
  // Device fabrics may wrap host fabrics and use the device state's stream: the groups go
  // first (GroupTable::release), then the device state.
  groups_.release();
  device_.reset();
  // After an abort a late peer may still write into the working memory; not once a shrink
  // replaced the communicator (Fabric::retire).
  if (aborted_.load() && !superseded_.load()) {
    for (std::vector<char>& b : memory_.take()) keepUntilExit(std::move(b));
  }
}

void Comm::dumpOnce(const std::string& reason, bool reasonLogged) {
  if (dumped_.exchange(true)) return;
  if (timeline_) timeline_->flush();  // the peers may be gone next: keep what led here
  // A failure to write was logged; the call's error stands.
  (void)dumpFlightRecorder(*this, reason, reasonLogged);
}

void Comm::failHere(Status& st) {
  attributeLoss(st);
  if (!st.wasLogged()) {
    STRATA_WARN(kSubsysColl, "%s", st.message().c_str());
    st.markLogged();
  }
  engine_->fail(st);
  dumpOnce(st.message(), true);
}

void Comm::abandon() {
  // Dumped only when the abort cuts something short: a call issued or running, or the error
  // state (already dumped where it began). An idle, healthy communicator aborted is a normal
  // teardown (PyTorch aborts every group at exit) and says so only at INFO.
  const bool cutShort = flight_->anyUnfinished() || (engine_ && !engine_->error().isOk());
  if (cutShort) {
    dumpOnce("strataCommAbort");
  } else {
    STRATA_INFO(kSubsysInit, "comm %s rank %d: aborted with no call in flight: nothing to dump",
                hashText(hash_).c_str(), rank_);
  }
  // A call running now ends at its next wait; calls still queued fail instead of running:
  // their peers may never issue them.
  aborted_.store(true);
  cancel_.set("aborted (strataCommAbort)");
  engine_->abort(Status(Code::kRemoteError, "the communicator was aborted (strataCommAbort)"));
  if (superseded_.load()) {
    groups_.retire();
  } else {
    groups_.abandon();
  }
  if (boot_) boot_->abandon();
}

// Every rank must take the same branch of a setting (file or detection): their collectives
// differ, so a mismatch would deadlock. Compares a hash of each rank's value, or only whether it
// is set (`onlyWhetherSet`: files whose content is compared afterwards, at paths that may
// differ). The message shows the values either way. Collective.
Status Comm::checkSameSetting(const char* name, const std::string& value, bool onlyWhetherSet) {
  const uint64_t mine = onlyWhetherSet ? (value.empty() ? 0 : 1)
                                       : std::hash<std::string>{}(value) ^ (value.empty() ? 0 : 1);
  STRATA_ASSIGN_OR_RETURN(bool same, boot::sameEverywhere(*boot_, mine));
  if (same) return Status::ok();
  // Show both values: rank 0's and the first rank that differs from it.
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> all, boot::allGatherStrings(*boot_, value));
  int r = 1;
  auto differs = [&](int k) {
    return onlyWhetherSet ? all[k].empty() != all[0].empty() : all[k] != all[0];
  };
  while (r < size_ - 1 && !differs(r)) ++r;
  auto shown = [](const std::string& v) {
    return v.empty() ? std::string("unset") : "'" + v + "'";
  };
  const std::string what = onlyWhetherSet ? " is set on some ranks only" : " differs between ranks";
  return invalidUsage(std::string(name) + what + ": rank 0 has " + shown(all[0]) + ", rank " +
                      std::to_string(r) + " has " + shown(all[r]) +
                      (onlyWhetherSet ? "; every rank must set it (the paths may differ) or none"
                                      : "; every rank must use the same value"));
}

// The hierarchy from STRATA_TOPO_FILE when set, else from detection. Every rank takes the same
// branch, and every rank's file has the same content (compared by hash, as plan files are):
// ranks that built different hierarchies would make different groups and hang. The paths may
// differ (node-local copies). Collective.
Status Comm::buildHierarchy() {
  const std::string& file = settings_.topoFile;
  STRATA_RETURN_IF_ERROR(checkSameSetting("STRATA_TOPO_FILE", file, true));
  if (!file.empty()) {
    // Each rank reads the file itself; agree() turns one rank's failure into everyone's.
    topo::TopoFile tf;
    StatusOr<topo::Hierarchy> h = [&]() -> StatusOr<topo::Hierarchy> {
      STRATA_ASSIGN_OR_RETURN(tf, topo::loadTopoFile(file, fabric::fabricNames()));
      return topo::hierarchyFromTopoFile(tf, file, size_);
    }();
    STRATA_RETURN_IF_ERROR(boot::agree(*boot_, h.status()));
    // The canonical text of what was read: comments and layout do not count, every key does.
    const std::string content = topo::formatTopoFile(tf);
    STRATA_ASSIGN_OR_RETURN(bool same, boot::sameEverywhere(*boot_, fnv1a(content)));
    if (!same) {
      const std::string mine = file + "\n" + levelsLine(tf) + "\n" + content;
      STRATA_ASSIGN_OR_RETURN(std::vector<std::string> all, boot::allGatherStrings(*boot_, mine));
      auto part = [](const std::string& s, int i) {
        size_t start = 0;
        for (int k = 0; k < i; ++k) start = s.find('\n', start) + 1;
        return i == 2 ? s.substr(start) : s.substr(start, s.find('\n', start) - start);
      };
      int r = 1;
      while (r < size_ && part(all[r], 2) == part(all[0], 2)) ++r;
      if (r == size_) r = 1;  // unreachable when the hashes differ; keeps the indices valid
      std::string detail = part(all[0], 1) == part(all[r], 1)
                               ? std::string(" (same levels, other link parameters)")
                               : "";
      return invalidUsage("STRATA_TOPO_FILE: its content differs between ranks: rank 0 read " +
                          part(all[0], 0) + " (" + part(all[0], 1) + "), rank " +
                          std::to_string(r) + " read " + part(all[r], 0) + " (" + part(all[r], 1) +
                          ")" + detail + "; every rank must load the same topology");
    }
    hierarchy_ = h.value().withoutTrivialLevels();
    hierarchySource_ = "topology file " + file;
    return Status::ok();
  }
  STRATA_ASSIGN_OR_RETURN(DetectedHierarchy d,
                          detectHierarchy(*boot_, settings_.hostName, fabricOptions_.net));
  hierarchy_ = std::move(d.hierarchy);
  hierarchySource_ = std::move(d.source);
  return Status::ok();
}

// STRATA_PLAN_FILE: every rank loads and resolves it against the hierarchy; any failure fails
// all ranks, and so does a file whose content differs between ranks (its hash is compared),
// since ranks running different plans would deadlock or compute garbage. Collective.
Status Comm::loadPlans() {
  const std::string& file = settings_.planFile;
  // Paths may differ (node-local copies); whether one is set may not, and the content may not.
  STRATA_RETURN_IF_ERROR(checkSameSetting("STRATA_PLAN_FILE", file, true));
  if (file.empty()) return Status::ok();
  std::string layout;       // the one the file records
  plan::BlockRules blocks;  // its forms of reduce-scatter and all-gather
  StatusOr<std::vector<plan::PlanRule>> rules =
      loadPlanRules(file, hierarchy_, fabric::fabricNames(), &layout, &blocks);
  STRATA_RETURN_IF_ERROR(boot::agree(*boot_, rules.status()));
  STRATA_ASSIGN_OR_RETURN(
      bool same, boot::sameEverywhere(*boot_, plan::planHash(rules.value(), hierarchy_, blocks)));
  if (!same) {
    return invalidUsage("plan file " + file +
                        ": its content differs between ranks (hash mismatch); every rank must "
                        "load the same plan");
  }
  std::string source = "plan file " + file;
  // Its rules fit this hierarchy's levels, but sizes tuned on another layout may not suit it:
  // the init log says so (logInitComplete prints the plans' source).
  const std::string mine = plan::planLayout(hierarchy_);
  if (!layout.empty() && layout != mine) {
    source += " (written for " + layout + ", this job's layout is " + mine + ")";
  }
  plans_.setRules(rules.take(), std::move(source), std::move(blocks));
  return Status::ok();
}

}  // namespace strata::core
