// hwloc XML exports through strata's check and then hwloc 2.9's own importer, as
// strata-topo --input reads them.
#include "fuzz_common.h"
#include "topology/hwloc_reader.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  (void)topo::parseHwlocXml(fuzz::textOf(data, size), "<fuzz>");
  return 0;
}
