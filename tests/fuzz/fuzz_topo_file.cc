// Topology files (STRATA_TOPO_FILE): parseTopoFile, and for what parses, the hierarchy and the
// formatted text, which must read back to the same levels.
#include "fuzz_common.h"
#include "topology/topo_file.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::vector<std::string> fabrics = {"mpi", "shm", "nccl"};
  StatusOr<topo::TopoFile> file = topo::parseTopoFile(fuzz::textOf(data, size), "<fuzz>", fabrics);
  if (!file.isOk()) return 0;
  int64_t ranks = 1;
  for (int s : file.value().sizes) ranks = ranks * s > 4096 ? 4097 : ranks * s;
  // Hierarchies up to 4096 ranks are cheap to build; larger ones only check the size product.
  StatusOr<topo::Hierarchy> h =
      topo::hierarchyFromTopoFile(file.value(), "<fuzz>", ranks > 4096 ? 7 : int(ranks));
  if (ranks <= 4096)
    fuzz::require(h.isOk(), "a parsed file fits its own rank count", h.status().message());
  const std::string text = topo::formatTopoFile(file.value());
  StatusOr<topo::TopoFile> again = topo::parseTopoFile(text, "<formatted>", fabrics);
  fuzz::require(again.isOk(), "formatTopoFile's text parses",
                again.status().message() + "\n" + text);
  fuzz::require(again.value().sizes == file.value().sizes, "sizes survive formatting", text);
  fuzz::require(again.value().levels.size() == file.value().levels.size(), "levels survive", text);
  for (size_t l = 0; l < again.value().levels.size(); ++l) {
    fuzz::require(again.value().levels[l].name == file.value().levels[l].name, "names survive",
                  text);
  }
  return 0;
}
