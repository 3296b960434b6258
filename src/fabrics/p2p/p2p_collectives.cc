#include "fabrics/p2p/p2p_collectives.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/reduce.h"

namespace strata::fabric::p2p {
namespace {

std::string stepOf(const char* what, int s, int p) {
  return std::string(what) + " step " + std::to_string(s + 1) + " of " + std::to_string(p - 1);
}

}  // namespace

char* Collectives::grow(std::vector<char>& v, size_t bytes) {
  if (v.size() < bytes) v.resize(bytes);
  return v.data();
}

void Collectives::evenBlocks(size_t count) {
  const size_t p = static_cast<size_t>(p_);
  evenCounts_.resize(p);
  evenDispls_.resize(p);
  size_t at = 0;
  for (size_t j = 0; j < p; ++j) {
    evenCounts_[j] = count / p + (j < count % p ? 1 : 0);
    evenDispls_[j] = at;
    at += evenCounts_[j];
  }
}

// Step s sends the partial of block (r - s - 1) right and receives the left neighbour's
// partial of block (r - s - 2), which it combines with its own input of that block; the last
// step's block is r itself, complete once this member's input is added. Partials live in
// scratch, so `in` is only read (even in place: `out` is written once, at the end).
Status Collectives::reduceScatter(const void* in, void* out, const size_t* counts,
                                  const size_t* displs, strataDataType_t type, strataRedOp_t op) {
  const size_t ts = dataTypeSize(type);
  const char* src = static_cast<const char*>(in);
  if (p_ == 1) {
    if (out != src + displs[0] * ts) copyBytes(out, src + displs[0] * ts, counts[0] * ts);
    return Status::ok();
  }
  const size_t largest = *std::max_element(counts, counts + p_) * ts;
  char* partial = grow(sendScratch_, largest);
  char* received = grow(recvScratch_, largest);
  for (int s = 0; s < p_ - 1; ++s) {
    const int sb = mod(r_ - s - 1), rb = mod(r_ - s - 2);
    const void* sendFrom = s == 0 ? src + displs[sb] * ts : partial;
    const Status st = sendRecv(link_, Channel::kCall, mod(r_ + 1), sendFrom, counts[sb] * ts,
                               mod(r_ - 1), received, counts[rb] * ts, "reduce-scatter ring");
    if (!st.isOk()) return st.withContext(stepOf("reduce-scatter", s, p_));
    // The send of `partial` completed, so it may take the next partial.
    void* dst = s == p_ - 2 ? out : partial;
    reduce2(dst, src + displs[rb] * ts, received, counts[rb], type, op);
  }
  return Status::ok();
}

// Step s passes block (r - s) right and takes block (r - s - 1) from the left, in place.
Status Collectives::allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                              strataDataType_t type) {
  const size_t ts = dataTypeSize(type);
  char* dst = static_cast<char*>(out);
  if (in != dst + displs[r_] * ts) copyBytes(dst + displs[r_] * ts, in, counts[r_] * ts);
  for (int s = 0; s < p_ - 1; ++s) {
    const int sb = mod(r_ - s), rb = mod(r_ - s - 1);
    const Status st =
        sendRecv(link_, Channel::kCall, mod(r_ + 1), dst + displs[sb] * ts, counts[sb] * ts,
                 mod(r_ - 1), dst + displs[rb] * ts, counts[rb] * ts, "all-gather ring");
    if (!st.isOk()) return st.withContext(stepOf("all-gather", s, p_));
  }
  return Status::ok();
}

Status Collectives::allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                              strataRedOp_t op) {
  const size_t bytes = count * dataTypeSize(type);
  if (p_ == 1 || bytes >= kDirectBytes) {
    STRATA_RETURN_IF_ERROR(ring_.start(in, out, count, type, op));
    return ring_.wait();
  }
  return reduceGathered(in, out, count, type, op, true, "allreduce (every vector to every member)");
}

// Every vector, this member's included, in gathered_ in member order: reduceMany's sources
// then never overlap `out`, and every member combines the same sources in the same order.
Status Collectives::reduceGathered(const void* in, void* out, size_t count, strataDataType_t type,
                                   strataRedOp_t op, bool sendToAll, const char* what) {
  const size_t bytes = count * dataTypeSize(type);
  char* all = grow(gathered_, bytes * p_);
  copyBytes(all + bytes * r_, in, bytes);
  for (int j = 0; j < p_; ++j) {
    if (j != r_) STRATA_RETURN_IF_ERROR(link_.postRecv(Channel::kCall, j, all + bytes * j, bytes));
  }
  for (int j = 0; j < p_ && sendToAll; ++j) {
    if (j != r_) STRATA_RETURN_IF_ERROR(link_.postSend(Channel::kCall, j, all + bytes * r_, bytes));
  }
  STRATA_RETURN_IF_ERROR(link_.wait(Channel::kCall, what));
  srcs_.resize(p_);
  for (int j = 0; j < p_; ++j) srcs_[j] = all + bytes * j;
  reduceMany(out, srcs_.data(), p_, count, type, op);
  return Status::ok();
}

