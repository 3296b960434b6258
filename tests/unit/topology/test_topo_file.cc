// Topology files: what parses, what is refused and with which message, and the round trip.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "topology/topo_file.h"

namespace strata::topo {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::vector<std::string> kFabrics = {"mpi", "nccl"};

// Lines joined with '\n', so that a test can count the line an error should name.
std::string lines(const std::vector<std::string>& text) {
  std::string out;
  for (const std::string& line : text) out += line + "\n";
  return out;
}

TopoFile parseOk(const std::string& text) {
  StatusOr<TopoFile> file = parseTopoFile(text, "x.yaml", kFabrics);
  INFO(file.status().message());
  REQUIRE(file.isOk());
  return file.value();
}

// Parses `text` as "x.yaml" and checks the error starts with `where` ("topology file x.yaml:3: ")
// and contains `problem`.
void checkError(const std::string& text, const std::string& where, const std::string& problem) {
  StatusOr<TopoFile> file = parseTopoFile(text, "x.yaml", kFabrics);
  INFO(text);
  REQUIRE_FALSE(file.isOk());
  CHECK(file.status().code() == Code::kInvalidArgument);
  CHECK_THAT(file.status().message(), StartsWith(where));
  CHECK_THAT(file.status().message(), Contains(problem));
}

// A level line in the flow style, for the error tests.
std::string level(const std::string& body) { return "  - {" + body + "}"; }

bool sameFile(const TopoFile& a, const TopoFile& b) {
  if (a.sizes != b.sizes || a.levels.size() != b.levels.size()) return false;
  for (size_t l = 0; l < a.levels.size(); ++l) {
    const Level &x = a.levels[l], &y = b.levels[l];
    if (x.name != y.name || x.fabric != y.fabric || x.link.kind != y.link.kind ||
        x.link.bandwidthGBps != y.link.bandwidthGBps || x.link.latencyUs != y.link.latencyUs ||
        x.linkSharing != y.linkSharing) {
      return false;
    }
  }
  return true;
}

// A file under the temp directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("strata_topo_test_" + std::to_string(getpid()) + ".yaml"))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("topo file: block and flow style with comments parse alike", "[topo_file]") {
  TopoFile flow = parseOk(lines({
      "# two sockets per node, two nodes",
      "levels:   # innermost first",
      "  - {name: socket, size: 2, fabric: mpi}",
      "  - {name: node, size: 2, fabric: nccl}  # across nodes",
  }));
  TopoFile block = parseOk(lines({
      "levels:",
      "  - name: socket",
      "    size: 2",
      "    fabric: mpi",
      "  # a comment between levels",
      "  - fabric: nccl",
      "    name: node",
      "    size: 2",
  }));
  TopoFile inline_seq =
      parseOk("{levels: [{name: socket, size: 2}, {name: node, size: 2, fabric: nccl}]}");
  REQUIRE(flow.levels.size() == 2);
  CHECK(flow.levels[0].name == "socket");
  CHECK(flow.levels[0].fabric == "mpi");
  CHECK(flow.levels[1].name == "node");
  CHECK(flow.levels[1].fabric == "nccl");
  CHECK(flow.sizes == std::vector<int>{2, 2});
  CHECK(sameFile(flow, block));
  CHECK(sameFile(flow, inline_seq));
}

TEST_CASE("topo file: fabric defaults to mpi", "[topo_file]") {
  TopoFile file = parseOk("levels:\n  - {name: node, size: 4}\n");
  REQUIRE(file.levels.size() == 1);
  CHECK(file.levels[0].fabric == "mpi");
  CHECK(file.sizes == std::vector<int>{4});
}

