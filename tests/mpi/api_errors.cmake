# MPI entries of tests/mpi/CMakeLists.txt (included there): the API and its errors, and how
# strataCommInitMPI fails on bad topology files.

# --- API and errors ---------------------------------------------------------------------------
# These take about a second; a short timeout keeps a hang from stalling the suite.
foreach(np 1 2 4)
  strata_add_mpi_test(mpi.api_errors.np${np} PROGRAM api_errors NP ${np} TIMEOUT 60)
endforeach()
strata_add_mpi_test(mpi.api_errors.np5.hosts_2_3 PROGRAM api_errors HOSTS a:2 b:3 TIMEOUT 60)

# The argument errors of broadcast, reduce, send/recv, groups, split and requests run in every
# entry above; these add odd counts, topology files, irregular and interleaved hosts.
strata_add_mpi_test(mpi.api_errors.np3 PROGRAM api_errors NP 3 TIMEOUT 60)
strata_add_mpi_test(mpi.api_errors.np7.hosts_3_4 PROGRAM api_errors HOSTS a:3 b:4 TIMEOUT 60)
strata_add_mpi_test(mpi.api_errors.np8.topo_2x2x2 PROGRAM api_errors NP 8 TIMEOUT 60
  ENV STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/2x2x2.yaml)
strata_add_mpi_test(mpi.api_errors.np6.hosts_interleaved_2 PROGRAM api_errors NP 6
  INTERLEAVE 2 TIMEOUT 60)
# strataGroupEnd without strataGroupStart must be strataInvalidArgument (the acceptance text).
strata_add_mpi_test(mpi.api_errors.group_end_without_start PROGRAM api_errors NP 2 TIMEOUT 60
  ARGS --group-end-without-start)
# strataCommAbort on one rank must return without the others: on one detected host (the shm
# fabric) and on the mpi fabric alone (flat4.yaml). The abort returns at once or never, so a
# short timeout (the watchdog fires after 6 s).
strata_add_mpi_test(mpi.api_errors.abort_is_local.np3 PROGRAM api_errors NP 3 TIMEOUT 26
  ARGS --abort-is-local)
strata_add_mpi_test(mpi.api_errors.abort_is_local.np4.topo_flat4 PROGRAM api_errors NP 4
  TIMEOUT 26 ARGS --abort-is-local ENV STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/flat4.yaml)

# Bad STRATA_TOPO_FILEs: strataCommInitMPI must fail on every rank, naming the file, without
# hanging. One entry per file: STRATA_* values are read once per process.
foreach(bad size_mismatch syntax zero_size not_a_number unknown_fabric no_levels)
  strata_add_mpi_test(mpi.init_failure.${bad} PROGRAM api_errors NP 4 TIMEOUT 60
    ARGS --expect-init-failure --message-names bad_${bad}.yaml
    ENV STRATA_TOPO_FILE=${STRATA_BAD_TOPOLOGIES}/bad_${bad}.yaml)
endforeach()
strata_add_mpi_test(mpi.init_failure.missing_file PROGRAM api_errors NP 3 TIMEOUT 60
  ARGS --expect-init-failure --message-names does_not_exist.yaml
  ENV STRATA_TOPO_FILE=${STRATA_BAD_TOPOLOGIES}/does_not_exist.yaml)
# Only ranks 1-3 have a (bad) file; rank 0 detects its hierarchy and could go on alone. All must
# still fail together and at once: the others cannot build a communicator.
add_test(NAME mpi.init_failure.some_ranks_bad
  COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe
    ${MPIEXEC_NUMPROC_FLAG} 1 $<TARGET_FILE:strata_mpi_api_errors>
      --timeout 40 --expect-init-failure
    : ${MPIEXEC_NUMPROC_FLAG} 3 env STRATA_TOPO_FILE=${STRATA_BAD_TOPOLOGIES}/bad_syntax.yaml
      $<TARGET_FILE:strata_mpi_api_errors>
      --timeout 40 --expect-init-failure --message-names bad_syntax.yaml)
strata_mpi_test_properties(mpi.init_failure.some_ranks_bad TIMEOUT 60)

# A bad and a missing STRATA_TOPO_FILE as the quick start's demo meets them: one WARN line per
# rank, and a missing file named as not found (a system error, not an invalid argument).
if(TARGET strata-allreduce-demo)
  add_test(NAME mpi.init_failure.reported_once
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_init_error_once.sh ${MPIEXEC_EXECUTABLE}
            $<TARGET_FILE:strata-allreduce-demo> ${STRATA_BAD_TOPOLOGIES})
  strata_mpi_test_properties(mpi.init_failure.reported_once TIMEOUT 150)
endif()
