// Plan files: what parses and resolves, what is refused and on which line, the round trip through
// formatPlanFile, the hash, planFor, and the example files in configs/plans/.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/plan_load.h"
#include "decompose/plan_file.h"
#include "topology/topo_file.h"

namespace strata::plan {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::vector<std::string> kFabrics = {"mpi", "nccl"};

std::string lines(const std::vector<std::string>& text) {
  std::string out;
  for (const std::string& line : text) out += line + "\n";
  return out;
}

topo::Hierarchy regular(const std::vector<std::string>& names, const std::vector<int>& sizes) {
  std::vector<topo::Level> levels;
  for (const std::string& name : names) levels.emplace_back(name, "mpi");
  StatusOr<topo::Hierarchy> h = topo::Hierarchy::regular(levels, sizes);
  REQUIRE(h.isOk());
  return h.value();
}

topo::Hierarchy twoLevel() { return regular({"node", "network"}, {2, 2}); }
topo::Hierarchy threeLevel() { return regular({"socket", "node", "rack"}, {2, 2, 2}); }

PlanFile parseOk(const std::string& text) {
  StatusOr<PlanFile> file = parsePlanFile(text, "x.yaml");
  INFO(file.status().message());
  REQUIRE(file.isOk());
  return file.value();
}

std::vector<PlanRule> resolveOk(const std::string& text, const topo::Hierarchy& h) {
  StatusOr<std::vector<PlanRule>> rules = resolvePlanFile(parseOk(text), h, kFabrics, "x.yaml");
  INFO(rules.status().message());
  REQUIRE(rules.isOk());
  return rules.value();
}

// Parses and resolves `text` as "x.yaml" against `h`; the error must start with
// "plan file x.yaml:<line>: " (no line when `line` is 0, any line when it is -1) and contain
// `problem`.
void checkError(const std::string& text, int line, const std::string& problem,
                const topo::Hierarchy& h = twoLevel()) {
  INFO(text);
  StatusOr<PlanFile> file = parsePlanFile(text, "x.yaml");
  Status status = file.status();
  if (file.isOk()) status = resolvePlanFile(file.value(), h, kFabrics, "x.yaml").status();
  REQUIRE_FALSE(status.isOk());
  CHECK(status.code() == Code::kInvalidArgument);
  const std::string where = line > 0 ? ":" + std::to_string(line) + ": " : line == 0 ? ": " : ":";
  CHECK_THAT(status.message(), StartsWith("plan file x.yaml" + where));
  CHECK_THAT(status.message(), Contains(problem));
}

// A file of one rule [0, inf) whose stages list is `stages`, one entry a line from line 4 on.
std::string stagesFile(const std::vector<std::string>& stages) {
  std::vector<std::string> text = {"rules:", "  - min_bytes: 0", "    stages:"};
  for (const std::string& stage : stages) text.push_back("      - " + stage);
  return lines(text);
}

bool sameStage(const Stage& a, const Stage& b) {
  return a.levels == b.levels && a.fabric == b.fabric && a.algorithm == b.algorithm &&
         a.chunkBytes == b.chunkBytes && a.wire == b.wire;
}

// Same sizes and plans (names and notes aside: they say where a plan came from, not what it is).
bool sameRules(const std::vector<PlanRule>& a, const std::vector<PlanRule>& b) {
  if (a.size() != b.size()) return false;
  for (size_t r = 0; r < a.size(); ++r) {
    const Plan &x = a[r].plan, &y = b[r].plan;
    if (a[r].minBytes != b[r].minBytes || a[r].maxBytes != b[r].maxBytes ||
        x.passthrough != y.passthrough || x.stages.size() != y.stages.size()) {
      return false;
    }
    for (size_t s = 0; s < x.stages.size(); ++s) {
      if (!sameStage(x.stages[s], y.stages[s])) return false;
    }
  }
  return true;
}

const std::string kExample = lines({
    "# strata plan file",
    "rules:",
    "  - {min_bytes: 0, max_bytes: 65536, plan: passthrough}",
    "  - min_bytes: 65536",
    "    max_bytes: 8388608",
    "    plan: flat                 # flat ring over every level",
    "  - min_bytes: 8388608         # max_bytes omitted: no upper bound",
    "    stages:",
    "      - reduce_scatter@node",
    "      - {stage: allreduce@network, fabric: mpi, algorithm: auto, chunk_bytes: 4194304}",
    "      - all_gather@node",
});

TEST_CASE("plan file: the example parses and resolves", "[plan_file]") {
  PlanFile file = parseOk(kExample);
  REQUIRE(file.rules.size() == 3);
  CHECK(file.rules[0].line == 3);
  CHECK(file.rules[1].line == 4);
  CHECK(file.rules[2].line == 7);
  CHECK(file.rules[0].plan.passthrough);
  CHECK(file.rules[1].plan.name == "flat-ring");
  CHECK(file.rules[2].plan.name == "file");
  CHECK(file.rules[2].plan.note == "plan file x.yaml:7");
  REQUIRE(file.rules[2].rawStages.size() == 2);
  CHECK(file.rules[2].rawStages[0].levels == std::vector<std::string>{"node"});
  CHECK(file.rules[2].rawStages[1].line == 10);
  CHECK(file.measured.empty());

  std::vector<PlanRule> rules = resolveOk(kExample, twoLevel());
  REQUIRE(rules.size() == 3);
  CHECK(rules[0].minBytes == 0);
  CHECK(rules[0].maxBytes == 65536);
  CHECK(rules[0].plan.stages.empty());
  const std::vector<Stage>& flat = rules[1].plan.stages;
  REQUIRE(flat.size() == 1);
  CHECK(flat[0].levels == std::vector<int>{0, 1});
  CHECK(flat[0].algorithm == Algorithm::kRing);
  CHECK(rules[2].maxBytes == SIZE_MAX);
  const std::vector<Stage>& staged = rules[2].plan.stages;
  REQUIRE(staged.size() == 2);
  CHECK(staged[0].levels == std::vector<int>{0});
  CHECK(staged[0].fabric.empty());
  CHECK(staged[0].chunkBytes == 0);
  CHECK(staged[1].levels == std::vector<int>{1});
  CHECK(staged[1].fabric == "mpi");
  CHECK(staged[1].algorithm == Algorithm::kAuto);
  CHECK(staged[1].chunkBytes == 4194304);
}

TEST_CASE("plan file: flow style, comments, suffixes and rule order do not matter", "[plan_file]") {
  const std::vector<PlanRule> block = resolveOk(kExample, twoLevel());
  const std::string flow =
      "{rules: [{min_bytes: 8M, stages: [reduce_scatter@node, {stage: allreduce@network, "
      "chunk_bytes: 4 MiB, fabric: mpi}, all_gather@node], max_bytes: inf},\n"
      "  {min_bytes: 64KiB, max_bytes: 8MiB, plan: flat}, {plan: passthrough, min_bytes: 0, "
      "max_bytes: \"64K\"}]}\n";
  CHECK(sameRules(block, resolveOk(flow, twoLevel())));
}

TEST_CASE("plan file: sizes", "[plan_file]") {
  // The one size grammar (common/units.h, every form in test_units.cc): the plan file's own
  // forms, and the environment's and the tools' ones that it now takes too.
  size_t v = 0;
  bool tooLarge = false;
  const std::vector<std::pair<std::string, size_t>> good = {
      {"0", 0},          {"4096", 4096},
      {"1KiB", 1024},    {"3 KiB", 3072},
      {"1k", 1024},      {"1KB", 1024},
      {"2mib", 2 << 20}, {"5GiB", size_t{5} << 30},
      {"1 B", 1},        {"9223372036854775807", INT64_MAX}};
  for (const auto& [text, value] : good) {
    INFO(text);
    REQUIRE(detail::parseSize(text, &v, &tooLarge));
    CHECK(v == value);
  }
  for (const std::string text : {"", "K", "-1", "1.5K", "1e3", "1Ki", "1 2", "inf", "12 GiB x"}) {
    INFO(text);
    CHECK_FALSE(detail::parseSize(text, &v, &tooLarge));
    CHECK_FALSE(tooLarge);
  }
  CHECK_FALSE(detail::parseSize("8589934592G", &v, &tooLarge));
  CHECK(tooLarge);
  CHECK(detail::sizeText(65536) == "64KiB");
  CHECK(detail::sizeText(SIZE_MAX) == "inf");
}

TEST_CASE("plan file: stages over several levels, in any order inside", "[plan_file]") {
  std::vector<PlanRule> rules = resolveOk(
      stagesFile({"reduce_scatter@node+socket", "allreduce@rack", "all_gather@socket+node"}),
      threeLevel());
  REQUIRE(rules[0].plan.stages.size() == 2);
  CHECK(rules[0].plan.stages[0].levels == std::vector<int>{0, 1});
  CHECK(rules[0].plan.stages[1].levels == std::vector<int>{2});
  // A single allreduce over every level is the flat plan, written out.
  rules =
      resolveOk(stagesFile({"{stage: allreduce@socket+node+rack, algorithm: ring}"}), threeLevel());
  REQUIRE(rules[0].plan.stages.size() == 1);
  CHECK(rules[0].plan.stages[0].levels == std::vector<int>{0, 1, 2});
  // The reordered plan: the network first, which a regular hierarchy admits.
  rules = resolveOk(stagesFile({"reduce_scatter@network", "allreduce@node", "all_gather@network"}),
                    twoLevel());
  CHECK(rules[0].plan.stages[0].levels == std::vector<int>{1});
  // fabric and chunk_bytes may sit on the all-gather half of a stage.
  rules = resolveOk(stagesFile({"reduce_scatter@node", "allreduce@network",
                                "{stage: all_gather@node, fabric: nccl, chunk_bytes: 1M}"}),
                    twoLevel());
  CHECK(rules[0].plan.stages[0].fabric == "nccl");
  CHECK(rules[0].plan.stages[0].chunkBytes == 1 << 20);
}

TEST_CASE("plan file: measured links", "[plan_file]") {
  const std::string text = lines({
      "rules:",
      "  - {min_bytes: 0, plan: passthrough}",
      "measured:            # written by strata-tune",
      "  node: {bandwidth_GBps: 21.5, latency_us: 1.25}",
      "  network:",
      "    latency_us: 3",
  });
  PlanFile file = parseOk(text);
  REQUIRE(file.measured.size() == 2);
  CHECK(file.measured["node"].bandwidthGBps == 21.5);
  CHECK(file.measured["node"].latencyUs == 1.25);
  CHECK(file.measured["node"].source == "measured");
  CHECK(file.measured["network"].bandwidthGBps == 0);
  CHECK(file.measured["network"].latencyUs == 3);
  CHECK(file.measuredLines["network"] == 5);
  resolveOk(text, twoLevel());
}

TEST_CASE("plan file: planFor picks the rule covering a size", "[plan_file]") {
  const std::vector<PlanRule> rules = resolveOk(kExample, twoLevel());
  CHECK(planFor(rules, 0) == &rules[0].plan);
  CHECK(planFor(rules, 65535) == &rules[0].plan);
  CHECK(planFor(rules, 65536) == &rules[1].plan);
  CHECK(planFor(rules, 8388607) == &rules[1].plan);
  CHECK(planFor(rules, 8388608) == &rules[2].plan);
  CHECK(planFor(rules, SIZE_MAX - 1) == &rules[2].plan);
  CHECK(planFor(rules, SIZE_MAX) == &rules[2].plan);
  CHECK(planFor({}, 0) == nullptr);
  // Rules built by hand need not cover everything.
  std::vector<PlanRule> partial(1);
  partial[0].minBytes = 10;
  partial[0].maxBytes = 20;
  CHECK(planFor(partial, 9) == nullptr);
  CHECK(planFor(partial, 10) == &partial[0].plan);
  CHECK(planFor(partial, 20) == nullptr);
}

TEST_CASE("plan file: formatPlanFile reads back to the same rules", "[plan_file]") {
  const topo::Hierarchy h = threeLevel();
  const std::string text = lines({
      "rules:",
      "  - {min_bytes: 0, max_bytes: 1000, plan: passthrough}",
      "  - {min_bytes: 1000, max_bytes: 1M, plan: flat}",
      "  - min_bytes: 1M",
      "    max_bytes: 1G",
      "    stages: [reduce_scatter@node, {stage: allreduce@socket+rack, algorithm: ring},",
      "             all_gather@node]",
      "  - min_bytes: 1G",
      "    stages:",
      "      - {stage: reduce_scatter@socket, fabric: nccl, chunk_bytes: 12K}",
      "      - reduce_scatter@node",
      "      - {stage: allreduce@rack, fabric: mpi, chunk_bytes: 5000}",
      "      - all_gather@node",
      "      - all_gather@socket",
      "measured:",
      "  rack: {bandwidth_GBps: 12.3456789, latency_us: 0.1}",
      "  socket: {bandwidth_GBps: 100}",
  });
  const PlanFile file = parseOk(text);
  const std::vector<PlanRule> rules = resolveOk(text, h);
  const std::string formatted = formatPlanFile(rules, h, file.measured);
  INFO(formatted);
  CHECK_THAT(formatted,
             StartsWith("# strata plan file (STRATA_PLAN_FILE) for socket(2) x node(2)"));
  CHECK_THAT(formatted, Contains("      - {stage: reduce_scatter@socket, fabric: nccl, "
                                 "chunk_bytes: 12KiB}\n"));
  CHECK_THAT(formatted, Contains("      - {stage: allreduce@socket+rack, algorithm: ring}\n"));
  CHECK_THAT(formatted, Contains("  # flat-ring: plan file x.yaml:3\n"));
  const PlanFile again = parseOk(formatted);
  CHECK(sameRules(rules, resolveOk(formatted, h)));
  CHECK(again.measured.size() == 2);
  CHECK(again.measured.at("rack").bandwidthGBps == 12.3456789);
  CHECK(again.measured.at("rack").latencyUs == 0.1);
  CHECK(again.measured.at("socket").bandwidthGBps == 100);
  // Formatting is a fixed point once the notes (which name the source) are the same.
  CHECK(formatPlanFile(resolveOk(formatted, h), h, again.measured) ==
        formatPlanFile(resolveOk(formatPlanFile(resolveOk(formatted, h), h, again.measured), h), h,
                       again.measured));
}

TEST_CASE("plan file: the hash follows the content, not the writing", "[plan_file]") {
  const topo::Hierarchy h = twoLevel();
  const uint64_t base = planHash(resolveOk(kExample, h), h);
  CHECK(base == planHash(resolveOk(kExample, h), h));
  // Comments, whitespace, flow style, suffixes, rule order and `plan: flat` written out as a
  // stage all describe the same rules.
  const std::string same = lines({
      "rules:  # reordered",
      "- {min_bytes: 8MiB, stages: [reduce_scatter@node,",
      "     {stage: allreduce@network, chunk_bytes: 4M, fabric: mpi}, all_gather@node]}",
      "- {min_bytes: 64K, max_bytes: 8M,",
      "   stages: [{stage: allreduce@network+node, algorithm: ring}]}",
      "- {min_bytes: 0,     max_bytes: 64KiB, plan: passthrough}",
      "measured: {node: {latency_us: 2}}",
  });
  CHECK(planHash(resolveOk(same, h), h) == base);
  // The formatted text hashes the same as the file it came from.
  CHECK(planHash(resolveOk(formatPlanFile(resolveOk(kExample, h), h), h), h) == base);

  // kExample with every `from` replaced by `to`, hashed.
  auto changed = [&](const std::string& from, const std::string& to) {
    std::string text = kExample;
    size_t count = 0;
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
      text.replace(at, from.size(), to);
      ++count;
    }
    REQUIRE(count > 0);
    return planHash(resolveOk(text, h), h);
  };
  CHECK(changed("65536", "65537") != base);  // a boundary moved
  CHECK(changed("8388608", "8388609") != base);
  CHECK(changed("fabric: mpi", "fabric: nccl") != base);
  CHECK(changed("algorithm: auto", "algorithm: ring") != base);
  CHECK(changed("chunk_bytes: 4194304", "chunk_bytes: 4194305") != base);
  CHECK(changed("plan: flat ", "plan: passthrough") != base);
  // The same rules over differently named levels are different plans.
  const topo::Hierarchy renamed = regular({"host", "network"}, {2, 2});
  std::string text = kExample;
  for (size_t at; (at = text.find("@node")) != std::string::npos;) text.replace(at, 5, "@host");
  CHECK(planHash(resolveOk(text, renamed), renamed) != base);
  // Passthrough everywhere differs from the example, and from flat everywhere.
  const std::string passthrough = "rules: [{min_bytes: 0, plan: passthrough}]\n";
  const std::string flat = "rules: [{min_bytes: 0, plan: flat}]\n";
  CHECK(planHash(resolveOk(passthrough, h), h) != base);
  CHECK(planHash(resolveOk(passthrough, h), h) != planHash(resolveOk(flat, h), h));
}