TEST_CASE("topo file: link keys describe each level's link", "[topo_file]") {
  TopoFile file = parseOk(lines({
      "levels:",
      "  - {name: node, size: 2, link: nvlink, bandwidth_GBps: 300, latency_us: 0.5}",
      "  - {name: net, size: 2, link: ib, bandwidth_GBps: 25.5, latency_us: 2, link_sharing: 4}",
  }));
  CHECK(file.sizes == std::vector<int>{2, 2});
  CHECK(file.levels[0].link.kind == LinkKind::kNvlink);
  CHECK(file.levels[0].link.bandwidthGBps == 300);
  CHECK(file.levels[0].link.latencyUs == 0.5);
  CHECK(file.levels[0].linkSharing == 1);
  CHECK(file.levels[1].link.kind == LinkKind::kInfiniband);
  CHECK(file.levels[1].link.bandwidthGBps == 25.5);
  CHECK(file.levels[1].linkSharing == 4);
  CHECK(file.levels[1].link.source == "file");
  checkError(lines({"levels:", level("name: node, size: 2, link: warp")}),
             "topology file x.yaml:2: ", "link must be a link kind");
  checkError(lines({"levels:", level("name: node, size: 2, link_sharing: 1.5")}),
             "topology file x.yaml:2: ", "link_sharing must be a positive integer, found '1.5'");
  // The links round-trip through formatTopoFile.
  CHECK(sameFile(file, parseOk(formatTopoFile(file))));
}

TEST_CASE("topo file: names of any yaml flavour stay strings", "[topo_file]") {
  TopoFile file = parseOk("levels:\n  - {name: 123, size: 1}\n  - {name: yes, size: 2}\n");
  CHECK(file.levels[0].name == "123");
  CHECK(file.levels[1].name == "yes");
}

TEST_CASE("topo file: yaml-level errors", "[topo_file]") {
  SECTION("syntax error names the line yaml-cpp found it on") {
    checkError(lines({"levels:", "  - {name: node, size: 2", "  - {name: net, size: 2}"}),
               "topology file x.yaml:", "yaml syntax error: end of map flow not found");
    checkError(lines({"levels:", "  - name: node", "    size: 2: 3"}),
               "topology file x.yaml:3: ", "yaml syntax error: illegal map value");
  }
  SECTION("empty file, or only comments") {
    checkError("", "topology file x.yaml: ", "file is empty");
    checkError("# nothing here\n", "topology file x.yaml: ", "file is empty");
  }
  SECTION("more than one document") {
    checkError(lines({"levels:", "  - {name: node, size: 2}", "---", "levels: []"}),
               "topology file x.yaml:3: ", "holds more than one yaml document");
  }
  SECTION("a line that starts with ','") {
    // yaml-cpp 0.7's YAML::LoadAll loops for ever here, storing an empty document per turn.
    checkError(",", "topology file x.yaml:1: ", "yaml syntax error: unexpected ','");
    checkError(lines({"levels:", "  - {name: node, size: 2}", ", more"}),
               "topology file x.yaml:3: ", "yaml syntax error");
    checkError(lines({"- {name: node, size: 2}", ", more"}),
               "topology file x.yaml:2: ", "yaml syntax error: unexpected ','");
    checkError(lines({"# a comment", ", wrapped"}),
               "topology file x.yaml:2: ", "yaml syntax error: unexpected ','");
    checkError(lines({"levels:", "  - {name: node, size: 2}", "...", ","}),
               "topology file x.yaml:4: ", "yaml syntax error: unexpected ','");
  }
  SECTION("root not a map") {
    checkError(lines({"# a list", "- {name: node, size: 2}"}), "topology file x.yaml:2: ",
               "expected a map with a 'levels' list at the top, found a sequence");
    checkError("just words\n", "topology file x.yaml:1: ", "found a scalar");
  }
}

TEST_CASE("topo file: top-level errors", "[topo_file]") {
  SECTION("missing levels") { checkError("{}\n", "topology file x.yaml: ", "missing 'levels'"); }
  SECTION("unknown top-level key") {
    checkError(
        lines({"levels:", "  - {name: node, size: 2}", "level: 3"}),
        "topology file x.yaml:3: ", "the top level has unknown key 'level'; known keys: levels");
  }
  SECTION("levels given twice") {
    checkError(lines({"levels:", "  - {name: node, size: 2}", "levels:", "  - {name: n, size: 2}"}),
               "topology file x.yaml:3: ", "the top level has key 'levels' twice");
  }
  SECTION("levels not a sequence") {
    checkError(lines({"# header", "levels: 4"}),
               "topology file x.yaml:2: ", "'levels' must be a list of levels, found a scalar");
    checkError(lines({"levels:", "  name: node", "  size: 2"}),
               "topology file x.yaml:1: ", "'levels' must be a list of levels, found a map");
    checkError(lines({"levels:"}),
               "topology file x.yaml:1: ", "'levels' must be a list of levels, found nothing");
  }
  SECTION("levels empty") {
    checkError(lines({"", "levels: []"}),
               "topology file x.yaml:2: ", "'levels' is empty; give at least one level");
  }
}

