// The plan-file key `wire:` (plan_file.h): what it reads to, where it may be given, what is
// refused and on which line, and that it survives formatPlanFile and shows in describePlan.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "decompose/plan_file.h"

namespace strata::plan {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

topo::Hierarchy nodeNetwork() {
  StatusOr<topo::Hierarchy> h =
      topo::Hierarchy::regular({topo::Level("node", "shm"), topo::Level("network", "mpi")}, {2, 2});
  REQUIRE(h.isOk());
  return h.value();
}

// One rule [0, inf) whose stages are `stages`, one a line from line 4 on.
std::string withStages(const std::vector<std::string>& stages) {
  std::string text = "rules:\n  - min_bytes: 0\n    stages:\n";
  for (const std::string& s : stages) text += "      - " + s + "\n";
  return text;
}

StatusOr<std::vector<PlanRule>> readRules(const std::string& text) {
  STRATA_ASSIGN_OR_RETURN(PlanFile file, parsePlanFile(text, "w.yaml"));
  return resolvePlanFile(file, nodeNetwork(), {"mpi", "shm"}, "w.yaml");
}

std::vector<PlanRule> rulesOk(const std::string& text) {
  StatusOr<std::vector<PlanRule>> rules = readRules(text);
  INFO(text << rules.status().message());
  REQUIRE(rules.isOk());
  return rules.value();
}

void refused(const std::string& text, int line, const std::string& problem) {
  StatusOr<std::vector<PlanRule>> rules = readRules(text);
  INFO(text);
  REQUIRE_FALSE(rules.isOk());
  CHECK(rules.status().code() == Code::kInvalidArgument);
  CHECK_THAT(rules.status().message(), StartsWith("plan file w.yaml:" + std::to_string(line)));
  CHECK_THAT(rules.status().message(), Contains(problem));
}

}  // namespace

TEST_CASE("plan file wire: unset by default, each value read onto its stage", "[plan_file]") {
  const std::vector<PlanRule> plain =
      rulesOk(withStages({"reduce_scatter@node", "allreduce@network", "all_gather@node"}));
  for (const Stage& s : plain[0].plan.stages) CHECK_FALSE(s.wire.has_value());

  const std::vector<PlanRule> rules =
      rulesOk(withStages({"{stage: reduce_scatter@node, wire: none}",
                          "{stage: allreduce@network, wire: fp16}", "all_gather@node"}));
  const std::vector<Stage>& stages = rules[0].plan.stages;
  REQUIRE(stages.size() == 2);
  REQUIRE(stages[0].wire.has_value());
  CHECK(*stages[0].wire == WireType::kNone);
  REQUIRE(stages[1].wire.has_value());
  CHECK(*stages[1].wire == WireType::kFp16);

  // Given on the all-gather only, it applies to the whole stage, as fabric does.
  const std::vector<PlanRule> gathered = rulesOk(withStages(
      {"reduce_scatter@network", "allreduce@node", "{stage: all_gather@network, wire: bf16}"}));
  REQUIRE(gathered[0].plan.stages[0].wire.has_value());
  CHECK(*gathered[0].plan.stages[0].wire == WireType::kBf16);
  CHECK_FALSE(gathered[0].plan.stages[1].wire.has_value());
}

TEST_CASE("plan file wire: unknown values and halves that disagree are refused", "[plan_file]") {
  refused(withStages({"{stage: allreduce@node+network, wire: fp8}"}), 4,
          "stage allreduce@node+network wire must be none, fp16 or bf16, found 'fp8'");
  refused(withStages({"{stage: allreduce@node+network, wire: [fp16]}"}), 4,
          "wire must be none, fp16 or bf16, found a sequence");
  refused(withStages({"{stage: reduce_scatter@node, wire: fp16}", "allreduce@network",
                      "{stage: all_gather@node, wire: bf16}"}),
          6, "all_gather@node has wire bf16 but reduce_scatter@node has fp16");
}

TEST_CASE("plan file wire: formatPlanFile writes it back and describePlan shows it",
          "[plan_file]") {
  const topo::Hierarchy h = nodeNetwork();
  const std::vector<PlanRule> rules =
      rulesOk(withStages({"{stage: reduce_scatter@node, wire: none}",
                          "{stage: allreduce@network, wire: bf16}", "all_gather@node"}));
  const std::string text = formatPlanFile(rules, h);
  INFO(text);
  CHECK_THAT(text, Contains("{stage: reduce_scatter@node, wire: none}"));
  CHECK_THAT(text, Contains("{stage: allreduce@network, wire: bf16}"));
  const std::vector<PlanRule> again = rulesOk(text);
  CHECK(again[0].plan.stages[1].wire == rules[0].plan.stages[1].wire);
  CHECK(again[0].plan.stages[0].wire == rules[0].plan.stages[0].wire);
  // The hash sees it (ranks whose files differ only in wire must not agree)...
  const std::vector<PlanRule> plain =
      rulesOk(withStages({"reduce_scatter@node", "allreduce@network", "all_gather@node"}));
  CHECK(planHash(rules, h) != planHash(plain, h));
  // ... and so does the description (core keys its forced plans by it).
  CHECK(describePlan(h, rules[0].plan) ==
        "reduce_scatter@node [wire none], allreduce@network [wire bf16], all_gather@node "
        "[wire none]");
  CHECK(describePlan(h, plain[0].plan) ==
        "reduce_scatter@node, allreduce@network, all_gather@node");
}

}  // namespace strata::plan
