#!/usr/bin/env bash
# Builds strata with sanitizers (host-only, in a build directory of its own) and runs the tests
# that exercise them:
#
#   asan   AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer (build-asan): the unit
#          tests and a representative set of MPI entries (argument errors, life cycle, abort,
#          collectives on the shm and mpi fabrics, send/recv and groups, split, nonblocking, fusion)
#   tsan   ThreadSanitizer (build-tsan): the engine's unit tests and the MPI entries whose
#          progress thread touches host buffers (nonblocking calls, groups and fusion with
#          --threads)
#
#   bash scripts/sanitize.sh asan|tsan [--build-only] [extra ctest arguments]
#
# Any sanitizer report fails the entry that caused it: UBSan is fatal (-fno-sanitize-recover),
# ASan and TSan stop at the first report (halt_on_error), LeakSanitizer exits non-zero, and
# mpiexec passes a rank's failure on. Suppressions (tests/sanitizers/*.supp) cover only Open
# MPI's and its libraries' own reports, each with its reason.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
strata_loopback_mpi

kind="${1:-}"
shift || true
build_only=0
if [ "${1:-}" = "--build-only" ]; then
  build_only=1
  shift
fi
supp="$STRATA_ROOT/tests/sanitizers"

# The entries each kind runs (ctest -R regexes, anchored). Picked to cover the shm fabric (one
# detected host), the mpi fabric (a flat topology file, emulated hosts) and every API family,
# at a few seconds each under the sanitizer; and a unique-id communicator (the TCP control plane
# between processes, the ucx fabric).
asan_mpi=(
  'mpi\.api_errors\.np2'
  'mpi\.api_errors\.np5\.hosts_2_3'
  'mpi\.api_errors\.abort_is_local\.np3'
  'mpi\.init_failure\.syntax'
  'mpi\.lifecycle\.np4\.hosts_interleaved_2'
  'mpi\.lifecycle\.after_finalize\.np2'
  'mpi\.collectives\.np3\.chunk4100'
  'mpi\.collectives\.np7\.hosts_3_4\.shm64k'
  'mpi\.p2p_groups\.np4\.topo_flat4'
  'mpi\.p2p_groups\.np7\.hosts_3_4'
  'mpi\.split\.np6\.hosts_interleaved_2'
  'mpi\.nonblocking\.np3'
  'mpi\.nonblocking\.np4\.topo_flat4'
  'mpi\.fusion\.np4\.hosts_2_2\.theta4k'
  'mpi\.fusion\.np4\.hosts_2_2\.threads\.trace'
  'mpi\.collectives\.uid\.np4\.hosts_2_2'
)
tsan_mpi=(
  'mpi\.nonblocking\.np2\.threads'
  'mpi\.nonblocking\.np4\.topo_2x2\.threads'
  'mpi\.nonblocking\.np7\.hosts_3_4\.threads'
  'mpi\.nonblocking\.np3\.threads\.progress0'
  'mpi\.p2p_groups\.np4\.topo_2x2\.threads'
  'mpi\.p2p_groups\.cross_order\.collectives\.np4\.threads'
  'mpi\.lifecycle\.after_finalize\.np3\.threads'
  'mpi\.fusion\.np4\.hosts_2_2\.threads\.trace'
  'mpi\.nonblocking\.uid\.np4\.hosts_2_2\.threads'
)

join() {
  local IFS='|'
  echo "^($*)\$"
}

case "$kind" in
  asan)
    sanitizers=address,undefined
    # detect_leaks: LeakSanitizer at exit; abort_on_error=0 keeps the exit status non-zero
    # without a core dump. fast_unwind_on_malloc=0: Open MPI is built without frame pointers
    # and unloads its components in MPI_Finalize, so the fast unwinder's stacks of its
    # allocations stop at an "<unknown module>" that no suppression can name; the slow unwinder
    # reaches the libmpi/libopen-pal frames that lsan.supp names (about 4x slower runs).
    # Open MPI's memory hooks must not replace ASan's allocator's (memory=^patcher).
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1:fast_unwind_on_malloc=0:malloc_context_size=40"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=1"
    export OMPI_MCA_memory="^patcher"
    mpi_regex="$(join "${asan_mpi[@]}")"
    # strata_signal_exit and strata_late_rank: the unit-labelled flight.* and launch.* entries
    # run them (a signal handler and atexit, the rendezvous root's failure paths).
    targets=(strata_unit_tests strata_mpi_api_errors strata_mpi_lifecycle strata_mpi_collectives
             strata_mpi_p2p_groups strata_mpi_split strata_mpi_nonblocking strata_mpi_fusion
             strata_signal_exit strata_late_rank)
    ;;
  tsan)
    sanitizers=thread
    export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:history_size=7"
    export OMPI_MCA_memory="^patcher"
    # UCX's memory hooks (libucm, loaded with libstrata) patch mmap's code at load time, which
    # crashes a TSan-instrumented process before main (SIGSEGV, no report). The hooks only keep
    # UCX's registration cache true for memory registered with a device (RDMA), which the tcp,
    # shared-memory and cma transports of these runs do not use; "none" leaves mmap to TSan's
    # interceptor.
    export UCX_MEM_MMAP_HOOK_MODE=none
    mpi_regex="$(join "${tsan_mpi[@]}")"
    # The engine's unit tests come as a binary of their own (strata_engine_tests).
    targets=(strata_engine_tests strata_mpi_lifecycle strata_mpi_p2p_groups strata_mpi_nonblocking
             strata_mpi_fusion)
    ;;
  *)
    echo "usage: $0 asan|tsan [--build-only] [extra ctest arguments]" >&2
    exit 2
    ;;
esac

"$STRATA_ROOT/scripts/install-deps.sh"
BUILD_DIR="$STRATA_ROOT/build-$kind"
start=$(date +%s)
# -O1 -g1, as the sanitizers' manuals advise: reports keep their file:line stacks, and the
# build takes about 40% less time than RelWithDebInfo's -O2 -g (UBSan's checks of the templated
# reduction kernels make -O2 the slowest part of CI). At -O1 GCC 12 warns maybe-uninitialized
# inside libstdc++'s <regex> (a known false positive): silenced, the logs stay readable.
opt="-O1 -g1 -DNDEBUG -Wno-maybe-uninitialized"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$STRATA_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" \
    -DSTRATA_WITH_CUDA=OFF -DSTRATA_BUILD_TOOLS=OFF -DSTRATA_WITH_TORCH=OFF \
    -DSTRATA_SANITIZE="$sanitizers"
fi
# Only what the selected entries run: the library, the unit tests and the MPI programs.
cmake --build "$BUILD_DIR" -j "$(nproc)" --target strata "${targets[@]}"
echo "sanitize $kind: build took $(($(date +%s) - start)) s"
[ "$build_only" = 1 ] && exit 0

cd "$BUILD_DIR"
start=$(date +%s)
status=0
if [ "$kind" = asan ]; then
  # Every unit test: Catch2's cases, one process each (the label "unit" minus the install and
  # export checks, which test the packaging, not the code, and the tools', not built here).
  ctest --output-on-failure -j "$(nproc)" -L unit -E '^(install_find_package|api\.exports)$' \
    "$@" || status=1
else
  "$BUILD_DIR/tests/strata_engine_tests" || status=1
fi
echo "sanitize $kind: unit tests took $(($(date +%s) - start)) s"
start=$(date +%s)
ctest --output-on-failure -L mpi -R "$mpi_regex" "$@" || status=1
echo "sanitize $kind: MPI tests took $(($(date +%s) - start)) s"
exit $status
