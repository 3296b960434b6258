// One collective case as the MPI tests run it, in three stages so that the blocking, grouped and
// nonblocking tests share them:
//
//   makeCaseRun   the inputs, the expected result (computed locally or by plain MPI) and the
//                 guarded buffers, filled as the case's in-place rule wants them;
//   call / start  hands them to strata: the blocking call (on device mirrors with --device) or
//                 the nonblocking one;
//   check         once the call completed: the result, the guards, the send buffer (or, in
//                 place, the part that is no result) unchanged, and for rooted calls what the
//                 ranks other than the root must not see written.
//
// The expected result is computed in the constructor, before strata sees the buffers, so an MPI
// reference (a collective itself) is never skipped by one rank while another waits in it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_types.h"
#include "mpi/device_mirror.h"
#include "strata/strata_mpi.h"

namespace strata_test {

class CaseRun {
 public:
  // The buffers get `sendShift` and `recvShift` bytes of padding in front (GuardedBuffer).
  CaseRun(const Comm& cm, const Case& c, size_t sendBytes, size_t sendShift, size_t recvBytes,
          size_t recvShift)
      : cm_(cm), c_(c), send_(sendBytes, sendShift), recv_(recvBytes, recvShift) {}
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;
  virtual ~CaseRun() = default;

  const Case& theCase() const { return c_; }
  MirroredBuffer& send() { return send_; }
  MirroredBuffer& recv() { return recv_; }

  // The blocking call, on the buffers `io` maps (device mirrors with --device).
  strataResult_t call(DeviceMirror& io) {
    return issue(mapped(io, sendPtr_), mapped(io, recvPtr_), io.stream());
  }
  strataResult_t call() { return issue(sendPtr_, recvPtr_, nullptr); }

  // The nonblocking call on the host buffers.
  strataResult_t start(strataRequest_t* request) {
    const Case& c = c_;
    strataComm_t comm = cm_.comm;
    switch (c.coll) {
      case Coll::kAllReduce:
        return strataIAllReduce(sendPtr_, recvPtr_, c.count, c.type, c.op, comm, request);
      case Coll::kReduceScatter:
        return strataIReduceScatter(sendPtr_, recvPtr_, c.count, c.type, c.op, comm, request);
      case Coll::kAllGather:
        return strataIAllGather(sendPtr_, recvPtr_, c.count, c.type, comm, request);
      case Coll::kBroadcast:
        return strataIBroadcast(sendPtr_, recvPtr_, c.count, c.type, c.root, comm, request);
      case Coll::kReduce:
        return strataIReduce(sendPtr_, recvPtr_, c.count, c.type, c.op, c.root, comm, request);
    }
    return strataInternalError;
  }

  // What strata wrote, once the call completed.
  virtual void check(Verdict& v) = 0;

 protected:
  template <typename P>
  static P* mapped(DeviceMirror& io, P* p) {
    return p != nullptr ? io.map(p) : nullptr;
  }

  strataResult_t issue(const void* s, void* r, strataStream_t stream) {
    const Case& c = c_;
    strataComm_t comm = cm_.comm;
    switch (c.coll) {
      case Coll::kAllReduce:
        return strataAllReduce(s, r, c.count, c.type, c.op, comm, stream);
      case Coll::kReduceScatter:
        return strataReduceScatter(s, r, c.count, c.type, c.op, comm, stream);
      case Coll::kAllGather:
        return strataAllGather(s, r, c.count, c.type, comm, stream);
      case Coll::kBroadcast:
        if (c.others == Others::kBcast)
          return strataBcast(r, c.count, c.type, c.root, comm, stream);
        return strataBroadcast(s, r, c.count, c.type, c.root, comm, stream);
      case Coll::kReduce:
        return strataReduce(s, r, c.count, c.type, c.op, c.root, comm, stream);
    }
    return strataInternalError;
  }

