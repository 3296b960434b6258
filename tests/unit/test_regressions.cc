// Every input in tests/data/regressions/ once made a reader crash, hang or accept nonsense (see
// the README there). Each goes through the reader strata uses for its kind of file, under a
// watchdog, and must give the error listed here. A file in the directory without an entry fails
// the test: what the fuzzers find cannot be dropped in without saying what it must do.
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/watchdog.h"
#include "core/plan_load.h"
#include "decompose/plan_file.h"
#include "topology/hwloc_reader.h"
#include "topology/nccl_xml.h"
#include "topology/nvsmi.h"
#include "topology/topo_file.h"

namespace strata {
namespace {

using Catch::Matchers::Contains;

const std::string kDir = std::string(STRATA_TEST_DATA_DIR) + "/regressions/";

enum class Reader { kTopoFile, kPlanFile, kHwloc, kNccl, kNvsmi };

struct Case {
  const char* file;
  Reader reader;
  const char* error;  // a part of the message; "" when the file must be read without error
};

// The reader of each file and what it must say.
const Case kCases[] = {
    {"topo_comma_hang.yaml", Reader::kTopoFile, ":1: yaml syntax error: unexpected ','"},
    {"topo_tagged_size.yaml", Reader::kTopoFile, ":3: level 'node' size must be an integer"},
    {"topo_two_documents.yaml", Reader::kTopoFile, ":3: holds more than one yaml document"},
    {"plan_comma_hang.yaml", Reader::kPlanFile, ":3: yaml syntax error"},
    {"plan_chunk_bytes_1.yaml", Reader::kPlanFile,
     ":2: stage allreduce@network chunk_bytes 1 is outside 4096..1073741824"},
    {"hwloc_entity_segv.xml", Reader::kHwloc, "a DOCTYPE with an internal subset"},
    {"hwloc_pu_no_complete_cpuset_segv.xml", Reader::kHwloc,
     ":8: not a valid hwloc xml export: <object type=\"PU\"> has a cpuset but no complete_cpuset"},
    {"hwloc_fuzz_pu_without_os_index_timeout.xml", Reader::kHwloc,
     ":22: not a valid hwloc xml export: <object type=\"PU\"> needs an os_index"},
    {"hwloc_fuzz_bridge_type_out_of_enum_ubsan.xml", Reader::kHwloc,
     ":67: not a valid hwloc xml export: <object type=\"Bridge\"> bridge_type=\"2-1\": expected "
     "0-1"},
    {"hwloc_fuzz_v1_numa_without_complete_cpuset_segv.xml", Reader::kHwloc,
     ":6: not a valid hwloc xml export: <object type=\"NUMANode\"> has a cpuset but no "
     "complete_cpuset"},
    {"nccl_empty_system.xml", Reader::kNccl, ":1: <system> has no <cpu> element"},
    {"nccl_nul_byte.xml", Reader::kNccl, "a binary file, not text (a nul byte at offset 86)"},
    {"nvsmi_unknown_code.txt", Reader::kNvsmi,
     ":2: row GPU0: cell 'QQQ' under GPU1 is not a connection type"},
    {"nvsmi_asymmetric.txt", Reader::kNvsmi,
     ":3: row GPU1: cell 'SYS' under GPU0 differs from 'NV2' in row GPU0"},
    {"nvsmi_cpu_range_35-0.txt", Reader::kNvsmi, ":2: row GPU0: CPU Affinity '35-0' is not a list"},
};

// The first error the reader of `c` gives, or ok.
Status readWith(const Case& c) {
  const std::string path = kDir + c.file;
  switch (c.reader) {
    case Reader::kTopoFile:
      return topo::loadTopoFile(path, {"mpi", "shm"}).status();
    case Reader::kPlanFile: {
      StatusOr<plan::PlanFile> file = plan::loadPlanFile(path);
      if (!file.isOk()) return file.status();
      const std::vector<topo::Level> levels = {{"node", "shm", {}, 1}, {"network", "mpi", {}, 1}};
      StatusOr<topo::Hierarchy> h = topo::Hierarchy::regular(levels, {2, 2});
      if (!h.isOk()) return h.status();
      return plan::resolvePlanFile(file.value(), h.value(), {"mpi", "shm"}, path).status();
    }
    case Reader::kHwloc:
      return topo::readHwlocXml(path).status();
    case Reader::kNccl:
      return topo::readNcclTopoXml(path).status();
    case Reader::kNvsmi: {
      Status topo = topo::readNvidiaSmiTopo(path).status();
      return topo.isOk() ? topo::readNvidiaSmiMatrix(path).status() : topo;
    }
  }
  return internalError("unknown reader");
}

TEST_CASE("regressions: every bad input gives its error, at once", "[regressions]") {
  for (const Case& c : kCases) {
    INFO(c.file);
    test::Watchdog watchdog;
    // Every one of these once hung or crashed; a hang now fails here, not at ctest's timeout.
    watchdog.start(20, "tests/data/regressions/", c.file);
    const Status status = readWith(c);
    watchdog.stop();
    if (*c.error == '\0') {
      CHECK(status.isOk());
      continue;
    }
    REQUIRE_FALSE(status.isOk());
    CHECK(status.code() == Code::kInvalidArgument);
    CHECK_THAT(status.message(), Contains(kDir + c.file));
    CHECK_THAT(status.message(), Contains(c.error));
  }
}

TEST_CASE("regressions: every file in the directory has a case", "[regressions]") {
  std::set<std::string> listed;
  for (const Case& c : kCases) listed.insert(c.file);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    ++files;
    INFO(name);
    CHECK(listed.count(name) == 1);
  }
  CHECK(files == listed.size());
}

}  // namespace
}  // namespace strata
