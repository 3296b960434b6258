// Point-to-point messages for the MPI tests: an Exchange is the list of sends and receives one
// rank posts in a test, in the order it posts them. Every message's bytes are a function of
// (sender, receiver, its index among the messages between the two, seed), so a message that
// reaches the wrong receive, or the right one out of order, shows as wrong data; a receive
// checks the guards around its buffer, a send that its buffer is unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_types.h"
#include "strata/strata.h"

namespace strata_test {

class Exchange {
 public:
  Exchange(const Comm& cm, uint64_t seed) : cm_(cm), seed_(seed) {}

  // Adds a send of `count` elements to `to` (the next message from this rank to it).
  void send(int to, strataDataType_t type, size_t count) { add(true, to, type, count); }
  // Adds a receive of `count` elements from `from` (the next message from it to this rank).
  void recv(int from, strataDataType_t type, size_t count) { add(false, from, type, count); }

  size_t size() const { return ops_.size(); }

  // Posts operation i (strataSend or strataRecv) on the host buffers.
  strataResult_t post(size_t i) {
    Op& op = *ops_[i];
    if (op.isSend) return strataSend(op.buf.data(), op.count, op.type, op.peer, cm_.comm, nullptr);
    return strataRecv(op.buf.data(), op.count, op.type, op.peer, cm_.comm, nullptr);
  }

  // Posts every operation in the order they were added; records each failure in `v` (and goes
  // on, so that the ranks' calls still match).
  void postAll(Verdict& v) {
    for (size_t i = 0; i < ops_.size(); ++i) checkResult(v, post(i), cm_.comm);
  }

  // Once the operations completed: every receive holds its message, no send buffer changed,
  // no guard was touched.
  void check(Verdict& v) {
    for (const auto& p : ops_) {
      Op& op = *p;
      const std::string name = std::string(op.isSend ? "send " : "recv ") +
                               std::to_string(op.index) + (op.isSend ? " to " : " from ") +
                               std::to_string(op.peer) + " (" + typeName(op.type) + " x" +
                               std::to_string(op.count) + ")";
      op.buf.checkGuards(v, name.c_str());
      const unsigned char* got = op.buf.data();
      for (size_t j = 0; j < op.payload.size(); ++j) {
        if (got[j] == op.payload[j]) continue;
        v.fail(name + (op.isSend ? ": sendbuff changed" : ": wrong data") + " at byte " +
               std::to_string(j) + " of " + std::to_string(op.payload.size()) + " (got 0x" +
               hex(got[j]) + ", expected 0x" + hex(op.payload[j]) + ")");
        break;
      }
    }
  }

 private:
  struct Op {
    Op(size_t bytes, size_t shift) : buf(bytes, shift) {}
    bool isSend = false;
    int peer = 0, index = 0;
    strataDataType_t type = strataInt8;
    size_t count = 0;
    GuardedBuffer buf;
    std::vector<unsigned char> payload;  // what the buffer holds (send) or must hold (recv)
  };

  static std::string hex(unsigned char b) {
    static const char kDigits[] = "0123456789abcdef";
    return std::string{kDigits[b >> 4], kDigits[b & 15]};
  }

  void add(bool isSend, int peer, strataDataType_t type, size_t count) {
    const size_t bytes = count * typeSize(type);
    int index = 0;
    for (const auto& p : ops_) index += p->isSend == isSend && p->peer == peer ? 1 : 0;
    const int from = isSend ? cm_.rank : peer, to = isSend ? peer : cm_.rank;
    const uint64_t key = mix(seed_ ^ (static_cast<uint64_t>(from) << 42) ^
                             (static_cast<uint64_t>(to) << 21) ^ static_cast<uint64_t>(index));
    auto op = std::make_unique<Op>(bytes, ((key >> 3) & 3) * typeSize(type));
    op->isSend = isSend;
    op->peer = peer;
    op->index = index;
    op->type = type;
    op->count = count;
    op->payload.resize(bytes);
    for (size_t j = 0; j < bytes; ++j) {
      op->payload[j] = static_cast<unsigned char>(mix(key ^ (j >> 3)) >> (8 * (j & 7)));
    }
    if (isSend) copyBytes(op->buf.data(), op->payload.data(), bytes);
    ops_.push_back(std::move(op));
  }

  Comm cm_;
  uint64_t seed_;
  std::vector<std::unique_ptr<Op>> ops_;
};

}  // namespace strata_test
