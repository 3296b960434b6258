# tools/strata-run as a user runs it (included from tests/tools/CMakeLists.txt):
#
#   tools.strata_run.loopback_env   the STRATA_SOCKET_IFNAME each rank gets: =lo when every rank
#                                   is on this machine, the user's own value or none otherwise
#   tools.strata_run.loopback_job   a unique-id job of 2 ranks (one host, 1+1 emulated hosts,
#                                   --comm-id) whose rendezvous root and ranks listen on
#                                   127.0.0.1 (STRATA_DEBUG=INFO)
#
# No mpiexec: strata-run starts the ranks itself, so both are unit tests.
if(NOT TARGET strata-uid-demo)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_RUN_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  STRATA_RUN=set:${PROJECT_SOURCE_DIR}/tools/strata-run
  "STRATA_UID_DEMO=set:$<TARGET_FILE:strata-uid-demo>"
  STRATA_SOCKET_IFNAME=unset:
  STRATA_COMM_ID=unset:
  PYTHON=set:${Python3_EXECUTABLE})

foreach(case loopback_env loopback_job)
  add_test(NAME tools.strata_run.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_run.sh ${case})
  set_tests_properties(tools.strata_run.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_RUN_TEST_ENV}" LABELS "tools;unit" TIMEOUT 120)
endforeach()
