// The real NCCL, loaded at run time (dlopen) instead of linked: a host-only user of libstrata.so
// needs no NCCL at all, and strata's drop-in for NCCL (libstrata_nccl.so, whose soname is
// libnccl.so.2 and which a program may LD_PRELOAD) must reach the real library, never itself.
// Both strata's nccl fabric and the drop-in's forwarding go through this table.
//
// Where it looks, in order: `preferred` (STRATA_NCCL_REAL_LIB), the library strata was built
// against, libnccl.so.2 under $CUDA_HOME/lib64 and /usr/local/cuda/lib64, then the soname on the
// loader's path. A library that turns out to be strata's drop-in (it exports
// strataNcclDropIn) is passed over. The library is opened RTLD_LOCAL | RTLD_DEEPBIND, so its
// own calls bind inside it even when the drop-in was preloaded ahead of it.
#pragma once

#include <nccl.h>

#include <string>

namespace strata::nccl_lib {

// The NCCL functions strata calls or forwards.
#define STRATA_NCCL_FUNCTIONS(X)                                                            \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommInitRankConfig)        \
  X(ncclCommInitAll) X(ncclCommSplit) X(ncclCommFinalize) X(ncclCommDestroy)                \
  X(ncclCommAbort) X(ncclCommGetAsyncError) X(ncclCommCount) X(ncclCommCuDevice)            \
  X(ncclCommUserRank) X(ncclGetErrorString) X(ncclGetLastError) X(ncclAllReduce)            \
  X(ncclReduceScatter) X(ncclAllGather) X(ncclBroadcast) X(ncclBcast) X(ncclReduce)        \
  X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) X(ncclRedOpCreatePreMulSum)     \
  X(ncclRedOpDestroy) X(ncclMemAlloc) X(ncclMemFree) X(ncclCommRegister)                    \
  X(ncclCommDeregister)

struct Api {
#define STRATA_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  STRATA_NCCL_FUNCTIONS(STRATA_NCCL_MEMBER)
#undef STRATA_NCCL_MEMBER
  std::string path;        // the file that was loaded
  void* handle = nullptr;  // its dlopen handle: dlsym for what the table does not list
};

// The real NCCL, loaded on the first call (later calls return the same, whatever `preferred`
// they pass). Null when none could be loaded; *why then says where it looked and what failed.
// Thread-safe.
const Api* load(const char* preferred, std::string* why);
// What load() returned (null before it ran, or when it failed).
const Api* loaded();

}  // namespace strata::nccl_lib
