// The C boundary of coarse-grained sparse communication: strataCscCreate, strataCscAllReduce
// and strataCscDestroy (include/strata/strata.h). Arguments are checked here; the call itself
// is core::Csc (core/csc.h). Errors go to the CSC object's communicator (strataGetLastError).
#include <cmath>
#include <cstdint>
#include <string>

#include "api/csc_handle.h"
#include "api/group.h"
#include "api/guard.h"
#include "common/datatype.h"
#include "core/csc_select.h"

namespace strata::api {
namespace {

Status checkCreate(size_t count, int type, size_t chunkElems, float density) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, 0, false));
  const auto t = static_cast<strataDataType_t>(type);
  if (!core::csc::cscTypeSupported(t)) {
    return invalidArgument(std::string("datatype ") + dataTypeName(t) +
                           " is not supported: CSC takes float32, float16 or bfloat16");
  }
  if (count == 0) return invalidArgument("count is 0");
  if (chunkElems == 0) return invalidArgument("chunkElems is 0");
  // Written so that NaN fails too.
  if (!(density > 0.0f && density <= 1.0f)) {
    return invalidArgument("density " + std::to_string(density) + " is not in (0, 1]");
  }
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const core::csc::Chunking ch = core::csc::Chunking::of(count, chunkElems);
  if (ch.nchunks > UINT32_MAX) {
    return invalidArgument(std::to_string(ch.nchunks) +
                           " chunks (count / chunkElems) is more than 2^32 - 1");
  }
  return Status::ok();
}

// The live entry behind `csc`, and its communicator's.
StatusOr<CscEntry*> liveCsc(strataCsc_t csc) {
  if (csc == nullptr) return invalidArgument("csc is NULL");
  CscEntry* entry = lookupCsc(csc);
  if (entry == nullptr) {
    return invalidArgument("csc is not a live CSC handle (destroyed or never created)");
  }
  return entry;
}

strataComm_t commOf(strataCsc_t csc) {
  CscEntry* entry = lookupCsc(csc);
  return entry != nullptr ? entry->comm : nullptr;
}

}  // namespace
}  // namespace strata::api

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

extern "C" {

strataResult_t strataCscCreate(strataComm_t comm, size_t count, strataDataType_t datatype,
                               size_t chunkElems, float density, strataCsc_t* csc) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataCscCreate", [&]() -> Status {
    if (csc == nullptr) return invalidArgument("csc is NULL");
    STRATA_RETURN_IF_ERROR(liveComm(comm).status());
    STRATA_RETURN_IF_ERROR(checkCreate(count, type, chunkElems, density));
    auto entry = std::make_unique<CscEntry>();
    entry->comm = comm;
    entry->impl = std::make_unique<core::Csc>(count, static_cast<strataDataType_t>(type),
                                              chunkElems, density);
    *csc = registerCsc(std::move(entry));
    return Status::ok();
  });
}

strataResult_t strataCscAllReduce(strataCsc_t csc, void* buff, strataRedOp_t op,
                                  strataStream_t stream) {
  (void)stream;  // host buffers only for now: core::Csc refuses device memory
  const int rop = rawEnum(op);
  return guarded(commOf(csc), "strataCscAllReduce", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CscEntry * e, liveCsc(csc));
    StatusOr<CommEntry*> c = liveComm(e->comm);
    if (!c.isOk()) return c.status().withContext("the communicator of csc");
    STRATA_RETURN_IF_ERROR(checkTypeOp(e->impl->type(), rop, true));
    if (rop != strataSum && rop != strataAvg) {
      return invalidArgument(std::string("op ") + redOpName(static_cast<strataRedOp_t>(rop)) +
                             " is not supported: CSC reduces with sum or avg");
    }
    if (buff == nullptr) return invalidArgument("buff is NULL");
    if (inGroup()) {
      return invalidUsage(
          "not allowed inside a group: the call must reduce the chunk norms before it can "
          "choose which chunks to send");
    }
    return e->impl->allReduce(*c.value()->impl, buff, static_cast<strataRedOp_t>(rop));
  });
}

strataResult_t strataCscDestroy(strataCsc_t csc) {
  return guarded(commOf(csc), "strataCscDestroy", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(liveCsc(csc).status());
    unregisterCsc(csc);  // the entry is freed here, outside the table's lock
    return Status::ok();
  });
}

}  // extern "C"
