// The stand-in's device: one GPU (none when CUDA_VISIBLE_DEVICES hides it, as CUDA's
// "" or -1 do), its properties, and the error calls.
//
// Which GPU that is: CUDA_STANDIN_OWN_GPU unset or 0, the same one in every process, so that
// ranks on one host share it (strata then stages their groups through host memory, as for ranks
// sharing a real GPU); 1, a GPU of each process's own (strata then puts a host's groups on its
// nccl fabric, which the stand-in's NCCL serves across processes). Any other value fails the
// device calls (cudaGetDeviceCount, cudaSetDevice, cudaGetDeviceProperties, ...) with
// cudaErrorInitializationError, saying why, so that strata finds no GPU.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime.h"

using namespace cuda_standin;  // NOLINT: the API below is CUDA's, at global scope

namespace {

int visible() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (v == nullptr) return 1;
  return (v[0] == '\0' || std::strncmp(v, "-1", 2) == 0) ? 0 : 1;
}

// The shared GPU's identity: the same in every process.
constexpr unsigned char kUuid[16] = {'s', 't', 'r', 'a', 't', 'a', '-', 's',
                                     't', 'a', 'n', 'd', '-', 'i', 'n', 0};
constexpr size_t kTotalMemory = size_t{16} << 30;

// This process's GPU (read once, from the environment).
struct Gpu {
  unsigned char uuid[16] = {};
  int pciBus = 0;
  std::string name = "strata CUDA stand-in (CPU)";
  std::string error;  // a malformed CUDA_STANDIN_OWN_GPU
};

// The launcher's rank of this process, or -1: Open MPI's, PMIx's, or MPICH's (PMI) variable.
long launcherRank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(var);
    char* end = nullptr;
    if (v == nullptr || *v == '\0') continue;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0) return r;
  }
  return -1;
}

Gpu readGpu() {
  Gpu g;
  std::memcpy(g.uuid, kUuid, sizeof kUuid);
  const char* v = std::getenv("CUDA_STANDIN_OWN_GPU");
  if (v == nullptr || std::strcmp(v, "0") == 0) return g;
  if (std::strcmp(v, "1") != 0) {
    g.error = std::string("CUDA_STANDIN_OWN_GPU='") + v + "' is not 0 or 1";
    return g;
  }
  // Distinct between the processes of a host: the pid is; the launcher's rank (when there is
  // one) makes the identity readable and the same in every run. Both stay fixed for the life of
  // the process.
  const long rank = launcherRank();
  const auto r = static_cast<uint32_t>(rank < 0 ? UINT32_MAX : rank);
  const auto pid = static_cast<uint32_t>(getpid());
  // "strata-g", then the rank (all ones without one) and the pid, big-endian.
  std::memcpy(g.uuid, "strata-g", 8);
  for (int i = 0; i < 4; ++i) {
    g.uuid[8 + i] = static_cast<unsigned char>(r >> (24 - 8 * i));
    g.uuid[12 + i] = static_cast<unsigned char>(pid >> (24 - 8 * i));
  }
  g.pciBus = static_cast<int>((rank < 0 ? pid : static_cast<uint32_t>(rank)) % 255 + 1);
  g.name += rank < 0 ? ", own GPU of pid " + std::to_string(pid)
                     : ", own GPU of rank " + std::to_string(rank);
  return g;
}

const Gpu& gpu() {
  static const Gpu* g = new Gpu(readGpu());  // never freed: stream threads outlive exit
  return *g;
}