TEST_CASE("topo file: gpu and cpu say what the ranks run on", "[topo_file]") {
  const TopoFile f =
      parseOk(lines({"gpu: hopper", "cpu: amd", "levels:", "  - {name: node, size: 2}"}));
  CHECK(f.gpu == "hopper");
  CHECK(f.cpu == "amd");
  CHECK(parseOk(formatTopoFile(f)).gpu == "hopper");  // written back and read again
  CHECK(parseOk(lines({"levels:", "  - {name: node, size: 2}"})).gpu.empty());
  checkError(lines({"gpu: a100x", "levels:", "  - {name: node, size: 2}"}),
             "topology file x.yaml:1: ",
             "'gpu' must be one of volta, ampere, hopper, blackwell, found 'a100x'");
  checkError(lines({"levels:", "  - {name: node, size: 2}", "cpu: [intel]"}),
             "topology file x.yaml:3: ", "'cpu' must be one of intel, amd, found a sequence");
}

TEST_CASE("topo file: level shape errors", "[topo_file]") {
  SECTION("a level that is not a map") {
    checkError(lines({"levels:", level("name: node, size: 2"), "  - node"}),
               "topology file x.yaml:3: ", "level 1 must be a map such as {name: node");
    checkError(lines({"levels:", level("name: node, size: 2"), "  - [node, 2]"}),
               "topology file x.yaml:3: ", "level 1 must be a map");
  }
  SECTION("a key that is not a name") {
    checkError(lines({"levels:", "  - {[a]: 1, name: node, size: 2}"}), "topology file x.yaml:2: ",
               "level 0 has a key that is a sequence; keys must be names");
  }
  SECTION("unknown key in a level") {
    checkError(lines({"levels:", level("name: node, size: 2"), level("name: net, sise: 2")}),
               "topology file x.yaml:3: ",
               "level 1 has unknown key 'sise'; known keys: name, size, fabric, link, "
               "bandwidth_GBps, latency_us");
  }
  SECTION("duplicate key in a level") {
    checkError(lines({"levels:", "  - name: node", "    size: 2", "    size: 4"}),
               "topology file x.yaml:4: ", "level 0 has key 'size' twice");
  }
}

TEST_CASE("topo file: name errors", "[topo_file]") {
  SECTION("missing name, reported at the level's line") {
    checkError(lines({"levels:", level("name: node, size: 2"), level("size: 2")}),
               "topology file x.yaml:3: ", "level 1 has no name");
  }
  SECTION("empty name") {
    checkError(lines({"levels:", level("name: '', size: 2")}),
               "topology file x.yaml:2: ", "level 0 has an empty name");
    checkError(lines({"levels:", "  - name:", "    size: 2"}),
               "topology file x.yaml:2: ", "level 0 has an empty name");
  }
  SECTION("name not a string") {
    checkError(lines({"levels:", level("name: [a, b], size: 2")}),
               "topology file x.yaml:2: ", "level 0 name must be a string, found a sequence");
  }
  SECTION("name with odd characters") {
    checkError(lines({"levels:", level("name: my node, size: 2")}),
               "topology file x.yaml:2: ", "level 0 name 'my node' may hold only letters, digits");
  }
  SECTION("duplicate names") {
    checkError(
        lines({"levels:", level("name: node, size: 2"), "", "  - name: node", "    size: 2"}),
        "topology file x.yaml:4: ",
        "level 1 is named 'node' like an earlier level; names must be unique");
  }
}

