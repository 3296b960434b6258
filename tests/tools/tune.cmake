# strata-tune, run as a user runs it (ctest -L tools); included from tests/tools/CMakeLists.txt.
#
#   tools.strata_tune.<case>   test_strata_tune.sh <case>: --help, argument errors, one rank,
#                              an unwritable --output, and a short sweep on 4 ranks (2 emulated
#                              hosts) whose plan file a 4-rank job then runs with
#   tools.strata_tune.netlab   test_strata_tune_netlab.sh: on netlab (2 hosts x 2 ranks), the
#                              written plan within 10% of the fastest candidate at every size
#
# Cases that start mpiexec are labelled mpi and run serially, as tests/mpi's do.
if(NOT TARGET strata-tune OR NOT TARGET strata-allreduce-demo)
  return()
endif()

set(STRATA_TUNE_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  "STRATA_TUNE_BIN=set:$<TARGET_FILE:strata-tune>"
  "STRATA_DEMO=set:$<TARGET_FILE:strata-allreduce-demo>")

set(STRATA_TUNE_CASES help bad_arguments)
set(STRATA_TUNE_MPI_CASES one_rank bad_output sweep_and_use)

foreach(case IN LISTS STRATA_TUNE_CASES STRATA_TUNE_MPI_CASES)
  add_test(NAME tools.strata_tune.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_tune.sh ${case})
  set_tests_properties(tools.strata_tune.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_TUNE_TEST_ENV}")
  if(case IN_LIST STRATA_TUNE_MPI_CASES)
    set_tests_properties(tools.strata_tune.${case} PROPERTIES
      LABELS "tools;mpi" RUN_SERIAL TRUE TIMEOUT 240)
  else()
    set_tests_properties(tools.strata_tune.${case} PROPERTIES LABELS "tools;unit" TIMEOUT 60)
  endif()
endforeach()

# tools.strata_tune.netlab: test_strata_tune_netlab.sh on an emulated cluster (2 hosts x 2
# ranks at 2 Gbit/s, tools/netlab): the plan file strata-tune writes is within 10% of the
# fastest candidate at every size when re-timed. Needs root for network namespaces; without,
# it exits 77 and ctest reports it skipped, never passed.
add_test(NAME tools.strata_tune.netlab COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_tune_netlab.sh)
set_tests_properties(tools.strata_tune.netlab PROPERTIES
  ENVIRONMENT_MODIFICATION
    "STRATA_HOSTNAME=unset:;STRATA_TOPO_FILE=unset:;STRATA_PLAN_FILE=unset:;STRATA_CHUNK_BYTES=unset:;STRATA_DEBUG=unset:;STRATA_SOURCE_DIR=set:${PROJECT_SOURCE_DIR};STRATA_TUNE_BIN=set:$<TARGET_FILE:strata-tune>"
  SKIP_RETURN_CODE 77
  LABELS "tools;mpi;netlab"
  RUN_SERIAL TRUE
  TIMEOUT 300)
