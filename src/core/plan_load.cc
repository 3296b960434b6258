#include "core/plan_load.h"

#include "common/log.h"
#include "common/yaml_util.h"

namespace strata::plan {
namespace {

// Far above any real plan file; it keeps a wrong path (/dev/zero) from being read forever.
constexpr size_t kMaxFileBytes = 1 << 20;

}  // namespace

StatusOr<PlanFile> loadPlanFile(const std::string& path) {
  yaml::Errors errors("plan file", path);
  STRATA_ASSIGN_OR_RETURN(std::string text, yaml::readTextFile(path, kMaxFileBytes, errors));
  return parsePlanFile(text, path);
}

}  // namespace strata::plan

namespace strata::core {

StatusOr<std::vector<plan::PlanRule>> loadPlanRules(const std::string& path,
                                                    const topo::Hierarchy& h,
                                                    const std::vector<std::string>& fabrics,
                                                    std::string* layout, plan::BlockRules* blocks) {
  StatusOr<std::vector<plan::PlanRule>> rules = [&]() -> StatusOr<std::vector<plan::PlanRule>> {
    STRATA_ASSIGN_OR_RETURN(plan::PlanFile file, plan::loadPlanFile(path));
    *layout = file.layout;
    return plan::resolvePlanFile(file, h, fabrics, path, blocks);
  }();
  if (rules.isOk()) return rules;
  // Logged where it is found, once; the ranks' agreement and the C boundary only propagate it.
  Status status = rules.status();
  STRATA_WARN(kSubsysPlan, "%s", status.message().c_str());
  return status.markLogged();
}

}  // namespace strata::core
