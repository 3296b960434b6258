// Loads a topology file the way strataCommInitMPI does (parse, then build the regular hierarchy
// for NRANKS ranks) and prints its levels as JSON, in strata-topo's own keys ("hierarchy",
// "levels"), so a test can check that what `strata-topo --save` wrote reads back the same.
//
//   strata_test_topo_file_levels FILE NRANKS
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "fabrics/registry.h"
#include "topology/topo_file.h"
#include "topology/topo_json.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE NRANKS\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const int nranks = std::atoi(argv[2]);
  strata::StatusOr<strata::topo::TopoFile> file =
      strata::topo::loadTopoFile(path, strata::fabric::fabricNames());
  if (!file.isOk()) {
    std::fprintf(stderr, "%s\n", file.status().message().c_str());
    return 1;
  }
  strata::StatusOr<strata::topo::Hierarchy> h =
      strata::topo::hierarchyFromTopoFile(file.value(), path, nranks);
  if (!h.isOk()) {
    std::fprintf(stderr, "%s\n", h.status().message().c_str());
    return 1;
  }
  const nlohmann::json out{{"hierarchy", h.value().describe()},
                           {"levels", strata::topo::levelsToJson(h.value())}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
