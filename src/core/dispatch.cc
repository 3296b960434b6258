#include "core/dispatch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/datatype.h"
#include "common/log.h"
#include "common/reduce.h"
#include "core/groups.h"
#include "decompose/schedule.h"

namespace strata::core {
namespace {

using plan::Step;
using plan::StepKind;

char* at(void* base, size_t elements, size_t ts) { return static_cast<char*>(base) + elements * ts; }
const char* at(const void* base, size_t elements, size_t ts) {
  return static_cast<const char*>(base) + elements * ts;
}

// The fabric of a step: the whole communicator's, or that of the step's level group (the
// comm's own levels, or a plan's stage groups).
fabric::Fabric& fabricFor(strataComm& c, const std::vector<LevelGroup*>& groups, int level) {
  return level == plan::kFlatLevel ? *c.flat : *groups[level]->fabric;
}

// Runs `steps` on a working buffer `work` of the pass. The first step may read from `src`
// instead (an out-of-place allreduce), so that the input is never copied.
//   reduce-scatter: input is the step's range, output this rank's block within it;
//   allreduce:      input and output are the step's range;
//   all-gather:     in place, from this rank's block to the whole range.
// strataAvg is combined as a sum; the ranks of the top-level allreduce divide its result by
// the rank count, once, before the all-gathers spread it (every element passes through
// exactly one top-level allreduce).
Status runSteps(strataComm& c, const std::vector<LevelGroup*>& groups,
                const std::vector<Step>& steps, const void* src, void* work,
                strataDataType_t type, strataRedOp_t op) {
  const size_t ts = dataTypeSize(type);
  const strataRedOp_t fop = op == strataAvg ? strataSum : op;
  const void* in = src;
  for (const Step& s : steps) {
    fabric::Fabric& f = fabricFor(c, groups, s.level);
    switch (s.kind) {
      case StepKind::kReduceScatter:
        STRATA_RETURN_IF_ERROR(f.reduceScatter(at(in, s.offset, ts),
                                               at(work, s.offset + s.displs[s.index], ts),
                                               s.counts.data(), s.displs.data(), type, fop));
        if (op == strataAvg && s.finishesReduction) {
          scaleDown(at(work, s.offset + s.displs[s.index], ts), s.counts[s.index], type, c.size);
        }
        break;
      case StepKind::kAllReduce:
        STRATA_RETURN_IF_ERROR(
            f.allReduce(at(in, s.offset, ts), at(work, s.offset, ts), s.count, type, fop));
        if (op == strataAvg && s.finishesReduction) {
          scaleDown(at(work, s.offset, ts), s.count, type, c.size);
        }
        break;
      case StepKind::kAllGather:
        STRATA_RETURN_IF_ERROR(f.allGather(at(work, s.offset + s.displs[s.index], ts),
                                           at(work, s.offset, ts), s.counts.data(),
                                           s.displs.data(), type));
        break;
    }
    in = work;  // every later step works in place
  }
  return Status::ok();
}

// Elements per pass: STRATA_CHUNK_BYTES worth, at least one.
size_t passElements(const strataComm& c, size_t ts) { return std::max<size_t>(1, c.chunkBytes / ts); }

bool hierarchical(const strataComm& c) { return c.hierarchy.numLevels() > 1; }

constexpr int kAllReduceKey = 0, kReduceScatterKey = 1, kAllGatherKey = 2;

}  // namespace

namespace {

// The allreduce of every pass under the plan `pick` gives for the pass's bytes.
template <typename Pick>
Status allReduceBy(strataComm& c, Pick pick, const void* send, void* recv, size_t count,
                   strataDataType_t type, strataRedOp_t op) {
  if (count == 0) return Status::ok();
  const size_t ts = dataTypeSize(type);
  if (c.size == 1) {
    if (send != recv) std::memcpy(recv, send, count * ts);
    return Status::ok();  // a sum, product, max, min or average of one value is itself
  }
  // An allreduce is elementwise, so pieces are independent allreduces: each pass is a whole
  // hierarchical allreduce of at most passElements elements.
  const size_t pass = passElements(c, ts);
  for (size_t off = 0; off < count; off += pass) {
    const size_t n = std::min(pass, count - off);
    STRATA_ASSIGN_OR_RETURN(PlanExec * exec, pick(n * ts));
    const std::vector<Step>& steps = exec->schedules.get(kAllReduceKey, n, [&] {
      if (exec->plan.passthrough) return plan::flatAllReduceSteps(n);
      const bool ring = exec->plan.stages.back().algorithm == "ring";
      return plan::allReduceSteps(exec->derived, c.rank, n, ring);
    });
    STRATA_TRACE(kSubsysColl, "allreduce pass of %zu elements at %zu: %s, %zu steps", n, off,
                 exec->description.c_str(), steps.size());
    STRATA_RETURN_IF_ERROR(
        runSteps(c, exec->groups, steps, at(send, off, ts), at(recv, off, ts), type, op));
  }
  return Status::ok();
}

}  // namespace

Status allReduce(strataComm& c, const void* send, void* recv, size_t count, strataDataType_t type,
                 strataRedOp_t op) {
  return allReduceBy(
      c, [&](size_t bytes) { return planForBytes(c, bytes); }, send, recv, count, type, op);
}

Status allReduceWithPlan(strataComm& c, const plan::Plan& p, const void* send, void* recv,
                         size_t count, strataDataType_t type, strataRedOp_t op) {
  STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy, p));
  return allReduceBy(
      c, [&](size_t) { return execForPlan(c, p); }, send, recv, count, type, op);
}

