# strata-plan as a user runs it (included from tests/tools/CMakeLists.txt):
#
#   tools.strata_plan.<case>   test_strata_plan.sh <case>: show on topology files (the seed's
#                              40 GPUs, 2x2x2), a plan file and an hwloc fixture; show of the
#                              broadcast's and reduce's forms (--collective; the reduce-scatter's
#                              and all-gather's in test_strata_plan_forms.sh); simulate of
#                              BlueConnect's 24x8 cluster; validate of configs/plans/*.yaml and of
#                              broken files; bad arguments; --live under mpiexec with two
#                              emulated hosts; test_strata_plan_baseline.sh <case>: simulate
#                              and show against NCCL's choice and the other baselines, and a
#                              topology file's published figures beside NCCL's model
#
# Cases that start mpiexec are labelled mpi as well and run serially, as tests/mpi's do; the
# others are unit tests.
if(NOT TARGET strata-plan)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

set(STRATA_PLAN_TEST_ENV ${STRATA_TOOLS_BASE_ENV}
  "STRATA_PLAN_BIN=set:$<TARGET_FILE:strata-plan>"
  STRATA_SOURCE_DIR=set:${PROJECT_SOURCE_DIR}
  PYTHON=set:${Python3_EXECUTABLE})

set(STRATA_PLAN_CASES help show_small_vs_large show_seed_flat_ring show_seed_nic_per_gpu
  show_collective_broadcast show_collective_reduce show_plan_file show_input show_sizes
  simulate_192 simulate_links validate_pinned_forms validate_configs
  validate_broken bad_inputs bad_arguments)
set(STRATA_PLAN_MPI_CASES live_two_hosts live_plan_file)

# tools.strata_plan.<case> of test_strata_plan_forms.sh: show --collective reducescatter|allgather,
# the cost model's form and a plan file's pins (live_pinned_forms starts mpiexec).
foreach(case IN ITEMS show_block_forms show_one_level show_pinned_forms live_pinned_forms)
  add_test(NAME tools.strata_plan.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_plan_forms.sh ${case})
  set_tests_properties(tools.strata_plan.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_PLAN_TEST_ENV}" LABELS "tools;unit" TIMEOUT 120)
endforeach()
set_tests_properties(tools.strata_plan.live_pinned_forms PROPERTIES LABELS "tools;mpi"
  RUN_SERIAL TRUE)

# tools.strata_plan.<case> of test_strata_plan_baseline.sh: simulate and show against NCCL's
# choice, the fallback to it, and the other baselines.
foreach(case IN ITEMS simulate_nccl show_fallback baseline_kinds published)
  add_test(NAME tools.strata_plan.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_plan_baseline.sh ${case})
  set_tests_properties(tools.strata_plan.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_PLAN_TEST_ENV}" LABELS "tools;unit" TIMEOUT 120)
endforeach()

foreach(case IN LISTS STRATA_PLAN_CASES STRATA_PLAN_MPI_CASES)
  add_test(NAME tools.strata_plan.${case}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_strata_plan.sh ${case})
  set_tests_properties(tools.strata_plan.${case} PROPERTIES
    ENVIRONMENT_MODIFICATION "${STRATA_PLAN_TEST_ENV}"
    TIMEOUT 120)
  if(case IN_LIST STRATA_PLAN_MPI_CASES)
    set_tests_properties(tools.strata_plan.${case} PROPERTIES LABELS "tools;mpi" RUN_SERIAL TRUE)
  else()
    set_tests_properties(tools.strata_plan.${case} PROPERTIES LABELS "tools;unit")
  endif()
endforeach()
