// The NCCL stand-in's point-to-point operations between members of one communicator, through
// the mailboxes of its shared-memory segment (nccl_standin_segment.h; the protocol:
// nccl_standin_shm.h).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nccl_standin_segment.h"
#include "nccl_standin_shm.h"
#include "standin.h"

namespace nccl_standin {

// ----- point-to-point -------------------------------------------------------------------------

void MultiComm::runPeers(const std::vector<std::pair<std::shared_ptr<MultiComm>, PeerOp>>& ops) {
  // One operation of each communicator at a time in this process (a box has one writer).
  std::vector<MultiComm*> comms;
  for (const auto& [comm, op] : ops) comms.push_back(comm.get());
  std::sort(comms.begin(), comms.end());
  comms.erase(std::unique(comms.begin(), comms.end()), comms.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (MultiComm* c : comms) locks.emplace_back(c->run_);  // in address order: no lock cycle
  for (MultiComm* c : comms) {
    c->current_ = "a group of " + std::to_string(ops.size()) + " sends and receives";
  }

  struct Active {
    MultiComm* comm;
    PeerOp op;
    char* at;  // the buffer, as stream work reaches it
    size_t bytes;
    size_t done;  // bytes sent or received so far
  };
  // Each (communicator, peer, direction) is a queue: its operations complete in issue order.
  std::map<std::tuple<MultiComm*, int, bool>, std::vector<Active>> queues;
  size_t remaining = 0;
  for (const auto& [comm, op] : ops) {
    const size_t bytes = op.count * typeBytes(op.type);
    if (bytes == 0 || comm->error(nullptr) != ncclSuccess || comm->aborted_.load()) continue;
    cudaError_t err = cudaSuccess;
    auto* at = static_cast<char*>(cuda_standin::deviceAccess(op.buf, bytes, &err));
    if (at == nullptr) {
      comm->fail(ncclUnhandledCudaError, std::string(op.send ? "send" : "receive") +
                                             " buffer is not device memory "
                                             "that holds " +
                                             std::to_string(bytes) + " bytes");
      continue;
    }
    queues[{comm.get(), op.peer, op.send}].push_back({comm.get(), op, at, bytes, 0});
    ++remaining;
  }
  std::map<std::tuple<MultiComm*, int, bool>, size_t> head;  // index of each queue's first left
  Poller poll;
  while (remaining > 0) {
    bool moved = false;
    for (auto& [key, queue] : queues) {
      size_t& h = head[key];
      if (h == queue.size()) continue;
      Active& a = queue[h];
      MultiComm& c = *a.comm;
      const int me = c.rank_;
      if (a.op.send) {
        Box& box = c.seg_->box(me, a.op.peer);
        const uint64_t posted = box.posted.load(std::memory_order_relaxed);  // ours alone
        if (box.taken.load(std::memory_order_acquire) != posted) continue;   // still full
        const size_t chunk = std::min(kBoxBytes, a.bytes - a.done);
        std::memcpy(c.seg_->boxData(me, a.op.peer), a.at + a.done, chunk);
        box.message = a.bytes;
        box.offset = a.done;
        box.bytes = chunk;
        box.posted.store(posted + 1, std::memory_order_release);
        a.done += chunk;
      } else {
        Box& box = c.seg_->box(a.op.peer, me);
        const uint64_t taken = box.taken.load(std::memory_order_relaxed);   // ours alone
        if (box.posted.load(std::memory_order_acquire) == taken) continue;  // still empty
        if (box.message != a.bytes || box.offset != a.done) {
          c.fail(ncclInvalidUsage, "member " + std::to_string(a.op.peer) + " sends a message of " +
                                       std::to_string(box.message) +
                                       " bytes where this member receives " +
                                       std::to_string(a.bytes) +
                                       " (sends and receives must match in order, "
                                       "count and type)");
          remaining -= queue.size() - h;
          h = queue.size();
          continue;
        }
        std::memcpy(a.at + a.done, c.seg_->boxData(a.op.peer, me), box.bytes);
        a.done += box.bytes;
        box.taken.store(taken + 1, std::memory_order_release);
      }
      moved = true;
      if (a.done == a.bytes) {
        ++h;
        --remaining;
      }
    }
    if (moved || remaining == 0) continue;
    // Nothing moved: give up the queues of communicators that cannot go on.
    const bool warn = poll.warnDue();
    for (auto& [key, queue] : queues) {
      size_t& h = head[key];
      if (h == queue.size()) continue;
      MultiComm& c = *queue[h].comm;
      bool gone = c.stopped(queue[h].op.peer);
      if (!gone && warn) {
        const Active& a = queue[h];
        if (processGone(c.seg_->member(a.op.peer).pid)) {
          c.fail(ncclRemoteError,
                 "member " + std::to_string(a.op.peer) + " exited during " + c.current_);
          gone = true;
        } else {
          std::fprintf(stderr,
                       "NCCL stand-in: member %d of %d has waited %lld s in %s: %s member %d, "
                       "%zu of %zu bytes done\n",
                       c.rank_, c.size_, poll.seconds(), c.current_.c_str(),
                       a.op.send ? "a send to" : "a receive from", a.op.peer, a.done, a.bytes);
        }
      }
      if (gone) {
        remaining -= queue.size() - h;
        h = queue.size();
      }
    }
    poll.pause();
  }
}

}  // namespace nccl_standin
