// What every C entry point shares: exceptions and Status turned into strataResult_t (nothing
// throws across extern "C"), the last error recorded where strataGetLastError finds it, and the
// argument checks.
#pragma once

#include <cstddef>
#include <new>
#include <string>

#include "api/handle.h"
#include "common/log.h"
#include "common/status.h"
#include "strata/strata.h"

namespace strata::api {

// Records a failure of `fn` (logging it once, here, where it reaches the user) and returns its
// code. Errors from deeper layers were already logged where they were detected.
strataResult_t fail(strataComm* comm, const char* fn, const Status& st, bool log);

// Runs `body`, mapping exceptions to codes, so no exception crosses extern "C".
template <typename Body>
strataResult_t guarded(strataComm* comm, const char* fn, Body body) {
  try {
    Status st = body();
    if (st.isOk()) return strataSuccess;
    // Argument errors are detected here, so they are logged here; others were logged below.
    const bool here = st.code() == Code::kInvalidArgument || st.code() == Code::kInvalidUsage;
    return fail(comm, fn, st, here);
  } catch (const std::bad_alloc&) {
    return fail(comm, fn, systemError("out of memory"), true);
  } catch (const std::exception& e) {
    return fail(comm, fn, internalError(std::string("unexpected exception: ") + e.what()), true);
  } catch (...) {
    return fail(comm, fn, internalError("unexpected exception"), true);
  }
}

Status checkComm(const strataComm* comm);
Status checkTypeOp(strataDataType_t type, strataRedOp_t op, bool hasOp);
// elements * typesize * factor in bytes, refusing overflow.
Status byteSize(size_t elements, size_t factor, strataDataType_t type, const char* what,
                size_t* bytes);
// Buffers may be identical (or in the documented in-place arrangement `inPlaceSend`) or
// disjoint; any other overlap would silently corrupt the result.
Status checkOverlap(const void* send, size_t sendBytes, const void* recv, size_t recvBytes,
                    const void* inPlaceSend);
Status checkBuffers(const void* send, const void* recv, size_t count);

// The calling thread's last error (strataGetLastError(NULL)).
const char* threadLastError();

}  // namespace strata::api
