# Finds strata's dependencies. Required: Open MPI, hwloc, yaml-cpp, pugixml (NCCL topology XML),
# nlohmann-json (JSON output). Optional: CUDA and NCCL.
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)
# UCX (Debian's libucx-dev): the ucx fabric, the inter-host engine of unique-id communicators.
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx>=1.12)
find_package(yaml-cpp REQUIRED)
find_package(pugixml REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

include(${CMAKE_CURRENT_LIST_DIR}/StrataCudaToolkit.cmake)

# CUDA/NCCL detection. The GPU parts build whenever both are present (a GPU need not be).
set(STRATA_HAVE_CUDA OFF)
set(STRATA_GPU_DEFINITIONS "")
set(STRATA_GPU_LIBRARIES "")
# The CUDA runtime the GPU parts and their tests link: CUDA's, or the stand-in's below.
set(STRATA_CUDART CUDA::cudart_static)
if(STRATA_CUDA_STANDIN)
  # The CPU stand-in for CUDA (tests/cuda_standin, docs/gpu.md "The CPU stand-in"): the GPU
  # parts compiled against CUDA's and NCCL's headers (a toolkit, or the nvidia-cuda-runtime,
  # nvidia-nvtx and nvidia-nccl wheels: scripts/gpu-standin.sh fetches them) and linked to a
  # runtime and a one-member NCCL of strata's tests, which run device work on host threads. No
  # nvcc: strata's kernels become host functions (tests/cuda_standin/launch_standin.cc). For
  # testing the device path without a GPU; what it builds is never for use.
  find_path(STRATA_CUDA_INCLUDE_DIR cuda_runtime.h
    HINTS $ENV{STRATA_CUDA_HEADERS} $ENV{CUDA_HOME}/include /usr/local/cuda/include)
  find_path(STRATA_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h
    HINTS $ENV{STRATA_CUDA_HEADERS} ${STRATA_CUDA_INCLUDE_DIR} $ENV{CUDA_HOME}/include)
  find_path(NCCL_INCLUDE_DIR nccl.h
    HINTS $ENV{STRATA_CUDA_HEADERS} $ENV{NCCL_HOME}/include ${STRATA_CUDA_INCLUDE_DIR})
  if(NOT STRATA_CUDA_INCLUDE_DIR OR NOT STRATA_NVTX_INCLUDE_DIR OR NOT NCCL_INCLUDE_DIR)
    message(FATAL_ERROR "STRATA_CUDA_STANDIN=ON needs CUDA's runtime and NVTX headers and "
      "nccl.h (found: ${STRATA_CUDA_INCLUDE_DIR}, ${STRATA_NVTX_INCLUDE_DIR}, "
      "${NCCL_INCLUDE_DIR}); scripts/gpu-standin.sh fetches them where no toolkit is installed")
  endif()
  set(STRATA_HAVE_CUDA ON)
  set(CUDAToolkit_INCLUDE_DIRS ${STRATA_CUDA_INCLUDE_DIR} ${STRATA_NVTX_INCLUDE_DIR})
  list(APPEND STRATA_GPU_DEFINITIONS STRATA_HAVE_CUDA STRATA_CUDA_STANDIN)
  add_library(strata_nccl INTERFACE)
  target_include_directories(strata_nccl INTERFACE ${NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  # strata's nccl fabric loads the stand-in's NCCL first (tests/cuda_standin/CMakeLists.txt).
  target_compile_definitions(strata_nccl INTERFACE
    STRATA_NCCL_BUILD_LIBRARY="$<TARGET_FILE:strata_nccl_standin>")
  set(STRATA_CUDART strata_cuda_standin)
  set(STRATA_GPU_LIBRARIES strata_cuda_standin strata_nccl)
  message(STATUS "strata: the GPU parts against the CPU stand-in for CUDA (headers from "
                 "${STRATA_CUDA_INCLUDE_DIR}, nccl.h from ${NCCL_INCLUDE_DIR}): a test build")
elseif(NOT STRATA_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  strata_find_cuda_toolkit()
  # NCCL_HOME / NCCL_ROOT (as nccl-tests and Horovod take them) for an NCCL outside CUDA's tree,
  # e.g. the nvidia-nccl pip wheel, which ships only libnccl.so.2.
  find_path(NCCL_INCLUDE_DIR nccl.h
    HINTS $ENV{NCCL_HOME} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda
    PATH_SUFFIXES include)
  # NAMES_PER_DIR: NCCL_HOME's libnccl.so.2 before a libnccl.so elsewhere on the system.
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
    HINTS $ENV{NCCL_HOME} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda
    PATH_SUFFIXES lib lib64)
  if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(STRATA_HAVE_CUDA ON)
  elseif(STRATA_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STRATA_WITH_CUDA=ON but CUDA (${CUDAToolkit_FOUND}) or NCCL "
                        "(${NCCL_INCLUDE_DIR}, ${NCCL_LIBRARY}) was not found")
  endif()
endif()
if(STRATA_HAVE_CUDA AND NOT STRATA_CUDA_STANDIN)
  list(APPEND STRATA_GPU_DEFINITIONS STRATA_HAVE_CUDA)
  # Device code for Ampere (sm_80) and Hopper (sm_90), plus compute_90 PTX that newer GPUs JIT.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  enable_language(CUDA)
  # NCCL's header only: the library is loaded at run time (src/fabrics/nccl/nccl_lib.h), so
  # libstrata.so does not need NCCL to load, and strata's NCCL drop-in never binds to itself.
  # The library found here is the first place the loader looks (after STRATA_NCCL_REAL_LIB).
  add_library(strata_nccl INTERFACE)
  # nccl.h includes cuda_runtime.h: a wheel's NCCL keeps its header apart from CUDA's.
  target_include_directories(strata_nccl INTERFACE ${NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  get_filename_component(STRATA_NCCL_LIBDIR ${NCCL_LIBRARY} DIRECTORY)
  set(STRATA_NCCL_BUILD_LIBRARY ${NCCL_LIBRARY})
  if(EXISTS ${STRATA_NCCL_LIBDIR}/libnccl.so.2)
    set(STRATA_NCCL_BUILD_LIBRARY ${STRATA_NCCL_LIBDIR}/libnccl.so.2)
  endif()
  target_compile_definitions(strata_nccl INTERFACE
    STRATA_NCCL_BUILD_LIBRARY="${STRATA_NCCL_BUILD_LIBRARY}")
  # The CUDA runtime is linked statically (no libcudart.so to find at run time).
  set(STRATA_GPU_LIBRARIES CUDA::cudart_static strata_nccl)
  message(STATUS "strata: CUDA ${CUDAToolkit_VERSION} and NCCL (${NCCL_LIBRARY}) found; "
                 "device code for ${CMAKE_CUDA_ARCHITECTURES}")
elseif(NOT STRATA_HAVE_CUDA)
  message(STATUS "strata: building host-only (no CUDA/NCCL, or STRATA_WITH_CUDA=OFF)")
endif()