TEST_CASE("plan file: yaml and top-level errors", "[plan_file]") {
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: passthrough"}), -1, "yaml syntax error");
  checkError(lines({"rules:", "  - min_bytes: 0", "    plan: a: b"}), 3, "yaml syntax error");
  checkError("", 0, "file is empty; expected a map with a 'rules' list");
  checkError(lines({"rules: []", "---", "rules: []"}), 2, "holds more than one yaml document");
  // A line starting with ',' once made yaml-cpp's multi-document loader loop for ever, storing
  // an empty document per turn (tests/data/regressions/plan_comma_hang.yaml).
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: passthrough}", ", a wrapped comment"}), 3,
             "yaml syntax error");
  checkError(lines({"# a plan file whose comment", ", wrapped onto a second line"}), 2,
             "yaml syntax error: unexpected ','");
  checkError(",", 1, "yaml syntax error: unexpected ','");
  checkError(lines({"", "- a"}), 2,
             "expected a map with a 'rules' list at the top, found a "
             "sequence");
  checkError("{}\n", 0, "missing 'rules'");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}", "rule: 3"}), 3,
             "the top level has unknown key 'rule'; known keys: rules, measured");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}", "rules: []"}), 3,
             "the top level has key 'rules' twice");
  checkError(lines({"# x", "rules: 3"}), 2, "'rules' must be a list of rules, found a scalar");
  checkError(lines({"", "rules: []"}), 2, "'rules' is empty; give at least one rule");
}

