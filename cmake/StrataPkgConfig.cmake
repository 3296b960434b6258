# strata.pc for pkg-config, for building against strata without CMake (README, "A C example"):
#   installed:       <prefix>/<libdir>/pkgconfig/strata.pc, relocatable: its prefix is found from
#                    the file's own place (${pcfiledir}), so `cmake --install --prefix P` works
#                    for any P;
#   the build tree:  <build>/pkgconfig/strata.pc, naming the source tree's headers and the
#                    build's libstrata.so (PKG_CONFIG_PATH=<build>/pkgconfig).
# MPI's flags go in both, as the CMake package passes MPI::MPI_C on: strata_mpi.h includes
# mpi.h, and a program that calls MPI_Init must link libmpi itself.

# MPI's include directories and libraries as compiler and linker flags.
set(STRATA_PC_MPI_CFLAGS "")
foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND STRATA_PC_MPI_CFLAGS " -I${dir}")
endforeach()
foreach(def IN LISTS MPI_C_COMPILE_DEFINITIONS)
  string(APPEND STRATA_PC_MPI_CFLAGS " -D${def}")
endforeach()
set(STRATA_PC_MPI_LIBS "")
foreach(lib IN LISTS MPI_C_LIBRARIES)
  # /path/libNAME.so -> -L/path -lNAME, as pkg-config files write libraries; anything else as is.
  get_filename_component(name "${lib}" NAME)
  if(IS_ABSOLUTE "${lib}" AND name MATCHES "^lib(.+)\\.so$")
    get_filename_component(dir "${lib}" DIRECTORY)
    string(APPEND STRATA_PC_MPI_LIBS " -L${dir} -l${CMAKE_MATCH_1}")
  else()
    string(APPEND STRATA_PC_MPI_LIBS " ${lib}")
  endif()
endforeach()
string(STRIP "${STRATA_PC_MPI_CFLAGS}" STRATA_PC_MPI_CFLAGS)
string(STRIP "${STRATA_PC_MPI_LIBS}" STRATA_PC_MPI_LIBS)

# Installed: the prefix relative to <libdir>/pkgconfig (lib/pkgconfig -> ../..;
# lib/x86_64-linux-gnu/pkgconfig -> ../../..). An absolute libdir or includedir stays absolute.
set(pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(STRATA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(STRATA_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH up "/p/${pc_dir}" "/p")
  string(REGEX REPLACE "/$" "" up "${up}")
  set(STRATA_PC_PREFIX "\${pcfiledir}/${up}")
  set(STRATA_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(STRATA_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(STRATA_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/strata.pc.in ${PROJECT_BINARY_DIR}/install/strata.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/strata.pc DESTINATION ${pc_dir})

# The build tree's: absolute paths into the source and build folders.
set(STRATA_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(STRATA_PC_LIBDIR "$<TARGET_FILE_DIR:strata>")
set(STRATA_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
configure_file(${CMAKE_CURRENT_LIST_DIR}/strata.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/strata.pc.gen
  @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/pkgconfig/strata.pc
  INPUT ${PROJECT_BINARY_DIR}/pkgconfig/strata.pc.gen)
