# MPI entries of tests/mpi/CMakeLists.txt (included there): ranks that disagree (STRATA_CHECK)
# and faults (stalled peers, aborts).

# --- Ranks that disagree (test_mismatch.cc) ----------------------------------------------------
add_executable(strata_mpi_mismatch test_mismatch.cc)
target_link_libraries(strata_mpi_mismatch PRIVATE strata MPI::MPI_C CLI11::CLI11 Threads::Threads)
target_compile_options(strata_mpi_mismatch PRIVATE ${STRATA_WARNINGS})
target_include_directories(strata_mpi_mismatch PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_compile_definitions(strata_mpi_mismatch PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)

# STRATA_CHECK=1: the last rank calls something else (count, type, op, root, collective, a
# skipped call; blocking, nonblocking, in a group); every rank must return strataInvalidUsage
# naming rank 0's call and the last rank's. One host (shm level), 2 emulated hosts (mpi between
# them), and the plain mpi fabric.
strata_add_mpi_test(mpi.mismatch.check.np2 PROGRAM mismatch NP 2 TIMEOUT 60 ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.mismatch.check.np4 PROGRAM mismatch NP 4 TIMEOUT 60 ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.mismatch.check.np4.hosts_interleaved_2 PROGRAM mismatch NP 4
  INTERLEAVE 2 TIMEOUT 60 ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.mismatch.check.np4.topo_flat4.threads PROGRAM mismatch NP 4 TIMEOUT 60
  ARGS --threads ENV STRATA_CHECK=1 STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/flat4.yaml)
# STRATA_CHECK=2: call sites too (a skipped one of two same-shaped calls); the comparison is
# the same whatever the layout, so 2 ranks.
strata_add_mpi_test(mpi.mismatch.check_sites.np2 PROGRAM mismatch NP 2 TIMEOUT 60
  ENV STRATA_CHECK=2)
# The same cases without STRATA_CHECK (--no-check): every rank must still end in an error
# (strataInvalidUsage where a fabric sees the disagreement, strataRemoteError at STRATA_TIMEOUT),
# never a hang or a silent wrong result.
strata_add_mpi_test(mpi.mismatch.nocheck.np4 PROGRAM mismatch NP 4 TIMEOUT 120
  ARGS --no-check ENV STRATA_TIMEOUT=2)
strata_add_mpi_test(mpi.mismatch.nocheck.np4.hosts_interleaved_2 PROGRAM mismatch NP 4
  INTERLEAVE 2 TIMEOUT 120 ARGS --no-check ENV STRATA_TIMEOUT=2)

# A setting that changes what ranks exchange, set on the last rank only (env_on_rank.sh): every
# rank must fail init with strataInvalidUsage naming the variable and both values.
set(STRATA_ENV_ON_RANK ${CMAKE_CURRENT_SOURCE_DIR}/env_on_rank.sh)
function(strata_add_init_disagreement name assignment)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "ARGS;ENV")
  add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe ${MPIEXEC_NUMPROC_FLAG} 4
    sh ${STRATA_HOSTNAME_BY_RANK} 2 sh ${STRATA_ENV_ON_RANK} 3 ${assignment}
    $<TARGET_FILE:strata_mpi_mismatch> ${arg_ARGS} --timeout 20)
  strata_mpi_test_properties(${name} TIMEOUT 40 ENV ${arg_ENV})
endfunction()
strata_add_init_disagreement(mpi.mismatch.setting.chunk_bytes STRATA_CHUNK_BYTES=4096
  ARGS --expect-init-failure
  "STRATA_CHUNK_BYTES differs between ranks: rank 0 has 268435456, rank 3 has 4096")
strata_add_init_disagreement(mpi.mismatch.setting.pipeline_bytes STRATA_PIPELINE_BYTES=4096
  ARGS --expect-init-failure "STRATA_PIPELINE_BYTES differs between ranks: rank 0 has auto, rank 3")
strata_add_init_disagreement(mpi.mismatch.setting.shm_slot_bytes STRATA_SHM_SLOT_BYTES=65536
  ARGS --expect-init-failure "STRATA_SHM_SLOT_BYTES differs between ranks: rank 0 has 4194304")
strata_add_init_disagreement(mpi.mismatch.setting.gpu_staging_bytes
  STRATA_GPU_STAGING_BYTES=65536 ARGS --expect-init-failure "STRATA_GPU_STAGING_BYTES differs")
strata_add_init_disagreement(mpi.mismatch.setting.check STRATA_CHECK=1
  ARGS --expect-init-failure "STRATA_CHECK differs between ranks: rank 0 has 0, rank 3 has 1")
strata_add_init_disagreement(mpi.mismatch.setting.fusion_wait STRATA_FUSION_WAIT_US=0
  ARGS --expect-init-failure
  "STRATA_FUSION_WAIT_US differs between ranks: rank 0 has on, rank 3 has off")
strata_add_init_disagreement(mpi.mismatch.setting.fusion_bytes STRATA_FUSION_BYTES=4096
  ARGS --expect-init-failure
  "STRATA_FUSION_BYTES differs between ranks: rank 0 has 1048576, rank 3 has 4096")
strata_add_init_disagreement(mpi.compress.mismatch STRATA_COMPRESS=fp16
  ARGS --expect-init-failure "STRATA_COMPRESS differs between ranks: rank 0 has none, rank 3 has fp16")