TEST_CASE("plan file: rule errors", "[plan_file]") {
  checkError(lines({"rules:", "  - passthrough"}), 2, "rule 1 must be a map such as");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}", "  - {min_byte: 5, plan: flat}"}),
             3,
             "rule 2 has unknown key 'min_byte'; known keys: min_bytes, max_bytes, plan, "
             "stages");
  checkError(lines({"rules:", "  - {plan: flat, plan: passthrough, min_bytes: 0}"}), 2,
             "rule 1 has key 'plan' twice");
  checkError(lines({"rules:", "  - max_bytes: 5", "    plan: flat"}), 2, "rule 1 has no min_bytes");
  checkError(lines({"rules:", "  - {min_bytes: 0}"}), 2,
             "rule 1 has neither 'plan' nor 'stages'; give one");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat, stages: [allreduce@node]}"}), 2,
             "rule 1 has both 'plan' and 'stages'; give one");
  checkError(lines({"rules:", "  - min_bytes: 0", "    plan: ring"}), 3,
             "rule 1 plan must be passthrough or flat, found 'ring'; list other plans under "
             "'stages'");
  checkError(lines({"rules:", "  - min_bytes: 0", "    stages: []"}), 3,
             "rule 1 stages must be a list such as [reduce_scatter@node, allreduce@network, "
             "all_gather@node], found an empty list");
  checkError(lines({"rules:", "  - min_bytes: 0", "    stages: allreduce@node"}), 3,
             "found a scalar");
}