TEST_CASE("topo file: size errors", "[topo_file]") {
  SECTION("missing size") {
    checkError(lines({"levels:", "  - name: node", "    fabric: mpi"}),
               "topology file x.yaml:2: ", "level 'node' has no size");
  }
  SECTION("size not an integer") {
    checkError(lines({"levels:", level("name: node, size: two")}),
               "topology file x.yaml:2: ", "level 'node' size must be an integer, found 'two'");
    checkError(lines({"levels:", level("name: node, size: 2.5")}),
               "topology file x.yaml:2: ", "found '2.5'");
    checkError(lines({"levels:", level("name: node, size: 0x10")}),
               "topology file x.yaml:2: ", "found '0x10'");
    checkError(lines({"levels:", level("name: node, size: \"2\"")}),
               "topology file x.yaml:2: ", "level 'node' size must be an integer, found '2'");
    // A tagged string is a string however it reads (tests/data/regressions/topo_tagged_size.yaml).
    checkError(lines({"levels:", level("name: node, size: !!str 2")}),
               "topology file x.yaml:2: ", "level 'node' size must be an integer, found '2'");
    checkError(lines({"levels:", level("name: node, size: !!int 2")}),
               "topology file x.yaml:2: ", "level 'node' size must be an integer, found '2'");
    checkError(lines({"levels:", level("name: node, size: 2, bandwidth_GBps: !!str 5")}),
               "topology file x.yaml:2: ", "bandwidth_GBps must be a positive number");
    checkError(lines({"levels:", level("name: node, size: [2]")}),
               "topology file x.yaml:2: ", "size must be an integer, found a sequence");
    checkError(lines({"levels:", "  - name: node", "    size:"}),
               "topology file x.yaml:3: ", "size must be an integer, found nothing");
  }
  SECTION("size zero or negative") {
    checkError(lines({"# c", "levels:", level("name: socket, size: 2"), "", "", "",
                      level("name: node, size: 0")}),
               "topology file x.yaml:7: ", "level 'node' has size 0; sizes must be positive");
    checkError(lines({"levels:", level("name: node, size: -3")}),
               "topology file x.yaml:2: ", "level 'node' has size -3; sizes must be positive");
  }
  SECTION("size absurdly large") {
    checkError(lines({"levels:", level("name: node, size: 1048577")}), "topology file x.yaml:2: ",
               "level 'node' has size 1048577; sizes above 1048576 are refused");
    checkError(lines({"levels:", level("name: node, size: 99999999999999999999999")}),
               "topology file x.yaml:2: ", "sizes above 1048576 are refused");
    CHECK(parseOk(lines({"levels:", level("name: node, size: 1048576")})).sizes[0] == 1048576);
  }
}

TEST_CASE("topo file: fabric errors", "[topo_file]") {
  SECTION("unknown fabric lists the known ones") {
    checkError(lines({"levels:", level("name: node, size: 2, fabric: gloo")}),
               "topology file x.yaml:2: ",
               "level 'node' has unknown fabric 'gloo'; known fabrics: mpi, nccl");
  }
  SECTION("empty or non-string fabric") {
    checkError(lines({"levels:", level("name: node, size: 2, fabric: ''")}),
               "topology file x.yaml:2: ",
               "level 'node' fabric must be a fabric name, found an empty string");
    checkError(lines({"levels:", "  - name: node", "    size: 2", "    fabric:"}),
               "topology file x.yaml:4: ", "fabric must be a fabric name, found nothing");
    checkError(lines({"levels:", level("name: node, size: 2, fabric: {a: b}")}),
               "topology file x.yaml:2: ", "fabric must be a fabric name, found a map");
  }
  SECTION("the default is checked against the known fabrics too") {
    StatusOr<TopoFile> file =
        parseTopoFile("levels:\n  - {name: node, size: 2}\n", "x.yaml", {"nccl"});
    REQUIRE_FALSE(file.isOk());
    CHECK(file.status().message() ==
          "topology file x.yaml:2: level 'node' has unknown fabric 'mpi' (the default); "
          "known fabrics: nccl");
  }
}

