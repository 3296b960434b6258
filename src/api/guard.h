// What every C entry point shares: exceptions and Status turned into strataResult_t (nothing
// throws across extern "C"), the last error recorded where strataGetLastError finds it, and the
// argument checks.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "api/handle.h"
#include "common/log.h"
#include "common/status.h"
#include "strata/strata.h"

namespace strata::api {

// STRATA_CHECK=2's call site: each collective's entry point notes its caller's return address
// (STRATA_NOTE_CALL_SITE, first thing in the function, which the application reaches through
// the PLT) for the calls it builds on this thread while it runs; submit() copies it into the
// Call (core/check.h turns it into an offset in its module).
class CallSiteScope {
 public:
  explicit CallSiteScope(const void* address) : previous_(current()) { current() = address; }
  ~CallSiteScope() { current() = previous_; }
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;
  static const void*& current() {
    thread_local const void* site = nullptr;
    return site;
  }

 private:
  const void* previous_;
};
#define STRATA_NOTE_CALL_SITE() \
  const ::strata::api::CallSiteScope strataCallSite(__builtin_return_address(0))

// Records a failure of `fn` (logging it once, here, where it reaches the user) and returns its
// code. Errors from deeper layers were already logged where they were detected.
strataResult_t fail(strataComm_t comm, const char* fn, const Status& st, bool log);

// Runs `body`, mapping exceptions to codes, so no exception crosses extern "C".
template <typename Body>
strataResult_t guarded(strataComm_t comm, const char* fn, Body body) {
  try {
    Status st = body();
    if (st.isOk()) return strataSuccess;
    // Argument errors are mostly detected here, so they are logged here unless the layer that
    // found them (a topology or plan file's reader) did; others were logged below.
    const bool here = (st.code() == Code::kInvalidArgument || st.code() == Code::kInvalidUsage) &&
                      !st.wasLogged();
    return fail(comm, fn, st, here);
  } catch (const std::bad_alloc&) {
    return fail(comm, fn, systemError("out of memory"), true);
  } catch (const std::exception& e) {
    return fail(comm, fn, internalError(std::string("unexpected exception: ") + e.what()), true);
  } catch (...) {
    return fail(comm, fn, internalError("unexpected exception"), true);
  }
}

// The value a C caller passed for an enum parameter, as an int. A C caller may pass any int
// (in C an enum is an int), but in C++ an enum object holding a value outside its enumerators'
// range is undefined behaviour to load (UBSan: "load of value 42, which is not a valid value
// for type strataDataType_t"). So the entry points copy the bytes out before anything reads
// the parameter, range-check the int (checkTypeOp), and only then convert it.
template <typename Enum>
int rawEnum(const Enum& value) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int), "a C enum parameter");
  int raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

// MPI was finalised: nothing may call MPI or talk to other ranks through it (its
// communicators and requests are gone). strataInvalidUsage naming `fn`'s situation.
Status checkMpiActive();
// The entry behind a live handle, or strataInvalidArgument (NULL, destroyed, aborted or made
// up), or, when `needsMpi` (the call may talk to other ranks), strataInvalidUsage after
// MPI_Finalize.
StatusOr<CommEntry*> liveComm(strataComm_t comm, bool needsMpi = true);
// `type` and `op` as rawEnum gave them; `op` is checked only when `hasOp`.
Status checkTypeOp(int type, int op, bool hasOp);
// elements * typesize * factor in bytes, refusing overflow and sizes no buffer can have (above
// PTRDIFF_MAX). `type` was checked (checkTypeOp).
Status byteSize(size_t elements, size_t factor, int type, const char* what, size_t* bytes);
// Buffers may be identical (or in the documented in-place arrangement `inPlaceSend`) or
// disjoint; any other overlap would silently corrupt the result.
Status checkOverlap(const void* send, size_t sendBytes, const void* recv, size_t recvBytes,
                    const void* inPlaceSend);
Status checkBuffers(const void* send, const void* recv, size_t count);

// The calling thread's last error (strataGetLastError(NULL)).
const char* threadLastError();

}  // namespace strata::api