cudaError_t checkDevice(int device, const char* call) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (!gpu().error.empty()) return fail(cudaErrorInitializationError, call, gpu().error);
  if (visible() == 0) return fail(cudaErrorNoDevice, call, "CUDA_VISIBLE_DEVICES hides the GPU");
  if (device != 0) {
    return fail(cudaErrorInvalidDevice, call,
                "device " + std::to_string(device) + " (the stand-in has one, device 0)");
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaGetDeviceCount(int* count) {
  if (cudaError_t e = initCheck("cudaGetDeviceCount"); e != cudaSuccess) return e;
  if (!gpu().error.empty()) {
    return fail(cudaErrorInitializationError, "cudaGetDeviceCount", gpu().error);
  }
  if (count == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceCount", "count is NULL");
  *count = visible();
  if (*count == 0) return fail(cudaErrorNoDevice, "cudaGetDeviceCount", "no GPU visible");
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return checkDevice(device, "cudaSetDevice"); }

cudaError_t cudaGetDevice(int* device) {
  if (cudaError_t e = checkDevice(0, "cudaGetDevice"); e != cudaSuccess) return e;
  if (device == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDevice", "device is NULL");
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (cudaError_t e = checkDevice(device, "cudaGetDeviceProperties"); e != cudaSuccess) return e;
  if (prop == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties", "NULL");
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "%s", gpu().name.c_str());
  std::memcpy(prop->uuid.bytes, gpu().uuid, sizeof gpu().uuid);
  prop->totalGlobalMem = kTotalMemory;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->canMapHostMemory = 1;
  prop->unifiedAddressing = 1;
  prop->concurrentKernels = 1;
  prop->asyncEngineCount = 2;
  prop->memoryPoolsSupported = 1;
  prop->pciBusID = gpu().pciBus;
  prop->pciDeviceID = 0;
  prop->pciDomainID = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  if (cudaError_t e = checkDevice(device, "cudaDeviceGetPCIBusId"); e != cudaSuccess) return e;
  if (pciBusId == nullptr || len < 13) {
    return fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId", "a buffer under 13 bytes");
  }
  std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02x:00.0", gpu().pciBus);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* freeBytes, size_t* totalBytes) {
  if (cudaError_t e = checkDevice(0, "cudaMemGetInfo"); e != cudaSuccess) return e;
  if (freeBytes == nullptr || totalBytes == nullptr) {
    return fail(cudaErrorInvalidValue, "cudaMemGetInfo", "a NULL pointer");
  }
  *freeBytes = *totalBytes = kTotalMemory;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  if (cudaError_t e = checkDevice(device, "cudaDeviceCanAccessPeer"); e != cudaSuccess) return e;
  if (cudaError_t e = checkDevice(peerDevice, "cudaDeviceCanAccessPeer"); e != cudaSuccess)
    return e;
  if (canAccessPeer == nullptr) return fail(cudaErrorInvalidValue, "cudaDeviceCanAccessPeer", "NULL");
  *canAccessPeer = 0;  // a device is not its own peer
  return cudaSuccess;
}

cudaError_t cudaDeviceGetP2PAttribute(int*, cudaDeviceP2PAttr, int, int) {
  return fail(cudaErrorInvalidDevice, "cudaDeviceGetP2PAttribute",
              "the stand-in has one device, so no pair");
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return fail(cudaErrorInvalidValue, "cudaRuntimeGetVersion", "NULL");
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return fail(cudaErrorInvalidValue, "cudaDriverGetVersion", "NULL");
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  const cudaError_t e = lastError();
  lastError() = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) { return lastError(); }

namespace {

struct Known {
  cudaError_t code;
  const char* name;
  const char* text;
};

// The codes the stand-in returns, with CUDA's names and words.
constexpr Known kKnown[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction",
     "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
     "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    // Graph capture's (capture.cc): the names and texts CUDA 13 gives them.
    {cudaErrorIllegalState, "cudaErrorIllegalState",
     "the operation cannot be performed in the present state"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge",
     "operation would result in a merge of separate capture sequences"},
    {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched",
     "capture was not ended in the same stream as it began"},
    {cudaErrorStreamCaptureUnjoined, "cudaErrorStreamCaptureUnjoined",
     "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation",
     "dependency created on uncaptured work in another stream"},
    {cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorCapturedEvent, "cudaErrorCapturedEvent",
     "operation not permitted on an event last recorded in a capturing stream"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
};

const Known* known(cudaError_t e) {
  for (const Known& k : kKnown) {
    if (k.code == e) return &k;
  }
  return nullptr;
}

}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  const Known* k = known(error);
  return k != nullptr ? k->name : "cudaErrorUnknown (a code the stand-in never returns)";
}

const char* cudaGetErrorString(cudaError_t error) {
  const Known* k = known(error);
  return k != nullptr ? k->text : "unknown error (a code the stand-in never returns)";
}