  Comm cm_;
  Case c_;
  MirroredBuffer send_, recv_;
  const void* sendPtr_ = nullptr;  // what the case passes as sendbuff (may be NULL)
  void* recvPtr_ = nullptr;        // ... and as recvbuff
};

template <typename T>
class TypedRun final : public CaseRun {
 public:
  TypedRun(const Comm& cm, const Case& c, Reference ref, uint64_t seed)
      : CaseRun(cm, c, sendElements(cm, c) * sizeof(T), shiftFor<T>(seed, 0),
                recvElements(cm, c) * sizeof(T), shiftFor<T>(seed, 1)),
        seed_(seed) {
    switch (c.coll) {
      case Coll::kAllReduce:
      case Coll::kReduce:
        setUpReduction(ref);
        break;
      case Coll::kReduceScatter:
        setUpReduceScatter(ref);
        break;
      case Coll::kAllGather:
        setUpAllGather(ref);
        break;
      case Coll::kBroadcast:
        setUpBroadcast(ref);
        break;
    }
  }

  void check(Verdict& v) override {
    switch (c_.coll) {
      case Coll::kAllReduce:
      case Coll::kReduce:
        checkReduction(v);
        break;
      case Coll::kReduceScatter:
        checkReduceScatter(v);
        break;
      case Coll::kAllGather:
        checkAllGather(v);
        break;
      case Coll::kBroadcast:
        checkBroadcast(v);
        break;
    }
  }

 private:
  static size_t sendElements(const Comm& cm, const Case& c) {
    return c.coll == Coll::kReduceScatter ? c.count * cm.size : c.count;
  }
  static size_t recvElements(const Comm& cm, const Case& c) {
    return c.coll == Coll::kAllGather ? c.count * cm.size : c.count;
  }
  size_t n() const { return c_.count; }
  size_t bytes(size_t elements) const { return elements * sizeof(T); }
  bool isRoot() const { return cm_.rank == c_.root; }
  T gen(Pattern pat, int rank, size_t i, uint64_t salt = 0) const {
    return genValue<T>(pat, cm_.size, rank, i, seed_ ^ salt);
  }

  // All-reduce, and reduce (whose result only the root gets). In place, sendbuff == recvbuff
  // on every rank.
  void setUpReduction(Reference ref) {
    const Pattern pat = patternFor<T>(c_);
    const bool all = c_.coll == Coll::kAllReduce;
    input_.resize(n());
    want_.resize(n());
    for (size_t i = 0; i < n(); ++i) input_[i] = gen(pat, cm_.rank, i);
    if (ref == Reference::kMpi) {
      const int count = static_cast<int>(n());
      if (all) {
        MPI_Allreduce(input_.data(), want_.data(), count, mpiType<T>(), mpiOp(c_.op), cm_.mpi);
      } else {
        MPI_Reduce(input_.data(), want_.data(), count, mpiType<T>(), mpiOp(c_.op), c_.root,
                   cm_.mpi);
      }
    } else if (all || isRoot()) {
      for (size_t i = 0; i < n(); ++i)
        want_[i] = expectedReduction<T>(c_.op, pat, cm_.size, i, seed_);
    }
    copyBytes(c_.inPlace ? recv_.data() : send_.data(), input_.data(), bytes(n()));
    sendPtr_ = c_.inPlace ? recv_.data() : send_.data();
    recvPtr_ = recv_.data();
    if (!all && !isRoot() && !c_.inPlace && c_.others == Others::kNull) recvPtr_ = nullptr;
  }

  void checkReduction(Verdict& v) {
    recv_.checkGuards(v, "recvbuff");
    if (!c_.inPlace) {
      send_.checkGuards(v, "sendbuff");
      compareElements(v, "sendbuff changed", send_.as<T>(), input_.data(), n(), Compare::kBits);
    }
    if (c_.coll == Coll::kAllReduce || isRoot()) {
      compareElements(v, "result", recv_.as<T>(), want_.data(), n(), compareFor<T>(c_));
    } else if (c_.inPlace) {  // recvbuff is this rank's sendbuff: read, never written
      compareElements(v, "in-place buffer changed on a non-root", recv_.as<T>(), input_.data(), n(),
                      Compare::kBits);
    } else {
      recv_.checkUnwritten(v, "recvbuff on a non-root");
    }
  }

