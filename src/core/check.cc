#include "core/check.h"

#include <dlfcn.h>

#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "common/datatype.h"
#include "common/deadline.h"
#include "fabrics/fabric.h"

namespace strata::core {
namespace {

const int64_t* fields(const CallDescriptor& d) { return &d.seq; }

}  // namespace

// The offset of `address` in the module (executable or shared library) that holds it; -1 when
// the loader knows no such module.
int64_t moduleOffset(const void* address) {
  if (address == nullptr) return -1;
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fbase == nullptr) return -1;
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(address) -
                              reinterpret_cast<uintptr_t>(info.dli_fbase));
}

CallDescriptor CallDescriptor::of(const Call& call, uint64_t seq, bool withSite) {
  CallDescriptor d;
  d.seq = static_cast<int64_t>(seq);
  d.coll = static_cast<int64_t>(call.coll);
  d.count = static_cast<int64_t>(call.count);
  d.type = static_cast<int64_t>(call.type);
  d.op = reduces(call.coll) ? static_cast<int64_t>(call.op) : -1;
  d.root = hasRoot(call.coll) ? call.root : -1;
  d.site = withSite ? moduleOffset(call.site) : -1;
  return d;
}

int64_t CallDescriptor::fingerprint() const {
  // The fields are laid out as an array (static_asserts below), hashed byte by byte.
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(fields(*this));
  for (size_t i = 0; i < sizeof(int64_t) * kNumFields; ++i) {
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  }
  return static_cast<int64_t>(hash >> 2);
}

static_assert(sizeof(CallDescriptor) == sizeof(int64_t) * CallDescriptor::kNumFields,
              "a descriptor travels as kNumFields int64s");
static_assert(offsetof(CallDescriptor, site) == sizeof(int64_t) * 6, "fields in order");

std::string CallDescriptor::describe() const {
  const auto c = static_cast<Collective>(coll);
  std::string s = std::string(collectiveName(c)) + " #" + std::to_string(seq) + " count " +
                  std::to_string(count) + " " + dataTypeName(static_cast<strataDataType_t>(type));
  if (op >= 0) s += std::string(" ") + redOpName(static_cast<strataRedOp_t>(op));
  if (root >= 0) s += " root " + std::to_string(root);
  if (site >= 0) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%" PRIx64, static_cast<uint64_t>(site));
    s += std::string(" called from ") + hex;
  }
  return s;
}

bool CallDescriptor::operator==(const CallDescriptor& o) const {
  return std::memcmp(fields(*this), fields(o), sizeof(int64_t) * kNumFields) == 0;
}

std::string mismatchMessage(const std::vector<CallDescriptor>& all) {
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    return "STRATA_CHECK: ranks called different collectives: rank 0: " + all[0].describe() +
           "; rank " + std::to_string(r) + ": " + all[r].describe() +
           "; every rank must issue the same collectives in the same order";
  }
  return "";
}

Status compareCalls(fabric::Fabric& flat, const CallDescriptor& mine) {
  const int64_t h = mine.fingerprint();
  const int64_t in[2] = {h, -h};
  int64_t out[2] = {0, 0};
  STRATA_RETURN_IF_ERROR(flat.allReduce(in, out, 2, strataInt64, strataMax));
  if (out[0] == -out[1]) return Status::ok();  // max(h) == min(h): the same call everywhere
  // Only now the full descriptors, so that every rank can name the same two calls.
  const size_t n = static_cast<size_t>(flat.size());
  std::vector<size_t> counts(n, CallDescriptor::kNumFields), displs(n);
  for (size_t r = 0; r < n; ++r) displs[r] = r * CallDescriptor::kNumFields;
  std::vector<CallDescriptor> all(n);
  STRATA_RETURN_IF_ERROR(
      flat.allGather(fields(mine), &all[0].seq, counts.data(), displs.data(), strataInt64));
  std::string message = mismatchMessage(all);
  if (message.empty()) {
    // Equal descriptors have equal fingerprints: only a broken exchange gets here.
    return internalError("STRATA_CHECK: the fingerprints of " + mine.describe() +
                         " differ between ranks but the calls are equal");
  }
  // The C boundary logs it (api/guard.h); logged here too it would show twice.
  return invalidUsage(std::move(message));
}

}  // namespace strata::core
