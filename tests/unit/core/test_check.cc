// STRATA_CHECK's descriptors (core/check.h): what they compare, how they read, and the message
// that names the first rank whose call differs from rank 0's.
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "core/check.h"

namespace strata::core {
namespace {

Call call(Collective coll, size_t count, strataDataType_t type, strataRedOp_t op, int root) {
  Call c;
  c.coll = coll;
  c.count = count;
  c.type = type;
  c.op = op;
  c.root = root;
  return c;
}

}  // namespace

TEST_CASE("check: descriptors read like the calls they describe", "[check]") {
  CHECK(CallDescriptor::of(call(Collective::kAllReduce, 100, strataFloat32, strataSum, 0), 12)
            .describe() == "allreduce #12 count 100 float32 sum");
  CHECK(CallDescriptor::of(call(Collective::kBroadcast, 8, strataInt32, strataMax, 1), 3)
            .describe() == "broadcast #3 count 8 int32 root 1");
  CHECK(
      CallDescriptor::of(call(Collective::kReduce, 5, strataFloat64, strataMin, 2), 1).describe() ==
      "reduce #1 count 5 float64 min root 2");
  CHECK(CallDescriptor::of(call(Collective::kAllGather, 7, strataUint8, strataProd, 3), 4)
            .describe() == "allgather #4 count 7 uint8");
}

TEST_CASE("check: fields a collective does not use never make calls differ", "[check]") {
  // An all-gather has no op and no root; an allreduce no root; a broadcast no op.
  const auto a = CallDescriptor::of(call(Collective::kAllGather, 7, strataInt8, strataSum, 0), 1);
  const auto b = CallDescriptor::of(call(Collective::kAllGather, 7, strataInt8, strataMax, 3), 1);
  CHECK(a == b);
  CHECK(a.fingerprint() == b.fingerprint());
  const auto c = CallDescriptor::of(call(Collective::kAllReduce, 7, strataInt8, strataSum, 0), 1);
  const auto d = CallDescriptor::of(call(Collective::kAllReduce, 7, strataInt8, strataSum, 2), 1);
  CHECK(c == d);
  const auto e = CallDescriptor::of(call(Collective::kBroadcast, 7, strataInt8, strataSum, 2), 1);
  const auto f = CallDescriptor::of(call(Collective::kBroadcast, 7, strataInt8, strataMin, 2), 1);
  CHECK(e == f);
}

TEST_CASE("check: every field that matters changes the fingerprint", "[check]") {
  const Call base = call(Collective::kReduce, 100, strataFloat32, strataSum, 1);
  std::vector<CallDescriptor> variants = {
      CallDescriptor::of(base, 5),
      CallDescriptor::of(base, 6),  // sequence number
      CallDescriptor::of(call(Collective::kAllReduce, 100, strataFloat32, strataSum, 1), 5),
      CallDescriptor::of(call(Collective::kReduce, 200, strataFloat32, strataSum, 1), 5),
      CallDescriptor::of(call(Collective::kReduce, 100, strataFloat64, strataSum, 1), 5),
      CallDescriptor::of(call(Collective::kReduce, 100, strataFloat32, strataMax, 1), 5),
      CallDescriptor::of(call(Collective::kReduce, 100, strataFloat32, strataSum, 0), 5),
  };
  std::set<int64_t> prints;
  for (const CallDescriptor& v : variants) {
    // 62 bits: the negation the comparison allreduce sends is a valid int64.
    CHECK(v.fingerprint() >= 0);
    CHECK(v.fingerprint() < (int64_t{1} << 62));
    prints.insert(v.fingerprint());
  }
  CHECK(prints.size() == variants.size());
  for (size_t i = 1; i < variants.size(); ++i) CHECK(variants[i] != variants[0]);
}

TEST_CASE("check: the mismatch message names rank 0's call and the first that differs", "[check]") {
  const auto same =
      CallDescriptor::of(call(Collective::kAllReduce, 100, strataFloat32, strataSum, 0), 12);
  const auto other =
      CallDescriptor::of(call(Collective::kAllReduce, 200, strataFloat32, strataSum, 0), 12);
  CHECK(mismatchMessage({same, same, same}).empty());
  CHECK(mismatchMessage({same}).empty());
  const std::string m = mismatchMessage({same, same, other, other});
  CHECK(m.find("rank 0: allreduce #12 count 100 float32 sum") != std::string::npos);
  CHECK(m.find("rank 2: allreduce #12 count 200 float32 sum") != std::string::npos);
  CHECK(m.find("rank 3") == std::string::npos);
  // Rank 0 the odd one out: rank 1 is the first that differs from it.
  const std::string n = mismatchMessage({other, same, same});
  CHECK(n.find("rank 0: allreduce #12 count 200") != std::string::npos);
  CHECK(n.find("rank 1: allreduce #12 count 100") != std::string::npos);
}

TEST_CASE("check: the call sequence numbers collectives from 1", "[check]") {
  CallSequence s;
  CHECK(s.last() == 0);
  CHECK(s.next() == 1);
  CHECK(s.next() == 2);
  CHECK(s.last() == 2);
}

}  // namespace strata::core