  void setUpReduceScatter(Reference ref) {
    const size_t total = n() * cm_.size, mine = n() * cm_.rank;
    const Pattern pat = patternFor<T>(c_);
    input_.resize(total);
    want_.resize(n());
    for (size_t j = 0; j < total; ++j) input_[j] = gen(pat, cm_.rank, j);
    if (ref == Reference::kMpi) {
      MPI_Reduce_scatter_block(input_.data(), want_.data(), static_cast<int>(n()), mpiType<T>(),
                               mpiOp(c_.op), cm_.mpi);
    } else {
      for (size_t k = 0; k < n(); ++k)
        want_[k] = expectedReduction<T>(c_.op, pat, cm_.size, mine + k, seed_);
    }
    copyBytes(send_.data(), input_.data(), bytes(total));
    sendPtr_ = send_.data();
    recvPtr_ = c_.inPlace ? send_.as<T>() + mine : recv_.as<T>();
  }

  void checkReduceScatter(Verdict& v) {
    const size_t total = n() * cm_.size, mine = n() * cm_.rank;
    send_.checkGuards(v, "sendbuff");
    if (c_.inPlace) {
      compareElements(v, "sendbuff before this rank's block changed", send_.as<T>(), input_.data(),
                      mine, Compare::kBits);
      compareElements(v, "sendbuff after this rank's block changed", send_.as<T>() + mine + n(),
                      input_.data() + mine + n(), total - mine - n(), Compare::kBits, mine + n());
    } else {
      recv_.checkGuards(v, "recvbuff");
      compareElements(v, "sendbuff changed", send_.as<T>(), input_.data(), total, Compare::kBits);
    }
    compareElements(v, "result block", static_cast<T*>(recvPtr_), want_.data(), n(),
                    compareFor<T>(c_));
  }

  void setUpAllGather(Reference ref) {
    const size_t total = n() * cm_.size, mine = n() * cm_.rank;
    input_.resize(n());
    want_.resize(total);
    for (size_t k = 0; k < n(); ++k) input_[k] = gen(Pattern::kAny, cm_.rank, k);
    if (ref == Reference::kMpi) {
      MPI_Allgather(input_.data(), static_cast<int>(n()), mpiType<T>(), want_.data(),
                    static_cast<int>(n()), mpiType<T>(), cm_.mpi);
    } else {
      for (int q = 0; q < cm_.size; ++q) {
        for (size_t k = 0; k < n(); ++k) want_[q * n() + k] = gen(Pattern::kAny, q, k);
      }
    }
    T* slot = c_.inPlace ? recv_.as<T>() + mine : send_.as<T>();
    copyBytes(slot, input_.data(), bytes(n()));
    sendPtr_ = slot;
    recvPtr_ = recv_.data();
  }

  void checkAllGather(Verdict& v) {
    recv_.checkGuards(v, "recvbuff");
    if (!c_.inPlace) {
      send_.checkGuards(v, "sendbuff");
      compareElements(v, "sendbuff changed", send_.as<T>(), input_.data(), n(), Compare::kBits);
    }
    compareElements(v, "result", recv_.as<T>(), want_.data(), n() * cm_.size, Compare::kBits);
  }

