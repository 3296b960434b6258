// strataAllToAll, strataGather and strataScatter against MPI_Alltoall, MPI_Gather and
// MPI_Scatter on the same bytes: every type, counts 0, 1, 7 (prime), 1021 and a large one, roots
// 0 and the last rank, in place and not, alone and inside a group of the caller's with other
// calls; a guard after every receive buffer must stay untouched. Then their argument errors,
// each followed by a call that must still work. Used by test_p2p_groups.cc.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_types.h"
#include "mpi/mpi_harness.h"
#include "strata/strata.h"

namespace strata_test {

namespace exchange_detail {

constexpr size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

inline std::vector<unsigned char> randomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<unsigned char> b(n);
  for (auto& x : b) x = static_cast<unsigned char>(gen());
  return b;
}

// A receive buffer of `n` bytes followed by a guard.
inline std::vector<unsigned char> guarded(size_t n) {
  return std::vector<unsigned char>(n + kGuard, kGuardByte);
}

// Compares strata's bytes with MPI's (the first `n`) and the guard.
inline void compare(Verdict& v, const std::vector<unsigned char>& got,
                    const std::vector<unsigned char>& want, size_t n) {
  if (n > 0 && std::memcmp(got.data(), want.data(), n) != 0) {
    size_t i = 0;
    while (got[i] == want[i]) ++i;
    v.fail("byte " + std::to_string(i) + " of " + std::to_string(n) + " differs from MPI's");
  }
  for (size_t i = n; i < n + kGuard; ++i) {
    if (got[i] != kGuardByte) {
      v.fail("wrote " + std::to_string(i - n) + " bytes past the receive buffer's end");
      break;
    }
  }
}

}  // namespace exchange_detail

// One all-to-all, gather and scatter of `count` elements of `type` with `root`, checked.
// `grouped`: the three and an allreduce of one int32 inside one strataGroupStart/End.
inline void checkExchangeCase(Harness& h, const Comm& cm, strataDataType_t type, size_t count,
                              int root, bool inPlace, bool grouped) {
  using namespace exchange_detail;
  const std::string name = std::string("exchanges ") + typeName(type) + " count " +
                           std::to_string(count) + " root " + std::to_string(root) +
                           (inPlace ? " in place" : "") + (grouped ? " grouped" : "") + " on " +
                           cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  const size_t block = count * typeSize(type), all = block * size_t(cm.size);
  const int bytes = static_cast<int>(block);
  const bool isRoot = cm.rank == root;
  const uint64_t seed = h.seed(name) ^ (uint64_t(cm.rank) << 40);
  // All-to-all.
  const std::vector<unsigned char> a2aIn = randomBytes(all, seed);
  std::vector<unsigned char> a2aOut = guarded(all), a2aRef(all + 1);
  MPI_Alltoall(a2aIn.data(), bytes, MPI_BYTE, a2aRef.data(), bytes, MPI_BYTE, cm.mpi);
  // Gather: in place, the root's block starts in its receive buffer.
  const std::vector<unsigned char> mine = randomBytes(block, seed + 1);
  std::vector<unsigned char> gOut = guarded(isRoot ? all : 0), gRef(all + 1);
  MPI_Gather(mine.data(), bytes, MPI_BYTE, gRef.data(), bytes, MPI_BYTE, root, cm.mpi);
  const unsigned char* gSend = mine.data();
  if (inPlace && isRoot) {
    std::memcpy(gOut.data() + size_t(root) * block, mine.data(), block);
    gSend = gOut.data() + size_t(root) * block;
  }
  // Scatter: in place, the root receives into its own block of the send buffer.
  std::vector<unsigned char> sIn = randomBytes(isRoot ? all : 0, seed + 2);
  std::vector<unsigned char> sOut = guarded(block), sRef(block + 1);
  MPI_Scatter(sIn.data(), bytes, MPI_BYTE, sRef.data(), bytes, MPI_BYTE, root, cm.mpi);
  sIn.resize(sIn.size() + kGuard, kGuardByte);
  unsigned char* sRecv = inPlace && isRoot ? sIn.data() + size_t(root) * block : sOut.data();

  int32_t one = 1;
  if (grouped) checkResult(v, strataGroupStart(), nullptr);
  checkResult(v, strataAllToAll(a2aIn.data(), a2aOut.data(), count, type, cm.comm, nullptr),
              cm.comm);
  if (grouped) {
    checkResult(v, strataAllReduce(&one, &one, 1, strataInt32, strataSum, cm.comm, nullptr),
                cm.comm);
  }
  checkResult(v, strataGather(gSend, isRoot ? gOut.data() : nullptr, count, type, root, cm.comm,
                              nullptr),
              cm.comm);
  checkResult(v, strataScatter(isRoot ? sIn.data() : nullptr, sRecv, count, type, root, cm.comm,
                               nullptr),
              cm.comm);
  if (grouped) checkResult(v, strataGroupEnd(), nullptr);

  compare(v, a2aOut, a2aRef, all);
  if (isRoot) compare(v, gOut, gRef, all);
  if (inPlace && isRoot) {
    // The scattered block is the root's own, in place; the rest of sendbuff is unchanged.
    if (std::memcmp(sRecv, sRef.data(), block) != 0) v.fail("in-place scatter changed its block");
  } else {
    compare(v, sOut, sRef, block);
  }
  if (grouped && one != cm.size) v.fail("the grouped allreduce gave " + std::to_string(one));
  h.record(v);
}