TEST_CASE("plan file: size errors", "[plan_file]") {
  checkError(lines({"rules:", "  - {min_bytes: 1.5K, plan: flat}"}), 2,
             std::string("rule 1 min_bytes must be a size in bytes: ") + units::kSizeForms +
                 "; found '1.5K'");
  checkError(lines({"rules:", "  - min_bytes: 0", "    max_bytes: lots", "    plan: flat"}), 3,
             std::string("rule 1 max_bytes must be a size in bytes: ") + units::kSizeForms +
                 ", or inf; found 'lots'");
  checkError(lines({"rules:", "  - {min_bytes: [1], plan: flat}"}), 2, "found a sequence");
  checkError(lines({"rules:", "  - {min_bytes: -1, plan: flat}"}), 2, "found '-1'");
  checkError(lines({"rules:", "  - {min_bytes: 9999999999G, plan: flat}"}), 2,
             "rule 1 min_bytes '9999999999G' is too large; sizes must be below 2^63");
  checkError(lines({"rules:", "  - min_bytes: 64K", "", "    max_bytes: 64KiB", "    plan: flat"}),
             4, "rule 1 covers nothing: min_bytes 64KiB is not below max_bytes 64KiB");
  checkError(lines({"rules:", "  - {min_bytes: 2, max_bytes: 1, plan: flat}"}), 2,
             "min_bytes 2 is not below max_bytes 1");
}

