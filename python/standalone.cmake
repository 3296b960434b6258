# python/ as a project of its own: what `pip install --no-build-isolation .` builds
# (pyproject.toml, scikit-build-core), against the torch of the Python that runs it.
# libstrata comes from, in this order:
# - an installed strata or a strata build folder: find_package(strata) through CMAKE_PREFIX_PATH
#   or strata_DIR (pip install -C cmake.define.strata_DIR=<build folder or <prefix>/lib/cmake/strata>);
#   the extension then loads that libstrata.so by its absolute path (RPATH);
# - else this clone's sources, built along (libstrata only: no tests, tools or drop-in) and
#   installed inside the package, beside the extension.
# What goes into the wheel is the install component "strata_torch" only.
include(GNUInstallDirs)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
set(STRATA_TORCH_INSTALL_DIR strata_torch)
set(STRATA_TORCH_COMPONENT strata_torch)

find_package(strata CONFIG QUIET)
if(strata_FOUND)
  get_target_property(_strata_lib strata::strata LOCATION)
  message(STATUS "strata_torch: libstrata found: ${_strata_lib} (${strata_DIR})")
  get_filename_component(_strata_libdir "${_strata_lib}" DIRECTORY)
  set(STRATA_TORCH_INSTALL_RPATH "${_strata_libdir}")
else()
  set(_strata_src ${CMAKE_CURRENT_LIST_DIR}/..)
  if(NOT EXISTS ${_strata_src}/src/api)
    message(FATAL_ERROR "strata_torch: no libstrata found (set CMAKE_PREFIX_PATH or strata_DIR "
      "to an installed strata or a strata build folder) and no strata sources beside python/")
  endif()
  message(STATUS "strata_torch: no installed libstrata found (CMAKE_PREFIX_PATH, strata_DIR): "
    "building it along from ${_strata_src}")
  # libstrata alone. These are normal variables, which the options below take (CMP0077).
  set(STRATA_BUILD_TESTS OFF)
  set(STRATA_BUILD_TOOLS OFF)
  set(STRATA_WITH_TORCH OFF)  # this project builds the backend itself, below
  add_subdirectory(${_strata_src} strata EXCLUDE_FROM_ALL)
  # Into the package under its soname, the name the extension asks for; found through $ORIGIN.
  get_target_property(_soversion strata SOVERSION)
  install(FILES $<TARGET_FILE:strata> DESTINATION ${STRATA_TORCH_INSTALL_DIR}
    RENAME libstrata.so.${_soversion} COMPONENT ${STRATA_TORCH_COMPONENT})
  set(STRATA_TORCH_INSTALL_RPATH "$ORIGIN")
  # libstrata enabled CUDA (a global language) when it found the toolkit; its architectures
  # are a variable of its folder, which torch's CUDA checks below need here too.
  get_directory_property(_archs DIRECTORY ${_strata_src} DEFINITION CMAKE_CUDA_ARCHITECTURES)
  if(_archs AND NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES ${_archs})
  endif()
endif()

# PyTorch after libstrata: torch's CMake package sets global flags (CMAKE_CUDA_FLAGS with
# TORCH_CUDA_ARCH_LIST's architectures, ONNX_NAMESPACE) that must not reach libstrata's build.
# The package is the backend: without PyTorch there is nothing to build.
set(STRATA_WITH_TORCH ON)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/StrataTorch.cmake)
find_package(MPI REQUIRED COMPONENTS C)
if(NOT STRATA_TORCH_BUILT)
  message(FATAL_ERROR "strata_torch: the torch backend cannot be built here (see above)")
endif()
