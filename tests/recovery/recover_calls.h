// The recovery test's checked calls (recover_program.cc): one call of each kind strata has
// (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, a send/receive ring in a
// group) on integer-valued float32 or int32 data, each result element compared with the value
// every rank can compute from the members' ranks alone. Values stay within +-30, so sums over a
// few ranks are exact in float.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/strata.h"

namespace strata::recovery {

enum class Kind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kRing };
constexpr int kKinds = 7;

inline const char* kindName(Kind k) {
  static const char* const names[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                      "reduce",    "alltoall",  "send/recv ring"};
  return names[static_cast<int>(k)];
}

// Call number `index` of a run: which kind, type, op, count and root. The kinds take turns, so
// any 7 consecutive calls hold one of each; counts run from 1 element to 64 KiB.
struct Call {
  Kind kind;
  bool isFloat;
  strataRedOp_t op;
  size_t count;
  int root;
  uint64_t salt;  // varies the data from one call to the next
};

inline Call callAt(uint64_t index, int size) {
  static const size_t counts[] = {1, 5, 64, 1031, 16411};
  static const strataRedOp_t ops[] = {strataSum, strataMax, strataMin};
  Call c;
  c.kind = static_cast<Kind>(index % kKinds);
  const uint64_t round = index / kKinds;
  c.isFloat = (index % 2) == 0;
  c.op = ops[round % 3];
  c.count = counts[(round + index) % 5];
  c.root = static_cast<int>(round % static_cast<uint64_t>(size));
  c.salt = index;
  return c;
}

// What rank r contributes at element i of call `salt`: an integer in [-30, 30].
inline int valueOf(int r, size_t i, uint64_t salt) {
  return static_cast<int>((static_cast<uint64_t>(r) * 131 + i * 17 + salt * 7) % 61) - 30;
}

inline int reduceOver(int size, size_t i, uint64_t salt, strataRedOp_t op) {
  int acc = valueOf(0, i, salt);
  for (int r = 1; r < size; ++r) {
    const int v = valueOf(r, i, salt);
    acc = op == strataSum ? acc + v : op == strataMax ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

struct Outcome {
  strataResult_t rc = strataSuccess;
  size_t wrong = 0;     // result elements that differ from the expected value
  size_t firstBad = 0;  // the first such element
  double got = 0, want = 0;
};

namespace detail {

constexpr int kSentinel = 9999;  // in every result element before the call: unwritten shows

template <typename T>
Outcome run(const Call& c, int rank, int size, strataComm_t comm) {
  const strataDataType_t type = std::is_same<T, float>::value ? strataFloat32 : strataInt32;
  const size_t n = c.count, all = n * static_cast<size_t>(size);
  std::vector<T> send, recv;
  std::vector<int> want;  // expected recv, element by element (empty: recv is not checked)
  Outcome out;
  const auto fill = [&](size_t len, auto&& at) {
    send.resize(len);
    for (size_t i = 0; i < len; ++i) send[i] = static_cast<T>(at(i));
  };
  switch (c.kind) {
    case Kind::kAllReduce:
      fill(n, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(n, T(kSentinel));
      for (size_t i = 0; i < n; ++i) want.push_back(reduceOver(size, i, c.salt, c.op));
      out.rc = strataAllReduce(send.data(), recv.data(), n, type, c.op, comm, nullptr);
      break;
    case Kind::kAllGather:
      fill(n, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(all, T(kSentinel));
      for (int r = 0; r < size; ++r) {
        for (size_t i = 0; i < n; ++i) want.push_back(valueOf(r, i, c.salt));
      }
      out.rc = strataAllGather(send.data(), recv.data(), n, type, comm, nullptr);
      break;
    case Kind::kReduceScatter:
      fill(all, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(n, T(kSentinel));
      for (size_t i = 0; i < n; ++i) {
        want.push_back(reduceOver(size, static_cast<size_t>(rank) * n + i, c.salt, c.op));
      }
      out.rc = strataReduceScatter(send.data(), recv.data(), n, type, c.op, comm, nullptr);
      break;
    case Kind::kBroadcast:
      fill(n, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(n, T(kSentinel));
      for (size_t i = 0; i < n; ++i) want.push_back(valueOf(c.root, i, c.salt));
      out.rc = strataBroadcast(send.data(), recv.data(), n, type, c.root, comm, nullptr);
      break;
    case Kind::kReduce:
      fill(n, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(n, T(kSentinel));
      if (rank == c.root) {  // written on the root only
        for (size_t i = 0; i < n; ++i) want.push_back(reduceOver(size, i, c.salt, c.op));
      }
      out.rc = strataReduce(send.data(), recv.data(), n, type, c.op, c.root, comm, nullptr);
      break;
    case Kind::kAllToAll:
      fill(all, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(all, T(kSentinel));
      for (int r = 0; r < size; ++r) {  // block r: what rank r sent this rank
        for (size_t i = 0; i < n; ++i) {
          want.push_back(valueOf(r, static_cast<size_t>(rank) * n + i, c.salt));
        }
      }
      out.rc = strataAllToAll(send.data(), recv.data(), n, type, comm, nullptr);
      break;
    case Kind::kRing: {
      const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
      fill(n, [&](size_t i) { return valueOf(rank, i, c.salt); });
      recv.assign(n, T(kSentinel));
      for (size_t i = 0; i < n; ++i) want.push_back(valueOf(prev, i, c.salt));
      strataGroupStart();
      const strataResult_t s = strataSend(send.data(), n, type, next, comm, nullptr);
      const strataResult_t r = strataRecv(recv.data(), n, type, prev, comm, nullptr);
      const strataResult_t e = strataGroupEnd();
      out.rc = s != strataSuccess ? s : r != strataSuccess ? r : e;
      break;
    }
  }
  if (out.rc != strataSuccess) return out;
  for (size_t i = 0; i < want.size(); ++i) {
    if (recv[i] == static_cast<T>(want[i])) continue;
    if (out.wrong++ == 0) {
      out.firstBad = i;
      out.got = static_cast<double>(recv[i]);
      out.want = want[i];
    }
  }
  return out;
}

}  // namespace detail

// Issues call `c` as rank `rank` of `size` on `comm` and checks every element it wrote.
inline Outcome runCall(const Call& c, int rank, int size, strataComm_t comm) {
  return c.isFloat ? detail::run<float>(c, rank, size, comm)
                   : detail::run<int32_t>(c, rank, size, comm);
}

inline std::string describeCall(const Call& c) {
  std::string s = std::string(kindName(c.kind)) + " of " + std::to_string(c.count) + " " +
                  (c.isFloat ? "float32" : "int32");
  if (c.kind == Kind::kBroadcast || c.kind == Kind::kReduce) {
    s += " root " + std::to_string(c.root);
  }
  return s + " (call " + std::to_string(c.salt) + ")";
}

}  // namespace strata::recovery