TEST_CASE("plan file: stage errors", "[plan_file]") {
  checkError(stagesFile({"allreduce@network", "reduce@node"}), 5,
             "unknown op 'reduce' in stage 'reduce@node'; known ops: reduce_scatter, allreduce, "
             "all_gather");
  for (const std::string bad : {"allreduce", "allreduce@", "'@node'", "allreduce@node+",
                                "allreduce@+node", "allreduce@node@network", "'allreduce@ node'",
                                "allreduce@node++network", "'allreduce@node network'"}) {
    checkError(stagesFile({"reduce_scatter@node", bad, "all_gather@node"}), 5, "malformed stage '");
  }
  checkError(stagesFile({"reduce_scatter@node", "allreduce@network", "all_gather@node",
                         "{stage: allreduce@node, fabrik: mpi}"}),
             7,
             "rule 1 stage 4 has unknown key 'fabrik'; known keys: stage, fabric, algorithm, "
             "chunk_bytes");
  checkError(stagesFile({"{fabric: mpi}"}), 4, "rule 1 stage 1 has no 'stage'");
  checkError(stagesFile({"[allreduce@node]"}), 4, "rule 1 stage 1 must be a string such as");
  checkError(stagesFile({"{stage: [allreduce@node]}"}), 4, "rule 1 stage 1 stage must be a string");
  checkError(stagesFile({"{stage: allreduce@node+network, algorithm: tree}"}), 4,
             "stage allreduce@node+network algorithm must be auto or ring, found 'tree'");
  checkError(stagesFile({"{stage: reduce_scatter@node, algorithm: ring}", "allreduce@network",
                         "all_gather@node"}),
             4,
             "stage reduce_scatter@node has algorithm ring, which is for the allreduce stage "
             "only");
  // chunk_bytes is held to STRATA_CHUNK_BYTES's range: one-byte chunks made a 4 MB allreduce
  // take minutes (tests/data/plans/bad_chunk_bytes_1.yaml).
  const std::pair<const char*, const char*> tooSmallOrLarge[] = {
      {"0", "0"}, {"1", "1"}, {"4095", "4095"}, {"1G1", ""}, {"2G", "2147483648"}};
  for (const auto& [bad, value] : tooSmallOrLarge) {
    INFO(bad);
    const std::string text =
        stagesFile({std::string("{stage: allreduce@node+network, chunk_bytes: ") + bad + "}"});
    if (*value == '\0') {
      checkError(text, 4, "chunk_bytes must be a size in bytes");
    } else {
      checkError(text, 4,
                 std::string("stage allreduce@node+network chunk_bytes ") + value +
                     " is outside 4096..1073741824 (the range of STRATA_CHUNK_BYTES)");
    }
  }
  CHECK(parsePlanFile(stagesFile({"{stage: allreduce@node+network, chunk_bytes: 4096}"}), "x.yaml")
            .isOk());
  CHECK(parsePlanFile(stagesFile({"{stage: allreduce@node+network, chunk_bytes: 1G}"}), "x.yaml")
            .isOk());
  checkError(stagesFile({"{stage: allreduce@node+network, fabric: ''}"}), 4,
             "stage allreduce@node+network fabric must be a fabric name, found ''");
}

