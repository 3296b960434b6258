# MPI entries of tests/mpi/CMakeLists.txt (included there): the sparse allreduce and
# compression on the slow links.

# --- Sparse allreduce (CSC) -------------------------------------------------------------------
# strataCscAllReduce against an independent model (every rank gathers all inputs): outputs,
# selected chunks, residuals, conservation over 20 calls, density 1 == dense, fp16/bf16, avg,
# argument errors. Internal test: it links strata_core to read the residual and the selection
# (test_csc.cc). One host (shm), 2 emulated hosts (mpi between them), and an odd rank count.
add_executable(strata_mpi_csc test_csc.cc)
target_link_libraries(strata_mpi_csc PRIVATE strata_core CLI11::CLI11 Threads::Threads)
target_compile_options(strata_mpi_csc PRIVATE ${STRATA_WARNINGS})
target_include_directories(strata_mpi_csc PRIVATE ${PROJECT_SOURCE_DIR}/tests)
strata_add_mpi_test(mpi.csc.np4 PROGRAM csc NP 4 TIMEOUT 60)
strata_add_mpi_test(mpi.csc.np4.hosts_2_2 PROGRAM csc HOSTS a:2 b:2 TIMEOUT 60)
strata_add_mpi_test(mpi.csc.np3 PROGRAM csc NP 3 TIMEOUT 60)
strata_add_mpi_test(mpi.csc.np1 PROGRAM csc NP 1 TIMEOUT 60)
# With the progress thread and STRATA_CHECK (the two allreduces of a call compared across
# ranks), and with small pieces under a 2-level topology file.
strata_add_mpi_test(mpi.csc.np4.hosts_2_2.threads.check PROGRAM csc HOSTS a:2 b:2 TIMEOUT 60
  ARGS --threads ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.csc.np4.topo_2x2.chunk4k PROGRAM csc NP 4 TIMEOUT 60
  ENV STRATA_TOPO_FILE=${STRATA_TOPOLOGIES}/2x2.yaml STRATA_CHUNK_BYTES=4096)

# --- Compression on the slow links (test_compress.cc) -------------------------------------------
# Compressed: 2 emulated hosts, the inter-host stage in fp16/bf16 (by STRATA_COMPRESS or a plan
# file's wire key; as the allreduce, as a reduce-scatter and all-gather, pipelined); exact: one
# host, compression off, or `wire: none`.
set(compressed ARGS --expect compressed --slow-group 2)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2 PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire fp16 ENV STRATA_COMPRESS=fp16)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.bf16 PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire bf16 ENV STRATA_COMPRESS=bf16)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.pipe64k PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire fp16 ENV STRATA_COMPRESS=fp16 STRATA_PIPELINE_BYTES=65536)
strata_add_mpi_test(mpi.compress.np6.hosts_2_2_2.pipe64k PROGRAM compress HOSTS a:2 b:2 c:2
  ARGS --expect compressed --slow-group 3 --wire fp16
  ENV STRATA_COMPRESS=fp16 STRATA_PIPELINE_BYTES=65536)
strata_add_mpi_test(mpi.compress.np7.hosts_3_4 PROGRAM compress HOSTS a:3 b:4
  ${compressed} --wire fp16 ENV STRATA_COMPRESS=fp16)
strata_add_mpi_test(mpi.compress.np4.hosts_interleaved_2 PROGRAM compress NP 4 INTERLEAVE 2
  ${compressed} --wire fp16 ENV STRATA_COMPRESS=fp16)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.plan_wire PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire fp16 ENV STRATA_PLAN_FILE=${STRATA_BAD_TOPOLOGIES}/../plans/compress_wire_fp16.yaml)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.reordered PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire fp16 ENV STRATA_COMPRESS=fp16
  STRATA_PLAN_FILE=${STRATA_BAD_TOPOLOGIES}/../plans/compress_reordered.yaml)
strata_add_mpi_test(mpi.compress.np4 PROGRAM compress NP 4 ARGS --expect exact
  ENV STRATA_COMPRESS=fp16)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.off PROGRAM compress HOSTS a:2 b:2
  ARGS --expect exact)
strata_add_mpi_test(mpi.compress.np4.hosts_2_2.plan_wire_none PROGRAM compress HOSTS a:2 b:2
  ARGS --expect exact ENV STRATA_COMPRESS=fp16
  STRATA_PLAN_FILE=${STRATA_BAD_TOPOLOGIES}/../plans/compress_wire_none.yaml)

# --- Unique-id communicators: every API family ----------------------------------------------
# The programs' --uid makes their communicators from a unique id (TCP control plane, ucx between
# the emulated hosts): nonblocking calls with the progress thread, fusion, CSC with STRATA_CHECK,
# compression, a stalled peer's deadline and the async error, and an abort of queued calls.
# (Split on unique-id communicators: ncclCommSplit in nccl_dropin.uid_*.)
strata_add_mpi_test(mpi.nonblocking.uid.np4.hosts_2_2.threads PROGRAM nonblocking HOSTS a:2 b:2
  TIMEOUT 60 ARGS --uid --threads)
strata_add_mpi_test(mpi.fusion.uid.np4.hosts_2_2.theta4k PROGRAM fusion HOSTS a:2 b:2 TIMEOUT 120
  ARGS --uid ENV STRATA_FUSION_BYTES=4096)
strata_add_mpi_test(mpi.csc.uid.np4.hosts_2_2.threads.check PROGRAM csc HOSTS a:2 b:2 TIMEOUT 60
  ARGS --uid --threads ENV STRATA_CHECK=1)
strata_add_mpi_test(mpi.compress.uid.np4.hosts_2_2 PROGRAM compress HOSTS a:2 b:2
  ${compressed} --wire fp16 --uid ENV STRATA_COMPRESS=fp16)
strata_add_mpi_test(mpi.faults.stall.uid.np4.hosts_2_2.threads PROGRAM faults HOSTS a:2 b:2
  TIMEOUT 60 ARGS --uid --scenario stall --threads ENV STRATA_TIMEOUT=2)
strata_add_mpi_test(mpi.faults.abort_queued.uid.np4.hosts_2_2.threads PROGRAM faults
  HOSTS a:2 b:2 TIMEOUT 60 ARGS --uid --scenario abort-queued --threads ENV STRATA_TIMEOUT=2)
