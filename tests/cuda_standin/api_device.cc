// The stand-in's device: one GPU (none when CUDA_VISIBLE_DEVICES hides it, as CUDA's
// "" or -1 do), its properties, and the error calls.
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

// The stand-in's one GPU: the same identity in every process, so that ranks on one host share
// it (strata then stages their groups through host memory, as for ranks sharing a real GPU).
constexpr unsigned char kUuid[16] = {'s', 't', 'r', 'a', 't', 'a', '-', 's',
                                     't', 'a', 'n', 'd', '-', 'i', 'n', 0};
constexpr size_t kTotalMemory = size_t{16} << 30;

cudaError_t checkDevice(int device, const char* call) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
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
  std::snprintf(prop->name, sizeof prop->name, "strata CUDA stand-in (CPU)");
  std::memcpy(prop->uuid.bytes, kUuid, sizeof kUuid);
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
  prop->pciBusID = 0;
  prop->pciDeviceID = 0;
  prop->pciDomainID = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  if (cudaError_t e = checkDevice(device, "cudaDeviceGetPCIBusId"); e != cudaSuccess) return e;
  if (pciBusId == nullptr || len < 13) {
    return fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId", "a buffer under 13 bytes");
  }
  std::snprintf(pciBusId, static_cast<size_t>(len), "0000:00:00.0");
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