TEST_CASE("plan file: stages that do not compose", "[plan_file]") {
  const topo::Hierarchy h = threeLevel();
  checkError(stagesFile({"reduce_scatter@socket", "all_gather@socket"}), 5,
             "all_gather@socket comes before the allreduce; all-gathers come after it", h);
  checkError(stagesFile({"reduce_scatter@socket", "reduce_scatter@node"}), 3, "allreduce missing",
             h);
  checkError(stagesFile({"allreduce@socket", "allreduce@node+rack"}), 5,
             "a second allreduce (allreduce@node+rack, the first at line 4); a plan has exactly "
             "one",
             h);
  checkError(stagesFile({"allreduce@node+rack", "reduce_scatter@socket"}), 5,
             "reduce_scatter@socket comes after the allreduce; reduce-scatters come before it", h);
  checkError(stagesFile({"reduce_scatter@socket", "reduce_scatter@node", "allreduce@rack",
                         "all_gather@socket", "all_gather@node"}),
             7, "all_gather@socket does not mirror reduce_scatter@node (line 5)", h);
  checkError(stagesFile({"reduce_scatter@socket", "reduce_scatter@node", "allreduce@rack",
                         "all_gather@node"}),
             4, "reduce_scatter@socket has no all_gather mirroring it", h);
  checkError(stagesFile({"reduce_scatter@socket", "allreduce@node+rack", "all_gather@socket",
                         "all_gather@node"}),
             7, "all_gather@node has no reduce_scatter to mirror", h);
  checkError(stagesFile({"reduce_scatter@rack", "allreduce@node+rack", "all_gather@rack"}), 5,
             "level 'rack' appears twice: in reduce_scatter@rack (line 4) and in "
             "allreduce@node+rack",
             h);
  checkError(stagesFile({"allreduce@socket+node+socket"}), 4,
             "level 'socket' appears twice in stage 'allreduce@socket+node+socket'", h);
  checkError(stagesFile({"reduce_scatter@socket", "allreduce@rack", "all_gather@socket"}), 2,
             "level 'node' is in no stage; every level must be in one", h);
  checkError(stagesFile({"{stage: reduce_scatter@socket, fabric: mpi}", "allreduce@node+rack",
                         "{stage: all_gather@socket, fabric: nccl}"}),
             6, "all_gather@socket has fabric 'nccl' but reduce_scatter@socket has 'mpi'", h);
  checkError(stagesFile({"{stage: reduce_scatter@socket, chunk_bytes: 4K}", "allreduce@node+rack",
                         "{stage: all_gather@socket, chunk_bytes: 8K}"}),
             6, "all_gather@socket has chunk_bytes 8192 but reduce_scatter@socket has 4096", h);
}

