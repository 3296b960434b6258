// The plan-file key `layout:` (plan_file.h): formatPlanFile writes the hierarchy it was made
// for, parsePlanFile reads it back, it leaves the hash alone, and a file that does not fit the
// job names both layouts.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "decompose/plan_file.h"

namespace strata::plan {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

topo::Hierarchy make(const std::vector<std::string>& names, const std::vector<int>& sizes) {
  std::vector<topo::Level> levels;
  for (const std::string& n : names) levels.emplace_back(n, "mpi");
  StatusOr<topo::Hierarchy> h = topo::Hierarchy::regular(levels, sizes);
  REQUIRE(h.isOk());
  return h.value();
}

const char* const kThreeLevels =
    "rules:\n"
    "  - min_bytes: 0\n"
    "    stages: [reduce_scatter@socket, reduce_scatter@node, allreduce@rack,\n"
    "             all_gather@node, all_gather@socket]\n";

StatusOr<std::vector<PlanRule>> resolveText(const std::string& text, const topo::Hierarchy& h) {
  STRATA_ASSIGN_OR_RETURN(PlanFile file, parsePlanFile(text, "t.yaml"));
  return resolvePlanFile(file, h, {"mpi", "shm"}, "t.yaml");
}

}  // namespace

TEST_CASE("plan file layout: written by formatPlanFile, read back, not hashed", "[plan_file]") {
  const topo::Hierarchy h = make({"socket", "node", "rack"}, {2, 2, 2});
  CHECK(planLayout(h) == "socket(2) x node(2) x rack(2), 8 ranks");
  StatusOr<std::vector<PlanRule>> rules = resolveText(kThreeLevels, h);
  REQUIRE(rules.isOk());
  const std::string text = formatPlanFile(rules.value(), h);
  INFO(text);
  CHECK_THAT(text, Contains("\nlayout: \"socket(2) x node(2) x rack(2), 8 ranks\""));
  StatusOr<PlanFile> again = parsePlanFile(text, "again.yaml");
  REQUIRE(again.isOk());
  CHECK(again.value().layout == "socket(2) x node(2) x rack(2), 8 ranks");
  StatusOr<std::vector<PlanRule>> reread = resolvePlanFile(again.value(), h, {"mpi"}, "x");
  REQUIRE(reread.isOk());
  CHECK(planHash(reread.value(), h) == planHash(rules.value(), h));

  StatusOr<PlanFile> bad = parsePlanFile(std::string(kThreeLevels) + "layout: [a, b]\n", "b.yaml");
  REQUIRE_FALSE(bad.isOk());
  CHECK_THAT(bad.status().message(), Contains("b.yaml:5: layout must be text"));
}

TEST_CASE("plan file layout: a file that does not fit names both layouts", "[plan_file]") {
  const topo::Hierarchy job = make({"node", "network"}, {2, 2});
  StatusOr<std::vector<PlanRule>> recorded = resolveText(
      std::string(kThreeLevels) + "layout: \"socket(2) x node(2) x rack(2), 8 ranks\"\n", job);
  REQUIRE_FALSE(recorded.isOk());
  CHECK_THAT(recorded.status().message(), Contains("unknown level 'socket'"));
  CHECK_THAT(recorded.status().message(),
             EndsWith("; the file was written for socket(2) x node(2) x rack(2), 8 ranks, this "
                      "job's layout is node(2) x network(2), 4 ranks"));

  StatusOr<std::vector<PlanRule>> none = resolveText(kThreeLevels, job);
  REQUIRE_FALSE(none.isOk());
  CHECK_THAT(none.status().message(),
             EndsWith("; this job's layout is node(2) x network(2), 4 ranks (the file records "
                      "none: no `layout:`)"));

  // Ranges that do not tile are the file's own fault, whatever the layout: no layout text.
  StatusOr<std::vector<PlanRule>> gap = resolveText(
      "rules:\n  - {min_bytes: 1KiB, plan: passthrough}\nlayout: \"x(2), 2 ranks\"\n", job);
  REQUIRE_FALSE(gap.isOk());
  CHECK_THAT(gap.status().message(), !Contains("layout"));
}

}  // namespace strata::plan
