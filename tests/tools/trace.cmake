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
#   tools.strata_trace.live_*   hang on the dumps the fault entries of tests/mpi just wrote
#                               (fixtures): live_stall (mpi.faults.stall.np4.hosts_2_2: rank 3
#                               slept in user code), live_dead_peer (the same without rank 3's
#                               dump, as if it had been killed), live_skip
#                               (mpi.faults.skip.np4.hosts_2_2: rank 3 skipped a call);
#                               live_timeline: STRATA_TRACE on strata-perf, 4 ranks on 2 hosts;
#                               live_nvtx (CUDA builds): the NVTX ranges a stand-in tool
#                               (nvtx/nvtx_capture.cc, no GPU needed) sees are the timeline's
#                               spans, by name and number; live_device (CUDA builds, a GPU:
#                               skipped without one): the stream gate and staging copies
#
# The tool is a Python script in the source tree (tools/strata-trace): nothing to build, no
# mpiexec; every case is a unit test.
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_TRACE_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  TRACE_SOURCE_DIR=set:${PROJECT_SOURCE_DIR}
  PYTHON=set:${Python3_EXECUTABLE}
  TRACE_SCRIPT=unset:)

set(STRATA_TRACE_CASES help bad_input merge merge_truncated merge_two_comms summary hang_stall
  hang_dead_peer hang_lost hang_count_mismatch hang_never_issued hang_agree)

foreach(case IN LISTS STRATA_TRACE_CASES)
  add_test(NAME tools.strata_trace.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_trace.sh ${case})
  set_tests_properties(tools.strata_trace.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_TRACE_TEST_ENV}" LABELS "tools;unit" TIMEOUT 60)
endforeach()

# The live cases need the fault program and strata-perf: builds without the tools (the
# sanitizer builds) have neither entry.
if(TARGET strata_mpi_faults AND TARGET strata-perf)
  foreach(case live_stall live_dead_peer live_skip live_timeline)
    add_test(NAME tools.strata_trace.${case}
      COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_trace.sh ${case})
    set_tests_properties(tools.strata_trace.${case} PROPERTIES
      ENVIRONMENT_MODIFICATION
      "${STRATA_TRACE_TEST_ENV};LIVE_DUMPS=set:${CMAKE_BINARY_DIR}/tests/mpi;PERF_BIN=set:$<TARGET_FILE:strata-perf>;HOSTNAME_BY_RANK=set:${PROJECT_SOURCE_DIR}/tests/mpi/hostname_by_rank.sh"
      LABELS "tools;mpi" TIMEOUT 60)
  endforeach()
  set_tests_properties(tools.strata_trace.live_stall tools.strata_trace.live_dead_peer
    PROPERTIES FIXTURES_REQUIRED flight_stall)
  set_tests_properties(tools.strata_trace.live_skip PROPERTIES FIXTURES_REQUIRED flight_skip)
  # It starts mpiexec: serially, as tests/mpi's entries run.
  set_tests_properties(tools.strata_trace.live_timeline PROPERTIES RUN_SERIAL TRUE)
  if(STRATA_HAVE_CUDA)
    # NVTX's headers come with CUDA; the tool is loaded by NVTX itself, not linked.
    add_library(strata_nvtx_capture SHARED ${CMAKE_CURRENT_LIST_DIR}/nvtx/nvtx_capture.cc)
    target_include_directories(strata_nvtx_capture PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    add_test(NAME tools.strata_trace.live_nvtx
      COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_trace.sh live_nvtx)
    set_tests_properties(tools.strata_trace.live_nvtx PROPERTIES
      ENVIRONMENT_MODIFICATION
      "${STRATA_TRACE_TEST_ENV};PERF_BIN=set:$<TARGET_FILE:strata-perf>;HOSTNAME_BY_RANK=set:${PROJECT_SOURCE_DIR}/tests/mpi/hostname_by_rank.sh;NVTX_CAPTURE_LIB=set:$<TARGET_FILE:strata_nvtx_capture>"
      LABELS "tools;mpi" TIMEOUT 90 RUN_SERIAL TRUE)
    # The device calls' events (stream gate, staging copies): skipped without a GPU.
    add_test(NAME tools.strata_trace.live_device
      COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_trace.sh live_device)
    set_tests_properties(tools.strata_trace.live_device PROPERTIES
      ENVIRONMENT_MODIFICATION
      "${STRATA_TRACE_TEST_ENV};PERF_BIN=set:$<TARGET_FILE:strata-perf>;HOSTNAME_BY_RANK=set:${PROJECT_SOURCE_DIR}/tests/mpi/hostname_by_rank.sh"
      LABELS "tools;mpi;gpu" TIMEOUT 90 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
  endif()
endif()