TEST_CASE("plan file: names resolved against the hierarchy", "[plan_file]") {
  checkError(stagesFile({"reduce_scatter@node", "allreduce@rack", "all_gather@node"}), 5,
             "unknown level 'rack' in allreduce@rack; levels: node, network");
  checkError(stagesFile({"reduce_scatter@node", "allreduce@network",
                         "{stage: all_gather@node, fabric: ucx}"}),
             6, "unknown fabric 'ucx' on the node stage; known fabrics: mpi, nccl");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}",
                    "measured:", "  node: {bandwidth_GBps: 1}", "  rack: {bandwidth_GBps: 1}"}),
             5, "measured link for unknown level 'rack'; levels: node, network");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}",
                    "measured:", "  node: {bandwidth_GBps: fast}"}),
             4, "measured level 'node' bandwidth_GBps must be a positive number, found 'fast'");
  checkError(
      lines({"rules:", "  - {min_bytes: 0, plan: flat}", "measured:", "  node: {bandwidth: 1}"}), 4,
      "measured level 'node' has unknown key 'bandwidth'");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}", "measured:", "  node: {}"}), 4,
             "measured level 'node' gives neither bandwidth_GBps nor latency_us");
  checkError(lines({"rules:", "  - {min_bytes: 0, plan: flat}", "measured: [node]"}), 3,
             "measured must be a map");
  // checkPlan's verdict, at the rule's line: an irregular layout only takes innermost first.
  StatusOr<topo::Hierarchy> irregular =
      topo::Hierarchy::fromKeys({topo::Level("node", "mpi"), topo::Level("network", "mpi")},
                                {{"a", "x"}, {"a", "x"}, {"a", "x"}, {"b", "x"}, {"b", "x"}});
  REQUIRE(irregular.isOk());
  checkError(lines({"rules:", "  - {min_bytes: 0, max_bytes: 1K, plan: flat}", "  - min_bytes: 1K",
                    "    stages: [reduce_scatter@network, allreduce@node, all_gather@network]"}),
             3, "stages must take the levels innermost first", irregular.value());
}