// Reduce-scatter and all-gather work on columns [a, a+w) of every rank's block at a time,
// gathered into the scratch buffer in the order the schedule hands out blocks (rank r's
// block at permutedPosition(r)). The flat schedule's order is the identity.
Status reduceScatter(strataComm& c, const void* send, void* recv, size_t recvcount,
                     strataDataType_t type, strataRedOp_t op) {
  if (recvcount == 0) return Status::ok();
  const size_t ts = dataTypeSize(type);
  const size_t p = static_cast<size_t>(c.size);
  const bool hier = hierarchical(c) && plan::hierarchicalBlocksPossible(c.hierarchy);
  const size_t cols = std::max<size_t>(1, passElements(c, ts) / p);
  const bool inPlace = recv == at(send, c.rank * recvcount, ts);
  if (!hier && !inPlace && cols >= recvcount) {
    // One flat pass straight between the user's buffers.
    const std::vector<Step>& steps = c.schedules.get(kReduceScatterKey, recvcount, [&] {
      return plan::flatBlockSteps(StepKind::kReduceScatter, c.rank, c.size, recvcount);
    });
    const Step& s = steps[0];
    STRATA_RETURN_IF_ERROR(c.flat->reduceScatter(send, recv, s.counts.data(), s.displs.data(),
                                                 type, op == strataAvg ? strataSum : op));
    if (op == strataAvg) scaleDown(recv, recvcount, type, c.size);
    return Status::ok();
  }
  // Otherwise through scratch, which also keeps an in-place call from touching the other
  // blocks of sendbuff.
  for (size_t a = 0; a < recvcount; a += cols) {
    const size_t w = std::min(cols, recvcount - a);
    char* work = static_cast<char*>(c.scratch.get(p * w * ts));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(c.hierarchy, static_cast<int>(j)) : j;
      std::memcpy(at(work, pos * w, ts), at(send, j * recvcount + a, ts), w * ts);
    }
    const std::vector<Step>& steps = c.schedules.get(kReduceScatterKey, w, [&] {
      return hier ? plan::reduceScatterSteps(c.hierarchy, c.rank, w)
                  : plan::flatBlockSteps(StepKind::kReduceScatter, c.rank, c.size, w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, c.levels, steps, work, work, type, op));
    const size_t mine = hier ? plan::permutedPosition(c.hierarchy, c.rank) : c.rank;
    char* out = at(recv, a, ts);
    std::memcpy(out, at(work, mine * w, ts), w * ts);
    if (op == strataAvg) scaleDown(out, w, type, c.size);
  }
  return Status::ok();
}

Status allGather(strataComm& c, const void* send, void* recv, size_t sendcount,
                 strataDataType_t type) {
  if (sendcount == 0) return Status::ok();
  const size_t ts = dataTypeSize(type);
  const size_t p = static_cast<size_t>(c.size);
  const bool hier = hierarchical(c) && plan::hierarchicalBlocksPossible(c.hierarchy);
  const size_t cols = std::max<size_t>(1, passElements(c, ts) / p);
  if (!hier && cols >= sendcount) {
    // One flat pass straight between the user's buffers (in place when send is recv's block).
    const std::vector<Step>& steps = c.schedules.get(kAllGatherKey, sendcount, [&] {
      return plan::flatBlockSteps(StepKind::kAllGather, c.rank, c.size, sendcount);
    });
    return c.flat->allGather(send, recv, steps[0].counts.data(), steps[0].displs.data(), type);
  }
  for (size_t a = 0; a < sendcount; a += cols) {
    const size_t w = std::min(cols, sendcount - a);
    char* work = static_cast<char*>(c.scratch.get(p * w * ts));
    const size_t mine = hier ? plan::permutedPosition(c.hierarchy, c.rank) : c.rank;
    std::memcpy(at(work, mine * w, ts), at(send, a, ts), w * ts);
    const std::vector<Step>& steps = c.schedules.get(kAllGatherKey, w, [&] {
      return hier ? plan::allGatherSteps(c.hierarchy, c.rank, w)
                  : plan::flatBlockSteps(StepKind::kAllGather, c.rank, c.size, w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, c.levels, steps, work, work, type, strataSum));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(c.hierarchy, static_cast<int>(j)) : j;
      std::memcpy(at(recv, j * sendcount + a, ts), at(work, pos * w, ts), w * ts);
    }
  }
  return Status::ok();
}

}  // namespace strata::core
