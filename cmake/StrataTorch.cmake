# The torch.distributed backend (python/): built when PyTorch's C++ API (libtorch-dev) and the
# Python it was built for are found. STRATA_WITH_TORCH: AUTO (build when found), ON (required),
# OFF. Sets STRATA_TORCH_BUILT and STRATA_TORCH_PACKAGE_DIR (the importable package in the build
# tree: PYTHONPATH=${STRATA_TORCH_PYTHONPATH}).
set(STRATA_WITH_TORCH AUTO CACHE STRING "Build the torch.distributed backend: AUTO, ON or OFF")
set_property(CACHE STRATA_WITH_TORCH PROPERTY STRINGS AUTO ON OFF)
set(STRATA_TORCH_BUILT OFF)
set(STRATA_TORCH_PYTHONPATH ${PROJECT_BINARY_DIR}/python)
set(STRATA_TORCH_PACKAGE_DIR ${STRATA_TORCH_PYTHONPATH}/strata_torch)

if(NOT STRATA_WITH_TORCH STREQUAL "OFF")
  # Debian's PyTorch is run by Debian's interpreter; another python3 may come first on PATH.
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module)
  # A pip torch (a virtual environment's, -DPython3_EXECUTABLE=<venv>/bin/python) keeps its
  # CMake package inside the wheel; Debian's is libtorch-dev's, on CMake's default path. (Also
  # with an explicit Torch_DIR: the wheel's lib/ must still come before the system's.)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
      "import os, torch.utils; p = torch.utils.cmake_prefix_path; print(p if os.path.isdir(p) else '')"
      OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_torch_prefix)
      # The torch package folder too, so that TorchConfig's find_library() calls take the
      # wheel's lib/ before a system PyTorch's (libtorch-dev's libc10.so would win otherwise:
      # CMAKE_PREFIX_PATH is searched before the system folders, their PATHS after).
      get_filename_component(_torch_pkg "${_torch_prefix}/../.." ABSOLUTE)
      list(PREPEND CMAKE_PREFIX_PATH ${_torch_prefix} ${_torch_pkg})
    endif()
  endif()
  find_package(Torch QUIET)
  find_package(pybind11 CONFIG QUIET)
  if(Torch_FOUND)
    find_library(STRATA_TORCH_PYTHON_LIBRARY torch_python HINTS ${TORCH_INSTALL_PREFIX}/lib)
    # pybind11: torch's own copy when its wheel ships one (pip wheels have
    # <prefix>/include/pybind11). The extension's class derives from torch's bound
    # c10d::Backend, which pybind11 finds only through internals of the same version and ABI
    # (PYBIND11_INTERNALS_VERSION, compiler, stdlib, build ABI): a different pybind11 from
    # pip would make the import fail with "referenced unknown base type".
    if(EXISTS ${TORCH_INSTALL_PREFIX}/include/pybind11/pybind11.h)
      set(STRATA_TORCH_PYBIND11_FROM_TORCH ON)
    endif()
    # The ABI strings torch's pybind11 was built with, as torch.utils.cpp_extension passes them.
    if(Python3_Interpreter_FOUND)
      execute_process(COMMAND ${Python3_EXECUTABLE} -c
        "import torch; q = chr(34); print(';'.join('PYBIND11_' + n + '=' + q + getattr(torch._C, '_PYBIND11_' + n) + q for n in ('COMPILER_TYPE', 'STDLIB', 'BUILD_ABI') if getattr(torch._C, '_PYBIND11_' + n, None)))"
        OUTPUT_VARIABLE STRATA_TORCH_PYBIND11_ABI OUTPUT_STRIP_TRAILING_WHITESPACE
        ERROR_QUIET RESULT_VARIABLE _abi_rc)
      if(NOT _abi_rc EQUAL 0)
        set(STRATA_TORCH_PYBIND11_ABI "")
      endif()
    endif()
    # A CUDA build of PyTorch ships c10_cuda; the extension then serves CUDA tensors
    # (STRATA_TORCH_CUDA, python/csrc/cuda_ops.cc) and needs the CUDA runtime's headers.
    find_library(STRATA_TORCH_C10_CUDA c10_cuda HINTS ${TORCH_INSTALL_PREFIX}/lib NO_DEFAULT_PATH)
    if(STRATA_TORCH_C10_CUDA)
      include(${CMAKE_CURRENT_LIST_DIR}/StrataCudaToolkit.cmake)
      strata_find_cuda_toolkit()
    endif()
  endif()
  set(_why "")
  if(NOT Python3_FOUND)
    set(_why "Python 3 with its headers (python3-dev) not found")
  elseif(NOT Torch_FOUND)
    set(_why "PyTorch's C++ API (TorchConfig.cmake, libtorch-dev) not found")
  elseif(NOT STRATA_TORCH_PYTHON_LIBRARY)
    set(_why "libtorch_python not found")
  elseif(NOT pybind11_FOUND AND NOT STRATA_TORCH_PYBIND11_FROM_TORCH)
    set(_why "pybind11 (pybind11-dev) not found")
  endif()
  if(_why STREQUAL "")
    set(STRATA_TORCH_BUILT ON)
    set(STRATA_TORCH_CUDA OFF)
    if(STRATA_TORCH_C10_CUDA AND CUDAToolkit_FOUND)
      set(STRATA_TORCH_CUDA ON)
    endif()
    message(STATUS "strata: torch.distributed backend: ON (PyTorch ${Torch_VERSION}, ${Python3_EXECUTABLE}; CUDA tensors: ${STRATA_TORCH_CUDA})")
  elseif(STRATA_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "STRATA_WITH_TORCH=ON but ${_why} for ${Python3_EXECUTABLE}: "
      "Debian's PyTorch is apt-get install python3-torch libtorch-dev pybind11-dev python3-dev; "
      "a pip PyTorch must be importable by the Python that builds (pip install "
      "--no-build-isolation, docs/torch.md)")
  else()
    message(STATUS "strata: torch.distributed backend: OFF (${_why})")
  endif()
endif()
