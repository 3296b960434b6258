#include "core/csc.h"

#include <algorithm>

#include "common/datatype.h"
#include "core/calls.h"
#include "core/device_side.h"

namespace strata::core {
namespace {

Call allReduceInPlace(void* buf, size_t count, strataDataType_t type, strataRedOp_t op) {
  Call call;
  call.coll = Collective::kAllReduce;
  call.send = buf;
  call.recv = buf;
  call.count = count;
  call.type = type;
  call.op = op;
  return call;
}

}  // namespace

Csc::Csc(size_t count, strataDataType_t type, size_t chunkElems, float density)
    : chunking_(csc::Chunking::of(count, chunkElems)),
      type_(type),
      typeSize_(dataTypeSize(type)),
      residual_(count * typeSize_, 0),
      norms_(chunking_.nchunks),
      order_(chunking_.nchunks),
      selected_(csc::keptChunks(density, chunking_.nchunks)),
      // The k largest chunks hold at most k * chunkElems elements, and no more than count.
      pack_(std::min(selected_.size() * chunkElems, count) * typeSize_) {}

Status Csc::allReduce(Comm& c, void* buff, strataRedOp_t op) {
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, buff, buff));
  if (place == Place::kDevice) {
    return invalidUsage(
        "buff is device memory: strataCscAllReduce takes host buffers for now (the sparse "
        "path has not been built or tested on a GPU)");
  }
  csc::accumulate(type_, chunking_, buff, residual_.data(), norms_.data());
  // Invariant after this allreduce: norms_ holds the same bytes on every rank, so the
  // selection below, a pure function of them, is the same on every rank.
  STRATA_RETURN_IF_ERROR(
      issue(c, allReduceInPlace(norms_.data(), norms_.size(), strataFloat32, strataSum), nullptr));
  const size_t k = selected_.size();
  csc::selectTopK(norms_.data(), chunking_.nchunks, k, order_.data(), selected_.data());
  const size_t packed =
      csc::pack(typeSize_, chunking_, selected_.data(), k, residual_.data(), pack_.data());
  STRATA_RETURN_IF_ERROR(issue(c, allReduceInPlace(pack_.data(), packed, type_, op), nullptr));
  csc::unpack(typeSize_, chunking_, selected_.data(), k, pack_.data(), buff);
  return Status::ok();
}

}  // namespace strata::core