TEST_CASE("topo file: reserved key errors", "[topo_file]") {
  checkError(lines({"levels:", level("name: node, size: 2, link: ''")}),
             "topology file x.yaml:2: ", "level 'node' link must be a link kind");
  checkError(lines({"levels:", level("name: node, size: 2, link: [a]")}),
             "topology file x.yaml:2: ", "link must be a link kind");
  checkError(lines({"levels:", level("name: node, size: 2, bandwidth_GBps: fast")}),
             "topology file x.yaml:2: ",
             "level 'node' bandwidth_GBps must be a positive number, found 'fast'");
  checkError(lines({"levels:", level("name: node, size: 2, bandwidth_GBps: 0")}),
             "topology file x.yaml:2: ", "bandwidth_GBps must be a positive number, found '0'");
  checkError(lines({"levels:", level("name: node, size: 2, latency_us: -1")}),
             "topology file x.yaml:2: ", "latency_us must be a positive number, found '-1'");
  checkError(lines({"levels:", level("name: node, size: 2, latency_us: \"1\"")}),
             "topology file x.yaml:2: ", "latency_us must be a positive number, found '1'");
  checkError(lines({"levels:", level("name: node, size: 2, latency_us: .nan")}),
             "topology file x.yaml:2: ", "latency_us must be a positive number");
}

TEST_CASE("topo file: the source is named as given", "[topo_file]") {
  StatusOr<TopoFile> file = parseTopoFile("levels: 3\n", "<string>", kFabrics);
  REQUIRE_FALSE(file.isOk());
  CHECK_THAT(file.status().message(), StartsWith("topology file <string>:1: "));
}

TEST_CASE("topo file: loading from disk", "[topo_file]") {
  SECTION("missing file") {
    StatusOr<TopoFile> file = loadTopoFile("/nonexistent/strata/topo.yaml", kFabrics);
    REQUIRE_FALSE(file.isOk());
    // Not an invalid argument: the file system has no such file (strataSystemError).
    CHECK(file.status().code() == Code::kSystemError);
    CHECK(file.status().message() == "topology file /nonexistent/strata/topo.yaml: file not found");
  }
  SECTION("a directory") {
    std::string dir = std::filesystem::temp_directory_path().string();
    StatusOr<TopoFile> file = loadTopoFile(dir, kFabrics);
    REQUIRE_FALSE(file.isOk());
    CHECK_THAT(file.status().message(), StartsWith("topology file " + dir + ": cannot "));
  }
  SECTION("a good file") {
    TempFile temp("levels:\n  - {name: node, size: 2}\n  - {name: net, size: 3}\n");
    StatusOr<TopoFile> file = loadTopoFile(temp.path(), kFabrics);
    INFO(file.status().message());
    REQUIRE(file.isOk());
    CHECK(file.value().sizes == std::vector<int>{2, 3});
  }
  SECTION("a bad file names its path and line") {
    TempFile temp("levels:\n  - {name: node, size: 2}\n  - {name: net, size: 0}\n");
    StatusOr<TopoFile> file = loadTopoFile(temp.path(), kFabrics);
    REQUIRE_FALSE(file.isOk());
    CHECK(file.status().message() ==
          "topology file " + temp.path() + ":3: level 'net' has size 0; sizes must be positive");
  }
}

TEST_CASE("topo file: formatTopoFile round-trips", "[topo_file]") {
  TopoFile file;
  file.levels = {
      {"socket", "mpi"}, {"null", "nccl"}, {"123", "mpi"}, {"yes", "mpi"}, {"a-b.c_d", "mpi"}};
  file.sizes = {2, 1, 3, 1048576, 7};
  std::string text = formatTopoFile(file);
  INFO(text);
  TopoFile back = parseOk(text);
  CHECK(sameFile(file, back));
  CHECK(formatTopoFile(back) == text);

  TopoFile example = parseOk(lines(
      {"levels:", level("name: node, size: 4"), level("name: network, size: 2, fabric: nccl")}));
  CHECK(sameFile(example, parseOk(formatTopoFile(example))));
}

TEST_CASE("topo file: link numbers are written as short as they read back", "[topo_file]") {
  // strata-topo --save once wrote the shm default 0.3 us as 0.29999999999999999.
  TopoFile file = parseOk(lines(
      {"levels:", level("name: node, size: 2, link: shm, bandwidth_GBps: 10, latency_us: 0.3"),
       level("name: network, size: 2, link: ethernet, bandwidth_GBps: 1.0625, latency_us: 20"),
       level("name: rack, size: 2, link: ethernet, bandwidth_GBps: 0.1, latency_us: "
             "1.2345678901234567")}));
  const std::string text = formatTopoFile(file);
  INFO(text);
  CHECK_THAT(text, Contains("bandwidth_GBps: 10, latency_us: 0.3}"));
  CHECK_THAT(text, Contains("bandwidth_GBps: 1.0625, latency_us: 20}"));
  CHECK_THAT(text, Contains("bandwidth_GBps: 0.1, latency_us: 1.2345678901234567}"));
  CHECK(sameFile(file, parseOk(text)));
}

