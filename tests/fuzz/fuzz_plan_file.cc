// Plan files (STRATA_PLAN_FILE): parsePlanFile, then resolvePlanFile against a three-level
// hierarchy; resolved rules must format to text that resolves to rules with the same hash.
#include "decompose/plan_file.h"
#include "fuzz_common.h"

STRATA_FUZZ_INIT

namespace {
// The level sets the seed corpus names: socket x node x rack, node x network, rack x network.
const std::vector<strata::topo::Hierarchy>& hierarchies() {
  static const std::vector<strata::topo::Hierarchy> all = [] {
    using strata::topo::Level;
    const std::vector<std::vector<Level>> sets = {
        {{"socket", "mpi", {}, 1}, {"node", "mpi", {}, 1}, {"rack", "mpi", {}, 1}},
        {{"node", "shm", {}, 1}, {"network", "mpi", {}, 1}},
        {{"rack", "mpi", {}, 1}, {"network", "mpi", {}, 1}}};
    std::vector<strata::topo::Hierarchy> out;
    for (const auto& levels : sets) {
      out.push_back(
          strata::topo::Hierarchy::regular(levels, std::vector<int>(levels.size(), 2)).take());
    }
    return out;
  }();
  return all;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const std::vector<std::string> fabrics = {"mpi", "shm", "nccl"};
  StatusOr<plan::PlanFile> file = plan::parsePlanFile(fuzz::textOf(data, size), "<fuzz>");
  if (!file.isOk()) return 0;
  for (const topo::Hierarchy& h : hierarchies()) {
    StatusOr<std::vector<plan::PlanRule>> rules =
        plan::resolvePlanFile(file.value(), h, fabrics, "<fuzz>");
    if (!rules.isOk()) continue;
    for (const plan::PlanRule& rule : rules.value()) {
      for (const plan::Stage& stage : rule.plan.stages) {
        fuzz::require(stage.chunkBytes == 0 || (stage.chunkBytes >= plan::kMinChunkBytes &&
                                                stage.chunkBytes <= plan::kMaxChunkBytes),
                      "chunk_bytes in range");
      }
    }
    const std::string text = plan::formatPlanFile(rules.value(), h, file.value().measured);
    StatusOr<plan::PlanFile> again = plan::parsePlanFile(text, "<formatted>");
    fuzz::require(again.isOk(), "formatPlanFile's text parses",
                  again.status().message() + "\n" + text);
    StatusOr<std::vector<plan::PlanRule>> resolved =
        plan::resolvePlanFile(again.value(), h, fabrics, "<formatted>");
    fuzz::require(resolved.isOk(), "formatPlanFile's text resolves",
                  resolved.status().message() + "\n" + text);
    fuzz::require(plan::planHash(resolved.value(), h) == plan::planHash(rules.value(), h),
                  "the formatted rules hash the same", text);
  }
  return 0;
}
