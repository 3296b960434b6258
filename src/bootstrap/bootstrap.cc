#include "bootstrap/bootstrap.h"

#include <climits>

namespace strata::boot {

Status agree(Bootstrap& b, const Status& local) {
  const int mine = local.isOk() ? INT_MAX : b.rank();
  std::vector<int> all(b.size());
  STRATA_RETURN_IF_ERROR(b.allGather(&mine, all.data(), sizeof(int)));
  int first = INT_MAX;
  for (int v : all) first = v < first ? v : first;
  if (first == INT_MAX) return Status::ok();
  // The lowest failing member tells the others what went wrong.
  int header[2] = {static_cast<int>(local.code()), static_cast<int>(local.message().size())};
  STRATA_RETURN_IF_ERROR(b.broadcast(header, sizeof(header), first));
  std::string msg = local.message();
  msg.resize(static_cast<size_t>(header[1]));
  STRATA_RETURN_IF_ERROR(b.broadcast(msg.data(), msg.size(), first));
  if (!local.isOk()) return local;
  return Status(static_cast<Code>(header[0]), "rank " + std::to_string(first) + ": " + msg);
}

StatusOr<std::vector<std::string>> allGatherStrings(Bootstrap& b, const std::string& mine) {
  const uint64_t len = mine.size();
  std::vector<uint64_t> lens(b.size());
  STRATA_RETURN_IF_ERROR(b.allGather(&len, lens.data(), sizeof(len)));
  // One broadcast per non-empty string: every member receives exactly the bytes there are
  // (host descriptions come from one rank per host; the others send nothing).
  std::vector<std::string> out(b.size());
  for (int r = 0; r < b.size(); ++r) {
    if (lens[r] == 0) continue;
    out[r] = r == b.rank() ? mine : std::string(lens[r], '\0');
    STRATA_RETURN_IF_ERROR(b.broadcast(out[r].data(), out[r].size(), r));
  }
  return out;
}

StatusOr<bool> sameEverywhere(Bootstrap& b, uint64_t value) {
  std::vector<uint64_t> all(b.size());
  STRATA_RETURN_IF_ERROR(b.allGather(&value, all.data(), sizeof(value)));
  for (uint64_t v : all) {
    if (v != value) return false;
  }
  return true;
}

}  // namespace strata::boot
