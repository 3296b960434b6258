#include "core/dispatch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "common/reduce.h"
#include "core/device_path.h"
#include "core/groups.h"
#include "core/run_steps.h"
#include "decompose/schedule.h"

namespace strata::core {

size_t passElements(const strataComm& c, size_t ts) { return std::max<size_t>(1, c.chunkBytes / ts); }

namespace {

using plan::Step;
using plan::StepKind;


// A plan's pipeline piece: the smallest chunk_bytes its stages set, else STRATA_PIPELINE_BYTES
// (0: no pipelining, the whole pass is one piece).
size_t pipelineBytes(const strataComm& c, const plan::Plan& p) {
  size_t bytes = 0;
  for (const plan::Stage& s : p.stages) {
    if (s.chunkBytes != 0 && (bytes == 0 || s.chunkBytes < bytes)) bytes = s.chunkBytes;
  }
  if (bytes == 0) bytes = c.pipelineBytes;
  return bytes == 0 ? c.chunkBytes : bytes;
}

bool hierarchical(const strataComm& c) { return c.hierarchy.numLevels() > 1; }

constexpr int kReduceScatterKey = 1, kAllGatherKey = 2;  // 0 is the allreduce (run_steps.cc)

}  // namespace

namespace {

// The allreduce of every pass under the plan `pick` gives for the pass's bytes.
template <typename Pick>
Status allReduceBy(strataComm& c, Pick pick, const void* send, void* recv, size_t count,
                   strataDataType_t type, strataRedOp_t op) {
  if (count == 0) return Status::ok();
  const size_t ts = dataTypeSize(type);
  if (c.size == 1) {
    if (send != recv) return copyBytes(c, recv, send, count * ts);
    return Status::ok();  // a sum, product, max, min or average of one value is itself
  }
  // An allreduce is elementwise, so pieces are independent allreduces: each pass is a whole
  // hierarchical allreduce of at most passElements elements.
  const size_t pass = passElements(c, ts);
  for (size_t off = 0; off < count; off += pass) {
    const size_t n = std::min(pass, count - off);
    STRATA_ASSIGN_OR_RETURN(PlanExec * exec, pick(n * ts));
    const size_t piece = std::max<size_t>(1, pipelineBytes(c, exec->plan) / ts);
    STRATA_TRACE(kSubsysColl, "allreduce pass of %zu elements at %zu: %s, pieces of %zu", n, off,
                 exec->description.c_str(), std::min(piece, n));
    STRATA_RETURN_IF_ERROR(
        runPipelined(c, *exec, piece, at(send, off, ts), at(recv, off, ts), n, type, op));
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
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, fabricOf(c, nullptr));
    STRATA_RETURN_IF_ERROR(flat->reduceScatter(send, recv, s.counts.data(), s.displs.data(), type,
                                               op == strataAvg ? strataSum : op));
    if (op == strataAvg) return divideBy(c, recv, recvcount, type, c.size);
    return Status::ok();
  }
  // Otherwise through scratch, which also keeps an in-place call from touching the other
  // blocks of sendbuff.
  for (size_t a = 0; a < recvcount; a += cols) {
    const size_t w = std::min(cols, recvcount - a);
    STRATA_ASSIGN_OR_RETURN(void* work, scratchBytes(c, p * w * ts));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(c.hierarchy, static_cast<int>(j)) : j;
      STRATA_RETURN_IF_ERROR(
          copyBytes(c, at(work, pos * w, ts), at(send, j * recvcount + a, ts), w * ts));
    }
    const std::vector<Step>& steps = c.schedules.get(kReduceScatterKey, w, [&] {
      return hier ? plan::reduceScatterSteps(c.hierarchy, c.rank, w)
                  : plan::flatBlockSteps(StepKind::kReduceScatter, c.rank, c.size, w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, c.levels, steps, work, work, type, op));
    const size_t mine = hier ? plan::permutedPosition(c.hierarchy, c.rank) : c.rank;
    char* out = at(recv, a, ts);
    STRATA_RETURN_IF_ERROR(copyBytes(c, out, at(work, mine * w, ts), w * ts));
    if (op == strataAvg) STRATA_RETURN_IF_ERROR(divideBy(c, out, w, type, c.size));
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
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, fabricOf(c, nullptr));
    return flat->allGather(send, recv, steps[0].counts.data(), steps[0].displs.data(), type);
  }
  for (size_t a = 0; a < sendcount; a += cols) {
    const size_t w = std::min(cols, sendcount - a);
    STRATA_ASSIGN_OR_RETURN(void* work, scratchBytes(c, p * w * ts));
    const size_t mine = hier ? plan::permutedPosition(c.hierarchy, c.rank) : c.rank;
    STRATA_RETURN_IF_ERROR(copyBytes(c, at(work, mine * w, ts), at(send, a, ts), w * ts));
    const std::vector<Step>& steps = c.schedules.get(kAllGatherKey, w, [&] {
      return hier ? plan::allGatherSteps(c.hierarchy, c.rank, w)
                  : plan::flatBlockSteps(StepKind::kAllGather, c.rank, c.size, w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, c.levels, steps, work, work, type, strataSum));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(c.hierarchy, static_cast<int>(j)) : j;
      STRATA_RETURN_IF_ERROR(
          copyBytes(c, at(recv, j * sendcount + a, ts), at(work, pos * w, ts), w * ts));
    }
  }
  return Status::ok();
}

}  // namespace strata::core
