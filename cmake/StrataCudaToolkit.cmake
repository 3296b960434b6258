# find_package(CUDAToolkit QUIET), working around CMake 3.25.0-3.25.1 (Debian 12's): their
# FindCUDAToolkit fails when the toolkit has no nvToolsExt library, as CUDA 12.9+ and 13 have
# not, by setting a property on CUDA::nvToolsExt without checking that the target exists (fixed
# in 3.25.2). An empty stand-in target lets the module finish; strata links nothing from it.
macro(strata_find_cuda_toolkit)
  if(CMAKE_VERSION VERSION_LESS 3.25.2 AND NOT TARGET CUDA::nvToolsExt)
    find_library(STRATA_NVTOOLSEXT_LIBRARY NAMES nvToolsExt nvToolsExt64
      HINTS $ENV{CUDA_HOME} ${CUDAToolkit_ROOT} /usr/local/cuda PATH_SUFFIXES lib64 lib)
    if(NOT STRATA_NVTOOLSEXT_LIBRARY)
      add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    endif()
  endif()
  find_package(CUDAToolkit QUIET)
endmacro()
