// NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format) as strata-topo --input reads it.
#include "fuzz_common.h"
#include "topology/nccl_xml.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::string text = fuzz::textOf(data, size);
  (void)topo::isNcclTopoXmlText(text);
  StatusOr<topo::NodeTopology> t = topo::parseNcclTopoXml(text, "<fuzz>");
  if (!t.isOk()) return 0;
  const topo::NodeTopology& n = t.value();
  for (const topo::GpuLink& link : n.links) {
    fuzz::require(link.a >= 0 && link.b >= 0 && size_t(link.a) < n.gpus.size() &&
                      size_t(link.b) < n.gpus.size(),
                  "links join listed gpus");
  }
  return 0;
}
