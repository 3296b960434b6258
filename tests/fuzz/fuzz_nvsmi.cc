// `nvidia-smi topo -m` text as strata-topo --input reads it: the topology and the matrix.
#include "fuzz_common.h"
#include "topology/nvsmi.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::string text = fuzz::textOf(data, size);
  StatusOr<topo::NodeTopology> t = topo::parseNvidiaSmiTopo(text, "<fuzz>");
  StatusOr<topo::ConnectionMatrix> m = topo::parseNvidiaSmiMatrix(text, "<fuzz>");
  fuzz::require(t.isOk() == m.isOk(), "topology and matrix agree on the input");
  if (!m.isOk()) return 0;
  const topo::ConnectionMatrix& mat = m.value();
  for (size_t a = 0; a < mat.names.size(); ++a) {
    fuzz::require(mat.cells[a].size() == mat.names.size(), "square matrix");
    for (size_t b = 0; b < mat.names.size(); ++b) {
      fuzz::require(mat.cells[a][b] == mat.cells[b][a], "symmetric matrix");
    }
  }
  return 0;
}
