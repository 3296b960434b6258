# What every tool shares on its command line (tools/lib/tool_cli.h), checked across all seven
# (included from tests/tools/CMakeLists.txt):
#
#   tools.cli.exit_codes     --help exits 0 and ends with the exit statuses; an unknown flag
#                            exits 2 (strata-perf: the codes only)
#   tools.cli.short_letters  nccl-tests' short letters mean nccl-tests' options, and a letter
#                            means the same in every tool
#   tools.cli.same_sizes     -b/-e/-f sweep the same sizes in strata-tune, -perf and -kernels
#   tools.cli.empty_paths    every option naming a file refuses '' (exit 2, naming the option)
set(STRATA_CLI_TOOLS strata-info strata-topo strata-plan strata-tune strata-kernels strata-train
  strata-perf)
foreach(t IN LISTS STRATA_CLI_TOOLS)
  if(NOT TARGET ${t})
    return()
  endif()
endforeach()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_CLI_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  "STRATA_INFO_BIN=set:$<TARGET_FILE:strata-info>"
  "STRATA_TOPO_BIN=set:$<TARGET_FILE:strata-topo>"
  "STRATA_PLAN_BIN=set:$<TARGET_FILE:strata-plan>"
  "STRATA_TUNE_BIN=set:$<TARGET_FILE:strata-tune>"
  "STRATA_KERNELS_BIN=set:$<TARGET_FILE:strata-kernels>"
  "STRATA_TRAIN_BIN=set:$<TARGET_FILE:strata-train>"
  "STRATA_PERF_BIN=set:$<TARGET_FILE:strata-perf>"
  PYTHON=set:${Python3_EXECUTABLE})

foreach(case exit_codes short_letters same_sizes empty_paths)
  add_test(NAME tools.cli.${case} COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_tool_cli.sh ${case})
  set_tests_properties(tools.cli.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_CLI_TEST_ENV}" TIMEOUT 120)
endforeach()
# strata-train and strata-perf start MPI (a singleton) even for --help; same_sizes runs mpiexec.
set_tests_properties(tools.cli.exit_codes tools.cli.short_letters tools.cli.empty_paths
  PROPERTIES LABELS "tools;unit")
set_tests_properties(tools.cli.same_sizes PROPERTIES LABELS "tools;mpi" RUN_SERIAL TRUE)
