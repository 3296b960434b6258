# Every example a program prints in its --help runs as printed (included from
# tests/tools/CMakeLists.txt; issue 42: strata-run's own example exited 2):
#
#   tools.help_examples.<program>   help_examples.py: that program's --help examples (and its
#                                   subcommands'), each run with bash in a scratch directory
#                                   holding build/ and the source tree's folders, the build's
#                                   tools/ and examples/ on PATH; exit 0 and the files it names
#   tools.help_examples.inventory   every program of build/tools, build/examples and tools/ is
#                                   listed, every subcommand's help asked, no stale exception
#
# One entry per program of the script's TOOLS table (help_examples.py --list prints it with how
# its examples run): mpi entries start mpirun and run serially; the netlab entry needs root and
# network namespaces (skipped, exit 77, without them) and runs with mpirun free to use TCP.
if(NOT TARGET strata-perf OR NOT TARGET strata-allreduce-demo)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(help_examples ${CMAKE_CURRENT_LIST_DIR}/help_examples.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${help_examples})
execute_process(COMMAND ${Python3_EXECUTABLE} ${help_examples} --list
  OUTPUT_VARIABLE help_tools RESULT_VARIABLE help_rc)
if(NOT help_rc EQUAL 0)
  message(FATAL_ERROR "${help_examples} --list failed (${help_rc})")
endif()
string(REPLACE "\n" ";" help_tools "${help_tools}")

# netlab's mpirun reaches other namespaces over TCP: none of the loopback-only settings.
set(STRATA_HELP_NETLAB_ENV
  STRATA_TOPO_FILE=unset: STRATA_HOSTNAME=unset: STRATA_PLAN_FILE=unset:
  STRATA_CHUNK_BYTES=unset: STRATA_DEBUG=unset: STRATA_NET=unset:
  OMPI_ALLOW_RUN_AS_ROOT=set:1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=set:1)

foreach(entry IN LISTS help_tools)
  if(entry STREQUAL "")
    continue()
  endif()
  string(REPLACE " " ";" entry "${entry}")
  list(GET entry 0 tool)
  list(GET entry 1 kind)
  set(name tools.help_examples.${tool})
  add_test(NAME ${name} COMMAND ${Python3_EXECUTABLE} ${help_examples} ${PROJECT_SOURCE_DIR}
    ${PROJECT_BINARY_DIR} ${tool})
  if(kind STREQUAL "netlab")
    set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION "${STRATA_HELP_NETLAB_ENV}"
      LABELS "tools;mpi;netlab" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 300)
  elseif(kind STREQUAL "mpi")
    set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION "${STRATA_TOOLS_BASE_ENV}"
      LABELS "tools;mpi" RUN_SERIAL TRUE TIMEOUT 600)
  else()
    set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION "${STRATA_TOOLS_BASE_ENV}"
      LABELS "tools;unit" TIMEOUT 300)
  endif()
endforeach()

add_test(NAME tools.help_examples.inventory COMMAND ${Python3_EXECUTABLE} ${help_examples}
  ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} --inventory)
set_tests_properties(tools.help_examples.inventory PROPERTIES
  ENVIRONMENT_MODIFICATION "${STRATA_TOOLS_BASE_ENV}" LABELS "tools;unit" TIMEOUT 120)
