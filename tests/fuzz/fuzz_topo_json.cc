// The JSON node descriptions ranks exchange at init (and strata-topo --format json prints).
#include "fuzz_common.h"
#include "topology/topo_json.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  StatusOr<topo::NodeTopology> t = topo::nodeTopologyFromJson(fuzz::textOf(data, size));
  if (!t.isOk()) return 0;
  // What was read must write and read back.
  StatusOr<topo::NodeTopology> again = topo::nodeTopologyFromJson(topo::toJson(t.value()).dump());
  fuzz::require(again.isOk(), "toJson's text reads back", again.status().message());
  return 0;
}
