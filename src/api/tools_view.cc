#include "api/tools_view.h"

#include "api/handle.h"
#include "core/calls.h"
#include "core/comm.h"

namespace strata::api {
namespace {

// Forwards each question to the communicator; holds nothing of its own.
class CommToolsView final : public core::ToolsView {
 public:
  explicit CommToolsView(core::Comm& c) : c_(c) {}

  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }
  const topo::Hierarchy& hierarchy() const override { return c_.hierarchy(); }
  const std::string& hierarchySource() const override { return c_.hierarchySource(); }
  const std::vector<plan::PlanRule>& planRules() const override { return c_.plans().rules(); }
  const plan::BlockRules& blockRules() const override { return c_.plans().blockRules(); }
  const std::string& planSource() const override { return c_.plans().source(); }
  const plan::CostParams& costParams() const override { return c_.costParams(); }
  boot::Bootstrap& bootstrap() override { return c_.bootstrap(); }

  boot::Bootstrap* levelBootstrap(int level) override {
    const std::vector<core::LevelGroup*>& levels = c_.groups().levels();
    if (level < 0 || level >= static_cast<int>(levels.size()) || levels[level] == nullptr) {
      return nullptr;
    }
    return levels[level]->boot.get();
  }

  Status preparePlan(const plan::Plan& p) override {
    return c_.plans().forPlan(p, c_.issuing()).status();
  }

  Status allReduceWithPlan(const plan::Plan& p, const void* send, void* recv, size_t count,
                           strataDataType_t type, strataRedOp_t op) override {
    return core::allReduceWithPlan(c_, p, send, recv, count, type, op);
  }
  Status blocksWithForm(Collective coll, plan::BlockForm form, const void* send, void* recv,
                        size_t count, strataDataType_t type, strataRedOp_t op) override {
    return core::blocksWithForm(c_, coll, form, send, recv, count, type, op);
  }

 private:
  core::Comm& c_;
};

}  // namespace

std::unique_ptr<core::ToolsView> toolsViewOf(strataComm_t comm) {
  CommEntry* entry = lookupComm(comm);
  if (entry == nullptr || entry->impl == nullptr) return nullptr;
  return std::make_unique<CommToolsView>(*entry->impl);
}

}  // namespace strata::api