// Argument errors: each refused with strataInvalidArgument on every rank, with nothing sent,
// and the communicator still works afterwards.
inline void checkExchangeErrors(Harness& h, const Comm& cm) {
  const std::string name = "exchange argument errors on " + cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  std::vector<float> buf(4 * size_t(cm.size) + 4, 1.0f);
  auto expectInvalid = [&](strataResult_t rc, const std::string& what) {
    if (rc != strataInvalidArgument) {
      v.fail(what + " returned " + std::to_string(rc) + ", not strataInvalidArgument");
    } else if (std::strlen(strataGetLastError(cm.comm)) == 0) {
      v.fail(what + ": strataGetLastError is empty");
    }
  };
  expectInvalid(strataGather(buf.data(), buf.data(), 4, strataFloat32, cm.size, cm.comm, nullptr),
                "strataGather with root = nranks");
  expectInvalid(strataScatter(buf.data(), buf.data(), 4, strataFloat32, -1, cm.comm, nullptr),
                "strataScatter with root -1");
  expectInvalid(strataAllToAll(buf.data(), buf.data() + 1, 4, strataFloat32, cm.comm, nullptr),
                "strataAllToAll on overlapping buffers");
  expectInvalid(strataAllToAll(buf.data(), nullptr, 4, strataFloat32, cm.comm, nullptr),
                "strataAllToAll with recvbuff NULL");
  expectInvalid(strataGather(nullptr, buf.data(), 4, strataFloat32, 0, cm.comm, nullptr),
                "strataGather with sendbuff NULL");
  expectInvalid(strataScatter(buf.data(), buf.data(), 4, static_cast<strataDataType_t>(99), 0,
                              cm.comm, nullptr),
                "strataScatter with datatype 99");
  if (cm.rank == 0) {
    expectInvalid(strataGather(buf.data(), nullptr, 4, strataFloat32, 0, cm.comm, nullptr),
                  "strataGather with recvbuff NULL on the root");
  }
  // Nothing was sent: a correct all-to-all still matches MPI's.
  h.record(v);
  checkExchangeCase(h, cm, strataInt32, 3, 0, false, false);
}

inline void runExchanges(Harness& h, const Comm& cm) {
  const int last = cm.size - 1;
  for (strataDataType_t type : kAllTypes) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1021}}) {
      checkExchangeCase(h, cm, type, count, count % 2 == 0 ? 0 : last, false, false);
    }
  }
  checkExchangeCase(h, cm, strataFloat32, 65537, last, false, false);
  for (int root : {0, last}) {
    checkExchangeCase(h, cm, strataBfloat16, 1021, root, true, false);
    checkExchangeCase(h, cm, strataFloat16, 7, root, true, true);
    checkExchangeCase(h, cm, strataInt64, 1021, root, false, true);
  }
  checkExchangeErrors(h, cm);
}

}  // namespace strata_test