  // The root's input is known everywhere; the other ranks' sendbuff (out of place, Others::
  // kBuffer) holds a decoy that must reach no one and stay as it was.
  void setUpBroadcast(Reference ref) {
    const bool inPlace = c_.inPlace || c_.others == Others::kBcast;
    want_.resize(n());
    for (size_t i = 0; i < n(); ++i) want_[i] = gen(Pattern::kAny, c_.root, i);
    if (isRoot()) {
      input_ = want_;
    } else {
      input_.resize(n());
      for (size_t i = 0; i < n(); ++i) input_[i] = gen(Pattern::kAny, cm_.rank, i, 0x5a5a);
    }
    if (ref == Reference::kMpi) {  // the root's input, as MPI_Bcast delivers it
      std::vector<T> got = input_;
      MPI_Bcast(got.data(), static_cast<int>(bytes(n())), MPI_BYTE, c_.root, cm_.mpi);
      want_ = got;
    }
    recvPtr_ = recv_.data();
    if (inPlace) {
      if (isRoot()) copyBytes(recv_.data(), input_.data(), bytes(n()));
      sendPtr_ = recv_.data();
    } else if (isRoot() || c_.others == Others::kBuffer) {
      copyBytes(send_.data(), input_.data(), bytes(n()));
      sendPtr_ = send_.data();
    } else {
      sendPtr_ = nullptr;
    }
  }

  void checkBroadcast(Verdict& v) {
    recv_.checkGuards(v, "recvbuff");
    if (sendPtr_ == send_.data()) {
      send_.checkGuards(v, "sendbuff");
      compareElements(v, isRoot() ? "sendbuff changed" : "sendbuff changed on a non-root",
                      send_.as<T>(), input_.data(), n(), Compare::kBits);
    }
    compareElements(v, "result", recv_.as<T>(), want_.data(), n(), Compare::kBits);
  }

  uint64_t seed_;
  std::vector<T> input_, want_;
};

// The case's inputs, expected result and buffers, for the communicator `cm` (c.root already
// resolved: 0 <= root < cm.size).
inline std::unique_ptr<CaseRun> makeCaseRun(const Comm& cm, const Case& c, Reference ref,
                                            uint64_t seed) {
  std::unique_ptr<CaseRun> run;
  withType(c.type, [&](auto tag) { run.reset(new TypedRun<decltype(tag)>(cm, c, ref, seed)); });
  return run;
}

// Runs one case as a blocking call (on device mirrors with a Device) and checks it.
inline void runBlocking(const Comm& cm, const Case& c, Reference ref, uint64_t seed, Device* dev,
                        Verdict& v) {
  std::unique_ptr<CaseRun> run = makeCaseRun(cm, c, ref, seed);
  if (!run) {
    v.fail("test bug: no element type for the case");
    return;
  }
  DeviceMirror io(dev, v, {&run->send(), &run->recv()});
  if (!io.ok()) return;
  const strataResult_t rc = run->call(io);
  if (!checkResult(v, rc, cm.comm) || !io.download()) return;
  run->check(v);
}

// Calls that feed each other: a broadcast from the last rank of `a` into `b`, an all-reduce of
// `b` into `c`, a reduce of `c` into `d` on rank 0 (int32 sums, exact). A communicator runs its
// calls in the order they were issued (queued, grouped or blocking), so each must read what the
// one before it wrote; a call that ran early reads the sentinel.
struct Chain {
  static constexpr int32_t kSentinel = -7;

  Chain(const Comm& comm, size_t n)
      : cm(comm), a(n), b(n, kSentinel), c(n, kSentinel), d(n, kSentinel) {
    for (size_t i = 0; i < n; ++i) a[i] = (cm.rank + 1) * 1000 + static_cast<int32_t>(i % 4096);
  }

  int root() const { return cm.size - 1; }

  void check(Verdict& v) const {
    const size_t n = a.size();
    std::vector<int32_t> wantB(n), wantC(n), wantD(n);
    for (size_t i = 0; i < n; ++i) {
      wantB[i] = cm.size * 1000 + static_cast<int32_t>(i % 4096);
      wantC[i] = cm.size * wantB[i];
      wantD[i] = cm.size * wantC[i];
    }
    compareElements(v, "the broadcast (first in the chain)", b.data(), wantB.data(), n,
                    Compare::kValue);
    compareElements(v, "the all-reduce of its result", c.data(), wantC.data(), n, Compare::kValue);
    if (cm.rank == 0) {
      compareElements(v, "the reduce of that", d.data(), wantD.data(), n, Compare::kValue);
    }
  }

  Comm cm;
  std::vector<int32_t> a, b, c, d;
};

}  // namespace strata_test