TEST_CASE("plan file: rules must tile every size", "[plan_file]") {
  checkError(lines({"rules:", "  - {min_bytes: 1K, plan: flat}"}), 2,
             "no rule covers [0, 1KiB); the rules must start at min_bytes: 0");
  checkError(lines({"rules:", "  - {min_bytes: 0, max_bytes: 1M, plan: flat}"}), 2,
             "no rule covers [1MiB, inf); the last rule must have no max_bytes (or max_bytes: "
             "inf)");
  checkError(lines({"rules:", "  - {min_bytes: 2M, plan: flat}",
                    "  - {min_bytes: 0, max_bytes: 1M, plan: passthrough}"}),
             2, "rules at lines 3 and 2 leave a gap: no rule covers [1MiB, 2MiB)");
  checkError(
      lines({"rules:", "  - {min_bytes: 0, max_bytes: 3M, plan: passthrough}",
             "  - {min_bytes: 2M, max_bytes: 4M, plan: flat}", "  - {min_bytes: 4M, plan: flat}"}),
      3, "rules at lines 2 and 3 overlap on [2MiB, 3MiB)");
  checkError(
      lines({"rules:", "  - {min_bytes: 0, plan: passthrough}", "  - {min_bytes: 0, plan: flat}"}),
      3, "rules at lines 2 and 3 overlap on [0, inf)");
}

TEST_CASE("plan file: loadPlanFile reports what it cannot read", "[plan_file]") {
  StatusOr<PlanFile> missing = loadPlanFile("/nonexistent/plan.yaml");
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.status().code() == Code::kSystemError);
  CHECK(missing.status().message() == "plan file /nonexistent/plan.yaml: file not found");
  CHECK_THAT(loadPlanFile("/tmp").status().message(), Contains("it is a directory"));
  CHECK_THAT(loadPlanFile("/dev/zero").status().message(),
             Contains("plan file /dev/zero: cannot read: it is a character device"));
}

TEST_CASE("plan file: the examples in configs/plans fit their topologies", "[plan_file]") {
  const std::string root = STRATA_SOURCE_DIR;
  struct Example {
    std::string plan, topology;
    int ranks;
  };
  const std::vector<Example> examples = {
      {"two_level", "2x2", 4},          {"two_level", "2x3", 6},
      {"two_level", "4x2", 8},          {"blueconnect_2x2x2", "2x2x2", 8},
      {"small_passthrough", "2x2", 4},  {"small_passthrough", "2x2x2", 8},
      {"small_passthrough", "flat4", 4}};
  for (const Example& e : examples) {
    const std::string planPath = root + "/configs/plans/" + e.plan + ".yaml";
    const std::string topoPath = root + "/configs/topologies/" + e.topology + ".yaml";
    INFO(planPath << " on " << topoPath);
    StatusOr<topo::TopoFile> topoFile = topo::loadTopoFile(topoPath, {"mpi"});
    REQUIRE(topoFile.isOk());
    StatusOr<topo::Hierarchy> h = topo::hierarchyFromTopoFile(topoFile.value(), topoPath, e.ranks);
    REQUIRE(h.isOk());
    StatusOr<PlanFile> file = loadPlanFile(planPath);
    INFO(file.status().message());
    REQUIRE(file.isOk());
    StatusOr<std::vector<PlanRule>> rules =
        resolvePlanFile(file.value(), h.value(), {"mpi"}, planPath);
    INFO(rules.status().message());
    REQUIRE(rules.isOk());
    CHECK(planFor(rules.value(), 0)->passthrough);
    CHECK_FALSE(planFor(rules.value(), size_t{1} << 30)->passthrough);
    CHECK(sameRules(rules.value(), resolveOk(formatPlanFile(rules.value(), h.value()), h.value())));
  }
  // A plan for other levels is refused, naming the levels the topology has.
  StatusOr<topo::TopoFile> topoFile =
      topo::loadTopoFile(root + "/configs/topologies/2x2.yaml", {"mpi"});
  REQUIRE(topoFile.isOk());
  StatusOr<topo::Hierarchy> h = topo::hierarchyFromTopoFile(topoFile.value(), "2x2.yaml", 4);
  REQUIRE(h.isOk());
  StatusOr<PlanFile> file = loadPlanFile(root + "/configs/plans/blueconnect_2x2x2.yaml");
  REQUIRE(file.isOk());
  CHECK_THAT(resolvePlanFile(file.value(), h.value(), {"mpi"}, "b.yaml").status().message(),
             Contains("unknown level 'socket'"));
}

}  // namespace
}  // namespace strata::plan
