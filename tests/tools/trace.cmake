# strata-trace as a user runs it (included from tests/tools/CMakeLists.txt):
#
#   tools.strata_trace.<case>   test_strata_trace.sh <case>: --help; bad input (a missing or
#                               empty directory, a file that is not a timeline, a dump line
#                               that does not parse, a rank twice); merge of two hand-written
#                               ranks (alignment to the microsecond, every event kept), of a
#                               file cut short, of two communicators; summary's numbers on the
#                               same files; hang on the dumps of real runs of strata_mpi_faults
#                               (a stalled rank, the same with one rank's dump gone, a count
#                               mismatch) and on hand-written ones (a call never issued, ranks
#                               that agree)
#
# The tool is a Python script in the source tree (tools/strata-trace): nothing to build, no
# mpiexec; every case is a unit test.
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_TRACE_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  STRATA_SOURCE_DIR=set:${PROJECT_SOURCE_DIR}
  PYTHON=set:${Python3_EXECUTABLE}
  STRATA_TRACE_SCRIPT=unset:)

set(STRATA_TRACE_CASES help bad_input merge merge_truncated merge_two_comms summary hang_stall
  hang_dead_peer hang_count_mismatch hang_never_issued hang_agree)

foreach(case IN LISTS STRATA_TRACE_CASES)
  add_test(NAME tools.strata_trace.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_trace.sh ${case})
  set_tests_properties(tools.strata_trace.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_TRACE_TEST_ENV}" LABELS "tools;unit" TIMEOUT 60)
endforeach()
