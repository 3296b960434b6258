// ProcessGroupStrata: setup from a unique id, teardown, and the machinery every operation
// shares (issue under the lock, complete on the completer thread). The operations themselves
// are in collectives.cc and p2p.cc.
#include "backend.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "gil.h"
#include "strata/strata.h"

namespace strata::torch_backend {
namespace {

std::mutex gLiveMutex;
std::vector<ProcessGroupStrata*>& live() {
  static auto* groups = new std::vector<ProcessGroupStrata*>();  // never destroyed: used at exit
  return *groups;
}

// A split of `parent` over all its ranks, in the same order, with `config`'s settings.
strataComm_t splitAll(strataComm_t parent, int rank, strataConfig_t config, const char* what) {
  strataComm_t child = nullptr;
  const strataResult_t r = strataCommSplit(parent, 0, rank, &child, &config);
  TORCH_CHECK(r == strataSuccess, "strata: making the group's ", what,
              " communicator failed: ", strataMessage(parent, r));
  return child;
}

}  // namespace

std::string strataMessage(strataComm_t comm, strataResult_t result) {
  // strataGetLastError says what failed, where and why: that is the message. The code's
  // generic string is for C programs ("... (strataGetLastError says why)", which a Python user
  // cannot call); it stands alone only when no reason was recorded, without that pointer.
  const char* last = strataGetLastError(comm);
  if (last == nullptr || *last == '\0') last = strataGetLastError(nullptr);
  std::string msg;
  if (last != nullptr && *last != '\0') {
    msg = last;
  } else {
    msg = strataGetErrorString(result);
    msg = msg.substr(0, msg.find(" (strataGetLastError"));
  }
  // A deadline's failure starts with the words PyTorch's tests and users match on a timeout
  // (Gloo's "Timed out waiting ...", distributed_test.py's " (Timed out|closed|timeout) ").
  if (msg.find("timed out after") != std::string::npos) {
    msg = "Timed out (the group's timeout passed): " + msg;
  }
  return msg;
}

ProcessGroupStrata::ProcessGroupStrata(int rank, int size, const std::string& uniqueId,
                                       std::chrono::milliseconds timeout)
    : BackendBase(rank, size), timeout_(timeout) {
  TORCH_CHECK(uniqueId.size() == sizeof(strataUniqueId), "strata: the group's unique id has ",
              uniqueId.size(), " bytes, expected ", sizeof(strataUniqueId),
              " (a corrupted store entry?)");
  strataUniqueId id;
  std::memcpy(id.internal, uniqueId.data(), sizeof id.internal);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutMs = groupConfig().timeoutMs;
  const strataResult_t made = strataCommInitRankConfig(&base_, size, id, rank, &config);
  TORCH_CHECK(made == strataSuccess, "strata: creating the group's communicator (rank ", rank,
              " of ", size, ") failed: ", strataMessage(nullptr, made));
  splitForUse(rank);
}

ProcessGroupStrata::ProcessGroupStrata(strataComm_t base, int rank, int size,
                                       std::chrono::milliseconds timeout)
    : BackendBase(rank, size), timeout_(timeout), base_(base) {
  try {
    splitForUse(rank);
  } catch (...) {
    close(false);  // what was made is freed locally: the peers' splits failed alike
    throw;
  }
}

void ProcessGroupStrata::splitForUse(int rank) {
  const strataConfig_t config = groupConfig();
  comm_ = splitAll(base_, rank, config, "collective");
  up_.comm = splitAll(base_, rank, config, "point-to-point");
  down_.comm = splitAll(base_, rank, config, "point-to-point");
  a2a_.comm = splitAll(base_, rank, config, "alltoall");
  std::lock_guard<std::mutex> lock(gLiveMutex);
  live().push_back(this);
}

ProcessGroupStrata::~ProcessGroupStrata() {
  {
    std::lock_guard<std::mutex> lock(gLiveMutex);
    auto& groups = live();
    groups.erase(std::remove(groups.begin(), groups.end(), this), groups.end());
  }
  release();
}

#ifdef STRATA_TORCH_BACKEND_SHUTDOWN
void ProcessGroupStrata::shutdown() { release(); }
#endif

void ProcessGroupStrata::release() {
  // Destroying a communicator is collective; one in its error state (its peers may be gone)
  // is aborted instead. After a first release comm_ is null: nothing is left to free.
  // A group that was shrunk is freed locally too: the ranks it excluded take no part (a
  // revoked communicator reports strataSuccess once its calls have ended).
  strataResult_t state = strataSuccess;
  const bool healthy = !retired_.load() && comm_ != nullptr &&
                       strataCommGetAsyncError(comm_, &state) == strataSuccess &&
                       state == strataSuccess;
  close(healthy);
}

void ProcessGroupStrata::close(bool collective) {
  GilRelease unlocked;
  // In the order each posts to the next: the completer to the sequencer and the pool, the
  // sequencer's callbacks (nested collectives) to the completer and the pool.
  completer_.stop();
  sequencer_.stop();
  callbacks_.stop();
  up_.worker.stop();
  down_.worker.stop();
  a2a_.worker.stop();
  std::lock_guard<std::mutex> lock(issue_);
  for (auto& [key, csc] : csc_) strataCscDestroy(csc.handle);
  csc_.clear();
  std::vector<strataComm_t*> comms = {&comm_, &up_.comm, &down_.comm, &a2a_.comm};
  for (auto& [wire, c] : wireComms_) comms.push_back(&c);
  comms.push_back(&base_);  // last: the others were split from it
  for (strataComm_t* c : comms) {
    if (*c == nullptr) continue;
    if (collective) {
      strataCommDestroy(*c);
    } else {
      strataCommAbort(*c);
    }
    *c = nullptr;
  }
  wireComms_.clear();
}

void ProcessGroupStrata::shutdownAll() {
  std::vector<ProcessGroupStrata*> groups;
  {
    std::lock_guard<std::mutex> lock(gLiveMutex);
    groups = live();
  }
  // At exit a peer may already be gone: free locally, never wait for anyone.
  for (ProcessGroupStrata* g : groups) g->close(false);
}

void ProcessGroupStrata::completeWhenDone(c10::intrusive_ptr<StrataWork> work, const char* op,
                                          std::vector<strataRequest_t> requests,
                                          std::function<void()> after) {
  // Issued outside the backend's callbacks: its future completes on the sequencer, in order.
  const bool topLevel = callbackDepth() == 0;
  completer_.post([this, work, op, requests, after, topLevel]() mutable {
    std::exception_ptr error;
    for (strataRequest_t& req : requests) {
      // Every request is waited for (and so freed), even after a failure.
      const strataResult_t r = strataWaitLazy(&req);
      if (r != strataSuccess && !error) {
        error = std::make_exception_ptr(
            std::runtime_error(std::string("strata: ") + op + " failed: " +
                               strataMessage(nullptr, r)));
      }
    }
    work->settle(error, after);
    // Never on this thread: a callback that waits for a later Work of this group would hold
    // the one thread that completes it (PowerSGD's hook did: DDP hung in finalize_backward).
    if (!topLevel) {
      resolveOnPool(work, 2);
      return;
    }
    sequencer_.post([this, work] {
      {
        DepthScope depth(1);
        work->resolve();
      }
      std::lock_guard<std::mutex> lock(orderMutex_);
      // The sequencer resolves in issue order, the order unresolved_ was filled in.
      if (!unresolved_.empty() && unresolved_.front().second == work) unresolved_.pop_front();
      resolved_.notify_all();
    });
  });
}

void ProcessGroupStrata::resolveOnPool(c10::intrusive_ptr<StrataWork> work, int depth) {
  callbacks_.post([work, depth] {
    DepthScope scope(depth);
    work->resolve();
  });
}

void ProcessGroupStrata::waitForCallbacks(const char* op) {
  std::unique_lock<std::mutex> lock(orderMutex_);
  auto blocking = [this]() -> const std::pair<uint64_t, c10::intrusive_ptr<StrataWork>>* {
    for (const auto& entry : unresolved_) {
      if (entry.second->futureAskedByPython()) return &entry;
    }
    return nullptr;
  };
  if (timeout_.count() <= 0) {
    resolved_.wait(lock, [&] { return blocking() == nullptr; });
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  if (resolved_.wait_until(lock, deadline, [&] { return blocking() == nullptr; })) return;
  const auto* late = blocking();
  TORCH_CHECK(false, "Timed out (the group's timeout passed): strata: ", op, " waited ",
              timeout_.count(), " ms for the callbacks of ", late->second->title(), " #",
              late->first, " to finish. A collective issued outside the strata backend's "
              "callbacks waits for the callbacks of the earlier ones whose futures Python asked "
              "for, so that what those callbacks issue reaches every rank in the same order; a "
              "callback that waits for something issued after it on another thread never "
              "finishes (docs/torch.md)");
}

strataConfig_t ProcessGroupStrata::groupConfig() const {
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  // The group's timeout bounds every wait for peers (0 keeps STRATA_TIMEOUT).
  config.timeoutMs = static_cast<int>(std::min<int64_t>(timeout_.count(), INT32_MAX));
  return config;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::track(
    c10::intrusive_ptr<StrataWork> work, const char* op,
    const std::function<strataResult_t(strataRequest_t*)>& issue, std::function<void()> after,
    strataComm_t comm) {
  return trackGroup(std::move(work), op, {issue}, std::move(after), comm);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::trackGroup(
    c10::intrusive_ptr<StrataWork> work, const char* op,
    const std::vector<std::function<strataResult_t(strataRequest_t*)>>& issues,
    std::function<void()> after, strataComm_t comm) {
  const uint64_t seq = ++seq_;
  const bool topLevel = callbackDepth() == 0;
  if (topLevel) waitForCallbacks(op);
  std::vector<strataRequest_t> requests;
  strataResult_t failed = strataSuccess;
  {
    std::lock_guard<std::mutex> lock(issue_);
    TORCH_CHECK(comm_ != nullptr, "strata: ", op, " on a process group that was shut down");
    const bool group = issues.size() > 1;
    if (group) strataGroupStart();
    for (const auto& issue : issues) {
      strataRequest_t req = nullptr;
      const strataResult_t r = issue(&req);
      if (r != strataSuccess) {
        failed = r;
        break;
      }
      requests.push_back(req);
    }
    if (group) {
      const strataResult_t r = strataGroupEnd();
      if (failed == strataSuccess) failed = r;
    }
    if (failed != strataSuccess) {
      const std::string msg = strataMessage(comm != nullptr ? comm : comm_, failed);
      // Requests already made still belong to strata until waited for.
      for (strataRequest_t& req : requests) strataWait(&req);
      TORCH_CHECK(false, "strata: ", op, " failed: ", msg);
    }
    // Under issue_, so that unresolved_, the completer and the sequencer see the works in the
    // order strata received them.
    if (topLevel) {
      std::lock_guard<std::mutex> order(orderMutex_);
      unresolved_.emplace_back(seq, work);
    }
    completeWhenDone(work, op, std::move(requests), std::move(after));
  }
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::onLane(
    Lane& lane, c10::intrusive_ptr<StrataWork> work, const char* op,
    std::function<strataResult_t(strataComm_t)> body, std::function<void()> after) {
  TORCH_CHECK(lane.comm != nullptr, "strata: ", op, " on a process group that was shut down");
  ++seq_;
  strataComm_t comm = lane.comm;
  lane.worker.post([this, work, op, comm, body = std::move(body), after = std::move(after)] {
    const strataResult_t r = body(comm);
    std::exception_ptr error;
    if (r != strataSuccess) {
      error = std::make_exception_ptr(std::runtime_error(std::string("strata: ") + op +
                                                         " failed: " + strataMessage(comm, r)));
    }
    // Not here: a callback that waits on a later Work of this group would hold the one
    // thread that completes it (PowerSGD's hook did: DDP hung in finalize_backward).
    work->settle(error, after);
    resolveOnPool(work, 1);
  });
  return work;
}

std::string ProcessGroupStrata::describe() {
  std::lock_guard<std::mutex> lock(issue_);
  TORCH_CHECK(comm_ != nullptr, "strata: describe on a process group that was shut down");
  std::string buf(8192, '\0');
  const strataResult_t r = strataCommDescribe(comm_, buf.data(), buf.size());
  TORCH_CHECK(r == strataSuccess, "strata: describe failed: ", strataMessage(comm_, r));
  buf.resize(buf.find('\0'));
  return buf;
}

#ifndef STRATA_TORCH_CUDA
// Without CUDA in PyTorch, checkDense refuses CUDA tensors before anything gets here.
c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::onStream(
    c10d::OpType, const char* op, const at::Device& device, std::vector<at::Tensor>,
    std::vector<at::Tensor>, const std::vector<std::function<strataResult_t(strataStream_t)>>&,
    const std::function<void()>&) {
  TORCH_CHECK(false, "strata: ", op, ": ", device,
              " tensors need a build of the strata backend against a PyTorch with CUDA");
}
#endif

}  // namespace strata::torch_backend
