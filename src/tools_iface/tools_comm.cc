#include "tools_iface/tools_comm.h"

#include "api/handle.h"
#include "bootstrap/bootstrap.h"
#include "core/calls.h"
#include "core/comm.h"

namespace strata::tools_iface {
namespace {

// Forwards each question to the communicator; holds nothing of its own.
class CommTools final : public ToolsComm {
 public:
  explicit CommTools(core::Comm& c) : c_(c) {}

  int rank() const override { return c_.rank(); }
  int size() const override { return c_.size(); }
  const topo::Hierarchy& hierarchy() const override { return c_.hierarchy(); }
  const std::string& hierarchySource() const override { return c_.hierarchySource(); }
  const std::vector<plan::PlanRule>& planRules() const override { return c_.plans().rules(); }
  const plan::BlockRules& blockRules() const override { return c_.plans().blockRules(); }
  const std::string& planSource() const override { return c_.plans().source(); }
  const plan::CostParams& costParams() const override { return c_.costParams(); }

  Status agree(const Status& local) override { return boot::agree(c_.bootstrap(), local); }

  StatusOr<topo::GatheredCluster> gatherCluster() override {
    boot::Bootstrap& b = c_.bootstrap();
    return topo::exchangeCluster(
        b.rank(), b.size(), c_.settings().hostName, topo::describeLocalNode(c_.settings().hostName),
        [&b](const void* mine, void* all, size_t bytes) { return b.allGather(mine, all, bytes); },
        [&b](const std::string& mine) { return boot::allGatherStrings(b, mine); });
  }

  Status preparePlan(const plan::Plan& p) override {
    core::IssueScope one(c_, "preparePlan");
    STRATA_RETURN_IF_ERROR(one.status());
    return c_.plans().forPlan(p, one.thread()).status();
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

std::unique_ptr<ToolsComm> toolsCommOf(strataComm_t comm) {
  api::CommEntry* entry = api::lookupComm(comm);
  if (entry == nullptr || entry->impl == nullptr) return nullptr;
  return std::make_unique<CommTools>(*entry->impl);
}

}  // namespace strata::tools_iface
