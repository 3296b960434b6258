#include "fabrics/ucx/ucx_link.h"

#include <sched.h>
#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "common/counted_scope.h"
#include "common/deadline.h"
#include "common/log.h"
#include "common/spin.h"
#include "fabrics/fabric.h"
#include "fabrics/ucx/ucx_context.h"

namespace strata::fabric {
namespace {

constexpr uint64_t kFullMask = ~uint64_t{0};
constexpr int kMaxMembers = 1 << 24;  // the sender's field of the tag
// Polls before yielding the core, as common/mpi_wait.cc: spin while a message is about to
// land, then leave the core to late peers; at once on an oversubscribed machine (common/spin.h).
constexpr unsigned kSpinPolls = 256;
constexpr double kFlushSeconds = 10;  // the destructor's flush (flushAndClose)

const char* channelName(p2p::Channel ch) {
  switch (ch) {
    case p2p::Channel::kCall:
      return "collective";
    case p2p::Channel::kExchange:
      return "exchange";
    case p2p::Channel::kRing:
      return "started allreduce";
  }
  return "?";
}

// A connection that broke (a peer died): its requests complete with an error or not at all,
// and the waiter reports either (at the deadline, at worst). Nothing to do here, and nothing
// to log: UCX calls this from inside progress, and the waiter logs once. Installed so that UCX
// hands the error here instead of logging it as unhandled.
void onEndpointError(void*, ucp_ep_h, ucs_status_t) {}

void* requestOf(ucs_status_ptr_t sp) { return UCS_PTR_IS_PTR(sp) ? sp : nullptr; }

}  // namespace

uint64_t UcxLink::tag(p2p::Channel ch, int sender, uint32_t seq) const {
  return (static_cast<uint64_t>(ch) << 56) | (static_cast<uint64_t>(sender) << 32) | seq;
}

StatusOr<std::unique_ptr<UcxLink>> UcxLink::create(boot::Bootstrap& group) {
  if (group.size() >= kMaxMembers) {
    return invalidArgument("fabric ucx: " + std::to_string(group.size()) +
                           " members exceed the tag's 24-bit member field");
  }
  std::unique_ptr<UcxLink> link(new UcxLink(group.rank(), group.size()));
  STRATA_RETURN_IF_ERROR(link->connect(group));
  return link;
}

// Worker first, then addresses over the bootstrap, then endpoints; each local step is agreed,
// so that a member whose UCX fails makes every member fail instead of waiting for it.
Status UcxLink::connect(boot::Bootstrap& group) {
  ucp_address_t* address = nullptr;
  size_t addressBytes = 0;
  Status local = [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(ucp_context_h context, ucxContext());
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // one thread at a time, not always the same
    STRATA_UCS_CHECK(ucp_worker_create(context, &wp, &worker_));
    STRATA_UCS_CHECK(ucp_worker_get_address(worker_, &address, &addressBytes));
    return Status::ok();
  }();
  STRATA_RETURN_IF_ERROR(boot::agree(group, local));
  StatusOr<std::vector<std::string>> all = boot::allGatherStrings(
      group, std::string(reinterpret_cast<const char*>(address), addressBytes));
  ucp_worker_release_address(worker_, address);
  STRATA_RETURN_IF_ERROR(all.status());

  local = [&]() -> Status {
    eps_.assign(size_, nullptr);
    for (int j = 0; j < size_; ++j) {
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.address = reinterpret_cast<const ucp_address_t*>(all.value()[j].data());
      // No peer-failure mode: in UCX 1.13 it rules out every transport but tcp (shared memory,
      // cma and self lack it), so members of one host would talk over loopback sockets (the
      // conformance tests ran 30% slower). A peer that stalls or dies is caught by the
      // deadline of every wait instead (STRATA_TIMEOUT), as with mpi.
      ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
      ep.err_handler.cb = onEndpointError;
      ep.err_handler.arg = nullptr;
      STRATA_UCS_CHECK(ucp_ep_create(worker_, &ep, &eps_[j]));
    }
    return Status::ok();
  }();
  STRATA_RETURN_IF_ERROR(boot::agree(group, local));
  for (ChannelState& c : channels_) {
    c.sent.assign(size_, 0);
    c.taken.assign(size_, 0);
  }
  STRATA_TRACE(kSubsysFabric, "ucx link: member %d of %d, worker address of %zu bytes", rank_,
               size_, addressBytes);
  return Status::ok();
}

Status UcxLink::postSend(p2p::Channel ch, int peer, const void* buf, size_t bytes) {
  ChannelState& c = channels_[static_cast<unsigned>(ch)];
  Pending p;
  p.peer = peer;
  p.bytes = bytes;
  p.seq = c.sent[peer]++;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  param.datatype = ucp_dt_make_contig(1);
  param.memory_type = UCS_MEMORY_TYPE_HOST;  // fabrics take host memory: skip the detection
  const ucs_status_ptr_t sp =
      ucp_tag_send_nbx(eps_[peer], buf, bytes, tag(ch, rank_, p.seq), &param);
  if (UCS_PTR_IS_ERR(sp)) {
    return failed(ch, ucxError("ucp_tag_send_nbx", UCS_PTR_STATUS(sp), __FILE__, __LINE__)
                          .withContext(describe(p, ch, "posting")));
  }
  p.request = requestOf(sp);
  p.status = p.request == nullptr ? UCS_OK : UCS_INPROGRESS;
  c.pending.push_back(p);
  return Status::ok();
}

Status UcxLink::postRecv(p2p::Channel ch, int peer, void* buf, size_t bytes) {
  ChannelState& c = channels_[static_cast<unsigned>(ch)];
  Pending p;
  p.recv = true;
  p.peer = peer;
  p.bytes = bytes;
  p.seq = c.taken[peer]++;
  ucp_request_param_t param{};
  // Always a request, even for a message already there: UCX 1.13 does not fill recv_info's
  // length on every path of an immediate completion, and the length is how a member that
  // disagrees on a count is caught (ucp_tag_recv_request_test reports it reliably).
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.datatype = ucp_dt_make_contig(1);
  param.memory_type = UCS_MEMORY_TYPE_HOST;
  const ucs_status_ptr_t sp =
      ucp_tag_recv_nbx(worker_, buf, bytes, tag(ch, peer, p.seq), kFullMask, &param);
  if (UCS_PTR_IS_ERR(sp)) {
    return failed(ch, ucxError("ucp_tag_recv_nbx", UCS_PTR_STATUS(sp), __FILE__, __LINE__)
                          .withContext(describe(p, ch, "posting")));
  }
  p.request = requestOf(sp);
  if (p.request == nullptr) {
    return failed(ch, internalError(describe(p, ch, "posting") + ": ucx completed it at once"));
  }
  c.pending.push_back(p);
  return Status::ok();
}

// A completed request: freed, and checked.
Status UcxLink::finished(p2p::Channel ch, Pending& p, ucs_status_t st) {
  if (p.request != nullptr) ucp_request_free(p.request);
  p.request = nullptr;
  p.status = st;
  if (st == UCS_ERR_MESSAGE_TRUNCATED || (st == UCS_OK && p.recv && p.received != p.bytes)) {
    const std::string got =
        st == UCS_OK ? std::to_string(p.received) + " bytes" : std::string("more bytes");
    return failed(ch,
                  invalidUsage(describe(p, ch, "a receive") + ": member " + std::to_string(p.peer) +
                               " sent " + got + " where " + std::to_string(p.bytes) +
                               " were expected; the members disagree on a count or type"));
  }
  if (st != UCS_OK) {
    return failed(ch,
                  systemError(describe(p, ch, "a message") + " failed: " + ucs_status_string(st)));
  }
  return Status::ok();
}

Status UcxLink::collect(p2p::Channel ch, bool* done) {
  ChannelState& c = channels_[static_cast<unsigned>(ch)];
  bool all = true;
  for (Pending& p : c.pending) {
    if (p.status != UCS_INPROGRESS) continue;  // completed (at once, or in an earlier pass)
    ucs_status_t st;
    if (p.recv) {
      ucp_tag_recv_info_t info{};
      st = ucp_tag_recv_request_test(p.request, &info);
      if (st != UCS_INPROGRESS) p.received = info.length;
    } else {
      st = ucp_request_check_status(p.request);
    }
    if (st == UCS_INPROGRESS) {
      all = false;
      continue;
    }
    STRATA_RETURN_IF_ERROR(finished(ch, p, st));
  }
  if (all) c.pending.clear();
  *done = all;
  return Status::ok();
}

Status UcxLink::test(p2p::Channel ch, bool* done) {
  ucp_worker_progress(worker_);
  return collect(ch, done);
}

Status UcxLink::probe(p2p::Channel ch, int peer, bool* found, int* source, size_t* bytes) {
  *found = false;
  *source = -1;
  *bytes = 0;
  while (ucp_worker_progress(worker_) != 0) {
  }
  ChannelState& c = channels_[static_cast<unsigned>(ch)];
  // The message a receive from `from` would take next, if it waits unexpected.
  auto next = [&](int from) {
    ucp_tag_recv_info_t info{};
    if (ucp_tag_probe_nb(worker_, tag(ch, from, c.taken[from]), kFullMask, 0, &info) == nullptr) {
      return false;
    }
    *found = true;
    *source = from;
    *bytes = info.length;
    return true;
  };
  if (peer >= 0) {
    next(peer);
    return Status::ok();
  }
  // Any sender: the channel's first unexpected message names one; UCX keeps each endpoint's
  // messages in order, so it is that sender's next. Should it not be, every sender is asked.
  constexpr uint64_t kChannelMask = uint64_t{0xff} << 56;
  ucp_tag_recv_info_t info{};
  if (ucp_tag_probe_nb(worker_, tag(ch, 0, 0), kChannelMask, 0, &info) == nullptr) {
    return Status::ok();
  }
  const int from = static_cast<int>((info.sender_tag >> 32) & (kMaxMembers - 1));
  if (from < size_ && next(from)) return Status::ok();
  for (int j = 0; j < size_ && !*found; ++j) next(j);
  return Status::ok();
}

Status UcxLink::wait(p2p::Channel ch, const char* what) {
  deadline::Poll poll;
  const unsigned spinPolls = spin::pollsBeforeYield(kSpinPolls);
  for (unsigned polls = 0;; ++polls) {
    while (ucp_worker_progress(worker_) != 0) {
    }
    bool done = false;
    const Status st = collect(ch, &done);
    if (!st.isOk()) return st.withContext(what);
    if (done) return Status::ok();
    IdleHook::idle();
    if (polls < spinPolls) {
      if (!poll.expired()) continue;
    } else {
      sched_yield();
      if (!poll.expiredNow()) continue;
    }
    // The first message still in flight names the peer this member waits for.
    const std::vector<Pending>& pending = channels_[static_cast<unsigned>(ch)].pending;
    std::string waited = what;
    for (const Pending& p : pending) {
      if (p.status == UCS_INPROGRESS) {
        waited = describe(p, ch, what);
        break;
      }
    }
    abandonChannel(ch);
    return deadline::expiredError("waiting for " + waited);
  }
}

Status UcxLink::failed(p2p::Channel ch, Status st) {
  abandonChannel(ch);
  return st;
}

// Receives are cancelled (a late message then lands in UCX's unexpected queue, never in the
// buffer... unless it was already being received); sends are left to complete on their own.
// Either way the request is released and never waited on again.
void UcxLink::abandonChannel(p2p::Channel ch) {
  ChannelState& c = channels_[static_cast<unsigned>(ch)];
  for (Pending& p : c.pending) {
    if (p.request == nullptr) continue;
    if (p.recv) ucp_request_cancel(worker_, p.request);
    ucp_request_free(p.request);
    p.request = nullptr;
  }
  c.pending.clear();
}

std::string UcxLink::describe(const Pending& p, p2p::Channel ch, const char* what) const {
  return std::string(what) + ": " + (p.recv ? "receive of " : "send of ") +
         std::to_string(p.bytes) + " bytes " + (p.recv ? "from" : "to") + " member " +
         std::to_string(p.peer) + " (ucx fabric, member " + std::to_string(rank_) + " of " +
         std::to_string(size_) + ", " + channelName(ch) + " message " + std::to_string(p.seq) + ")";
}

namespace {

// UCX logs a failed flush at ERROR ("error during flush: Endpoint timeout") for an endpoint
// whose peer's worker is already gone. At a link's end that peer has finished its last call, so
// it received everything this member sent (every call waits for its own messages): the line is
// noise, and a user reading "UCX ERROR" at the end of a good run would take it for a failure.
// While links close, a handler keeps those lines to strata's TRACE log; every other UCX message
// passes. Process-wide and counted, as UCX's handler stack is: the first closing link pushes
// it, the last pops it.
ucs_log_func_rc_t quietExitFlush(const char* file, unsigned line, const char*,
                                 ucs_log_level_t level, const ucs_log_component_config_t*,
                                 const char* format, va_list ap) {
  if (level != UCS_LOG_LEVEL_ERROR || std::strstr(format, "error during flush") == nullptr) {
    return UCS_LOG_FUNC_RC_CONTINUE;
  }
  char text[256];
  std::vsnprintf(text, sizeof(text), format, ap);
  STRATA_TRACE(kSubsysFabric, "ucx link closing: %s (UCX %s:%u; the peer had finished)", text, file,
               line);
  return UCS_LOG_FUNC_RC_STOP;
}

struct QuietExitFlushChange {
  static void apply() { ucs_log_push_handler(quietExitFlush); }
  static void undo() { ucs_log_pop_handler(); }
};
using QuietExitFlush = CountedScope<QuietExitFlushChange>;

}  // namespace

// After an abort the worker is kept, not destroyed: peers may still connect to it or send to
// it (their endpoints would fail loudly on a vanished worker: UCX logs "shmat failed" for a
// removed shared-memory FIFO), and its abandoned sends are still in flight (destroying it logs
// them as not returned to UCX's pool). Kept reachable until the process ends, as
// keepUntilExit keeps buffers (common/mpi_wait.h): a worker's sockets and FIFOs per abort.
UcxLink::~UcxLink() {
  if (worker_ == nullptr) return;
  for (unsigned ch = 0; ch < p2p::kChannels; ++ch) abandonChannel(static_cast<p2p::Channel>(ch));
  if (retired_) {
    // No peer will use it again (Fabric::retire); a lost peer's endpoint may fail on closing.
    QuietExitFlush quiet;
    closeEndpoints();
    ucp_worker_destroy(worker_);
    return;
  }
  if (abandoned_) {
    static std::mutex m;
    static auto* kept = new std::vector<ucp_worker_h>();  // never destroyed, see above
    std::lock_guard<std::mutex> lock(m);
    kept->push_back(worker_);
    return;
  }
  QuietExitFlush quiet;
  flushAndClose();
  ucp_worker_destroy(worker_);
}

// Every call waited for its own messages, but a completed send may still sit in a transport's
// buffer (tcp): the flush pushes it out before the endpoints go, so a peer still receiving
// gets it. It needs no peer's help (every message was received: each call waited for its
// own), so a few seconds bound it, less under an earlier deadline. The endpoints are then
// closed without a handshake (force): peers need nothing more from them.
void UcxLink::flushAndClose() {
  deadline::Scope scope(kFlushSeconds);
  ucp_request_param_t flushParam{};
  void* flush = requestOf(ucp_worker_flush_nbx(worker_, &flushParam));
  deadline::Poll poll;
  while (flush != nullptr && ucp_request_check_status(flush) == UCS_INPROGRESS && !poll.expired()) {
    ucp_worker_progress(worker_);
  }
  if (flush != nullptr) ucp_request_free(flush);
  closeEndpoints();
}

void UcxLink::closeEndpoints() {
  std::vector<void*> closing;
  for (ucp_ep_h ep : eps_) {
    if (ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    void* r = requestOf(ucp_ep_close_nbx(ep, &param));
    if (r != nullptr) closing.push_back(r);
  }
  // A forced close completes locally; a few polls let it.
  for (void* r : closing) {
    for (int i = 0; i < 1000 && ucp_request_check_status(r) == UCS_INPROGRESS; ++i) {
      ucp_worker_progress(worker_);
    }
    ucp_request_free(r);
  }
}

}  // namespace strata::fabric