# Topology files: content that differs (at different paths) fails init on every rank; set on
# one rank only fails too; the same content at another path (a node-local copy) is accepted.
configure_file(${STRATA_TOPOLOGIES}/2x2.yaml ${CMAKE_CURRENT_BINARY_DIR}/copy_of_2x2.yaml COPYONLY)
strata_add_init_disagreement(mpi.mismatch.topo_content
  STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/flat4.yaml
  ARGS --expect-init-failure "2x2.yaml (node(2, mpi) x network(2, mpi)), rank 3 read ${STRATA_TOPOLOGIES}/flat4.yaml (node(4, mpi))"
  ENV STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/2x2.yaml)
strata_add_init_disagreement(mpi.mismatch.topo_one_rank
  STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/2x2.yaml
  ARGS --expect-init-failure "STRATA_TOPO_FILE is set on some ranks only: rank 0 has unset, rank 3 has")
strata_add_init_disagreement(mpi.mismatch.topo_same_content_other_path
  STRATA_TOPO_FILE=${CMAKE_CURRENT_BINARY_DIR}/copy_of_2x2.yaml
  ARGS --expect-init-success ENV STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/2x2.yaml)
# Correct programs under STRATA_CHECK=1: the comparison must never fail calls that agree, in
# groups mixing send/recv with collectives, on split communicators, with nonblocking calls
# queued (with and without the progress thread), on one host and on emulated hosts.
strata_add_mpi_test(mpi.check.collectives.np4.hosts_interleaved_2 PROGRAM collectives NP 4
  INTERLEAVE 2 ARGS --quick --two-comms ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.check.p2p_groups.np4 PROGRAM p2p_groups NP 4 TIMEOUT 60
  ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.check.split.np6.hosts_interleaved_2 PROGRAM split NP 6 INTERLEAVE 2
  TIMEOUT 60 ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.check.nonblocking.np4.threads PROGRAM nonblocking NP 4 TIMEOUT 60
  ARGS --threads ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.check.nonblocking.np3 PROGRAM nonblocking NP 3 TIMEOUT 60
  ENV STRATA_CHECK=1)
# Faults (test_faults.cc), with a 2 s STRATA_TIMEOUT: one host (the shm fabric) and two emulated
# hosts (the inter-host level over MPI), with and without the progress thread.
foreach(variant IN ITEMS "np4;NP;4" "np4.hosts_2_2;HOSTS;a:2;b:2")
  list(GET variant 0 tag)
  list(SUBLIST variant 1 -1 layout)
  # These two also check the flight recorder's dump of the failure (one JSON line per rank).
  strata_add_mpi_test(mpi.faults.stall.${tag} PROGRAM faults ${layout} TIMEOUT 60
    ARGS --scenario stall ENV STRATA_TIMEOUT=2
    STRATA_FLIGHT_RECORDER_FILE=${CMAKE_CURRENT_BINARY_DIR}/flight.stall.${tag}.%r.jsonl)
  strata_add_mpi_test(mpi.faults.stall.${tag}.threads PROGRAM faults ${layout} TIMEOUT 60
    ARGS --scenario stall --threads ENV STRATA_TIMEOUT=2
    STRATA_FLIGHT_RECORDER_FILE=${CMAKE_CURRENT_BINARY_DIR}/flight.stall.${tag}.threads.%r.jsonl)
  strata_add_mpi_test(mpi.faults.count_mismatch.${tag} PROGRAM faults ${layout} TIMEOUT 60
    ARGS --scenario count-mismatch ENV STRATA_TIMEOUT=2)
  strata_add_mpi_test(mpi.faults.abort_queued.${tag}.threads PROGRAM faults ${layout} TIMEOUT 60
    ARGS --scenario abort-queued --threads ENV STRATA_TIMEOUT=2)
endforeach()
# The entries above run the default engine (ucx: the inter-host level and shm's partner; the
# abandoned fabrics go without a word from UCX). The same over Open MPI (STRATA_NET=mpi): a
# stalled peer times out in the started ring, ranks that disagree fail.
strata_add_mpi_test(mpi.faults.stall.net_mpi.np4.hosts_2_2.threads PROGRAM faults HOSTS a:2 b:2
  TIMEOUT 60 ARGS --scenario stall --threads ENV STRATA_TIMEOUT=2 STRATA_NET=mpi)
strata_add_mpi_test(mpi.faults.count_mismatch.net_mpi.np4.hosts_2_2 PROGRAM faults
  HOSTS a:2 b:2 TIMEOUT 60 ARGS --scenario count-mismatch ENV STRATA_TIMEOUT=2 STRATA_NET=mpi)
# The dumps strata-trace hang reads in tests/tools (trace.cmake's live_* cases): the stalled rank
# above on 2 hosts, and a rank that skips a call (it dumps on SIGUSR1).
set_tests_properties(mpi.faults.stall.np4.hosts_2_2 PROPERTIES FIXTURES_SETUP flight_stall)
strata_add_mpi_test(mpi.faults.skip.np4.hosts_2_2 PROGRAM faults HOSTS a:2 b:2 TIMEOUT 60
  ARGS --scenario skip ENV STRATA_TIMEOUT=2 STRATA_FLIGHT_RECORDER_SIGNAL=USR1
  STRATA_FLIGHT_RECORDER_FILE=${CMAKE_CURRENT_BINARY_DIR}/flight.skip.%r.jsonl)
set_tests_properties(mpi.faults.skip.np4.hosts_2_2 PROPERTIES FIXTURES_SETUP flight_skip)
strata_add_mpi_test(mpi.faults.abort_queued.np4 PROGRAM faults NP 4 TIMEOUT 60
  ARGS --scenario abort-queued ENV STRATA_TIMEOUT=2)
strata_add_mpi_test(mpi.faults.init_loop.np4.hosts_2_2 PROGRAM faults HOSTS a:2 b:2 TIMEOUT 120
  ARGS --scenario init-loop ENV STRATA_TIMEOUT=10)