TEST_CASE("topo file: hierarchy from a file", "[topo_file]") {
  TopoFile file = parseOk(lines({"levels:", level("name: socket, size: 2"),
                                 level("name: node, size: 2"), level("name: rack, size: 2")}));
  SECTION("matching rank count gives the mixed-radix coordinates") {
    StatusOr<Hierarchy> h = hierarchyFromTopoFile(file, "x.yaml", 8);
    INFO(h.status().message());
    REQUIRE(h.isOk());
    REQUIRE(h.value().numRanks() == 8);
    REQUIRE(h.value().numLevels() == 3);
    CHECK(h.value().level(0).name == "socket");
    CHECK(h.value().level(2).name == "rack");
    CHECK(h.value().level(1).fabric == "mpi");
    for (int r = 0; r < 8; ++r) {
      CHECK(h.value().coord(r, 0) == r % 2);
      CHECK(h.value().coord(r, 1) == (r / 2) % 2);
      CHECK(h.value().coord(r, 2) == (r / 4) % 2);
    }
  }
  SECTION("mismatching rank count") {
    TopoFile six =
        parseOk(lines({"levels:", level("name: node, size: 3"), level("name: net, size: 2")}));
    StatusOr<Hierarchy> h = hierarchyFromTopoFile(six, "configs/x.yaml", 8);
    REQUIRE_FALSE(h.isOk());
    CHECK(h.status().code() == Code::kInvalidArgument);
    CHECK(h.status().message() ==
          "topology file configs/x.yaml: level sizes multiply to 6, communicator has 8 ranks");
  }
  SECTION("a product beyond int does not overflow") {
    TopoFile big = parseOk(lines({"levels:", level("name: a, size: 1048576"),
                                  level("name: b, size: 1048576"), level("name: c, size: 3")}));
    StatusOr<Hierarchy> h = hierarchyFromTopoFile(big, "x.yaml", 8);
    REQUIRE_FALSE(h.isOk());
    CHECK(h.status().message() ==
          "topology file x.yaml: level sizes multiply to more than 2147483647, communicator has "
          "8 ranks");
  }
  SECTION("a hand-built file of the wrong shape") {
    TopoFile bad;
    bad.levels = {{"node", "mpi"}};
    StatusOr<Hierarchy> h = hierarchyFromTopoFile(bad, "x.yaml", 1);
    REQUIRE_FALSE(h.isOk());
    CHECK_THAT(h.status().message(), StartsWith("topology file x.yaml: has 1 levels and 0 sizes"));
    bad.sizes = {0};
    h = hierarchyFromTopoFile(bad, "x.yaml", 1);
    REQUIRE_FALSE(h.isOk());
    CHECK_THAT(h.status().message(), Contains("level 'node' has size 0"));
  }
}

TEST_CASE("topo file: every example config parses and fits its rank count", "[topo_file]") {
  // The rank count each example is written for (see its header comment).
  const std::map<std::string, int> expected = {
      {"flat4.yaml", 4}, {"2x2.yaml", 4},       {"2x2x2.yaml", 8},  {"2x3.yaml", 6},
      {"4x2.yaml", 8},   {"2x2x2-shm.yaml", 8}, {"2x2-ucx.yaml", 4}};
  std::filesystem::path dir = std::filesystem::path(STRATA_SOURCE_DIR) / "configs" / "topologies";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    std::string name = entry.path().filename().string();
    INFO(name);
    StatusOr<TopoFile> file = loadTopoFile(entry.path().string(), {"mpi", "shm", "ucx"});
    INFO(file.status().message());
    REQUIRE(file.isOk());
    auto it = expected.find(name);
    if (it == expected.end()) continue;  // a newer example: parsing is all we can check
    StatusOr<Hierarchy> h = hierarchyFromTopoFile(file.value(), name, it->second);
    INFO(h.status().message());
    CHECK(h.isOk());
  }
  CHECK(seen >= static_cast<int>(expected.size()));
}

}  // namespace
}  // namespace strata::topo
