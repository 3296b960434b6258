# strata-perf, run as a user runs it (ctest -L tools); included from tests/tools/CMakeLists.txt.
#
#   tools.strata_perf.<case>   test_strata_perf.sh <case> (test_strata_perf_nccltests.sh for the
#                              nccl* cases): --help, argument errors (alone and
#                              under mpiexec, a root outside the job), an unwritable --json, the
#                              -c 1 sweeps below, --vs mpi (ratio columns, JSON, CSV, MPI's
#                              results checked; MPI_Bcast and MPI_Reduce in vs_mpi_rooted),
#                              --nonblocking (both latencies per call, with and without the
#                              progress thread, every collective), --overlap (fields and bounds),
#                              overlap_functional (collective and computation both complete and
#                              are right; the fraction is computed; never a speed verdict),
#                              --png / tools/plot (both placements, error bars over --repeat,
#                              --png-log-busbw; skipped without gnuplot), nccl-tests' flags
#                              (nccl_flags, nccltests_cmdline) and nccl-tests' output layout
#                              (nccltests_parser: tests/tools/nccltests_parse.py on
#                              data/all_reduce_perf_8gpu.txt -- nccl-tests 2.13's printf layout,
#                              modelled numbers, not a measurement -- and on broken copies;
#                              nccltests_output: the same parser on strata-perf's output)
#
#   check_<collective>_<layout>_<op>: float, half, bfloat16 and int8 on 2 ranks (2r) and on 4
#   ranks as 2 emulated hosts (4r2h), ops sum, avg and max on 4r2h and sum on 2r (allgather and
#   broadcast have no op; broadcast and reduce run from root 1).
#
#   device (CUDA builds only): --device sweeps with -c 1 on 2 ranks sharing the GPU; skipped
#   (exit 77) where no GPU is visible.
#
# Cases that start mpiexec are labelled mpi and run serially, as tests/mpi's do.
if(NOT TARGET strata-perf)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_PERF_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  STRATA_PROGRESS=unset:
  "PERF_BIN=set:$<TARGET_FILE:strata-perf>"
  PERF_PLOT=set:${PROJECT_SOURCE_DIR}/tools/plot
  HOSTNAME_BY_RANK=set:${PROJECT_SOURCE_DIR}/tests/mpi/hostname_by_rank.sh
  PYTHON=set:${Python3_EXECUTABLE})

set(STRATA_PERF_CASES help bad_arguments nccl_flags nccltests_parser)
set(STRATA_PERF_MPI_CASES bad_flag_mpi bad_root_mpi bad_output vs_mpi vs_mpi_rooted
  nonblocking nonblocking_rooted nonblocking_no_progress overlap overlap_functional plot
  nccltests_cmdline nccltests_output)
foreach(layout 2r 4r2h)
  # Every op on the 2-host layout; sum alone on one host (its ops take the same path there).
  set(ops sum)
  if(layout STREQUAL "4r2h")
    set(ops sum avg max)
  endif()
  foreach(coll allreduce reducescatter reduce)
    foreach(op IN LISTS ops)
      list(APPEND STRATA_PERF_MPI_CASES check_${coll}_${layout}_${op})
    endforeach()
  endforeach()
  list(APPEND STRATA_PERF_MPI_CASES check_allgather_${layout}_sum check_broadcast_${layout}_sum)
endforeach()
if(STRATA_HAVE_CUDA)
  list(APPEND STRATA_PERF_MPI_CASES device)
endif()

foreach(case IN LISTS STRATA_PERF_CASES STRATA_PERF_MPI_CASES)
  set(script test_strata_perf.sh)
  if(case MATCHES "^nccl")
    set(script test_strata_perf_nccltests.sh)
  endif()
  add_test(NAME tools.strata_perf.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/${script} ${case})
  set_tests_properties(tools.strata_perf.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_PERF_TEST_ENV}")
  if(case IN_LIST STRATA_PERF_MPI_CASES)
    set_tests_properties(tools.strata_perf.${case} PROPERTIES
      LABELS "tools;mpi" RUN_SERIAL TRUE TIMEOUT 120)
  else()
    set_tests_properties(tools.strata_perf.${case} PROPERTIES LABELS "tools;unit" TIMEOUT 60)
  endif()
endforeach()
set_tests_properties(tools.strata_perf.plot PROPERTIES SKIP_RETURN_CODE 77)
if(STRATA_HAVE_CUDA)
  set_tests_properties(tools.strata_perf.device PROPERTIES LABELS "tools;mpi;gpu"
    SKIP_RETURN_CODE 77)
endif()