Status Collectives::broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                              int root) {
  const size_t bytes = count * dataTypeSize(type);
  if (r_ == root && in != out) copyBytes(out, in, bytes);
  if (p_ == 1) return Status::ok();
  if (bytes >= kDirectBytes && p_ > 2) {
    // The root's range is its own `out` now: scatter it in place, then all-gather in place.
    evenBlocks(count);
    char* mine = static_cast<char*>(out) + evenDispls_[r_] * dataTypeSize(type);
    STRATA_RETURN_IF_ERROR(scatter(out, mine, evenCounts_.data(), evenDispls_.data(), type, root));
    return allGather(mine, out, evenCounts_.data(), evenDispls_.data(), type);
  }
  if (r_ == root) {
    for (int j = 0; j < p_; ++j) {
      if (j != root) STRATA_RETURN_IF_ERROR(link_.postSend(Channel::kCall, j, out, bytes));
    }
  } else {
    STRATA_RETURN_IF_ERROR(link_.postRecv(Channel::kCall, root, out, bytes));
  }
  return link_.wait(Channel::kCall, "broadcast");
}

Status Collectives::reduce(const void* in, void* out, size_t count, strataDataType_t type,
                           strataRedOp_t op, int root) {
  const size_t ts = dataTypeSize(type), bytes = count * ts;
  if (p_ == 1) {
    if (in != out) copyBytes(out, in, bytes);
    return Status::ok();
  }
  if (bytes >= kDirectBytes && p_ > 2) {
    // Reduce-scatter (into the root's own `out` on the root: in place when in == out), then
    // the reduced blocks to the root.
    evenBlocks(count);
    const size_t* c = evenCounts_.data();
    const size_t* d = evenDispls_.data();
    void* block = r_ == root ? static_cast<char*>(out) + d[r_] * ts : grow(gathered_, c[0] * ts);
    STRATA_RETURN_IF_ERROR(reduceScatter(in, block, c, d, type, op));
    return gather(block, out, c, d, type, root);
  }
  if (r_ != root) {
    STRATA_RETURN_IF_ERROR(link_.postSend(Channel::kCall, root, in, bytes));
    return link_.wait(Channel::kCall, "reduce (to the root)");
  }
  return reduceGathered(in, out, count, type, op, false, "reduce (at the root)");
}

Status Collectives::scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                            strataDataType_t type, int root) {
  const size_t ts = dataTypeSize(type);
  if (r_ == root) {
    const char* src = static_cast<const char*>(in);
    for (int j = 0; j < p_; ++j) {
      if (j == root) continue;
      STRATA_RETURN_IF_ERROR(
          link_.postSend(Channel::kCall, j, src + displs[j] * ts, counts[j] * ts));
    }
    if (out != src + displs[r_] * ts) copyBytes(out, src + displs[r_] * ts, counts[r_] * ts);
  } else {
    STRATA_RETURN_IF_ERROR(link_.postRecv(Channel::kCall, root, out, counts[r_] * ts));
  }
  return link_.wait(Channel::kCall, "scatter");
}

Status Collectives::gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                           strataDataType_t type, int root) {
  const size_t ts = dataTypeSize(type);
  if (r_ == root) {
    char* dst = static_cast<char*>(out);
    for (int j = 0; j < p_; ++j) {
      if (j == root) continue;
      STRATA_RETURN_IF_ERROR(
          link_.postRecv(Channel::kCall, j, dst + displs[j] * ts, counts[j] * ts));
    }
    if (in != dst + displs[r_] * ts) copyBytes(dst + displs[r_] * ts, in, counts[r_] * ts);
  } else {
    STRATA_RETURN_IF_ERROR(link_.postSend(Channel::kCall, root, in, counts[r_] * ts));
  }
  return link_.wait(Channel::kCall, "gather");
}

Status Collectives::exchange(const PeerOp* ops, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const PeerOp& op = ops[i];
    const size_t bytes = op.count * dataTypeSize(op.type);
    STRATA_RETURN_IF_ERROR(op.send ? link_.postSend(Channel::kExchange, op.peer, op.buf, bytes)
                                   : link_.postRecv(Channel::kExchange, op.peer, op.buf, bytes));
  }
  return link_.wait(Channel::kExchange, "exchange");
}

std::vector<std::vector<char>> Collectives::takeScratch() {
  std::vector<std::vector<char>> out;
  out.push_back(std::move(sendScratch_));
  out.push_back(std::move(recvScratch_));
  out.push_back(std::move(gathered_));
  out.push_back(ring_.takeScratch());
  return out;
}

}  // namespace strata::fabric::p2p
